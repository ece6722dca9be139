// The syntax corners of issue #19, with examples written for it: example
// names are ordinary names, RFC 5321 quoted strings, IDNA2008 reserved
// labels, reverse-mapping names and one-letter TLDs (docs/syntax.md).

#include "core/syntax/address.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <string>
#include <string_view>

using namespace mailassay::core::syntax;

namespace {

constexpr std::string_view ok = "";
constexpr std::string_view bad = reason_invalid_syntax;
constexpr std::string_view special = reason_special_use_domain;

struct row {
  std::string_view input;
  bool valid;
  std::string_view reason;
  std::string_view detail; // "" when valid
};

// Production settings: special-use domains refused.
constexpr row production[] = {
    // RFC 6761 §6.5: example names are ordinary; DNS decides.
    {"kim.berger@example.com", true, ok, ""},
    {"@example.org", false, bad, "empty local part"},
    {"postmaster@example.net", true, ok, ""},
    {"SALES@Example.ORG", true, ok, ""},
    {"r.diaz@mail.example.com", true, ok, ""},
    {"tom@shop.example", true, ok, ""},
    {"tom@example", false, bad,
     "domain has a single label (no top-level domain)"},
    // Still special-use (RFC 6761 §6.2-6.4, RFC 6762, RFC 7686, RFC 3172).
    {"dev@build.test", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): test"},
    {"x@nowhere.invalid", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): invalid"},
    {"root@db.localhost", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): localhost"},
    {"nas@diskstation.local", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): local"},
    {"anon@expyuzz4wqqyqhjn.onion", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): onion"},
    {"admin@router.home.arpa", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): arpa"},
    // Reverse-mapping names are refused as syntax, whatever the options.
    {"abuse@1.2.0.192.in-addr.arpa", false, bad,
     "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a mail domain"},
    {"abuse@in-addr.arpa", false, bad,
     "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a mail domain"},
    {"x@b.8.d.0.1.0.0.2.ip6.arpa", false, bad,
     "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a mail domain"},
    {"x@not-in-addr.arpa", false, special,
     "domain is special-use (RFC 6761, 6762, 7686, 3172): arpa"},
    // Names that merely contain the reserved words are ordinary.
    {"ana@testing.com", true, ok, ""},
    {"ana@local.de", true, ok, ""},
    {"ana@arpa.io", true, ok, ""},
    {"ana@example.co.uk", true, ok, ""},
    // RFC 5321 §4.1.2: qtextSMTP includes the space; Quoted-string may be
    // empty; quoted-pairSMTP escapes %d32-126.
    {"\"maria jose\"@correo.es", true, ok, ""},
    {"\" \"@acme.io", true, ok, ""},
    {"\"\"@acme.io", true, ok, ""},
    {"\"van der\\ berg\"@acme.nl", true, ok, ""},
    {"\"tab\there\"@acme.io", false, bad, "contains whitespace"},
    {"maria jose@correo.es", false, bad, "contains whitespace"},
    {"\"unclosed@acme.io", false, bad, "unterminated quoted local part"},
    // IDNA2008 (RFC 5891 §4.2.3.1): "--" in the 3rd and 4th positions is
    // reserved for A-labels.
    {"ops@qa--team.com", false, bad,
     "label has -- in the 3rd and 4th positions (reserved by IDNA2008; only "
     "xn-- labels may)"},
    {"ops@mail.r3--sn.net", false, bad,
     "label has -- in the 3rd and 4th positions (reserved by IDNA2008; only "
     "xn-- labels may)"},
    {"ops@QA--TEAM.COM", false, bad,
     "label has -- in the 3rd and 4th positions (reserved by IDNA2008; only "
     "xn-- labels may)"},
    {"ops@xn--bcher-kva.de", true, ok, ""},
    {"ops@XN--BCHER-KVA.DE", true, ok, ""},
    {"ops@qa-team.com", true, ok, ""},
    {"ops@q--team.com", true, ok, ""},
    {"ops@qat--eam.com", true, ok, ""},
    {"ops@ab--.com", false, bad, "domain label ends with a hyphen"},
    // No one-letter TLD exists.
    {"lena@gmail.c", false, bad,
     "top-level domain has a single letter (no such TLD exists)"},
    {"lena@mail.acme.x", false, bad,
     "top-level domain has a single letter (no such TLD exists)"},
    {"lena@x.io", true, ok, ""},
    {"lena@x.co", true, ok, ""},
};

} // namespace

