#include "core/syntax/address.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::syntax;
using namespace std::string_literals;

namespace {

struct row {
  std::string input;
  bool valid;
  std::string_view reason;
};

constexpr std::string_view ok = "";
constexpr std::string_view bad = reason_invalid_syntax;
constexpr std::string_view literal = reason_ip_literal;
constexpr std::string_view special = reason_special_use_domain;

// before + n times c + after (built by append: GCC 12 warns falsely on
// chains of operator+).
std::string with(std::string_view before, char c, std::size_t n,
                 std::string_view after) {
  std::string s{before};
  s.append(n, c);
  s.append(after);
  return s;
}

// A domain of exactly `n` octets (n >= 5): labels of 61 'd's, then ".com".
std::string domain_of(std::size_t n) {
  std::string d;
  std::size_t body = n - 4;
  for (; body > 63; body -= 62)
    d.append(61, 'd').append(1, '.');
  d.append(body, 'd');
  return d.append(".com");
}

std::vector<row> syntax_rows() {
  return {
      // Ordinary dot-strings (RFC 5321 §4.1.2, RFC 3696 §3 examples).
      {"simple@domain.com", true, ok},
      {"very.common@domain.com", true, ok},
      {"disposable.style.email.with+symbol@domain.com", true, ok},
      {"other.email-with-hyphen@domain.com", true, ok},
      {"fully-qualified-domain@sub.domain.com", true, ok},
      {"user.name+tag+sorting@domain.com", true, ok},
      {"x@domain.com", true, ok},
      {"a@b.co", true, ok},
      {"example-indeed@strange-domain.com", true, ok},
      {"mailhost!username@domain.org", true, ok},
      {"user%example.com@domain.org", true, ok},
      {"user-@domain.org", true, ok},
      {"1234567890@domain.com", true, ok},
      {"_______@domain.com", true, ok},
      {"email@123.123.123.com", true, ok},
      {"email@domain.co.jp", true, ok},
      {"UPPER.Case@DOMAIN.COM", true, ok},
      {"a@1.com", true, ok},
      {"a@ab-cd.com", true, ok},
      {"a@a--cd.com", true, ok},
      // Every atext special (RFC 5322 §3.2.3), alone and together.
      {"a!b@domain.com", true, ok},
      {"a#b@domain.com", true, ok},
      {"a$b@domain.com", true, ok},
      {"a%b@domain.com", true, ok},
      {"a&b@domain.com", true, ok},
      {"a'b@domain.com", true, ok},
      {"a*b@domain.com", true, ok},
      {"a+b@domain.com", true, ok},
      {"a-b@domain.com", true, ok},
      {"a/b@domain.com", true, ok},
      {"a=b@domain.com", true, ok},
      {"a?b@domain.com", true, ok},
      {"a^b@domain.com", true, ok},
      {"a_b@domain.com", true, ok},
      {"a`b@domain.com", true, ok},
      {"a{b@domain.com", true, ok},
      {"a|b@domain.com", true, ok},
      {"a}b@domain.com", true, ok},
      {"a~b@domain.com", true, ok},
      {"!#$%&'*+-/=?^_`{|}~@domain.com", true, ok},
      // Specials that are not atext.
      {"a(b@domain.com", false, bad},
      {"a)b@domain.com", false, bad},
      {"a,b@domain.com", false, bad},
      {"a:b@domain.com", false, bad},
      {"a;b@domain.com", false, bad},
      {"a<b@domain.com", false, bad},
      {"a>b@domain.com", false, bad},
      {"a[b@domain.com", false, bad},
      {"a]b@domain.com", false, bad},
      {"a\\b@domain.com", false, bad},
      {"a\"b@domain.com", false, bad},
      // Structure.
      {"", false, bad},
      {"plainaddress", false, bad},
      {"@domain.com", false, bad},
      {"a@", false, bad},
      {"a@@domain.com", false, bad},
      {"a@b@domain.com", false, bad},
      {"Abc.domain.com", false, bad},
      {".a@domain.com", false, bad},
      {"a.@domain.com", false, bad},
      {"a..b@domain.com", false, bad},
      {"a@domain..com", false, bad},
      {"a@.domain.com", false, bad},
      {"a@domain.com.", false, bad},
      {"a@-domain.com", false, bad},
      {"a@domain-.com", false, bad},
      {"a@domain.-com", false, bad},
      {"a@dom_ain.com", false, bad},
      {"a@domain!.com", false, bad},
      {"a@domain.123", false, bad},
      {"a@192.168.1.1", false, bad},
      {"a@domain", false, bad},
      {"a@localhost", false, bad},
      {"a@sub.[192.0.2.1]", false, bad},
      // Quoted strings (RFC 5321 §4.1.2 Quoted-string).
      {"\"john..doe\"@domain.com", true, ok},
      {"\"a@b\"@domain.com", true, ok},
      {"\".a\"@domain.com", true, ok},
      {"\"(),:;<>[]\"@domain.com", true, ok},
      {"\"\\\"\"@domain.com", true, ok},
      {"\"\\\\\"@domain.com", true, ok},
      {"\"\\a\"@domain.com", true, ok},
      {"\"\xc3\xbc\"@domain.com", true, ok},
      {"\"\"@domain.com", true, ok},
      {"\"john doe\"@domain.com", true, ok},
      {"\"a\\ b\"@domain.com", true, ok},
      {"\"a\tb\"@domain.com", false, bad},
      {"\"unterminated@domain.com", false, bad},
      {"\"a\"b@domain.com", false, bad},
      {"a.\"b\"@domain.com", false, bad},
      {"\"a\\\"@domain.com", false, bad},
      {"\"a\x01\"@domain.com"s, false, bad},
      {"\"\\\xc3\xbc\"@domain.com", false, bad},
      // Display names, comments, whitespace, controls.
      {"John Doe <john@domain.com>", false, bad},
      {"<john@domain.com>", false, bad},
      {"john@domain.com (comment)", false, bad},
      {"(comment)john@domain.com", false, bad},
      {"john(comment)@domain.com", false, bad},
      {"john@(comment)domain.com", false, bad},
      {"a b@domain.com", false, bad},
      {" a@domain.com", false, bad},
      {"a@domain.com ", false, bad},
      {"a@dom ain.com", false, bad},
      {"a\t@domain.com", false, bad},
      {"a@domain.com\n", false, bad},
      {"a@domain.com\r\n", false, bad},
      {"a\x01@domain.com", false, bad},
      {"a\x7f@domain.com", false, bad},
      {"a@domain.com\0"s, false, bad},
      {"a\0@domain.com"s, false, bad},
      {"a\xc2\x85@domain.com", false, bad}, // NEL (C1 control)
      {"a\xc2\xa0"
       "b@domain.com",
       false, bad},                             // no-break space
      {"a\xe3\x80\x80@domain.com", false, bad}, // ideographic space
      // Invisible and format characters.
      {"a\xe2\x80\x8b@domain.com", false, bad}, // U+200B in local
      {"a@do\xe2\x80\x8bmain.com", false, bad}, // U+200B in domain
      {"a@domain.com\xe2\x80\x8b", false, bad}, // trailing U+200B
      {"\xef\xbb\xbf"
       "a@domain.com",
       false, bad}, // BOM
      {"a\xc2\xad"
       "b@domain.com",
       false, bad},                         // soft hyphen in local
      {"a@do\xc2\xadmain.com", false, bad}, // soft hyphen in domain
      {"a\xe2\x80\xae"
       "b@domain.com",
       false, bad}, // U+202E RLO
      {"a@\xe2\x81\xa6"
       "domain.com",
       false, bad},                             // U+2066 LRI
      {"a\xe2\x81\xa9@domain.com", false, bad}, // U+2069 PDI
      {"a\xe2\x80\x8c"
       "b@domain.com",
       false, bad}, // ZWNJ in local
      {"a@a\xe2\x80\x8c"
       "b.com",
       false, bad}, // ZWNJ, no context
      {"a@a\xe2\x80\x8d"
       "b.com",
       false, bad},                             // ZWJ, no context
      {"a\xe2\x81\xa0@domain.com", false, bad}, // word joiner
      {"a@\xf3\xa0\x80\x81"
       "domain.com",
       false, bad}, // language tag
      // Invalid UTF-8.
      {"a\xff@domain.com", false, bad},
      {"a\xc3@domain.com", false, bad},
      {"a\xc0\xaf@domain.com", false, bad},
      {"a\xed\xa0\x80@domain.com", false, bad},
      {"a\xf4\x90\x80\x80@domain.com", false, bad},
      {"a@dom\xe9.com", false, bad},
      // Non-ASCII local parts (RFC 6531/6532).
      {"\xc3\xbc\xc3\xb1\xc3\xae\xc3\xa7\xc3\xb8\xc3\xb0\xc3\xa9@domain.com",
       true, ok},
      {"pel\xc3\xa9@domain.com", true, ok},
      {"\xe7\x94\xa8\xe6\x88\xb7@\xe4\xbe\x8b\xe5\xad\x90.\xe5\xb9\xbf"
       "\xe5\x91\x8a",
       true, ok}, // 用户@例子.广告 (RFC 6530 §4.1)
      {"\xe0\xa4\x85\xe0\xa4\x9c\xe0\xa4\xaf@\xe0\xa4\xa1\xe0\xa4\xbe\xe0\xa4"
       "\x9f\xe0\xa4\xbe.\xe0\xa4\xad\xe0\xa4\xbe\xe0\xa4\xb0\xe0\xa4\xa4",
       true, ok}, // अजय@डाटा.भारत
      {"\xd0\xba\xd0\xb2\xd1\x96\xd1\x82\xd0\xbe\xd1\x87\xd0\xba\xd0\xb0@\xd0"
       "\xbf\xd0\xbe\xd1\x88\xd1\x82\xd0\xb0.\xd1\x83\xd0\xba\xd1\x80",
       true, ok}, // квіточка@пошта.укр
      // IDN domains (IDNA2008, no UTS #46 mapping).
      {"a@b\xc3\xbc"
       "cher.de",
       true, ok},
      {"a@B\xc3\x9c"
       "CHER.DE",
       true, ok},
      {"a@bu\xcc\x88"
       "cher.de",
       true, ok}, // NFD input, NFC applied
      {"a@m\xc3\xbcnchen.de", true, ok},
      {"a@\xe4\xbe\x8b\xe3\x81\x88.jp", true, ok},
      {"a@\xd9\x86\xd8\xa7\xd9\x85\xd9\x87\xe2\x80\x8c\xd8\xa7\xdb\x8c.ir",
       true, ok}, // ZWNJ in its Persian CONTEXTJ
      {"a@\xce\xa0\xce\x91\xce\xa1\xce\x86\xce\x94\xce\x95\xce\x99\xce\x93\xce"
       "\x9c\xce\x91.gr",
       true, ok}, // ΠΑΡΆΔΕΙΓΜΑ.gr
      {"a@\xef\xbd\x85\xef\xbd\x98\xef\xbd\x81\xef\xbd\x8d\xef\xbd\x90\xef\xbd"
       "\x8c\xef\xbd\x85.com",
       false, bad}, // fullwidth ｅｘａｍｐｌｅ.com
      {"a@\xef\xbc\xa4omain.com", false, bad}, // fullwidth capital Ｄ
      {"a@sub\xe3\x80\x82"
       "domain.com",
       false, bad}, // ideographic full stop
      {"a@domain\xef\xbc\x8e"
       "com",
       false, bad},                          // fullwidth full stop
      {"a@\xf0\x9f\x92\xa9.la", false, bad}, // emoji
      {"a@\xe2\x84\xaa"
       "elvin.com",
       false, bad}, // Kelvin sign, not 'k'
      // Punycode.
      {"a@xn--bcher-kva.de", true, ok},
      {"a@XN--BCHER-KVA.DE", true, ok},
      {"a@xn--mnchen-3ya.de", true, ok},
      {"a@xn--r8jz45g.xn--zckzah", true, ok},
      {"a@xn--abc-.com", false, bad},
      {"a@xn--zz.com", false, bad},
      {"a@xn--.com", false, bad},
      {"a@xn--a.com", false, bad},
      {"a@xn--ab-.com", false, bad},
      {"a@xn--ls8h.la", false, bad},
      {"a@xn--xn--bcher-kva.de", false, bad},
      {"a@domain.xn--", false, bad},
      // Domain literals (RFC 5321 §4.1.3).
      {"user@[192.0.2.1]", true, literal},
      {"user@[255.255.255.255]", true, literal},
      {"user@[0.0.0.0]", true, literal},
      {"user@[IPv6:2001:db8::1]", true, literal},
      {"user@[ipv6:2001:DB8::1]", true, literal},
      {"user@[IPv6:2001:db8:0:0:0:0:0:1]", true, literal},
      {"user@[IPv6:::1]", true, literal},
      {"user@[IPv6:::]", true, literal},
      {"user@[IPv6:1:2:3:4:5:6::]", true, literal},
      {"user@[IPv6:::ffff:192.0.2.1]", true, literal},
      {"user@[IPv6:1:2:3:4:5:6:192.0.2.1]", true, literal},
      {"user@[IPv6:1:2:3:4::192.0.2.1]", true, literal},
      {"\"quoted\"@[192.0.2.1]", true, literal},
      {"user@[256.0.0.1]", false, bad},
      {"user@[192.0.2]", false, bad},
      {"user@[192.0.2.1.5]", false, bad},
      {"user@[192.0.2.1", false, bad},
      {"user@[192.0.2.1]x", false, bad},
      {"user@[ 192.0.2.1]", false, bad},
      {"user@[1920.0.2.1]", false, bad},
      {"user@[]", false, bad},
      {"user@[2001:db8::1]", false, bad},
      {"user@[IPv6:2001:db8:::1]", false, bad},
      {"user@[IPv6:1:2:3:4:5:6:7:8:9]", false, bad},
      {"user@[IPv6:1:2:3:4:5:6:7]", false, bad},
      {"user@[IPv6:1:2:3:4:5:6:7::]", false, bad}, // "::" is >= 2 groups
      {"user@[IPv6:12345::1]", false, bad},
      {"user@[IPv6:g::1]", false, bad},
      {"user@[IPv6:1::2::3]", false, bad},
      {"user@[IPv6::1:2]", false, bad},
      {"user@[IPv6:1:2:3:4:5::192.0.2.1]", false, bad},
      {"user@[IPv6:::ffff:192.0.2.256]", false, bad},
      {"user@[x-tag:anything]", false, bad},
      // Length boundaries (RFC 5321 §4.5.3.1, RFC 1035 §2.3.4).
      {with("", 'a', 64, "@domain.com"), true, ok},
      {with("", 'a', 65, "@domain.com"), false, bad},
      {with("\"", 'a', 62, "\"@domain.com"), true, ok},
      {with("\"", 'a', 63, "\"@domain.com"), false, bad},
      {with("", 'a', 64, "@").append(domain_of(189)), true, ok},   // 254 octets
      {with("", 'a', 64, "@").append(domain_of(190)), false, bad}, // 255 octets
      {with("a@", 'l', 63, ".com"), true, ok},
      {with("a@", 'l', 64, ".com"), false, bad},
      {with("a@sub.", 'l', 63, ".com"), true, ok},
      {with("a@sub.", 'l', 64, ".com"), false, bad},
      {std::string("a@").append(domain_of(254)), false, bad},
      {with("a@\xc3\xbc", 'a', 55, ".com"), true, ok},   // A-label 63
      {with("a@\xc3\xbc", 'a', 56, ".com"), false, bad}, // A-label 64
      // Special-use domains (RFC 6761, 6762, 7686, 3172) without the
      // option; example names are ordinary (RFC 6761 §6.5).
      {"a@domain.test", false, special},
      {"a@example.com", true, ok},
      {"a@EXAMPLE.COM", true, ok},
      {"a@example.net", true, ok},
      {"a@sub.example.org", true, ok},
      {"a@foo.example", true, ok},
      {"a@home.arpa", false, special},
      {"a@foo.invalid", false, special},
      {"a@foo.localhost", false, special},
      {"a@printer.local", false, special},
      {"a@xyz.onion", false, special},
      {"a@example.co", true, ok},
      {"a@notexample.com", true, ok},
      {"a@example.com.au", true, ok},
      {"a@test.com", true, ok},
      {"a@onion.domain.com", true, ok},
  };
}

} // namespace

