#pragma once

#include "config/settings.hpp"
#include "core/base/expected.hpp"
#include "core/provider/table.hpp"
#include "core/risk/lists.hpp"

#include <memory>

namespace mailassay::config {

/// Reads the shipped risk lists from `risk.data_dir` and the operator's extra
/// files, and builds the shared lists. A missing shipped list or a named
/// extra file that cannot be read -> errc::bad_request naming the file.
core::expected<std::shared_ptr<const core::risk::lists>>
load_risk_lists(const risk_settings& cfg);

/// Reads the MX provider table from `risk.providers_file` (empty:
/// `providers.txt` in `risk.data_dir`). A file that cannot be read or
/// parsed -> errc::bad_request naming the file and the line.
core::expected<std::shared_ptr<const core::provider::table>>
load_provider_table(const risk_settings& cfg);

/// Refuses per-provider limits (`smtp.provider_limits`) that do not parse
/// or that name a provider `known` does not hold (errc::bad_request saying
/// which, and the names it knows).
core::expected<core::unit>
check_provider_limits(const smtp_settings& smtp,
                      const core::provider::table& known);

} // namespace mailassay::config
