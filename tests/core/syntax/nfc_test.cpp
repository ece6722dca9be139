// core/syntax/nfc against a reference it does not share: NFC forms computed
// by Python's unicodedata (tests/core/syntax/gen_nfc_cases.py), and, for the
// quick check, the full normalizer over every code point.

#include "core/base/utf8.hpp"
#include "core/syntax/nfc.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

using namespace mailassay::core::syntax;
using mailassay::core::utf8_append;

namespace {

#include "nfc_cases.inc"

// The UTF-8 form of the code points from `p` up to the next 0; moves `p`
// past that 0.
std::string take(const char32_t*& p) {
  std::string s;
  for (; *p != 0; ++p)
    utf8_append(s, *p);
  ++p;
  return s;
}

std::string utf8_of(char32_t cp) {
  std::string s;
  utf8_append(s, cp);
  return s;
}

} // namespace

TEST_SUITE("core.syntax.nfc") {
  TEST_CASE("the reference and the tables are of one Unicode version") {
    CHECK(nfc_cases_unicode_version == unicode_version());
  }

  TEST_CASE("to_nfc gives Python's NFC form for every reference case") {
    // UAX #15 §3.11-3.12 and the decomposition, exclusion and class data
    // of the Unicode version above.
    const char32_t* p = std::begin(nfc_cases);
    std::size_t n = 0;
    std::string got;
    while (p != std::end(nfc_cases)) {
      auto input = take(p);
      auto expected = take(p);
      CAPTURE(input);
      REQUIRE(to_nfc(input, got));
      CHECK(got == expected);
      // The fast path never passes over text that normalizing changes.
      if (nfc_quick_yes(input))
        CHECK(input == expected);
      ++n;
    }
    CHECK(n > 5000);
  }

  TEST_CASE("nfc_never holds exactly for the code points NFC replaces") {
    // NFC_Quick_Check=No (UAX #15 §9): Python's NFC of the code point alone
    // differs from it (the reference cases hold every decomposable one).
    const char32_t* p = std::begin(nfc_cases);
    while (p != std::end(nfc_cases)) {
      const char32_t* first = p;
      auto input = take(p);
      auto expected = take(p);
      if (first[1] != 0)
        continue; // one code point cases only
      CAPTURE(input);
      CHECK(nfc_never(first[0]) == (input != expected));
    }
    CHECK(nfc_never(0x212A));       // KELVIN SIGN -> K
    CHECK(nfc_never(0x037E));       // GREEK QUESTION MARK -> ;
    CHECK(nfc_never(0x0958));       // DEVANAGARI QA, a composition exclusion
    CHECK_FALSE(nfc_never(0x00E9)); // é is its own NFC
    CHECK_FALSE(nfc_never('K'));
  }

  TEST_CASE("the quick check agrees with the full normalizer everywhere") {
    // For every scalar value: what the quick check lets through alone, or
    // after a base letter, normalization leaves unchanged.
    std::string got;
    std::size_t passed = 0;
    for (char32_t cp = 0; cp <= 0x10FFFF; ++cp) {
      if (cp >= 0xD800 && cp <= 0xDFFF)
        continue;
      auto alone = utf8_of(cp);
      std::string after_base = "a", before_base = alone;
      after_base += alone;
      before_base += 'e';
      for (const auto& s : {alone, after_base, before_base}) {
        if (!nfc_quick_yes(s))
          continue;
        ++passed;
        REQUIRE(to_nfc(s, got));
        if (got != s) {
          CAPTURE(s);
          FAIL("quick check passed text that NFC changes");
        }
      }
    }
    CHECK(passed > 3000000);
  }

  TEST_CASE("ASCII is NFC; text that is not UTF-8 is refused") {
    CHECK(nfc_quick_yes(""));
    CHECK(nfc_quick_yes("kim.berger+news@example.com"));
    CHECK(nfc_quick_yes("j\xc3\xb6rg@m\xc3\xbcnchen.de")); // precomposed
    CHECK_FALSE(nfc_quick_yes("jo\xcc\x88rg@acme.de"));    // o + U+0308
    CHECK_FALSE(nfc_quick_yes("a\xff@acme.de"));
    std::string out;
    CHECK_FALSE(to_nfc("a\xff@acme.de", out));
    CHECK_FALSE(to_nfc("a\xed\xa0\x80", out)); // a surrogate
    REQUIRE(to_nfc("jo\xcc\x88rg@acme.de", out));
    CHECK(out == "j\xc3\xb6rg@acme.de");
  }

  TEST_CASE("combining classes of a few well-known marks") {
    CHECK(combining_class('a') == 0);
    CHECK(combining_class(0x0301) == 230); // COMBINING ACUTE ACCENT
    CHECK(combining_class(0x0323) == 220); // COMBINING DOT BELOW
    CHECK(combining_class(0x0334) == 1);   // COMBINING TILDE OVERLAY
    CHECK(combining_class(0x093C) == 7);   // DEVANAGARI SIGN NUKTA
  }
}
