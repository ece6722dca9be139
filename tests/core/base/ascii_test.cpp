#include "core/base/ascii.hpp"

#include <doctest/doctest.h>

#include <cctype>
#include <cstddef>
#include <string>

using mailassay::core::all_ascii;
using mailassay::core::ascii_iequals;
using mailassay::core::ascii_istarts_with;
using mailassay::core::ascii_lower;
using mailassay::core::ascii_upper;
using mailassay::core::is_ascii_alnum;
using mailassay::core::is_ascii_alpha;
using mailassay::core::is_ascii_digit;
using mailassay::core::is_ascii_hex;
using mailassay::core::is_ascii_lower;
using mailassay::core::is_ascii_upper;
using mailassay::core::trim_any;
using mailassay::core::trim_blanks;

TEST_SUITE("core.base.ascii") {
  TEST_CASE("the character tests and case maps agree with <cctype> in the C "
            "locale for every byte") {
    // The core's copies they replaced used <cctype> in places; the process
    // never leaves the C locale, where these are the same functions.
    for (int i = 0; i < 256; ++i) {
      auto c = static_cast<char>(i);
      CAPTURE(i);
      CHECK(is_ascii_digit(c) == (std::isdigit(i) != 0));
      CHECK(is_ascii_upper(c) == (std::isupper(i) != 0));
      CHECK(is_ascii_lower(c) == (std::islower(i) != 0));
      CHECK(is_ascii_alpha(c) == (std::isalpha(i) != 0));
      CHECK(is_ascii_alnum(c) == (std::isalnum(i) != 0));
      CHECK(is_ascii_hex(c) == (std::isxdigit(i) != 0));
      CHECK(static_cast<unsigned char>(ascii_lower(c)) == std::tolower(i));
      CHECK(static_cast<unsigned char>(ascii_upper(c)) == std::toupper(i));
    }
    static_assert(ascii_lower('Q') == 'q' && ascii_upper('q') == 'Q');
    static_assert(is_ascii_hex('F') && !is_ascii_hex('g'));
    CHECK(ascii_lower("MiXeD-42\xc3\x89") == "mixed-42\xc3\x89");
  }

  TEST_CASE("ascii_istarts_with compares the prefix ignoring ASCII case") {
    CHECK(ascii_istarts_with("IPv6:2001:db8::1", "ipv6:"));
    CHECK(ascii_istarts_with("xn--mnchen-3ya", "XN--"));
    CHECK(ascii_istarts_with("abc", ""));
    CHECK_FALSE(ascii_istarts_with("xn", "xn--"));
    CHECK_FALSE(ascii_istarts_with("xn\r\r", "xn--"));
    CHECK_FALSE(ascii_istarts_with("ipv6\x1a", "ipv6:"));
  }

  TEST_CASE("trim_any removes the bytes of its set at both ends only") {
    CHECK(trim_any(" \t\rsuffix kind\r", " \t\r") == "suffix kind");
    CHECK(trim_any("\v\fword\n", " \t\r\n\v\f") == "word");
    CHECK(trim_any("\va\f", " \t") == "\va\f");
    CHECK(trim_any("   ", " ").empty());
    CHECK(trim_any("", " ").empty());
    CHECK(trim_any("a b", " ") == "a b");
    static_assert(trim_any("--x--", "-") == "x");
  }

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
