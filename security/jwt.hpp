#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/expected.hpp"

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

/// Signs `claims` as a compact JWS with HS256 under `secret`.
std::string sign_access_token(const access_claims& claims,
                              std::string_view secret);

/// Verifies signature (HS256 only: `alg: none` and every other algorithm are
/// refused), shape and expiry at `now`; errc::unauthorized on any failure.
core::expected<access_claims> verify_access_token(std::string_view token,
                                                  std::string_view secret,
                                                  std::int64_t now);

/// Encodes bytes as unpadded base64url (RFC 4648 §5).
std::string base64url_encode(std::string_view bytes);

/// Decodes unpadded base64url; false on a character outside the alphabet.
bool base64url_decode(std::string_view text, std::string& out);

} // namespace mailassay::security
