#include "security/webhook_signing.hpp"

#include "core/webhooks/signature.hpp"
#include "security/digest.hpp"
#include "security/random.hpp"

namespace mailassay::security {

std::string new_webhook_secret() {
  return "whsec_" + random_base62(40);
}

std::string webhook_signature(std::string_view secret, std::int64_t t,
                              std::string_view body) {
  auto mac = hmac_sha256(secret, core::webhooks::signed_content(t, body));
  static constexpr char hex[] = "0123456789abcdef";
  std::string out(mac.size() * 2, '0');
  for (std::size_t i = 0; i < mac.size(); ++i) {
    auto b = static_cast<unsigned char>(mac[i]);
    out[2 * i] = hex[b >> 4];
    out[2 * i + 1] = hex[b & 0xF];
  }
  return out;
}

} // namespace mailassay::security
