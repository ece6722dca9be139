#include "core/base/utf8.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

using mailassay::core::utf8_scrub;
using mailassay::core::utf8_valid;

namespace {

const std::string fffd = "\xEF\xBF\xBD";

} // namespace

TEST_SUITE("core.base.utf8") {
  TEST_CASE("well-formed text is kept as it is") {
    for (std::string s : {"", "list.csv", "Müller – März.csv", "名单.csv",
                          "emoji \xF0\x9F\x98\x80.csv", "\xF4\x8F\xBF\xBF"})
      CHECK(utf8_scrub(s) == s);
  }

  TEST_CASE("each byte outside a well-formed sequence becomes U+FFFD") {
    struct row {
      std::string in, out;
    };
    const row rows[] = {
        {"a\xFF"
         "b",
         "a" + fffd + "b"},
        {"\x80", fffd},                                  // stray continuation
        {"\xC0\xAF", fffd + fffd},                       // overlong '/'
        {"\xE0\x80\xAF", fffd + fffd + fffd},            // overlong, 3 bytes
        {"\xED\xA0\x80", fffd + fffd + fffd},            // UTF-16 surrogate
        {"\xF4\x90\x80\x80", fffd + fffd + fffd + fffd}, // above U+10FFFF
        {"x\xC3", "x" + fffd},                           // cut short at the end
        {"\xE2\x82z", fffd + fffd + "z"},                // cut short inside
    };
    for (auto& r : rows) {
      CAPTURE(r.in);
      auto got = utf8_scrub(r.in);
      CHECK(got == r.out);
      // What the service does with it: write it as JSON, which throws on
      // anything that is not UTF-8.
      CHECK_NOTHROW((void)nlohmann::json(got).dump());
    }
  }

  TEST_CASE("the byte limit never cuts a sequence") {
    CHECK(utf8_scrub("abc", 2) == "ab");
    CHECK(utf8_scrub("a\xC3\xA9", 2) == "a"); // é does not fit
    CHECK(utf8_scrub("a\xC3\xA9", 3) == "a\xC3\xA9");
    CHECK(utf8_scrub("a\xFF", 3) == "a"); // nor does U+FFFD
    CHECK(utf8_scrub(std::string(300, 'x') + "\xE6\x97\xA5", 301).size() ==
          300);
  }

  TEST_CASE("utf8_valid agrees with nlohmann's strict dump") {
    // Short strings from bytes that matter: ASCII, every lead byte class,
    // continuations, the edges of overlong forms and surrogates.
    const unsigned char bytes[] = {'a',  0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0,
                                   0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
                                   0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF};
    std::uint64_t x = 0x75746638ull;
    int valid = 0;
    for (int i = 0; i < 300000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      std::string s;
      for (auto n = x % 5, y = x >> 8; n > 0; --n, y /= 20)
        s.push_back(static_cast<char>(bytes[y % 20]));
      bool dumps = true;
      try {
        (void)nlohmann::json(s).dump();
      } catch (const nlohmann::json::exception&) {
        dumps = false;
      }
      CAPTURE(s);
      REQUIRE(utf8_valid(s) == dumps);
      valid += dumps;
    }
    CHECK(valid > 1000);
    CHECK(utf8_valid(""));
    CHECK(utf8_valid("M\xC3\xBCller \xE2\x80\xA6 \xF0\x9F\x98\x80"));
    CHECK_FALSE(utf8_valid("\xED\xA0\x80")); // a surrogate
  }

  TEST_CASE("utf8_lead is RFC 3629's table of lead bytes") {
    // Every lead byte with every second byte, then continuations: the
    // sequence nlohmann's strict dump accepts is exactly the one the rule
    // allows, of the rule's length.
    auto dumps = [](const std::string& s) {
      try {
        (void)nlohmann::json(s).dump();
        return true;
      } catch (const nlohmann::json::exception&) {
        return false;
      }
    };
    for (int c = 0x80; c < 0x100; ++c)
      for (int b = 0; b < 0x100; ++b) {
        auto rule = mailassay::core::utf8_lead(static_cast<unsigned char>(c));
        bool allowed = rule.need > 0 && b >= rule.low && b <= rule.high;
        for (int len = 2; len <= 4; ++len) {
          std::string s{static_cast<char>(c), static_cast<char>(b)};
          s.append(static_cast<std::size_t>(len - 2), '\x80');
          CAPTURE(c);
          CAPTURE(b);
          CAPTURE(len);
          REQUIRE(dumps(s) == (allowed && len == rule.need + 1));
        }
      }
    for (int c = 0; c < 0x80; ++c)
      REQUIRE(mailassay::core::utf8_lead(static_cast<unsigned char>(c)).need ==
              0);
    static_assert(mailassay::core::utf8_lead(0xE0).low == 0xA0);
  }

  TEST_CASE("utf8_append and utf8_decode round-trip every scalar value") {
    // RFC 3629 §3: the shortest form of every scalar value (no surrogates),
    // which utf8_valid accepts and utf8_decode reads back whole.
    std::string s;
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF)
        continue;
      s.clear();
      mailassay::core::utf8_append(s, cp);
      char32_t back = 0;
      auto len = mailassay::core::utf8_decode(s, 0, back);
      REQUIRE(len == s.size());
      REQUIRE(back == cp);
      REQUIRE(len == (cp < 0x80      ? 1u
                      : cp < 0x800   ? 2u
                      : cp < 0x10000 ? 3u
                                     : 4u));
    }
  }

  TEST_CASE("utf8_decode refuses what is not UTF-8") {
    char32_t cp = 0;
    for (std::string s : {"\x80", "\xC0\xAF", "\xE0\x80\xAF", "\xED\xA0\x80",
                          "\xF4\x90\x80\x80", "\xC3", "\xE2\x82z"}) {
      CAPTURE(s);
      CHECK(mailassay::core::utf8_decode(s, 0, cp) == 0);
    }
    CHECK(mailassay::core::utf8_decode("a", 1, cp) == 0); // at the end
    CHECK(mailassay::core::utf8_decode("x\xC3\xA9", 1, cp) == 2);
    CHECK(cp == 0xE9);
  }
}
