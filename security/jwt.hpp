#pragma once

#include "core/base/expected.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace mailassay::security {

/// Claims of an access token (JWT, HS256).
struct access_claims {
  std::string user_id;         ///< `sub`
  std::string organization_id; ///< `org`
  std::string role;            ///< `role`
  std::string token_id;        ///< `jti`
  std::int64_t issued_at = 0;  ///< `iat`, Unix seconds
  std::int64_t expires_at = 0; ///< `exp`, Unix seconds
};

/// One HS256 key of a key ring.
struct jwt_key {
  /// Written as `kid` in the header of the tokens it signs; empty: no `kid`
  /// (a configured secret, the only key there is).
  std::string kid;
  std::string secret;
  /// Unix seconds when a newer key took over; 0 while this one signs. A
  /// retired key verifies tokens issued up to `retired_grace_seconds` after
  /// that (a process learns of a rotation a moment late), until they expire.
  std::int64_t retired_at = 0;
};

/// How long after its retirement a key's newly issued tokens are still
/// accepted (processes that have not reloaded the keys yet).
inline constexpr std::int64_t retired_grace_seconds = 60;

/// Signs `claims` as a compact JWS with HS256 under `key` (its `kid` in the
/// header when it has one).
std::string sign_access_token(const access_claims& claims, const jwt_key& key);

/// Signs `claims` as a compact JWS with HS256 under `secret`, without `kid`.
std::string sign_access_token(const access_claims& claims,
                              std::string_view secret);

/// Verifies signature (HS256 only: `alg: none` and every other algorithm are
/// refused), shape and expiry at `now` with the key of `keys` the token's
/// `kid` names (a token without `kid` only with a key without one);
/// errc::unauthorized on any failure, also for a kid none of `keys` has.
core::expected<access_claims> verify_access_token(std::string_view token,
                                                  std::span<const jwt_key> keys,
                                                  std::int64_t now);

/// Verifies a token without `kid` signed with `secret` (see above).
core::expected<access_claims> verify_access_token(std::string_view token,
                                                  std::string_view secret,
                                                  std::int64_t now);

/// Returns the `kid` named by a token's header; empty when it names none or
/// the header cannot be read.
std::string token_kid(std::string_view token);

/// Encodes bytes as unpadded base64url (RFC 4648 §5).
std::string base64url_encode(std::string_view bytes);

/// Decodes unpadded base64url; false on a character outside the alphabet,
/// a length no encoding has, or unused bits that are not zero (one spelling
/// per byte string).
bool base64url_decode(std::string_view text, std::string& out);

} // namespace mailassay::security
