// Issue #34: a top-level domain is letters only, or an IDN TLD as an A-label
// (xn--) or U-label, at least two characters (docs/syntax.md).

#include "core/syntax/address.hpp"

#include <doctest/doctest.h>

#include <string_view>

using namespace mailassay::core::syntax;

namespace {

struct row {
  std::string_view input;
  bool valid;
  std::string_view detail; // "" when valid
  std::string_view reference;
};

constexpr std::string_view not_letters =
    "top-level domain is not letters only (nor an xn-- A-label)";

constexpr row rows[] = {
    // Hyphens and digits in a TLD: no such TLD exists or may exist.
    {"x@data-workshop.c-om", false, not_letters,
     "RFC 1123 §2.1: a TLD is alphabetic"},
    {"x@yahoo.mu-seum", false, not_letters,
     "RFC 1123 §2.1: a TLD is alphabetic"},
    {"me@bad.tld-2", false, not_letters, "RFC 1123 §2.1: a TLD is alphabetic"},
    {"me@bad.c0m", false, not_letters, "RFC 1123 §2.1: a TLD is alphabetic"},
    {"me@bad.2com", false, not_letters, "RFC 1123 §2.1: a TLD is alphabetic"},
    {"me@bad.CO-M", false, not_letters, "RFC 1123 §2.1, any case"},
    {"me@sub.ab--cd", false,
     "label has -- in the 3rd and 4th positions (reserved by IDNA2008; only "
     "xn-- labels may)",
     "RFC 5891 §4.2.3.1: R-LDH labels come first"},
    // Unchanged refusals keep their own words.
    {"me@bad.123", false, "top-level domain is all-numeric",
     "RFC 1123 §2.1 (all-numeric TLDs, refused before issue #34)"},
    {"me@bad.c", false,
     "top-level domain has a single letter (no such TLD exists)",
     "root zone: no one-letter TLD (refused before issue #34)"},
    // Letters only, any case, any length from two.
    {"me@acme.io", true, "", "RFC 1123 §2.1"},
    {"me@acme.COM", true, "", "RFC 1123 §2.1, case-insensitive (RFC 4343)"},
    {"me@acme.museum", true, "", "RFC 1123 §2.1"},
    {"me@acme.international", true, "", "RFC 1123 §2.1"},
    // The hyphen and digits stay fine below the TLD.
    {"me@data-workshop2.com", true, "", "RFC 1123 §2.1 (host labels: LDH)"},
    {"me@3com.com", true, "", "RFC 1123 §2.1 (a label may start with a digit)"},
    // IDN TLDs: A-label or U-label (RFC 5890 §2.3.2.1).
    {"me@example.xn--p1ai", true, "", "RFC 5890 §2.3.2.1: .рф as an A-label"},
    {"me@example.XN--P1AI", true, "", "RFC 5890 §2.3.2.1, any case"},
    {"me@example.\xd1\x80\xd1\x84", true, "",
     "RFC 5890 §2.3.2.1: .рф as a U-label"},
    {"me@example.xn--zz", false, "invalid punycode in an xn-- label",
     "RFC 5891 §5.4: an A-label must decode"},
};

} // namespace

TEST_SUITE("core.syntax.tld") {
  TEST_CASE("a TLD is letters only or an IDN label") {
    for (const auto& r : rows) {
      CAPTURE(r.input);
      CAPTURE(r.reference);
      auto p = parse(r.input, options{});
      CHECK(p.valid == r.valid);
      CHECK(p.reason == (r.valid ? "" : reason_invalid_syntax));
      CHECK(p.detail == r.detail);
    }
  }
}
