// Issue #34: the Unicode rules of a local part (no private-use characters,
// no combining mark first) and Unicode normalization (NFC) before every
// check, each case with its reference (docs/syntax.md).

#include "core/syntax/address.hpp"
#include "core/syntax/nfc.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <iterator>
#include <string>
#include <string_view>

using namespace mailassay::core::syntax;

namespace {

struct row {
  std::string input;
  bool valid;
  std::string_view detail; // "" when valid
  std::string_view reference;
};

std::string repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i)
    out += s;
  return out;
}

// U+0958 DEVANAGARI LETTER QA: 3 octets, a composition exclusion whose NFC
// form is U+0915 U+093C, 6 octets.
constexpr std::string_view qa = "\xe0\xa5\x98";

void check_rows(const row* first, const row* last) {
  for (const auto* r = first; r != last; ++r) {
    CAPTURE(r->input);
    CAPTURE(r->reference);
    auto p = parse(r->input, options{});
    CHECK(p.valid == r->valid);
    CHECK(p.reason == (r->valid ? "" : reason_invalid_syntax));
    CHECK(p.detail == r->detail);
  }
}

} // namespace

TEST_SUITE("core.syntax.unicode") {
  TEST_CASE("a local part has no private-use character") {
    const row rows[] = {
        {"a\xee\x80\x80"
         "b@acme.io",
         false, "local part has a private-use character (U+E000)",
         "The Unicode Standard §23.5: U+E000-U+F8FF, general category Co"},
        {"\xef\xa3\xbf@acme.io", false,
         "local part has a private-use character (U+F8FF)",
         "§23.5: the BMP area's last code point"},
        {"a\xf3\xb0\x80\x80@acme.io", false,
         "local part has a private-use character (U+F0000)",
         "§23.5: Supplementary Private Use Area-A (plane 15)"},
        {"a\xf3\xbf\xbf\xbd@acme.io", false,
         "local part has a private-use character (U+FFFFD)",
         "§23.5: plane 15's last private-use code point"},
        {"a\xf4\x80\x80\x80@acme.io", false,
         "local part has a private-use character (U+100000)",
         "§23.5: Supplementary Private Use Area-B (plane 16)"},
        {"a\xf4\x8f\xbf\xbd@acme.io", false,
         "local part has a private-use character (U+10FFFD)",
         "§23.5: plane 16's last private-use code point"},
        {"\"a\xee\x80\x80\"@acme.io", false,
         "local part has a private-use character (U+E000)",
         "§23.5, in a quoted local part too (RFC 6531 §3.3)"},
        {"a\xf4\x8f\xbf\xbf@acme.io", false,
         "contains an invisible or format character (U+10FFFF)",
         "§23.7: U+10FFFF is a noncharacter, refused before issue #34"},
        {"a@b\xee\x80\x80.io", false,
         "domain has a character IDNA2008 disallows (fullwidth, symbol, "
         "emoji or upper-case form)",
         "RFC 5892 §2.6: private use is DISALLOWED in a domain (libidn2)"},
        // Next to the areas: ordinary characters.
        {"\xee\x9f\xbf"
         "a@acme.io",
         false, "local part has a private-use character (U+E7FF)",
         "§23.5: inside the BMP area"},
        {"a\xed\x9f\xbb@acme.io", true, "",
         "U+D7FB HANGUL JONGSEONG PHIEUPH-THIEUTH, before the area"},
        {"a\xef\xa4\x80@acme.io", true, "",
         "U+F900, after the area (a CJK compatibility ideograph, NFC U+8C48)"},
        {"a\xf3\xaf\xbf\xbd@acme.io", true, "",
         "U+EFFFD, unassigned (plane 14), not private use"},
    };
    check_rows(std::begin(rows), std::end(rows));
  }

  TEST_CASE("a local part does not start with a combining mark") {
    const row rows[] = {
        {"\xcc\x81"
         "abc@acme.io",
         false, "local part starts with a combining mark (U+0301)",
         "The Unicode Standard §3.6 D52, U+0301 COMBINING ACUTE ACCENT (Mn)"},
        {"\xe0\xa4\x83x@acme.io", false,
         "local part starts with a combining mark (U+0903)",
         "§3.6 D52, U+0903 DEVANAGARI SIGN VISARGA (Mc)"},
        {"\xe2\x83\x9dx@acme.io", false,
         "local part starts with a combining mark (U+20DD)",
         "§3.6 D52, U+20DD COMBINING ENCLOSING CIRCLE (Me)"},
        {"\xf0\x9d\x85\xa5x@acme.io", false,
         "local part starts with a combining mark (U+1D165)",
         "§3.6 D52, U+1D165 MUSICAL SYMBOL COMBINING STEM (Mc)"},
        {"\xcc\x81@acme.io", false,
         "local part starts with a combining mark (U+0301)",
         "§3.6 D52, a mark alone"},
        // After a base character a mark is what it is for.
        {"a\xcc\x81"
         "bc@acme.io",
         true, "", "§3.6 D52: a base, then its mark (NFC: U+00E1)"},
        {"\xe0\xa4\x95\xe0\xa4\x83@acme.io", true, "",
         "§3.6: U+0915 KA, then U+0903 VISARGA"},
        // The rule is about the first character only.
        {"x.\xcc\x81y@acme.io", true, "",
         "issue #34: only the start of the local part"},
        {"\"\xcc\x81\"@acme.io", true, "",
         "RFC 5321 §4.1.2: a quoted local part starts with its quote"},
    };
    check_rows(std::begin(rows), std::end(rows));
  }

  TEST_CASE("the checks see the address in NFC") {
    const std::string long_domain = repeat("a", 63) + "." + repeat("b", 63) +
                                    "." + repeat("c", 63) +
                                    ".com"; // 195 octets
    const row rows[] = {
        {"me.\xcd\xbe@example.com", false,
         "character ';' is not allowed in an unquoted local part",
         "UAX #15: U+037E GREEK QUESTION MARK is canonically U+003B ';'"},
        {"me\xcd\xbe@example.com", false,
         "character ';' is not allowed in an unquoted local part",
         "UAX #15: U+037E -> ';'"},
        {"a\xce\x87"
         "b@example.com",
         true, "",
         "UAX #15: U+0387 GREEK ANO TELEIA -> U+00B7 MIDDLE DOT, allowed"},
        {"\xe2\x84\xaaim@acme.io", true, "",
         "UAX #15: U+212A KELVIN SIGN -> 'K', an ASCII local part"},
        {"<\xcc\xb8x@acme.io", true, "",
         "UAX #15: '<' U+0338 composes to U+226E NOT LESS-THAN"},
        // Domains: a character normalization replaces is one IDNA2008
        // disallows (RFC 5892 §2.2, unstable under NFKC_Casefold), not
        // rescued; a decomposed one is composed.
        {"a@\xe2\x84\xaa"
         "elvin.com",
         false,
         "domain has a character IDNA2008 disallows (U+212A, which "
         "normalization would replace)",
         "RFC 5892 §2.2, UAX #15: U+212A KELVIN SIGN -> 'K'"},
        {"a@\xe2\x84\xa6.com", false,
         "domain has a character IDNA2008 disallows (U+2126, which "
         "normalization would replace)",
         "RFC 5892 §2.2, UAX #15: U+2126 OHM SIGN -> U+03A9"},
        {"a@\xe2\x84\xab"
         "ngstr\xc3\xb6m.se",
         false,
         "domain has a character IDNA2008 disallows (U+212B, which "
         "normalization would replace)",
         "RFC 5892 §2.2, UAX #15: U+212B ANGSTROM SIGN -> U+00C5"},
        {"a@\xc3\x85ngstr\xc3\xb6m.se", true, "",
         "RFC 5892: U+00C5 (lower-cased to U+00E5) is PVALID"},
        {"a@A\xcc\x8angstro\xcc\x88m.se", true, "",
         "RFC 5891 §5.3, UAX #15: decomposed input is composed"},
        // Length limits hold for the NFC form (RFC 5321 §4.5.3.1).
        {repeat(qa, 10) + "@acme.io", true, "",
         "RFC 5321 §4.5.3.1.1: 30 octets given, 60 in NFC"},
        {repeat(qa, 21) + "@acme.io", false,
         "local part longer than 64 octets in NFC",
         "RFC 5321 §4.5.3.1.1: 63 octets given, 126 in NFC"},
        {repeat(qa, 10) + "@" + long_domain, false,
         "address longer than 254 octets in NFC",
         "RFC 5321 §4.5.3.1.3: 226 octets given, 256 in NFC"},
        {repeat("a", 60) + "@" + long_domain, false,
         "address longer than 254 octets",
         "RFC 5321 §4.5.3.1.3: ASCII, 256 octets as given"},
        {"\xe0\xa4\x95\xe0\xa4\xbc" + repeat("a", 58) + "@acme.io", true, "",
         "RFC 5321 §4.5.3.1.1: already NFC, 64 octets"},
    };
    check_rows(std::begin(rows), std::end(rows));
  }

  TEST_CASE("the answer's parts and normalized form are the NFC form") {
    struct parts_row {
      std::string_view input;
      std::string_view local_part;
      std::string_view domain;
      std::string_view ascii_domain;
      std::string_view normalized;
      bool needs_smtputf8;
    };
    constexpr parts_row rows[] = {
        // UAX #15 canonical composition: o U+0308 -> U+00F6.
        {"jo\xcc\x88rg@acme.de", "j\xc3\xb6rg", "acme.de", "acme.de",
         "j\xc3\xb6rg@acme.de", true},
        {"a@bu\xcc\x88"
         "cher.de",
         "a",
         "b\xc3\xbc"
         "cher.de",
         "xn--bcher-kva.de",
         "a@b\xc3\xbc"
         "cher.de",
         false},
        // U+212A -> 'K': the NFC address is ASCII, no SMTPUTF8 needed.
        {"\xe2\x84\xaaim@acme.io", "Kim", "acme.io", "acme.io", "Kim@acme.io",
         false},
        // Providers fold the NFC form (gmail: case, dots, +tags).
        {"\xe2\x84\xaa.I.M+x@gmail.com", "K.I.M+x", "gmail.com", "gmail.com",
         "kim@gmail.com", false},
        // U+F900 (CJK COMPATIBILITY IDEOGRAPH) -> U+8C48.
        {"\xef\xa4\x80@acme.io", "\xe8\xb1\x88", "acme.io", "acme.io",
         "\xe8\xb1\x88@acme.io", true},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto p = parse(r.input, options{});
      REQUIRE(p.valid);
      CHECK(p.input == r.input); // as given
      CHECK(p.local_part == r.local_part);
      CHECK(p.domain == r.domain);
      CHECK(p.ascii_domain == r.ascii_domain);
      CHECK(p.normalized == r.normalized);
      CHECK(p.needs_smtputf8 == r.needs_smtputf8);
    }
  }

  TEST_CASE("a reused result holds nothing of the form given") {
    parsed_address p;
    parse("jo\xcc\x88rg@Acme.DE", options{}, p);
    REQUIRE(p.valid);
    parse("me.\xcd\xbe@example.com", options{}, p);
    CHECK_FALSE(p.valid);
    CHECK(p.input == "me.\xcd\xbe@example.com");
    CHECK(p.local_part.empty());
    CHECK(p.normalized.empty());
    parse("kim@acme.io", options{}, p);
    CHECK(p.valid);
    CHECK_FALSE(p.needs_smtputf8);
    CHECK(p.normalized == "kim@acme.io");
  }

  TEST_CASE("special-use domains are refused after normalizing too") {
    auto p = parse("jo\xcc\x88rg@build.test", options{});
    CHECK_FALSE(p.valid);
    CHECK(p.reason == reason_special_use_domain);
    CHECK(p.local_part == "j\xc3\xb6rg");
    options allow;
    allow.allow_test_domains = true;
    auto q = parse("jo\xcc\x88rg@build.test", allow);
    CHECK(q.valid);
    CHECK(q.normalized == "j\xc3\xb6rg@build.test");
  }

  TEST_CASE("an address and its NFC form get one answer") {
    // The property behind the rule: normalizing first means the answer
    // depends on the NFC form only. Random addresses from pieces that NFC
    // composes, reorders, decomposes or replaces; a domain piece is never
    // one NFC replaces (those are refused as given, see above).
    constexpr std::string_view local_pieces[] = {"a",
                                                 "o",
                                                 "e",
                                                 ".",
                                                 "\"",
                                                 "u\xcc\x88",
                                                 "\xcc\x88",
                                                 "\xcc\x81",
                                                 "\xcc\xa3",
                                                 "\xcd\xbe",
                                                 "\xe2\x84\xaa",
                                                 "\xe0\xa5\x98",
                                                 "\xe1\x84\x80",
                                                 "\xe1\x85\xa1",
                                                 "\xc3\xbc",
                                                 "<",
                                                 "\xcc\xb8",
                                                 "+"};
    constexpr std::string_view domain_pieces[] = {
        "a",        "o",        "u",    "-",   ".",  "\xcc\x88", "\xcc\x81",
        "\xc3\xbc", "\xc3\xb6", "xn--", "com", "de", "B\xc3\x9c"};
    std::uint64_t x = 0x9e3779b97f4a7c15u;
    auto next = [&](std::size_t n) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      return static_cast<std::size_t>(x % n);
    };
    std::string nfc;
    std::size_t valid = 0;
    for (int k = 0; k < 20000; ++k) {
      std::string input;
      for (auto n = 1 + next(5); n > 0; --n)
        input += local_pieces[next(std::size(local_pieces))];
      input += '@';
      for (auto n = 1 + next(4); n > 0; --n)
        input += domain_pieces[next(std::size(domain_pieces))];
      input += next(2) ? ".de" : ".com";
      REQUIRE(to_nfc(input, nfc));
      auto given = parse(input, options{});
      auto normal = parse(nfc, options{});
      CAPTURE(input);
      CHECK(given.valid == normal.valid);
      CHECK(given.reason == normal.reason);
      CHECK(given.normalized == normal.normalized);
      CHECK(given.local_part == normal.local_part);
      CHECK(given.ascii_domain == normal.ascii_domain);
      valid += given.valid;
    }
    CHECK(valid > 1000); // the pieces make valid addresses too
  }
}
