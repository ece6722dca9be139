#pragma once

// Address literals, the domain part `[...]` of an address (RFC 5321
// §4.1.3): an IPv4 dotted quad or `IPv6:` and an IPv6 address. Rare, so
// apart from the parser's hot path.

#include <string_view>

namespace mailassay::core::syntax {

/// Checks the domain part `d` (brackets included) as an address literal.
/// Returns why it is not one, or empty when it is, with `address` the
/// address it holds (after `IPv6:` for IPv6), a view into `d`.
std::string_view literal_problem(std::string_view d, std::string_view& address);

} // namespace mailassay::core::syntax
