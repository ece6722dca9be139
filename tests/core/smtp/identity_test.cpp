#include "core/smtp/identity.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::smtp;

TEST_SUITE("core.smtp.identity") {
  TEST_CASE("recognises fully qualified domain names") {
    struct row {
      const char* name;
      bool fqdn;
    };
    const row rows[] = {
        {"probe.example.org", true},
        {"mx1.mail-host.co.uk", true},
        {"a.b", true},
        {"localhost", false},
        {"host", false},
        {"", false},
        {"-bad.example.org", false},
        {"bad-.example.org", false},
        {"a..b", false},
        {"example.org.", false},
        {"10.0.0.1", false},
        {"under_score.example.org", false},
        {"sp ace.example.org", false},
    };
    for (const auto& r : rows) {
      CAPTURE(r.name);
      CHECK(is_fqdn(r.name) == r.fqdn);
    }
  }

  TEST_CASE("recognises names that are not on the Internet") {
    for (auto n :
         {"localhost", "localhost.localdomain", "box.localdomain", "LOCALHOST",
          "printer.local", "nas.lan", "router.home", "srv.internal", "x.corp",
          "a.home.arpa", "mx.test", "example.com", "mail.example.org",
          "hidden.onion", "x.invalid", "a.localhost"})
      CHECK_MESSAGE(is_local_name(n), n);
    for (auto n : {"probe.mailassay.io", "mx.example-corp.com",
                   "localhost-mail.example.io", "testing.net"})
      CHECK_FALSE_MESSAGE(is_local_name(n), n);
  }

  TEST_CASE("picks the configured HELO, else a public FQDN host name") {
    CHECK(choose_helo("probe.example.io", "whatever") == "probe.example.io");
    CHECK(choose_helo("", "Mail.Example.IO") == "mail.example.io");
    CHECK(choose_helo("", "a1b2c3d4e5f6").empty());
    CHECK(choose_helo("", "localhost.localdomain").empty());
    CHECK(choose_helo("", "").empty());
  }

  TEST_CASE("accepts a public HELO with the null sender or an own domain") {
    CHECK(check_identity({"probe.mailassay.io", ""}, false).has_value());
    CHECK(check_identity({"probe.mailassay.io", "verify@mailassay.io"}, false)
              .has_value());
  }

  TEST_CASE("refuses localhost-like HELO names unless forced") {
    for (auto helo : {"localhost", "localhost.localdomain", "mailassay",
                      "mailassay.localdomain", "box.local", "10.0.0.1"}) {
      CAPTURE(helo);
      auto r = check_identity({helo, ""}, false);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error_value().message.find("smtp.helo") != std::string::npos);
      CHECK(check_identity({helo, ""}, true).has_value());
    }
  }

  TEST_CASE("refuses free-mail and local sender domains unless forced") {
    auto free_mail = [](std::string_view d) {
      return d == "gmail.com" || d == "yahoo.com";
    };
    auto r = check_identity({"probe.mailassay.io", "someone@GMail.com"}, false,
                            free_mail);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().message.find("free-mail") != std::string::npos);
    CHECK(check_identity({"probe.mailassay.io", "someone@gmail.com"}, true,
                         free_mail)
              .has_value());
    CHECK_FALSE(check_identity({"probe.mailassay.io", "me@localhost"}, false)
                    .has_value());
    CHECK_FALSE(check_identity({"probe.mailassay.io", "no-at-sign"}, false)
                    .has_value());
  }

  TEST_CASE("refuses values that cannot go on the wire even when forced") {
    CHECK_FALSE(check_identity({"", ""}, true).has_value());
    CHECK_FALSE(check_identity({"a b.example.org", ""}, true).has_value());
    CHECK_FALSE(
        check_identity({"probe.example.org\r\nRSET", ""}, true).has_value());
    CHECK_FALSE(
        check_identity({"probe.example.org", "a@b.io>\r\n"}, true).has_value());
  }
}
