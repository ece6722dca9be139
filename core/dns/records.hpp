#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::dns {

/// One MX record: the exchange host and its preference (RFC 5321 §5.1).
struct mx_record {
  /// Exchange host, lower-case, without a trailing dot; "." for a null MX.
  std::string host;
  /// Preference; lower values are tried first.
  std::uint16_t priority = 0;

  /// Compares host and priority.
  friend bool operator==(const mx_record&, const mx_record&) = default;
};

/// The record types the resolver asks for (PTR and TXT for the egress
/// audit: reverse DNS and blocklist reasons).
enum class record_type { mx, a, aaaa, ptr, txt };

/// How a single DNS query ended.
enum class rcode {
  ok,          ///< NOERROR with records of the asked type.
  nxdomain,    ///< The name does not exist (RCODE 3).
  nodata,      ///< The name exists but has no records of the asked type.
  servfail,    ///< The server failed (RCODE 2).
  timeout,     ///< No answer within the time-out, or the query was cancelled.
  refused,     ///< The server refused to answer (RCODE 5).
  other_error, ///< Any other failure: bad answer, connection refused, ...
};

/// Returns a stable lower-case name of `code` for logs and metrics.
std::string_view to_string(rcode code);

/// Returns whether `code` is a resolution failure (neither an answer nor a
/// proof of non-existence): servfail, timeout, refused, other_error.
bool is_failure(rcode code);

/// The outcome of one query (or of the A + AAAA pair, see
/// `merge_address_answers`).
struct lookup_result {
  /// How the query ended.
  rcode code = rcode::other_error;
  /// The MX records of an MX answer, in answer order.
  std::vector<mx_record> mx;
  /// Whether the answer holds at least one A record.
  bool has_a = false;
  /// Whether the answer holds at least one AAAA record.
  bool has_aaaa = false;
  /// The addresses of an A/AAAA answer, in text form ("192.0.2.1", "::1").
  std::vector<std::string> addresses;
  /// The names of a PTR answer (lower-case, no trailing dot) or the texts
  /// of a TXT answer (each record's strings joined), in answer order.
  std::vector<std::string> texts;
  /// Seconds the answer may be cached: the minimum TTL of the answer records,
  /// or for nxdomain/nodata min(SOA TTL, SOA MINIMUM) (RFC 2308 §5);
  /// empty when the answer carried none.
  std::optional<std::uint32_t> ttl;
};

/// Returns `name` lower-cased (ASCII) and without trailing dots.
std::string normalize_name(std::string_view name);

} // namespace mailassay::core::dns
