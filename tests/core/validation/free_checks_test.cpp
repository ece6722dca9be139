#include "shipped_lists.hpp"

#include "core/risk/domain.hpp"
#include "core/risk/risk.hpp"
#include "core/risk/typo.hpp"
#include "core/validation/free_checks.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

using namespace mailassay::core;
using mailassay::tests::shipped_lists;

namespace {

syntax::parsed_address parsed(std::string_view input) {
  syntax::options opts;
  return syntax::parse(input, opts);
}

validation::free_checks checks(std::string_view input,
                               const validation::toggles& t = {}) {
  auto a = parsed(input);
  return validation::run_free_checks(shipped_lists(), a, t);
}

struct row {
  std::string_view input;
  bool disposable;
  bool free_provider;
  std::string_view role; // "" for none
  bool random;
  std::string_view suggestion; // "" for none
};

} // namespace

TEST_SUITE("core.validation") {
  TEST_CASE("runs every enabled check on the shipped lists") {
    constexpr row rows[] = {
        {"anna.schmidt@gmail.com", false, true, "", false, ""},
        {"Anna.Schmidt@GMAIL.COM", false, true, "", false, ""},
        {"maria.garcia83@yahoo.com", false, true, "", false, ""},
        {"j.smith1987@example-shop.de", false, false, "", false, ""},
        {"krzysztof.szczepanski@example-shop.pl", false, false, "", false, ""},
        {"info@mailinator.com", true, false, "info", false, ""},
        {"anna@eu.mailinator.com", true, false, "", false, ""},
        {"sales@example-shop.de", false, false, "sales", false, ""},
        {"no-reply@example-shop.de", false, false, "no-reply", false, ""},
        {"postmaster+bounces@example-shop.de", false, false, "postmaster",
         false, ""},
        {"x8f7q2z9k4m1@gmail.com", false, true, "", true, ""},
        {"3f2504e0-4f89-11d3-9a0c-0305e82c3301@example-shop.de", false, false,
         "", true, ""},
        {"asdfghjkl@example-shop.de", false, false, "", true, ""},
        // Typo-squatting domains are often on the disposable list too.
        {"anna@gmial.com", true, false, "", false, "gmail.com"},
        {"anna@hotmail.con", false, false, "", false, "hotmail.com"},
        {"anna@example-shop.cmo", false, false, "", false, "example-shop.com"},
        // A well-formed address literal skips the domain checks; the local
        // part is checked as anywhere else (issue #19: the checks run
        // whenever the syntax is valid).
        {"info@[192.0.2.1]", false, false, "info", false, ""},
    };
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto c = checks(r.input);
      REQUIRE(c.disposable.has_value());
      REQUIRE(c.role_account.has_value());
      REQUIRE(c.random.has_value());
      CHECK(*c.disposable == r.disposable);
      CHECK(c.free_provider == r.free_provider);
      CHECK(*c.role_account == !r.role.empty());
      CHECK(c.role == r.role);
      CHECK(c.random->is_random == r.random);
      CHECK(c.suggested_domain.value_or("") == r.suggestion);
      CHECK_FALSE(c.first_name.has_value()); // enrichment is off by default
    }
  }

  TEST_CASE("gives false, not null, for an address that did not parse") {
    for (auto input : {"anna@@gmail.com", "info@mailinator", "", "info"}) {
      CAPTURE(input);
      auto c = checks(input);
      CHECK(c.disposable == std::optional<bool>{false});
      CHECK(c.role_account == std::optional<bool>{false});
      REQUIRE(c.random.has_value());
      CHECK_FALSE(c.random->is_random);
      CHECK_FALSE(c.free_provider);
      CHECK(c.role.empty());
      CHECK_FALSE(c.suggested_domain.has_value());
    }
  }

  TEST_CASE("reports a switched-off check as null") {
    validation::toggles off;
    off.disposable = false;
    off.role_account = false;
    off.random_detection = false;
    for (auto input :
         {"info@mailinator.com", "x8f7q2z9k4m1@gmail.com", "anna@@gmail.com"}) {
      CAPTURE(input);
      auto c = checks(input, off);
      CHECK_FALSE(c.disposable.has_value());
      CHECK_FALSE(c.role_account.has_value());
      CHECK(c.role.empty());
      CHECK_FALSE(c.random.has_value());
      CHECK_FALSE(c.first_name.has_value());
    }
    // The free-provider flag and the typo suggestion have no switch.
    CHECK(checks("anna@gmail.com", off).free_provider);
    CHECK(checks("anna@gmial.com", off).suggested_domain ==
          std::optional<std::string>{"gmail.com"});
  }

  TEST_CASE("finds the first name only with enrichment, never for a role") {
    validation::toggles enriched;
    enriched.enrichment = true;
    CHECK(checks("maria.garcia83@gmail.com", enriched).first_name ==
          std::optional<std::string>{"Maria"});
    CHECK_FALSE(checks("info@example-shop.de", enriched).first_name);
    CHECK_FALSE(checks("j.smith@example-shop.de", enriched).first_name);
    CHECK_FALSE(checks("maria.garcia83@gmail.com").first_name);
    // Enrichment without the role check still keeps roles nameless.
    enriched.role_account = false;
    auto c = checks("sales@example-shop.de", enriched);
    CHECK_FALSE(c.role_account.has_value());
    CHECK_FALSE(c.first_name.has_value());
  }

  TEST_CASE("never suggests a correction for a free provider") {
    for (auto input : {"anna@gmx.com", "anna@ymail.com", "anna@hotmail.fr",
                       "anna@live.com"}) {
      CAPTURE(input);
      CHECK_FALSE(checks(input).suggested_domain.has_value());
    }
  }

  TEST_CASE("agrees with risk::assess and gives the same answer every time") {
    validation::toggles all;
    all.enrichment = true;
    for (auto input :
         {"anna.schmidt@gmail.com", "info@mailinator.com",
          "x8f7q2z9k4m1@gmail.com", "anna@gmial.com", "sales.team@acme.co.uk",
          "JohnSmith@Example-Shop.DE", "zhang.wei+news@qq.com",
          "qwerty123@yahoo.co.uk", "dGhpcyBpcyBiYXNl@example-shop.de",
          "müller@example-shop.de"}) {
      CAPTURE(input);
      auto a = parsed(input);
      REQUIRE(a.valid);
      auto c = validation::run_free_checks(shipped_lists(), a, all);
      auto again = validation::run_free_checks(shipped_lists(), a, all);
      auto r =
          risk::assess(shipped_lists(), a.local_part, a.ascii_domain, true);
      CHECK(*c.disposable == r.disposable);
      CHECK(c.free_provider == r.free_provider);
      CHECK(c.role == r.role.value_or(""));
      CHECK(c.random->is_random == r.random.is_random);
      CHECK(c.random->score == r.random.score);
      CHECK(c.random->reason == r.random.reason);
      CHECK(c.suggested_domain == r.suggestion);
      CHECK(c.first_name == r.first_name);
      CHECK(*again.disposable == *c.disposable);
      CHECK(again.free_provider == c.free_provider);
      CHECK(again.role == c.role);
      CHECK(again.random->score == c.random->score);
      CHECK(again.suggested_domain == c.suggested_domain);
      CHECK(again.first_name == c.first_name);
    }
  }
}

