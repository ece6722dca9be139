#pragma once

#include "core/dns/records.hpp"

#include <cstdint>
#include <optional>

namespace mailassay::net::dns_wire {

/// The smallest TTL of an answer section (CNAME links included) and the
/// negative TTL of an authority section's SOA, min(SOA TTL, MINIMUM)
/// (RFC 2308 §5): what c-ares' record parsers leave out.
struct ttls {
  std::optional<std::uint32_t> answer;   ///< Absent: no answer record.
  std::optional<std::uint32_t> negative; ///< Absent: no SOA in authority.
};

/// The query type code of `type` (RFC 1035 §3.2.2, RFC 3596 §2.1).
int type_code(core::dns::record_type type);

/// The result code of a c-ares status; time-outs, cancellations and a
/// resolver being destroyed all read as `timeout`.
core::dns::rcode rcode_of(int ares_status);

/// Reads the TTLs of the answer `abuf` of `alen` bytes. A truncated or
/// malformed message yields what was read before the damage.
ttls read_ttls(const unsigned char* abuf, int alen);

/// Reads the answer to a query of `type` that c-ares ended with
/// `ares_status`: MX records, addresses (text, at most 256), PTR names or
/// TXT texts (at most 64), the result code, and the TTL that applies to it
/// (the answer's for `ok`, the negative one for `nxdomain` and `nodata`).
core::dns::lookup_result read_answer(int ares_status,
                                     core::dns::record_type type,
                                     const unsigned char* abuf, int alen);

} // namespace mailassay::net::dns_wire
