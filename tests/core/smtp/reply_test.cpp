#include "core/smtp/capabilities.hpp"
#include "core/smtp/reply.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mailassay::core::smtp;

namespace {

struct parse_case {
  const char* name;
  std::string input;
  std::vector<int> codes;
  std::vector<std::size_t> line_counts;
  parse_error error;
};

std::optional<enhanced_code> ec(int k, int s, int d) {
  return enhanced_code{k, s, d};
}

} // namespace

TEST_SUITE("core.smtp.reply") {
  TEST_CASE("parses single and multi-line replies and stops at garbage") {
    const std::string long_ok = "250 " + std::string(1000, 'a') + "\r\n";
    const std::string too_long = "250 " + std::string(5000, 'a') + "\r\n";
    std::string many_lines;
    for (int i = 0; i < 300; ++i)
      many_lines += "250-x\r\n";
    std::string huge;
    for (int i = 0; i < 40; ++i)
      huge += "250-" + std::string(4000, 'b') + "\r\n";
    const parse_case cases[] = {
        {"one line",
         "220 mx.example.org ESMTP\r\n",
         {220},
         {1},
         parse_error::none},
        {"multi-line",
         "250-mx.example.org\r\n250-PIPELINING\r\n250 SIZE 10\r\n",
         {250},
         {3},
         parse_error::none},
        {"two replies in one read",
         "250 ok\r\n221 bye\r\n",
         {250, 221},
         {1, 1},
         parse_error::none},
        {"bare LF tolerated", "250 ok\n", {250}, {1}, parse_error::none},
        {"code alone", "250\r\n", {250}, {1}, parse_error::none},
        {"partial line waits", "250 o", {}, {}, parse_error::none},
        {"over 512 is tolerated", long_ok, {250}, {1}, parse_error::none},
        {"over the limit", too_long, {}, {}, parse_error::line_too_long},
        {"non-digit code",
         "HTTP/1.1 400 Bad Request\r\n",
         {},
         {},
         parse_error::bad_code},
        {"code out of range", "650 what\r\n", {}, {}, parse_error::bad_code},
        {"bad separator", "250_ok\r\n", {}, {}, parse_error::bad_separator},
        {"mismatched codes",
         "250-first\r\n251 second\r\n",
         {},
         {},
         parse_error::mismatched_code},
        {"too many lines", many_lines, {}, {}, parse_error::too_many_lines},
        {"too large", huge, {}, {}, parse_error::reply_too_large},
        {"reply before garbage is kept",
         "250 ok\r\n\x16\x03\x01garbage\r\n",
         {250},
         {1},
         parse_error::bad_code},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      reply_parser p;
      auto out = p.feed(c.input);
      CHECK(out.error == c.error);
      REQUIRE(out.replies.size() == c.codes.size());
      for (std::size_t i = 0; i < c.codes.size(); ++i) {
        CHECK(out.replies[i].code == c.codes[i]);
        CHECK(out.replies[i].lines.size() == c.line_counts[i]);
      }
    }
  }

  TEST_CASE("assembles a reply fed one byte at a time") {
    const std::string bytes = "250-mx.example.org greets you\r\n"
                              "250-8BITMIME\r\n250 STARTTLS\r\n";
    reply_parser p;
    std::vector<reply> got;
    for (char c : bytes) {
      auto out = p.feed(std::string_view{&c, 1});
      REQUIRE(out.error == parse_error::none);
      for (auto& r : out.replies)
        got.push_back(r);
    }
    REQUIRE(got.size() == 1);
    CHECK(got[0].lines == std::vector<std::string>{"mx.example.org greets you",
                                                   "8BITMIME", "STARTTLS"});
    CHECK_FALSE(p.has_partial());
  }

  TEST_CASE("stays failed after an error until reset") {
    reply_parser p;
    CHECK(p.feed("xyz\r\n").error == parse_error::bad_code);
    CHECK(p.feed("250 ok\r\n").error == parse_error::bad_code);
    p.reset();
    CHECK(p.feed("250 ok\r\n").replies.size() == 1);
  }

  TEST_CASE("flags lines longer than 512 octets") {
    reply_parser p;
    auto out = p.feed("550 " + std::string(600, 'x') + "\r\n");
    REQUIRE(out.replies.size() == 1);
    CHECK(out.replies[0].long_lines);
  }

  TEST_CASE("reads the enhanced status code of a reply") {
    struct row {
      const char* input;
      std::optional<enhanced_code> code;
      const char* text;
    };
    const row rows[] = {
        {"550 5.1.1 User unknown\r\n", ec(5, 1, 1), "User unknown"},
        {"550-5.1.1 The email account that you tried to reach does not\r\n"
         "550-5.1.1 exist. Please try\r\n550 5.1.1 again.\r\n",
         ec(5, 1, 1),
         "The email account that you tried to reach does not exist. Please "
         "try again."},
        {"250 2.1.5 Ok\r\n", ec(2, 1, 5), "Ok"},
        {"452 4.5.3 Too many recipients\r\n", ec(4, 5, 3),
         "Too many recipients"},
        {"550 5.7.606 Access denied\r\n", ec(5, 7, 606), "Access denied"},
        {"550 Unrouteable address\r\n", std::nullopt, "Unrouteable address"},
        {"550 4.1.1 class does not match the code\r\n", std::nullopt,
         "class does not match the code"},
        {"550 5.1.1234 too many digits\r\n", std::nullopt,
         "5.1.1234 too many digits"},
        {"550 5.1.1x glued\r\n", std::nullopt, "5.1.1x glued"},
        {"554 30 Sorry (554.30)\r\n", std::nullopt, "30 Sorry (554.30)"},
        {"550 5.1.1\r\n", ec(5, 1, 1), ""},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      reply_parser p;
      auto out = p.feed(r.input);
      REQUIRE(out.replies.size() == 1);
      CHECK(out.replies[0].enhanced == r.code);
      CHECK(out.replies[0].text() == r.text);
    }
    CHECK(enhanced_code{5, 7, 1}.to_string() == "5.7.1");
  }
}

