#pragma once

#include "core/base/expected.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::limits {

/// An IPv4 or IPv6 address in binary form. IPv4-mapped IPv6 addresses
/// (::ffff:a.b.c.d, what a dual-stack socket reports) are stored as IPv4.
struct ip_address {
  std::array<std::uint8_t, 16> bytes{}; ///< IPv4 uses the first 4 bytes.
  bool v4 = false;                      ///< IPv4 (else IPv6).

  /// Returns whether both are the same address.
  friend bool operator==(const ip_address&, const ip_address&) = default;
};

/// Parses a bare IPv4 or IPv6 address (no port, no brackets, no zone).
std::optional<ip_address> parse_ip(std::string_view text);

/// Returns the canonical text of `ip` (RFC 5952 for IPv6), so every
/// spelling of one address names the same bucket.
std::string to_string(const ip_address& ip);

/// The proxies whose X-Forwarded-For header is believed: IPs and CIDRs,
/// IPv4 and IPv6, parsed once at start-up.
class trusted_networks {
public:
  /// Trusts nobody.
  trusted_networks() = default;

  /// Parses entries such as "10.0.0.1", "10.0.0.0/8", "::1", "fd00::/8".
  /// An unparsable entry or a prefix out of range is a
  /// `errc::validation_failed` naming the entry.
  static expected<trusted_networks> parse(std::span<const std::string> entries);

  /// Returns whether `ip` lies in one of the networks.
  bool contains(const ip_address& ip) const;

  /// Returns the number of networks.
  std::size_t size() const { return networks_.size(); }

  /// Returns whether nobody is trusted.
  bool empty() const { return networks_.empty(); }

private:
  struct network {
    ip_address base;
    int prefix = 0;
  };
  std::vector<network> networks_;
};

/// Returns the client IP of a request, in canonical text.
///
/// It is the socket `peer`, except when the peer lies in `trusted`: then it
/// is the first (left-most, i.e. the original client) address of
/// `x_forwarded_for`. That hop may be written "a.b.c.d", "a.b.c.d:port",
/// "v6", or "[v6]" / "[v6]:port". An empty or malformed header gives the
/// peer. The header of an untrusted peer is never read. A peer that does
/// not parse is returned as given.
std::string client_ip(std::string_view peer, std::string_view x_forwarded_for,
                      const trusted_networks& trusted);

} // namespace mailassay::core::limits
