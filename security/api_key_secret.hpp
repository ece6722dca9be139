#pragma once

#include <string>

namespace mailassay::security {

/// A freshly generated API key: the secret (shown once) and what is stored.
struct new_api_key {
  std::string key;    ///< `svc_live_`/`svc_test_` + 40 base62 characters.
  std::string hash;   ///< SHA-256 hex of `key`.
  std::string prefix; ///< Display prefix.
};

/// Generates a live (`test == false`) or test key.
new_api_key generate_api_key(bool test);

/// A freshly generated refresh token and its stored hash.
struct new_refresh_token {
  std::string token;
  std::string hash;
};

/// Generates an opaque refresh token (48 base62 characters).
new_refresh_token generate_refresh_token();

} // namespace mailassay::security