TEST_SUITE("core.smtp.capabilities") {
  TEST_CASE("reads the extensions of an EHLO reply") {
    reply_parser p;
    auto out = p.feed("250-mx.example.org Hello [192.0.2.1]\r\n"
                      "250-SIZE 35882577\r\n250-8bitmime\r\n"
                      "250-STARTTLS\r\n250-ENHANCEDSTATUSCODES\r\n"
                      "250-PIPELINING\r\n250-CHUNKING\r\n250 SMTPUTF8\r\n");
    REQUIRE(out.replies.size() == 1);
    auto caps = parse_ehlo(out.replies[0]);
    CHECK(caps.esmtp);
    CHECK(caps.server_name == "mx.example.org");
    CHECK(caps.starttls);
    CHECK(caps.smtputf8);
    CHECK(caps.pipelining);
    CHECK(caps.enhanced_status_codes);
    CHECK(caps.eightbitmime);
    CHECK(caps.size == 35882577u);
    CHECK(caps.keywords.size() == 7);
  }

  TEST_CASE("yields no extensions for a bare or refused EHLO") {
    struct row {
      const char* input;
      bool esmtp;
      std::optional<std::uint64_t> size;
    };
    const row rows[] = {
        {"250 mx.example.org\r\n", true, std::nullopt},
        {"250-mx\r\n250 SIZE\r\n", true, 0u},
        {"250-mx\r\n250 SIZE 12x\r\n", true, 0u},
        {"502 5.5.1 EHLO not implemented\r\n", false, std::nullopt},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      reply_parser p;
      auto caps = parse_ehlo(p.feed(r.input).replies.at(0));
      CHECK(caps.esmtp == r.esmtp);
      CHECK_FALSE(caps.starttls);
      CHECK(caps.size == r.size);
    }
  }
}
