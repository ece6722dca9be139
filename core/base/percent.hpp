#pragma once

// Percent-encoding (RFC 3986 §2.1), as URLs carry user names, passwords,
// paths and query parameters.

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core {

/// Returns the value of the hex digit `c` (0-15), or -1 when `c` is none.
int hex_digit_value(char c);

/// Decodes every `%XY` of `in`; nullopt when a `%` is not followed by two
/// hex digits. Other bytes, `+` included, stay as they are.
std::optional<std::string> percent_decode(std::string_view in);

} // namespace mailassay::core
