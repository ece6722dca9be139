// Fuzz target: access tokens (security/jwt.hpp), which every dashboard
// request carries in its Authorization header. Oracles: a token as sent
// never throws; base64url text that decodes is the one encoding of its
// bytes (else a token has several spellings); header and payload signed
// with the server's secret (as if the secret had leaked, or we had signed
// them) are verified without an exception or undefined behaviour, and
// claims accepted are claims we could have issued: signed again, they
// verify to the same.
//
// Input: byte 0 picks the mode; then a raw token, or a header and a
// payload JSON separated by LF.

#include "fuzz/fuzz_check.hpp"

#include "security/digest.hpp"
#include "security/jwt.hpp"

#include <cstdint>
#include <string>
#include <string_view>

using namespace mailassay::security;

namespace {

constexpr std::string_view secret = "fuzz-secret";
constexpr std::int64_t now = 1'800'000'000;

void check_accepted(const access_claims& c) {
  MAILASSAY_FUZZ_CHECK(c.expires_at > now);
  auto again = verify_access_token(sign_access_token(c, secret), secret, now);
  MAILASSAY_FUZZ_CHECK(again.has_value());
  MAILASSAY_FUZZ_CHECK(again->user_id == c.user_id &&
                       again->organization_id == c.organization_id &&
                       again->role == c.role && again->token_id == c.token_id &&
                       again->issued_at == c.issued_at &&
                       again->expires_at == c.expires_at);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  if (size < 1)
    return 0;
  std::string_view input{reinterpret_cast<const char*>(data + 1), size - 1};
  switch (data[0] % 3) {
    case 0: {
      // A token as a client sends it.
      auto r = verify_access_token(input, secret, now);
      if (r)
        check_accepted(*r);
      break;
    }
    case 1: {
      // base64url both ways.
      std::string bytes;
      if (base64url_decode(input, bytes))
        MAILASSAY_FUZZ_CHECK(base64url_encode(bytes) == input);
      std::string back;
      MAILASSAY_FUZZ_CHECK(base64url_decode(base64url_encode(input), back));
      MAILASSAY_FUZZ_CHECK(back == input);
      break;
    }
    default: {
      // Header and payload signed with the secret.
      auto nl = input.find('\n');
      if (nl == input.npos)
        return 0;
      auto signing_input = base64url_encode(input.substr(0, nl)) + '.' +
                           base64url_encode(input.substr(nl + 1));
      auto token = signing_input + '.' +
                   base64url_encode(hmac_sha256(secret, signing_input));
      auto r = verify_access_token(token, secret, now);
      if (r)
        check_accepted(*r);
    }
  }
  return 0;
}
