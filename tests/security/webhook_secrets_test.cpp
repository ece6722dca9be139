#include "security/password.hpp"
#include "security/secret_box.hpp"
#include "security/webhook_signing.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>

using namespace mailassay::security;

TEST_SUITE("security.webhooks") {
  TEST_CASE("a signature is the hex HMAC-SHA256 of t.body") {
    // python3: hmac.new(b"whsec_test", b'1718000000.{"a":1}',
    //                   hashlib.sha256).hexdigest()
    CHECK(webhook_signature("whsec_test", 1718000000, R"({"a":1})") ==
          "502bde99d2bded01820a40feb9edaad23be9e5a16853a603567b3108ddccec17");
  }

  TEST_CASE("signing secrets are long, prefixed and distinct") {
    std::set<std::string> seen;
    for (int i = 0; i < 100; ++i) {
      auto s = new_webhook_secret();
      CHECK(s.rfind("whsec_", 0) == 0);
      CHECK(s.size() == 46);
      seen.insert(s);
    }
    CHECK(seen.size() == 100);
  }

  TEST_CASE("a sealed secret opens only with its key and context") {
    REQUIRE(init_crypto());
    auto key = secret_box_key_from_hex(new_secret_box_key_hex());
    REQUIRE(key);
    CHECK(key->size() == 32);
    auto other = secret_box_key_from_hex(new_secret_box_key_hex());
    REQUIRE(other);
    auto sealed = seal(*key, "whsec_abc", "whk_1");
    CHECK(sealed.rfind("x1.", 0) == 0);
    CHECK(sealed.find("whsec_abc") == std::string::npos);
    CHECK(open_sealed(*key, sealed, "whk_1") == "whsec_abc");
    // A fresh nonce each time.
    CHECK(seal(*key, "whsec_abc", "whk_1") != sealed);
    CHECK_FALSE(open_sealed(*other, sealed, "whk_1"));
    CHECK_FALSE(open_sealed(*key, sealed, "whk_2"));
    auto tampered = sealed;
    tampered.back() = tampered.back() == '0' ? '1' : '0';
    CHECK_FALSE(open_sealed(*key, tampered, "whk_1"));
    CHECK_FALSE(open_sealed(*key, "x1.00", "whk_1"));
    CHECK_FALSE(open_sealed(*key, "x1.zz", "whk_1"));
    CHECK_FALSE(open_sealed(*key, "whsec_abc", "whk_1"));
    CHECK_FALSE(open_sealed("short", sealed, "whk_1"));
    CHECK(open_sealed(*key, seal(*key, "", "c"), "c") == "");
  }

  TEST_CASE("a server key is 64 hex digits") {
    CHECK_FALSE(secret_box_key_from_hex(""));
    CHECK_FALSE(secret_box_key_from_hex(std::string(63, 'a')));
    CHECK_FALSE(secret_box_key_from_hex(std::string(64, 'g')));
    CHECK(secret_box_key_from_hex(std::string(64, 'A')));
  }
}
