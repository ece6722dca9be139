#pragma once

// The `Mailassay-Signature` header (docs/webhooks.md, "Verifying"):
//
//   Mailassay-Signature: t=1718000000,v1=5257a869...,v1=9c1e0b2d...
//
// `t` is the Unix time of the attempt, each `v1` the lower-case hex
// HMAC-SHA256 of "<t>.<raw body>" under one signing secret (two while a
// rotated secret is still honoured). The time is signed with the body, so
// a receiver that checks it is recent refuses a replayed delivery. The
// HMAC itself is computed in security/ (OpenSSL); this is the pure part.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::webhooks {

/// The bytes the HMAC covers: "<t>.<body>".
std::string signed_content(std::int64_t t, std::string_view body);

/// The header value: "t=<t>,v1=<hex>" with one `v1` per signature.
std::string signature_header(std::int64_t t,
                             std::span<const std::string> hex_signatures);

/// A parsed header.
struct signature_fields {
  std::int64_t t = 0;          ///< Unix seconds.
  std::vector<std::string> v1; ///< Hex signatures, in order.
};

/// Parses a header value; elements other than t and v1 are skipped (a
/// later scheme may add some). nullopt without a valid `t` or any `v1`.
std::optional<signature_fields> parse_signature_header(std::string_view value);

} // namespace mailassay::core::webhooks
