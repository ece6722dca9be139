#include "security/password.hpp"

#include <sodium.h>

namespace mailassay::security {

bool init_crypto() {
  return sodium_init() >= 0;
}

std::string hash_password(std::string_view password) {
  char out[crypto_pwhash_STRBYTES];
  if (crypto_pwhash_str(out, password.data(), password.size(),
                        crypto_pwhash_OPSLIMIT_INTERACTIVE,
                        crypto_pwhash_MEMLIMIT_INTERACTIVE)
      != 0)
    return {}; // out of memory; callers treat an empty hash as failure
  return out;
}

bool verify_password(std::string_view password, const std::string& encoded) {
  if (encoded.empty())
    return false;
  return crypto_pwhash_str_verify(encoded.c_str(), password.data(),
                                  password.size())
         == 0;
}

void verify_dummy_password(std::string_view password) {
  // Computed once: a hash with the same limits as real ones.
  static const std::string dummy = hash_password("mailassay-timing-guard");
  (void) verify_password(password, dummy);
}

} // namespace mailassay::security
