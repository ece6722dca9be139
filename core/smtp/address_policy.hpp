#pragma once

// Outbound address safety for SMTP probes: an MX record is data from
// strangers, so a name pointing at 127.0.0.1, 10.0.0.5 or 169.254.169.254
// must not turn the prober into a scanner of our own networks (SSRF).
// Addresses are classified after the IANA special-purpose registries
// (RFC 6890 and its updates); only public unicast is reachable, unless the
// operator lists a network in MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS.

#include "core/base/expected.hpp"
#include "core/limits/client_ip.hpp"

#include <span>
#include <string>
#include <string_view>

namespace mailassay::core::smtp {

/// What kind of network an address belongs to.
enum class address_kind {
  public_unicast, ///< Globally routable unicast.
  loopback,       ///< 127.0.0.0/8, ::1.
  private_use,    ///< RFC 1918 (10/8, 172.16/12, 192.168/16), CGNAT
                  ///< 100.64/10 (RFC 6598), ULA fc00::/7 (RFC 4193).
  link_local,     ///< 169.254/16 (RFC 3927), fe80::/10.
  multicast,      ///< 224/4, ff00::/8.
  reserved,       ///< Not for unicast on the Internet: 0/8, 240/4 (and the
                  ///< broadcast address), 192.0.0/24, the documentation
                  ///< ranges (192.0.2/24, 198.51.100/24, 203.0.113/24,
                  ///< 2001:db8::/32, 3fff::/20), the benchmark range
                  ///< 198.18/15, 192.88.99/24, ::, IPv4-mapped ::ffff:0:0/96,
                  ///< NAT64 64:ff9b::/96 and 64:ff9b:1::/48, discard
                  ///< 100::/64, 2001::/23, 6to4 2002::/16, deprecated
                  ///< site-local fec0::/10 and anything outside 2000::/3.
  invalid,        ///< Not an IP address.
};

/// Returns "public", "loopback", "private", "link_local", "multicast",
/// "reserved" or "invalid".
std::string_view to_string(address_kind kind);

/// Classifies a parsed address (an IPv4-mapped IPv6 address, which
/// `limits::parse_ip` stores as IPv4, is classified as its IPv4 address).
address_kind classify(const limits::ip_address& ip);

/// Classifies an address in text form. IPv4-mapped IPv6 text
/// ("::ffff:10.0.0.1") is `reserved`: a AAAA record never legitimately
/// holds one, and connecting to it reaches the embedded IPv4 address.
address_kind classify(std::string_view text);

/// Whether one address may be connected to, and what it is.
struct target_decision {
  /// True when the address is public unicast or inside the allow-list.
  bool allowed = false;
  /// What the address is.
  address_kind kind = address_kind::invalid;
};

/// Which addresses SMTP probes may connect to: public unicast, plus the
/// operator's allow-list of networks (CIDRs, parsed with
/// `limits::trusted_networks`).
class target_policy {
public:
  /// Allows public unicast addresses only.
  target_policy() = default;

  /// Parses the allow-list ("127.0.0.0/8", "10.1.2.3", "fd00::/8"); an
  /// unparsable entry is `errc::validation_failed` naming it.
  static expected<target_policy> parse(std::span<const std::string> allow);

  /// Decides on an address in text form; an invalid address is never
  /// allowed, whatever the allow-list says.
  target_decision check(std::string_view address) const;

  /// Returns whether the allow-list is empty.
  bool public_only() const { return allow_.empty(); }

private:
  /// The operator's networks.
  limits::trusted_networks allow_;
};

} // namespace mailassay::core::smtp
