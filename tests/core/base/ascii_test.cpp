#include "core/base/ascii.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <string>

using mailassay::core::all_ascii;
using mailassay::core::ascii_iequals;
using mailassay::core::ascii_lower;
using mailassay::core::trim_blanks;

TEST_SUITE("core.base.ascii") {
  TEST_CASE("ascii_iequals ignores the case of ASCII letters only") {
    CHECK(ascii_iequals("application/json", "application/json"));
    CHECK(ascii_iequals("Application/JSON", "application/json"));
    CHECK(ascii_iequals("X-REQUEST-ID", "x-request-id"));
    CHECK(ascii_iequals("", ""));
    CHECK_FALSE(ascii_iequals("application/json", "application/jsom"));
    CHECK_FALSE(ascii_iequals("application/json", "application/json "));
    CHECK_FALSE(ascii_iequals("abc", "ab"));
    // Only A-Z fold: '@' and '`' sit 0x20 apart but are different.
    CHECK_FALSE(ascii_iequals("@", "`"));
    CHECK_FALSE(ascii_iequals("[", "{"));
    // Bytes above ASCII compare as they are.
    CHECK(ascii_iequals("\xc3\x89", "\xc3\x89"));
    CHECK_FALSE(ascii_iequals("\xc3\x89", "\xc3\xa9"));
  }

  TEST_CASE("ascii_iequals agrees with comparing lower-cased copies") {
    // Every pair of bytes, in the middle of otherwise equal texts.
    for (int x = 0; x < 256; ++x)
      for (int y = 0; y < 256; ++y) {
        std::string a = "ab";
        std::string b = "ab";
        a.insert(a.begin() + 1, static_cast<char>(x));
        b.insert(b.begin() + 1, static_cast<char>(y));
        REQUIRE(ascii_iequals(a, b) == (ascii_lower(a) == ascii_lower(b)));
      }
  }

  TEST_CASE("trim_blanks removes spaces and tabs at both ends only") {
    struct row {
      std::string_view in;
      std::string_view out;
    };
    const row rows[] = {
        {"", ""},
        {" ", ""},
        {" \t \t", ""},
        {"a", "a"},
        {"  a", "a"},
        {"a\t\t", "a"},
        {"\t a b \t", "a b"},
        {"a \t b", "a \t b"},
        // Other white space is content: CR, LF, VT, FF and NBSP stay.
        {"\r\na\r\n", "\r\na\r\n"},
        {"\va\f", "\va\f"},
        {" \xc2\xa0"
         "a ",
         "\xc2\xa0"
         "a"},
    };
    for (const auto& r : rows) {
      CAPTURE(r.in);
      CHECK(trim_blanks(r.in) == r.out);
    }
    // The result is a view into the argument, not a copy.
    std::string_view s = "  kept  ";
    CHECK(trim_blanks(s).data() == s.data() + 2);
    static_assert(trim_blanks(" x\t") == "x");
  }

  TEST_CASE("all_ascii finds a byte from 0x80 up wherever it is") {
    CHECK(all_ascii(""));
    CHECK(all_ascii("kim.berger+news@example.com"));
    CHECK(all_ascii(std::string(100, '\x7f')));
    // At every position of strings around the 8-byte word size, so both
    // the word loop and the tail are covered.
    for (std::size_t n = 1; n <= 20; ++n)
      for (std::size_t at = 0; at < n; ++at)
        for (char high : {'\x80', '\xc3', '\xff'}) {
          std::string s(n, 'a');
          s[at] = high;
          CAPTURE(n);
          CAPTURE(at);
          CHECK_FALSE(all_ascii(s));
        }
  }
}
