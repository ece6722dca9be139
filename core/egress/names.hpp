#pragma once

// The DNS names the egress audit asks about an address: its reverse name
// (PTR) and its name inside a DNS blocklist zone.

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::egress {

/// Returns the reverse-DNS name of an IP address in text form:
/// "4.3.2.1.in-addr.arpa" for 1.2.3.4 (RFC 1035 §3.5), 32 nibbles then
/// "ip6.arpa" for IPv6 (RFC 3596 §2.5); nullopt when `ip` is no address.
std::optional<std::string> reverse_name(std::string_view ip);

/// Returns the name to ask a DNS blocklist `zone` about `ip`: the reversed
/// octets (or nibbles) then the zone, "4.3.2.1.zen.spamhaus.org"
/// (RFC 5782 §2.1, §2.4); nullopt when `ip` is no address or the zone is
/// empty.
std::optional<std::string> dnsbl_name(std::string_view ip,
                                      std::string_view zone);

/// Returns whether `name` is a fully qualified domain name fit for EHLO:
/// at least two labels of letters, digits and inner hyphens, at most 63
/// octets each and 253 in all, the last not all digits (RFC 5321 §4.1.4,
/// RFC 1123 §2.1).
bool is_fqdn(std::string_view name);

} // namespace mailassay::core::egress
