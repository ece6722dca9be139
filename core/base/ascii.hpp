#pragma once

#include <string>
#include <string_view>

namespace mailassay::core {

/// Returns `s` with ASCII letters lower-cased (other bytes unchanged).
std::string ascii_lower(std::string_view s);

/// Compares two strings ignoring ASCII case.
bool ascii_iequals(std::string_view a, std::string_view b);

} // namespace mailassay::core
