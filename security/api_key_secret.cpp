#include "security/api_key_secret.hpp"

#include "core/account/credentials.hpp"
#include "security/digest.hpp"
#include "security/random.hpp"

namespace mailassay::security {

new_api_key generate_api_key(bool test) {
  new_api_key out;
  out.key = (test ? "svc_test_" : "svc_live_") + random_base62(40);
  out.hash = sha256_hex(out.key);
  out.prefix = core::account::display_prefix(out.key);
  return out;
}

new_refresh_token generate_refresh_token() {
  new_refresh_token out;
  out.token = random_base62(48);
  out.hash = sha256_hex(out.token);
  return out;
}

} // namespace mailassay::security
