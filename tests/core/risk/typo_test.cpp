#include "shipped_lists.hpp"

#include "core/risk/risk.hpp"
#include "core/risk/typo.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string_view>

using namespace mailassay::core::risk;
using mailassay::tests::shipped_lists;

TEST_SUITE("core.risk.typo") {
  TEST_CASE("corrects misspelt provider domains and TLDs") {
    const auto& l = shipped_lists();
    struct row {
      std::string_view domain;
      std::string_view suggestion;
    };
    constexpr row rows[] = {
        {"gmail.con", "gmail.com"},
        {"gmial.com", "gmail.com"},
        {"hotmial.com", "hotmail.com"},
        {"yaho.com", "yahoo.com"},
        {"gmai.com", "gmail.com"},
        {"gmal.com", "gmail.com"},
        {"gnail.com", "gmail.com"},
        {"gmaill.com", "gmail.com"},
        {"gmail.cmo", "gmail.com"},
        {"gmail.ocm", "gmail.com"},
        {"gmail.comm", "gmail.com"},
        {"gmial.con", "gmail.com"},
        {"hotmal.com", "hotmail.com"},
        {"hotmail.con", "hotmail.com"},
        {"hotamil.com", "hotmail.com"},
        {"yahooo.com", "yahoo.com"},
        {"yhaoo.com", "yahoo.com"},
        {"outlok.com", "outlook.com"},
        {"outloook.com", "outlook.com"},
        {"iclod.com", "icloud.com"},
        {"icloud.cmo", "icloud.com"},
        {"comcast.nett", "comcast.net"},
        {"example.con", "example.com"},
        {"example.nett", "example.net"},
        {"example.ogr", "example.org"},
        {"yaho.co.uk", "yahoo.co.uk"},
        {"hotmial.fr", "hotmail.fr"},
        {"gail.com", "gmail.com"},
        {"GMAIL.COM.", ""},
    };
    for (auto r : rows) {
      CAPTURE(r.domain);
      auto s = suggest_domain(l, r.domain);
      if (r.suggestion.empty()) {
        CHECK_FALSE(s.has_value());
      } else {
        REQUIRE(s.has_value());
        CHECK(*s == r.suggestion);
      }
    }
  }

  TEST_CASE("leaves real providers, valid TLDs and short names alone") {
    const auto& l = shipped_lists();
    // The competition's failures: a provider one or two edits from a
    // bigger one, a country variant, a valid ccTLD or new gTLD, and a
    // short domain "corrected" into one nobody uses (gma.com -> gmal.com).
    constexpr std::string_view domains[] = {
        "gmx.com",
        "mail.com",
        "ymail.com",
        "yahoo.co.uk",
        "hotmail.fr",
        "live.com",
        "aol.com",
        "gmail.com",
        "msn.com",
        "me.com",
        "mac.com",
        "gmx.de",
        "gmx.net",
        "web.de",
        "email.com",
        "yahoo.fr",
        "hotmail.co.uk",
        "outlook.de",
        "gma.com",
        // (gmail.co and yahoo.cm are typos of .com since issue #19:
        // typo_suffix_test.cpp.)
        "gmail.cn",
        "example.co",
        "example.cn",
        "shop.shop",
        "example.shop",
        "startup.io",
        "about.me",
        "todo.app",
        "hotmail.cz",
        "my.com",
        "aim.com",
        "example.com",
        "mit.edu",
        "uni-heidelberg.de",
        "gmailx.io",
        "x.con.com",
        "localhost",
        "",
        "gm.com",
        "ail.com",
        "hey.com",
        "gmail.com.au",
    };
    for (auto d : domains) {
      CAPTURE(d);
      CHECK_FALSE(suggest_domain(l, d).has_value());
    }
  }

  TEST_CASE("never suggests the input itself") {
    const auto& l = shipped_lists();
    for (auto d : {"gmail.con", "gmial.com", "foo.con", "yaho.com"}) {
      auto s = suggest_domain(l, d);
      CAPTURE(d);
      REQUIRE(s.has_value());
      CHECK(*s != d);
    }
  }

  TEST_CASE("without a TLD list, no TLD is corrected") {
    list_texts t;
    auto l = lists_from_texts(t);
    CHECK_FALSE(suggest_domain(l, "example.con").has_value());
    CHECK(suggest_domain(l, "gmial.com") ==
          std::optional<std::string>{"gmail.com"});
  }

  TEST_CASE("measures edit distance with transpositions") {
    CHECK(edit_distance("gmail", "gmail", 2) == 0);
    CHECK(edit_distance("gmial", "gmail", 2) == 1);
    CHECK(edit_distance("gmal", "gmail", 2) == 1);
    CHECK(edit_distance("gma", "gmail", 2) == 2);
    CHECK(edit_distance("hotmail", "gmail", 2) == 3);
    CHECK(edit_distance("", "abc", 5) == 3);
  }

  TEST_CASE("a typo is advice on a still-valid address") {
    const auto& l = shipped_lists();
    auto r = assess(l, "jane.doe", "gmial.com", true);
    REQUIRE(r.suggestion.has_value());
    CHECK(*r.suggestion == "gmail.com");
    CHECK_FALSE(r.random.is_random);
    CHECK_FALSE(r.role.has_value());
    REQUIRE(r.first_name.has_value());
    CHECK(*r.first_name == "Jane");
    auto free = assess(l, "info", "gmail.com");
    CHECK(free.free_provider);
    CHECK_FALSE(free.disposable);
    CHECK_FALSE(free.suggestion.has_value());
    CHECK(free.role == std::optional<std::string_view>{"info"});
    CHECK_FALSE(free.first_name.has_value());
    auto temp = assess(l, "x8f7q2z9k4m1", "mailinator.com");
    CHECK(temp.disposable);
    CHECK_FALSE(temp.free_provider);
    CHECK(temp.random.is_random);
  }
}
