// Issue #19: the free checks run whenever the syntax is valid, example
// names included (RFC 6761 §6.5), and on the local part of an IP literal.

#include "shipped_lists.hpp"

#include "core/validation/free_checks.hpp"

#include <doctest/doctest.h>

#include <string_view>

using namespace mailassay::core;
using mailassay::tests::shipped_lists;

namespace {

struct row {
  std::string_view input;
  std::string_view role; // "" for none
  bool random;
  std::string_view suggestion; // "" for none
  std::string_view first_name; // "" for none
};

} // namespace

TEST_SUITE("core.validation.example_names") {
  TEST_CASE("role, random, typo and enrichment run on example names") {
    constexpr row rows[] = {
        {"info@example.com", "info", false, "", ""},
        {"postmaster@example.org", "postmaster", false, "", ""},
        {"qwerasdf@example.net", "", true, "", ""},
        {"x7k9@example.com", "", true, "", ""},
        {"maria.lopez@example.org", "", false, "", "Maria"},
        {"jan.nowak@example.con", "", false, "example.com", "Jan"},
        {"sales@sub.example.com", "sales", false, "", ""},
        {"info@[192.0.2.1]", "info", false, "", ""},
        {"asdfasdf@[IPv6:2001:db8::1]", "", true, "", ""},
    };
    validation::toggles all;
    all.enrichment = true;
    validation::domain_memo memo;
    for (const auto& r : rows) {
      CAPTURE(r.input);
      auto a = syntax::parse(r.input, syntax::options{});
      REQUIRE(a.valid);
      auto c = validation::run_free_checks(shipped_lists(), a, all, memo);
      CHECK(*c.role_account == !r.role.empty());
      CHECK(c.role == r.role);
      CHECK(c.random->is_random == r.random);
      CHECK(c.suggested_domain.value_or("") == r.suggestion);
      CHECK(c.first_name.value_or("") == r.first_name);
      CHECK_FALSE(*c.disposable);
    }
  }

  TEST_CASE("special-use names allowed for tests are never typos") {
    syntax::options opts;
    opts.allow_test_domains = true;
    for (auto input : {"anna@mail.test", "anna@router.home.arpa",
                       "anna@box.local", "anna@gmail.test"}) {
      CAPTURE(input);
      auto a = syntax::parse(input, opts);
      REQUIRE(a.valid);
      auto c = validation::run_free_checks(shipped_lists(), a, {});
      CHECK_FALSE(c.suggested_domain.has_value());
    }
  }
}
