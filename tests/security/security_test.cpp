#include "security/api_key_secret.hpp"
#include "security/digest.hpp"
#include "security/jwt.hpp"
#include "security/password.hpp"
#include "security/random.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay::security;

namespace {

access_claims sample(std::int64_t now) {
  return {"usr_1", "org_1", "owner", "jti_1", now, now + 900};
}

// Builds a token with an arbitrary header and payload, signed with `secret`.
std::string forge(std::string_view header, std::string_view payload,
                  std::string_view secret) {
  auto input = base64url_encode(header) + "." + base64url_encode(payload);
  return input + "." + base64url_encode(hmac_sha256(secret, input));
}

} // namespace

TEST_SUITE("security") {
  TEST_CASE("sha256 matches the FIPS 180-2 test vector") {
    CHECK(sha256_hex("abc") ==
          "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  }
  TEST_CASE("sha256 matches the FIPS 180-2 vectors, empty and long input") {
    CHECK(sha256_hex("") ==
          "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    CHECK(sha256_hex(std::string(1000000, 'a')) ==
          "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    CHECK(sha256_hex(
              "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
          "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  }
  TEST_CASE("sha256 gives the same digests from several threads at once") {
    std::vector<std::thread> threads;
    std::atomic<int> wrong{0};
    for (int t = 0; t < 4; ++t)
      threads.emplace_back([&wrong] {
        for (int i = 0; i < 2000; ++i)
          if (sha256_hex("abc") !=
              "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015"
              "ad")
            ++wrong;
      });
    for (auto& t : threads)
      t.join();
    CHECK(wrong == 0);
  }
  TEST_CASE("the remembered sha256 is the sha256, for recent and evicted "
            "secrets alike") {
    // Same-length secrets differing in one byte, more of them than the
    // memo holds, asked in an order that hits and evicts.
    std::vector<std::string> secrets;
    for (char c = 'a'; c <= 'f'; ++c)
      secrets.push_back(
          std::string{"svc_live_0123456789abcdef0123456789abcdef"} + c);
    int wrong = 0;
    for (int round = 0; round < 3; ++round)
      for (std::size_t i = 0; i < secrets.size(); ++i)
        for (std::size_t j = 0; j <= i; ++j)
          if (sha256_hex_recent(secrets[j]) != sha256_hex(secrets[j]))
            ++wrong;
    CHECK(wrong == 0);
    CHECK(sha256_hex_recent("") == sha256_hex(""));
    CHECK(sha256_hex_recent("abc") == sha256_hex("abc"));
  }
  TEST_CASE("hmac-sha256 matches RFC 4231 test cases 1 and 2") {
    auto hex = [](const std::string& raw) {
      static constexpr char digits[] = "0123456789abcdef";
      std::string out;
      for (unsigned char c : raw) {
        out += digits[c >> 4];
        out += digits[c & 0xF];
      }
      return out;
    };
    CHECK(hex(hmac_sha256(std::string(20, '\x0b'), "Hi There")) ==
          "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
    CHECK(hex(hmac_sha256("Jefe", "what do ya want for nothing?")) ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    CHECK(hmac_sha256_hex("Jefe", "what do ya want for nothing?") ==
          "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  }
  TEST_CASE("constant-time compare is still a compare") {
    CHECK(constant_time_equal("abc", "abc"));
    CHECK_FALSE(constant_time_equal("abc", "abd"));
    CHECK_FALSE(constant_time_equal("abc", "abcd"));
  }
  TEST_CASE("constant-time compare finds one differing bit anywhere") {
    // Eight bytes at a time and the tail: every length up to three words,
    // every byte, the lowest and the highest bit.
    for (std::size_t n = 0; n <= 24; ++n) {
      std::string a(n, '\0');
      for (std::size_t i = 0; i < n; ++i)
        a[i] = static_cast<char>('A' + i * 7 % 61);
      CHECK(constant_time_equal(a, std::string{a}));
      for (std::size_t at = 0; at < n; ++at)
        for (unsigned bit : {0x01u, 0x80u}) {
          auto b = a;
          b[at] = static_cast<char>(static_cast<unsigned char>(b[at]) ^ bit);
          CAPTURE(n);
          CAPTURE(at);
          CHECK_FALSE(constant_time_equal(a, b));
        }
    }
  }
  TEST_CASE("base64url round-trips every length") {
    std::string data;
    for (int i = 0; i < 40; ++i) {
      std::string back;
      REQUIRE(base64url_decode(base64url_encode(data), back));
      CHECK(back == data);
      data += static_cast<char>(i * 37);
    }
    std::string out;
    CHECK_FALSE(base64url_decode("ab+c", out));
    // Found by fuzz/access_token_fuzz.cpp: one spelling per byte string;
    // the unused bits of the last character are zero.
    CHECK(base64url_decode("QQ", out));
    CHECK(out == "A");
    for (auto other : {"QR", "QS", "QT", "QUF", "QUJ"})
      CHECK_FALSE(base64url_decode(other, out));
    CHECK(base64url_decode("QUI", out));
    CHECK(out == "AB");
  }
  TEST_CASE("a signed access token verifies and carries its claims") {
    auto token = sign_access_token(sample(1000), "s3cret");
    auto claims = verify_access_token(token, "s3cret", 1001);
    REQUIRE(claims.has_value());
    CHECK(claims->user_id == "usr_1");
    CHECK(claims->organization_id == "org_1");
    CHECK(claims->role == "owner");
    CHECK(claims->expires_at == 1900);
  }
  TEST_CASE("an expired token is refused") {
    auto token = sign_access_token(sample(1000), "s3cret");
    CHECK_FALSE(verify_access_token(token, "s3cret", 1900).has_value());
  }
  TEST_CASE("a token signed with another secret is refused") {
    auto token = sign_access_token(sample(1000), "other");
    CHECK_FALSE(verify_access_token(token, "s3cret", 1001).has_value());
  }
  TEST_CASE("alg none and other algorithms are refused") {
    std::string payload =
        R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":99999999999,"typ":"access"})";
    auto none = base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." +
                base64url_encode(payload) + ".";
    CHECK_FALSE(verify_access_token(none, "s3cret", 10).has_value());
    CHECK_FALSE(
        verify_access_token(forge(R"({"alg":"HS512"})", payload, "s3cret"),
                            "s3cret", 10)
            .has_value());
    CHECK(verify_access_token(forge(R"({"alg":"HS256"})", payload, "s3cret"),
                              "s3cret", 10)
              .has_value());
  }
  TEST_CASE("iat and exp are whole numbers") {
    // Found by fuzz/access_token_fuzz.cpp: a float beyond int64's range
    // was converted (undefined behaviour); a float within it was taken.
    for (
        auto payload :
        {R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":2e9,"typ":"access"})",
         R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":1e300,"typ":"access"})",
         R"({"sub":"u","org":"o","role":"owner","iat":1.5,"exp":2000000000,"typ":"access"})",
         R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":"2000000000","typ":"access"})"}) {
      CAPTURE(payload);
      CHECK_FALSE(verify_access_token(forge(R"({"alg":"HS256"})", payload, "k"),
                                      "k", 10)
                      .has_value());
    }
    CHECK(
        verify_access_token(
            forge(
                R"({"alg":"HS256"})",
                R"({"sub":"u","org":"o","role":"owner","iat":1,"exp":2000000000,"typ":"access"})",
                "k"),
            "k", 10)
            .has_value());
  }
  TEST_CASE("tampered payloads and malformed tokens are refused") {
    auto token = sign_access_token(sample(1000), "s3cret");
    auto tampered = token;
    tampered[tampered.find('.') + 3] ^= 1;
    CHECK_FALSE(verify_access_token(tampered, "s3cret", 1001).has_value());
    for (auto bad : {"", "a", "a.b", "a.b.c.d", "...", "!!.??.**"})
      CHECK_FALSE(verify_access_token(bad, "s3cret", 1001).has_value());
    CHECK_FALSE(verify_access_token(
                    forge(R"({"alg":"HS256"})", R"({"sub":1})", "k"), "k", 1)
                    .has_value());
  }
  TEST_CASE("passwords hash with a salt and verify") {
    REQUIRE(init_crypto());
    auto a = hash_password("correct horse");
    auto b = hash_password("correct horse");
    CHECK(a != b);
    CHECK(a.rfind("$argon2id$", 0) == 0);
    CHECK(verify_password("correct horse", a));
    CHECK_FALSE(verify_password("wrong horse", a));
    CHECK_FALSE(verify_password("x", ""));
  }
  TEST_CASE("API keys have the spec's form and are stored as a hash") {
    REQUIRE(init_crypto());
    auto live = generate_api_key(false);
    auto test = generate_api_key(true);
    CHECK(live.key.rfind("svc_live_", 0) == 0);
    CHECK(test.key.rfind("svc_test_", 0) == 0);
    CHECK(live.key.size() == 9 + 40);
    CHECK(live.hash == sha256_hex(live.key));
    CHECK(live.prefix == live.key.substr(0, 12) + "\u2026");
    CHECK(generate_api_key(false).key != live.key);
  }
  TEST_CASE("identifiers carry their prefix and differ") {
    auto a = new_id("org");
    CHECK(a.rfind("org_", 0) == 0);
    CHECK(a.size() == 24);
    CHECK(a != new_id("org"));
  }
}
