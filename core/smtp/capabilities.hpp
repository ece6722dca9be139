#pragma once

#include "core/smtp/reply.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mailassay::core::smtp {

/// The service extensions a server advertised in its EHLO reply
/// (RFC 5321 §4.1.1.1).
struct capabilities {
  /// Whether EHLO was answered (false after a HELO fallback: no extensions).
  bool esmtp = false;
  /// STARTTLS (RFC 3207).
  bool starttls = false;
  /// SMTPUTF8 (RFC 6531).
  bool smtputf8 = false;
  /// PIPELINING (RFC 2920).
  bool pipelining = false;
  /// ENHANCEDSTATUSCODES (RFC 2034).
  bool enhanced_status_codes = false;
  /// 8BITMIME (RFC 6152).
  bool eightbitmime = false;
  /// SIZE (RFC 1870): the limit in octets, 0 when advertised without one;
  /// absent when not advertised.
  std::optional<std::uint64_t> size;
  /// The domain the server named on the first line.
  std::string server_name;
  /// Every advertised keyword, upper-cased, in order.
  std::vector<std::string> keywords;

  /// Compares all fields.
  friend bool operator==(const capabilities&, const capabilities&) = default;
};

/// Reads the capabilities from a 250 reply to EHLO: the first line names
/// the server, each further line is `keyword [params]`, case-insensitive.
/// A reply that is not 250 yields no extensions.
capabilities parse_ehlo(const reply& r);

} // namespace mailassay::core::smtp