TEST_SUITE("core.syntax.corners") {
  TEST_CASE("example names, quoted strings, reserved labels and TLDs") {
    options opts;
    for (const auto& r : production) {
      CAPTURE(r.input);
      auto p = parse(r.input, opts);
      CHECK(p.valid == r.valid);
      CHECK(p.reason == r.reason);
      CHECK(p.detail == r.detail);
    }
  }

  TEST_CASE("test domains allowed: special-use accepted, reverse names not") {
    options opts;
    opts.allow_test_domains = true;
    constexpr row rows[] = {
        {"dev@build.test", true, ok, ""},
        {"admin@router.home.arpa", true, ok, ""},
        {"kim@example.com", true, ok, ""},
        {"abuse@1.2.0.192.in-addr.arpa", false, bad,
         "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a mail domain"},
        {"x@b.8.d.0.1.0.0.2.ip6.arpa", false, bad,
         "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a mail domain"},
        {"x@qa--team.test", false, bad,
         "label has -- in the 3rd and 4th positions (reserved by IDNA2008; "
         "only xn-- labels may)"},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto p = parse(r.input, opts);
      CHECK(p.valid == r.valid);
      CHECK(p.reason == r.reason);
      CHECK(p.detail == r.detail);
    }
  }

  TEST_CASE("an example address keeps its parts like any other") {
    auto p = parse("Kim.Berger@Example.COM", options{});
    REQUIRE(p.valid);
    CHECK(p.reason.empty());
    CHECK(p.local_part == "Kim.Berger");
    CHECK(p.domain == "example.com");
    CHECK(p.ascii_domain == "example.com");
    CHECK(p.normalized == "Kim.Berger@example.com");
  }

  TEST_CASE("a quoted local part with a space is kept as written") {
    auto p = parse("\"Maria Jose\"@Correo.ES", options{});
    REQUIRE(p.valid);
    CHECK(p.quoted_local);
    CHECK(p.local_part == "\"Maria Jose\"");
    CHECK(p.normalized == "\"Maria Jose\"@correo.es");
    auto empty = parse("\"\"@acme.io", options{});
    REQUIRE(empty.valid);
    CHECK(empty.local_part == "\"\"");
  }

  TEST_CASE("the mailbox key folds only what the provider allows") {
    struct key_row {
      std::string_view input;
      std::string_view key;
    };
    constexpr key_row rows[] = {
        // Domain case always; local part as written elsewhere (RFC 5321
        // §2.4: local parts may be case-sensitive).
        {"D@GMAIL.COM", "d@gmail.com"},
        {"Tom.Berg+news@GoogleMail.com", "tomberg@gmail.com"},
        {"T.O.M.B.E.R.G@gmail.com", "tomberg@gmail.com"},
        {"Ana+x@Outlook.COM", "ana@outlook.com"},
        {"Ana-x@Yahoo.com", "ana-x@yahoo.com"},
        {"Ana@Acme.IO", "Ana@acme.io"},
        {"ana+x@acme.io", "ana+x@acme.io"},
        {"Jürgen@Bücher.DE", "Jürgen@xn--bcher-kva.de"},
        {"jurgen@xn--bcher-kva.de", "jurgen@xn--bcher-kva.de"},
        {"\"A b\"@ACME.io", "\"A b\"@acme.io"},
        {"x@[192.0.2.1]", "x@[192.0.2.1]"},
        {"not an address", ""},
    };
    std::string key;
    for (const auto& r : rows) {
      CAPTURE(r.input);
      mailbox_key(parse(r.input, options{}), key);
      CHECK(key == r.key);
    }
  }
}
