#pragma once

#include "core/risk/lists.hpp"

namespace mailassay::tests {

/// The lists parsed from the repository's data/risk/*.txt (found through
/// MAILASSAY_SOURCE_DIR, set by ctest), loaded once per test binary.
const core::risk::lists& shipped_lists();

/// The text of data/risk/<name>.txt.
std::string read_risk_file(const char* name);

} // namespace mailassay::tests