TEST_SUITE("core.syntax") {
  TEST_CASE("every address in the table gets its expected verdict") {
    options opts;
    auto rows = syntax_rows();
    CHECK(rows.size() >= 120);
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto p = parse(r.input, opts);
      CAPTURE(p.detail);
      CHECK(p.valid == r.valid);
      CHECK(p.reason == r.reason);
      CHECK(p.input == r.input);
      CHECK(p.detail.empty() == r.reason.empty());
      if (r.reason == bad)
        CHECK((p.domain + p.ascii_domain + p.normalized).empty());
    }
  }

  TEST_CASE("special-use domains are accepted when test domains are allowed") {
    options opts;
    opts.allow_test_domains = true;
    struct {
      std::string_view input;
      bool valid;
      std::string_view reason;
    } rows[] = {
        {"a@domain.test", true, ok},
        {"a@example.com", true, ok},
        {"a@sub.example.org", true, ok},
        {"a@foo.localhost", true, ok},
        {"a@home.arpa", true, ok},
        {"a@4.3.2.1.in-addr.arpa", false, bad},
        {"a@xyz.onion", true, ok},
        {"a@printer.local", true, ok},
        {"a@[192.0.2.1]", true, literal},
        {"a@localhost", false, bad},
        {"a@domain", false, bad},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto p = parse(r.input, opts);
      CHECK(p.valid == r.valid);
      CHECK(p.reason == r.reason);
    }
  }

  TEST_CASE("normalization follows the provider and never changes the "
            "verdict") {
    options opts;
    opts.allow_test_domains = true;
    struct {
      std::string_view input;
      std::string_view normalized;
    } rows[] = {
        {"John.Smith+News@Gmail.com", "johnsmith@gmail.com"},
        {"j.o.h.n@googlemail.com", "john@gmail.com"},
        {"J.Doe+a+b@GMAIL.COM", "jdoe@gmail.com"},
        {"+tag@gmail.com", "+tag@gmail.com"},
        {"John+x@Outlook.com", "john@outlook.com"},
        {"a.b+c@hotmail.com", "a.b@hotmail.com"},
        {"x+y@live.com", "x@live.com"},
        {"Me+tag@iCloud.com", "me@icloud.com"},
        {"x+y@me.com", "x@me.com"},
        {"x+y@fastmail.com", "x@fastmail.com"},
        {"x+y@protonmail.com", "x@protonmail.com"},
        {"x+y@proton.me", "x@proton.me"},
        {"John-Disposable@Yahoo.com", "john-disposable@yahoo.com"},
        {"John+x@yahoo.com", "john+x@yahoo.com"},
        {"John.Smith+x@Domain.COM", "John.Smith+x@domain.com"},
        {"\"John.Doe\"@gmail.com", "\"John.Doe\"@gmail.com"},
        {"a@[192.0.2.1]", "a@[192.0.2.1]"},
        {"Ab@B\xc3\x9c"
         "CHER.de",
         "Ab@b\xc3\xbc"
         "cher.de"},
        {"a+b@domain.test", "a+b@domain.test"},
        {"a..b@gmail.com", ""},
        {"not an address", ""},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto p = parse(r.input, opts);
      CHECK(p.normalized == r.normalized);
      CHECK(p.valid == !r.normalized.empty());
    }
    auto tagged = parse("j.doe+x@gmail.com", opts);
    auto plain = parse("jdoe@gmail.com", opts);
    CHECK(tagged.valid);
    CHECK(tagged.local_part == "j.doe+x");
    CHECK(tagged.normalized == plain.normalized);
  }

  TEST_CASE("special-use rejection still reports the parsed parts") {
    auto p = parse("Who@Printer.LOCAL", options{});
    CHECK_FALSE(p.valid);
    CHECK(p.reason == reason_special_use_domain);
    CHECK(p.local_part == "Who");
    CHECK(p.domain == "printer.local");
    CHECK(p.normalized == "Who@printer.local");
  }

  TEST_CASE("IDN domains are lower-cased and carry their A-label form") {
    auto p = parse("Pel\xc3\xa9@B\xc3\x9c"
                   "CHER.De",
                   options{});
    CHECK(p.valid);
    CHECK(p.local_part == "Pel\xc3\xa9");
    CHECK(p.domain == "b\xc3\xbc"
                      "cher.de");
    CHECK(p.ascii_domain == "xn--bcher-kva.de");
    CHECK(p.needs_smtputf8);
    auto q = parse("a@XN--BCHER-KVA.de", options{});
    CHECK(q.domain == "xn--bcher-kva.de");
    CHECK(q.ascii_domain == "xn--bcher-kva.de");
    CHECK_FALSE(q.needs_smtputf8);
    auto nfd = parse("a@bu\xcc\x88"
                     "cher.de",
                     options{});
    CHECK(nfd.ascii_domain == "xn--bcher-kva.de");
  }

  TEST_CASE("ASCII addresses keep the local part and lower-case the domain") {
    auto p = parse("Mixed.Case+tag@Sub.Domain.COM", options{});
    CHECK(p.valid);
    CHECK(p.reason.empty());
    CHECK(p.detail.empty());
    CHECK(p.local_part == "Mixed.Case+tag");
    CHECK(p.domain == "sub.domain.com");
    CHECK(p.ascii_domain == "sub.domain.com");
    CHECK_FALSE(p.needs_smtputf8);
    CHECK_FALSE(p.quoted_local);
    CHECK_FALSE(p.ip_literal);
  }

  TEST_CASE("quoted local parts are kept as written") {
    auto p = parse("\"a@b\\\"c\"@domain.com", options{});
    CHECK(p.valid);
    CHECK(p.quoted_local);
    CHECK(p.local_part == "\"a@b\\\"c\"");
    CHECK(p.domain == "domain.com");
  }

  TEST_CASE("domain literals expose the bare address and stay valid") {
    auto v4 = parse("user@[192.0.2.1]", options{});
    CHECK(v4.valid);
    CHECK(v4.ip_literal);
    CHECK(v4.reason == reason_ip_literal);
    CHECK(v4.domain == "[192.0.2.1]");
    CHECK(v4.ascii_domain == "[192.0.2.1]");
    CHECK(v4.literal_address == "192.0.2.1");
    auto v6 = parse("user@[IPv6:2001:db8::1]", options{});
    CHECK(v6.ip_literal);
    CHECK(v6.literal_address == "2001:db8::1");
    CHECK(v6.ascii_domain == "[IPv6:2001:db8::1]");
  }

  TEST_CASE("details name what is wrong") {
    struct {
      std::string input;
      std::string_view detail;
    } rows[] = {
        {with("", 'a', 65, "@domain.com"), "local part longer than 64 octets"},
        {with("", 'a', 64, "@").append(domain_of(190)),
         "address longer than 254 octets"},
        {with("a@", 'l', 64, ".com"), "domain label longer than 63 octets"},
        {"John <j@domain.com>",
         "display names and angle brackets are not part of an address"},
        {"j(c)@domain.com", "comments (CFWS) are not allowed"},
        {"a b@domain.com", "contains whitespace"},
        {"a..b@domain.com", "consecutive dots in the local part"},
        {"a@domain.com.", "domain ends with a dot"},
        {"a@domain", "domain has a single label (no top-level domain)"},
        {"a@domain.123", "top-level domain is all-numeric"},
        {"a\xe2\x80\x8b@domain.com",
         "contains an invisible or format character (U+200B)"},
        {"a\xff@domain.com", "invalid UTF-8"},
        {"a@xn--zz.com", "invalid punycode in an xn-- label"},
        {"a@domain.test",
         "domain is special-use (RFC 6761, 6762, 7686, 3172): test"},
        {"a@[IPv6:2001:db8:::1]", "invalid IPv6 address literal"},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      CHECK(parse(r.input, options{}).detail == r.detail);
    }
  }

  TEST_CASE("reusing a result clears everything from the previous parse") {
    parsed_address out;
    parse("\"q\"@[192.0.2.1]", options{}, out);
    CHECK(out.ip_literal);
    parse("\xc3\xbc@domain.com", options{}, out);
    CHECK(out.valid);
    CHECK_FALSE(out.ip_literal);
    CHECK_FALSE(out.quoted_local);
    CHECK(out.literal_address.empty());
    CHECK(out.needs_smtputf8);
    CHECK(out.reason.empty());
    parse("plain@domain.com", options{}, out);
    CHECK_FALSE(out.needs_smtputf8);
    parse("bad", options{}, out);
    CHECK_FALSE(out.valid);
    CHECK(out.normalized.empty());
    CHECK(out.local_part.empty());
  }

  TEST_CASE("the length helper builds domains of the requested size") {
    for (std::size_t n : {189u, 190u, 253u, 254u}) {
      auto d = domain_of(n);
      CHECK(d.size() == n);
      CHECK(
          parse(std::string("a@").append(d), options{}).detail.find("label") ==
          std::string::npos);
    }
  }
}
