// Issue #30: all MX hosts of one provider draw from one budget.
#include "core/smtp/host_limits.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using limits::millis;

namespace {

provider::table google_table() {
  auto t = provider::table::parse("prov.test google mailbox\n"
                                  "gw.test mimecast gateway\n");
  REQUIRE(t.has_value());
  return std::move(*t);
}

} // namespace

TEST_SUITE("core.smtp.provider_budget") {
  TEST_CASE("the budget key is the provider's when the table names one, "
            "else the host") {
    auto t = google_table();
    CHECK(smtp::budget_key("mx1.prov.test", &t) == "provider:google");
    CHECK(smtp::budget_key("MX2.PROV.TEST.", &t) == "provider:google");
    CHECK(smtp::budget_key("in.gw.test", &t) == "provider:mimecast");
    CHECK(smtp::budget_key("mx.other.test", &t) == "mx.other.test");
    CHECK(smtp::budget_key("mx1.prov.test", nullptr) == "mx1.prov.test");
  }

  TEST_CASE("reads per-provider limits, refusing malformed entries") {
    auto ok =
        smtp::parse_provider_limits({"google=2/5", "yahoo=1", "outlook=/1"});
    REQUIRE(ok.has_value());
    CHECK(ok->at("provider:google") ==
          smtp::budget_override{std::size_t{2}, std::int64_t{5}});
    CHECK(ok->at("provider:yahoo") ==
          smtp::budget_override{std::size_t{1}, std::nullopt});
    CHECK(ok->at("provider:outlook") ==
          smtp::budget_override{std::nullopt, std::int64_t{1}});
    auto three = smtp::parse_provider_limits({"google=2//10", "yahoo=//1"});
    REQUIRE(three.has_value());
    CHECK(three->at("provider:google") ==
          smtp::budget_override{std::size_t{2}, std::nullopt, std::size_t{10}});
    CHECK(three->at("provider:yahoo") ==
          smtp::budget_override{std::nullopt, std::nullopt, std::size_t{1}});
    for (const char* bad : {"google", "=2", "google=", "google=x", "google=-1",
                            "google=2/", "google=1/2/", "google=1/2/3/4",
                            "google=1/2/0", "google=//", "google=10001"}) {
      std::string entry = bad;
      CAPTURE(entry);
      auto r = smtp::parse_provider_limits({entry});
      CHECK_FALSE(r.has_value());
    }
    CHECK_FALSE(
        smtp::parse_provider_limits({"google=1", "google=2"}).has_value());
    CHECK(smtp::parse_provider_limits({})->empty());
  }

  TEST_CASE("a provider's RCPT cap applies to each of its hosts; a host of "
            "no provider or without one keeps the per-host cap") {
    auto t = google_table();
    auto o = smtp::parse_provider_limits({"google=//3", "mimecast=2"});
    REQUIRE(o.has_value());
    CHECK(smtp::rcpts_per_session("mx1.prov.test", &t, *o, 20) == 3);
    CHECK(smtp::rcpts_per_session("MX2.PROV.TEST.", &t, *o, 20) == 3);
    CHECK(smtp::rcpts_per_session("in.gw.test", &t, *o, 20) == 20);
    CHECK(smtp::rcpts_per_session("mx.other.test", &t, *o, 20) == 20);
    CHECK(smtp::rcpts_per_session("mx1.prov.test", nullptr, *o, 20) == 20);
  }

  TEST_CASE("an override applies to its budget; the others keep the "
            "per-host values") {
    smtp::host_limits_config c{
        2, 0, *smtp::parse_provider_limits({"google=3", "yahoo=/4"})};
    CHECK(c.limits_of("provider:google").max_sessions == 3);
    CHECK(c.limits_of("provider:google").connections_per_second == 0);
    CHECK(c.limits_of("provider:yahoo").max_sessions == 2);
    CHECK(c.limits_of("provider:yahoo").connections_per_second == 4);
    CHECK(c.limits_of("mx.other.test").max_sessions == 2);
    smtp::host_limits slots{c};
    millis now{0};
    for (int i = 0; i < 3; ++i)
      CHECK(slots.try_open("provider:google", now).granted);
    CHECK(slots.try_open("provider:google", now).full);
    CHECK(slots.try_open("mx.other.test", now).granted);
    CHECK(slots.try_open("mx.other.test", now).granted);
    CHECK(slots.try_open("mx.other.test", now).full);
    // A reload that drops the override: the provider takes the defaults.
    slots.reconfigure({2, 0, {}}, now);
    slots.close("provider:google", now);
    CHECK(slots.try_open("provider:google", now).full);
    slots.close("provider:google", now);
    slots.close("provider:google", now);
    CHECK(slots.try_open("provider:google", now).granted);
  }

  TEST_CASE("overrides naming a provider the table does not know are "
            "named, in order") {
    auto t = google_table();
    auto o = smtp::parse_provider_limits({"google=1", "zzz=2", "gogle=3"});
    REQUIRE(o.has_value());
    CHECK(smtp::unknown_providers(*o, t) ==
          std::vector<std::string>{"gogle", "zzz"});
    auto fine = smtp::parse_provider_limits({"google=1", "mimecast=/2"});
    CHECK(smtp::unknown_providers(*fine, t).empty());
  }
}
