#pragma once

// Webhook URLs: what an endpoint's `url` may be, and the outbound rules
// checked when it is stored (docs/webhooks.md, "Outbound safety").
//
// Only absolute `https` URLs (or `http` when the operator allows it) with a
// DNS name or an IP literal, no credentials and no fragment. The address
// policy is the SMTP prober's (core/smtp/address_policy.hpp): an IP literal
// (or `localhost`, RFC 6761 §6.3) outside public unicast is refused here
// unless the operator's allow-list holds it; a DNS name is resolved and
// every address checked again before each delivery, because what a name
// points at can change after it was stored.

#include "core/base/expected.hpp"
#include "core/smtp/address_policy.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace mailassay::core::webhooks {

/// The longest URL an endpoint may have, in bytes.
inline constexpr std::size_t max_url_bytes = 2048;

/// A parsed absolute http(s) URL.
struct target_url {
  bool tls = true;          ///< https.
  std::string host;         ///< Lower-case name, or an IP literal (an IPv6
                            ///< address without its brackets).
  bool host_is_ip = false;  ///< `host` is an IP literal.
  std::uint16_t port = 443; ///< Explicit, or 443/80 by scheme.
  std::string target;       ///< Path and query as sent ("/" at least).

  /// The value of the `Host` header: host (bracketed when IPv6) and the
  /// port when it is not the scheme's default.
  std::string host_header() const;
};

/// Parses `url`. A malformed URL -> errc::validation_failed whose single
/// detail names the problem ("url must ...").
expected<target_url> parse_target_url(std::string_view url);

/// Checks a parsed URL against the outbound rules before it is stored:
/// `https` unless `allow_http`; an IP literal, or `localhost` and names
/// under `.localhost` (taken as 127.0.0.1), must be allowed by `policy`.
/// Returns the 422 message, or nullopt when the URL may be stored.
std::optional<std::string> refusal(const target_url& url, bool allow_http,
                                   const smtp::target_policy& policy);

/// Checks an endpoint's port: 443, and 80 when `allow_http`, unless
/// `allowed_ports` lists it or `any_port` is set (webhooks.allowed_ports,
/// webhooks.allow_any_port): a URL on another port would let a tenant scan
/// what the service can reach. Returns the 422 message, or nullopt.
std::optional<std::string>
port_refusal(const target_url& url, bool allow_http,
             std::span<const std::int64_t> allowed_ports, bool any_port);

} // namespace mailassay::core::webhooks
