#include "security/digest.hpp"
#include "security/jwt.hpp"
#include "security/jwt_keyring.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::security;

namespace {

access_claims claims_at(std::int64_t now) {
  return {"usr_1", "org_1", "owner", "jti_1", now, now + 900};
}

jwt_key key(std::string kid, std::int64_t retired_at = 0) {
  return {kid, "secret-of-" + kid + "-0123456789abcdef0123456789", retired_at};
}

} // namespace

TEST_SUITE("security.jwt_keyring") {
  TEST_CASE("a token names the key that signed it and verifies with it") {
    std::vector<jwt_key> keys{key("k1"), key("k0", 500)};
    auto token = sign_access_token(claims_at(1000), keys[0]);
    CHECK(token_kid(token) == "k1");
    CHECK(verify_access_token(token, keys, 1001).has_value());
    // Signed by k1 but presented as k0's: the MAC does not match.
    auto as_other = sign_access_token(claims_at(1000), keys[0]);
    keys[1].secret = keys[0].secret + "x";
    CHECK(verify_access_token(as_other, std::vector<jwt_key>{keys[1]}, 1001)
              .has_value() == false);
  }

  TEST_CASE("a kid the verifier does not hold is refused") {
    auto token = sign_access_token(claims_at(1000), key("k9"));
    CHECK_FALSE(
        verify_access_token(token, std::vector<jwt_key>{key("k1")}, 1001)
            .has_value());
    // A token without kid is not checked against a key that has one.
    auto plain = sign_access_token(claims_at(1000), key("k1").secret);
    CHECK(token_kid(plain).empty());
    CHECK_FALSE(
        verify_access_token(plain, std::vector<jwt_key>{key("k1")}, 1001)
            .has_value());
    CHECK(verify_access_token(plain, key("k1").secret, 1001).has_value());
  }

  TEST_CASE("a retired key verifies what it signed before the rotation, "
            "until it expires") {
    // Retired at 2000: tokens issued up to 2000 + the grace pass.
    std::vector<jwt_key> keys{key("new"), key("old", 2000)};
    auto before = sign_access_token(claims_at(1900), key("old"));
    CHECK(verify_access_token(before, keys, 2500).has_value());
    CHECK_FALSE(verify_access_token(before, keys, 2800).has_value()); // exp
    auto late =
        sign_access_token(claims_at(2000 + retired_grace_seconds), key("old"));
    CHECK(verify_access_token(late, keys, 2100).has_value());
    auto too_late =
        sign_access_token(claims_at(2001 + retired_grace_seconds), key("old"));
    CHECK_FALSE(verify_access_token(too_late, keys, 2100).has_value());
  }

  TEST_CASE("a kid that is not a string is refused") {
    std::string payload =
        R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":99999999999,"typ":"access"})";
    auto input = base64url_encode(R"({"alg":"HS256","kid":7})") + "." +
                 base64url_encode(payload);
    auto token = input + "." + base64url_encode(hmac_sha256("s", input));
    CHECK(token_kid(token).empty());
    CHECK_FALSE(
        verify_access_token(token, std::vector<jwt_key>{{"", "s", 0}}, 10)
            .has_value());
  }

  TEST_CASE("a ring signs with its current key and verifies retired ones") {
    auto ring = jwt_keyring::shared();
    ring->replace({key("old", 2000), key("new")});
    CHECK(ring->current_kid() == "new");
    auto token = ring->sign(claims_at(2100));
    CHECK(token_kid(token) == "new");
    CHECK(ring->verify(token, 2101).has_value());
    auto old = sign_access_token(claims_at(1990), key("old"));
    CHECK(ring->verify(old, 2101).has_value());
    CHECK_FALSE(ring->names_unknown_key(old));
    auto rotated_elsewhere = sign_access_token(claims_at(2100), key("newer"));
    CHECK(ring->names_unknown_key(rotated_elsewhere));
    CHECK_FALSE(ring->verify(rotated_elsewhere, 2101).has_value());
    ring->replace({key("newer"), key("new", 2200), key("old", 2000)});
    CHECK(ring->verify(rotated_elsewhere, 2101).has_value());
    CHECK(ring->verify(token, 2101).has_value());
  }

  TEST_CASE("a fixed ring signs without kid and never reloads") {
    auto ring = jwt_keyring::fixed("configured-secret-0123456789abcdef");
    auto token = ring->sign(claims_at(1000));
    CHECK(token_kid(token).empty());
    CHECK(ring->verify(token, 1001).has_value());
    CHECK(verify_access_token(token, "configured-secret-0123456789abcdef", 1001)
              .has_value());
    CHECK_FALSE(
        ring->names_unknown_key(sign_access_token(claims_at(1000), key("k1"))));
  }

  TEST_CASE("reloads for unknown kids come at most once a second") {
    auto ring = jwt_keyring::shared();
    CHECK(ring->take_reload_turn(100000));
    CHECK_FALSE(ring->take_reload_turn(100500));
    CHECK_FALSE(ring->take_reload_turn(100999));
    CHECK(ring->take_reload_turn(101000));
  }
}
