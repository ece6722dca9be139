#pragma once

#include "core/dns/records.hpp"
#include "core/provider/table.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::dns {

/// Where mail for a domain goes, as decided from its DNS answers.
enum class route_kind {
  mx,             ///< One or more MX hosts.
  implicit_mx,    ///< No MX, but the domain has A/AAAA (RFC 5321 §5.1).
  null_mx,        ///< The domain accepts no mail (RFC 7505); final.
  no_mx,          ///< No MX and no address: mail cannot be delivered.
  invalid_domain, ///< NXDOMAIN: the domain does not exist.
  dns_error,      ///< The answer could not be obtained; never proof of
                  ///< anything.
};

/// Returns the reason word of `kind`: "mx", "implicit_mx", "null_mx",
/// "no_mx", "invalid_domain", "dns_error".
std::string_view to_string(route_kind kind);

/// The mail-routing outcome for one domain.
struct mail_route {
  /// What the answers mean for delivery.
  route_kind kind = route_kind::dns_error;
  /// Hosts to try in order: MX hosts by priority (ties keep answer order),
  /// or the domain itself at priority 0 for an implicit MX; empty otherwise.
  std::vector<mx_record> hosts;
  /// For an implicit MX, the domain's A then AAAA addresses.
  std::vector<std::string> addresses;
  /// The DNS outcome that decided `kind` (e.g. servfail for a dns_error).
  rcode cause = rcode::ok;
  /// Seconds the outcome may be cached (minimum over the answers used);
  /// empty when no answer carried a TTL.
  std::optional<std::uint32_t> ttl;
  /// Who runs the first MX host (issue #30), as the resolver's provider
  /// table names it; empty for any kind but `mx`, or when nothing matches.
  std::optional<provider::provider_ref> provider;

  /// Returns whether the domain was shown to take no mail or not to exist
  /// (no_mx, invalid_domain): a negative cache entry.
  bool negative() const {
    return kind == route_kind::no_mx || kind == route_kind::invalid_domain;
  }
};

/// Returns whether the MX answer leaves the route undecided, so that the
/// A and AAAA answers of the domain are needed (RFC 5321 §5.1 implicit MX):
/// true for nodata and for an ok answer without MX records.
bool needs_address_lookup(const lookup_result& mx_answer);

/// Combines the A and the AAAA answers of one name into one address answer:
/// ok when either has addresses; else a failure when either failed; else
/// nxdomain when both say so; else nodata.
lookup_result merge_address_answers(const lookup_result& a,
                                    const lookup_result& aaaa);

/// Decides where mail for `domain` goes from its MX answer and, when
/// `needs_address_lookup(mx_answer)`, its merged address answer
/// (RFC 5321 §5.1, RFC 7505):
/// - NXDOMAIN → invalid_domain; SERVFAIL, timeout, refused, other →
///   dns_error (never invalid);
/// - a lone MX "." (any preference) → null_mx; "." beside real hosts is
///   ignored (RFC 7505 §3 forbids the mix; the real hosts still route);
/// - MX hosts → mx, sorted by priority, ties in answer order, duplicates
///   dropped;
/// - no MX and addresses → implicit_mx (the domain itself);
/// - no MX and no address → no_mx; address lookup failed → dns_error; a
///   missing address answer when one is needed → dns_error (other_error).
mail_route interpret(std::string_view domain, const lookup_result& mx_answer,
                     const std::optional<lookup_result>& address_answer = {});

} // namespace mailassay::core::dns
