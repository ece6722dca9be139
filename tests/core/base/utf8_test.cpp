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
}
