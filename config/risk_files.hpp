#pragma once

#include <memory>

#include "config/settings.hpp"
#include "core/base/expected.hpp"
#include "core/risk/lists.hpp"

namespace mailassay::config {

/// Reads the shipped risk lists from `risk.data_dir` and the operator's extra
/// files, and builds the shared lists. A missing shipped list or a named
/// extra file that cannot be read -> errc::bad_request naming the file.
core::expected<std::shared_ptr<const core::risk::lists>>
load_risk_lists(const risk_settings& cfg);

} // namespace mailassay::config