TEST_SUITE("core.validation.domain_memo") {
  // A memo remembers recent domains' list answers and suggestion: answers
  // must be those of the lists passed, whatever the table held before.
  TEST_CASE("answers from the lists passed, not from another list set") {
    risk::list_texts plain;
    plain.tlds = "com\nde\n";
    risk::list_texts listed = plain;
    listed.disposable = "temp-box.com\n";
    auto a = risk::lists_from_texts(plain);
    auto b = risk::lists_from_texts(listed);
    CHECK(a.fingerprint != b.fingerprint);
    auto addr = parsed("anna@temp-box.com");
    REQUIRE(addr.valid);
    validation::domain_memo memo;
    for (int i = 0; i < 3; ++i) {
      CHECK_FALSE(*validation::run_free_checks(a, addr, {}, memo).disposable);
      CHECK(*validation::run_free_checks(b, addr, {}, memo).disposable);
    }
  }

  TEST_CASE("lists built from the same texts share a fingerprint") {
    // Content, not a counter: a memo filled under one load answers for an
    // identical reload, and core keeps no count of loads.
    risk::list_texts t;
    t.tlds = "com\nde\n";
    t.disposable = "temp-box.com\n";
    auto a = risk::lists_from_texts(t);
    auto b = risk::lists_from_texts(t);
    CHECK(a.fingerprint == b.fingerprint);
    CHECK(a.fingerprint != 0);
    // The same lines in another list are other lists.
    risk::list_texts moved;
    moved.tlds = t.tlds;
    moved.free_providers = t.disposable;
    CHECK(risk::lists_from_texts(moved).fingerprint != a.fingerprint);
  }

  TEST_CASE("two memos are independent of each other") {
    const auto& l = shipped_lists();
    validation::domain_memo one;
    validation::domain_memo two;
    CHECK(one.facts(l, "gmial.com").suggestion == "gmail.com");
    CHECK(two.facts(l, "mailinator.com").disposable);
    CHECK(one.facts(l, "gmial.com").suggestion == "gmail.com");
    CHECK_FALSE(one.facts(l, "gmail.com").disposable);
  }

  TEST_CASE("agrees with the direct checks over more domains than it holds") {
    // 20000 domains, visited twice in a scrambled order, so slots are
    // reused by other domains between two visits of the same one.
    const auto& l = shipped_lists();
    std::vector<std::string> domains;
    for (int i = 0; i < 10000; ++i)
      domains.push_back("shop" + std::to_string(i) + ".de");
    for (auto d : {"gmail.com", "gmial.com", "mailinator.com", "yahoo.co.uk",
                   "hotmial.com", "outlok.com", "qq.com", "web.de"})
      for (int i = 0; i < 1250; ++i)
        domains.push_back(d);
    validation::domain_memo memo;
    int mismatches = 0;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t k = 0; k < domains.size(); ++k) {
        const auto& d = domains[(k * 7919 + pass * 13) % domains.size()];
        auto a = parsed("anna@" + d);
        REQUIRE(a.valid);
        auto c = validation::run_free_checks(l, a, {}, memo);
        bool disposable = risk::is_disposable(l, a.ascii_domain);
        bool free = risk::is_free_provider(l, a.ascii_domain);
        auto suggestion =
            free ? std::nullopt : risk::suggest_domain(l, a.ascii_domain);
        auto direct = validation::run_free_checks(l, a, {});
        if (*c.disposable != disposable || c.free_provider != free ||
            c.suggested_domain != suggestion ||
            *direct.disposable != disposable ||
            direct.suggested_domain != suggestion)
          ++mismatches;
      }
    }
    CHECK(mismatches == 0);
  }
}
