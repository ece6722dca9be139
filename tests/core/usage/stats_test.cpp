#include "core/usage/accumulator.hpp"
#include "core/usage/stats.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::usage;
using mailassay::core::errc;

namespace {

// 2026-11-21T00:00:00Z.
constexpr std::int64_t nov21 = 1795219200;

std::vector<day_counts> to_days(const std::vector<usage_increment>& batch) {
  std::vector<day_counts> out;
  for (const auto& inc : batch)
    out.push_back({inc.day, inc.requests, inc.successful, inc.credits});
  return out;
}

// Built with append: GCC 12 warns falsely (-Wrestrict) on "a" + s.
std::string hash(const char* prefix, int i) {
  std::string s = prefix;
  s.append(std::to_string(i));
  return s;
}

std::int64_t distinct(const std::vector<usage_increment>& batch) {
  std::int64_t n = 0;
  for (const auto& inc : batch)
    n += static_cast<std::int64_t>(inc.address_hashes.size());
  return n;
}

} // namespace

TEST_SUITE("core.usage") {
  TEST_CASE("ten validations, 7 valid and 3 invalid, all answered 200") {
    // An invalid verdict is still a 200 answer: every one is successful.
    accumulator acc;
    for (int i = 0; i < 7; ++i)
      acc.record("k1", "o1", nov21 + i, true, 1, hash("valid", i));
    for (int i = 0; i < 3; ++i)
      acc.record("k1", "o1", nov21 + 100 + i, true, 1, hash("invalid", i));
    auto batch = acc.drain();
    auto s = compute(to_days(batch), distinct(batch), "2026-11-21", 30);
    REQUIRE(s.has_value());
    CHECK(s->total_requests == 10);
    CHECK(s->success_rate == 1.0);
    CHECK(s->credits_consumed == 10);
    CHECK(s->top_emails == 10);
    REQUIRE(s->requests_by_day.size() == 30);
    CHECK(s->requests_by_day.front().day == "2026-10-23");
    const auto& last = s->requests_by_day.back();
    CHECK(last.day == "2026-11-21");
    CHECK(last.requests == 10);
    CHECK(last.successful == 10);
    CHECK(last.credits == 10);
    for (std::size_t i = 0; i + 1 < s->requests_by_day.size(); ++i) {
      CHECK(s->requests_by_day[i].requests == 0);
      CHECK(s->requests_by_day[i].successful == 0);
      CHECK(s->requests_by_day[i].credits == 0);
    }
  }

  TEST_CASE("requests not answered 200 count as requests, not successes") {
    // The ten validations above plus a 422 (no address) and a 402 refused
    // before any credit was taken, with one address repeated.
    accumulator acc;
    for (int i = 0; i < 10; ++i)
      acc.record("k1", "o1", nov21 + i, true, 1, hash("a", i));
    acc.record("k1", "o1", nov21 + 50, false, 0, "");
    acc.record("k1", "o1", nov21 + 60, false, 0, "a3");
    auto batch = acc.drain();
    auto s = compute(to_days(batch), distinct(batch), "2026-11-21", 7);
    REQUIRE(s.has_value());
    CHECK(s->total_requests == 12);
    CHECK(s->success_rate == doctest::Approx(10.0 / 12.0));
    CHECK(s->credits_consumed == 10);
    CHECK(s->top_emails == 10);
    REQUIRE(s->requests_by_day.size() == 7);
    CHECK(s->requests_by_day.back().requests == 12);
    CHECK(s->requests_by_day.back().successful == 10);
  }

  TEST_CASE("no requests give a success rate of zero and all-zero days") {
    auto s = compute({}, 0, "2026-11-21", 3);
    REQUIRE(s.has_value());
    CHECK(s->total_requests == 0);
    CHECK(s->success_rate == 0.0);
    CHECK(s->credits_consumed == 0);
    CHECK(s->top_emails == 0);
    REQUIRE(s->requests_by_day.size() == 3);
    const char* days[] = {"2026-11-19", "2026-11-20", "2026-11-21"};
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(s->requests_by_day[i].day == days[i]);
      CHECK(s->requests_by_day[i].requests == 0);
    }
  }

  TEST_CASE("every request failing gives a success rate of zero") {
    auto s = compute({{"2026-11-21", 4, 0, 0}}, 0, "2026-11-21", 1);
    REQUIRE(s.has_value());
    CHECK(s->total_requests == 4);
    CHECK(s->success_rate == 0.0);
  }

  TEST_CASE("days with no traffic between stored days are zero-filled") {
    std::vector<day_counts> stored = {
        {"2026-11-21", 5, 4, 3}, {"2026-11-17", 2, 2, 2}, // any order
    };
    auto s = compute(stored, 4, "2026-11-21", 5);
    REQUIRE(s.has_value());
    struct row {
      const char* day;
      std::int64_t requests, successful, credits;
    };
    const row want[] = {
        {"2026-11-17", 2, 2, 2}, {"2026-11-18", 0, 0, 0},
        {"2026-11-19", 0, 0, 0}, {"2026-11-20", 0, 0, 0},
        {"2026-11-21", 5, 4, 3},
    };
    REQUIRE(s->requests_by_day.size() == 5);
    for (std::size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(s->requests_by_day[i].day == want[i].day);
      CHECK(s->requests_by_day[i].requests == want[i].requests);
      CHECK(s->requests_by_day[i].successful == want[i].successful);
      CHECK(s->requests_by_day[i].credits == want[i].credits);
    }
    CHECK(s->total_requests == 7);
    CHECK(s->success_rate == doctest::Approx(6.0 / 7.0));
    CHECK(s->credits_consumed == 5);
    CHECK(s->top_emails == 4);
  }

  TEST_CASE("days = 1 covers today only; stored days outside are ignored") {
    std::vector<day_counts> stored = {
        {"2026-11-20", 100, 100, 100}, // yesterday
        {"2026-11-21", 3, 2, 1},
        {"2026-11-22", 100, 100, 100}, // tomorrow (clock skew)
        {"not-a-day", 100, 100, 100},
    };
    auto s = compute(stored, 2, "2026-11-21", 1);
    REQUIRE(s.has_value());
    REQUIRE(s->requests_by_day.size() == 1);
    CHECK(s->requests_by_day[0].day == "2026-11-21");
    CHECK(s->total_requests == 3);
    CHECK(s->credits_consumed == 1);
    CHECK(s->success_rate == doctest::Approx(2.0 / 3.0));
  }

  TEST_CASE("a day listed twice is summed") {
    auto s = compute({{"2026-11-21", 1, 1, 1}, {"2026-11-21", 2, 1, 0}}, 1,
                     "2026-11-21", 1);
    REQUIRE(s.has_value());
    CHECK(s->requests_by_day[0].requests == 3);
    CHECK(s->requests_by_day[0].successful == 2);
    CHECK(s->requests_by_day[0].credits == 1);
  }

  TEST_CASE("a 365-day window spans a year, leap day included") {
    std::vector<day_counts> stored = {
        {"2024-03-01", 1, 1, 1}, // first day of the window
        {"2024-02-29", 9, 9, 9}, // one day too old
        {"2024-12-31", 2, 2, 2}, {"2025-01-01", 3, 3, 3},
        {"2025-02-28", 4, 4, 4}, // today
    };
    auto s = compute(stored, 0, "2025-02-28", 365);
    REQUIRE(s.has_value());
    const auto& days = s->requests_by_day;
    REQUIRE(days.size() == 365);
    CHECK(days.front().day == "2024-03-01");
    CHECK(days.front().requests == 1);
    CHECK(days[305].day == "2024-12-31");
    CHECK(days[305].requests == 2);
    CHECK(days[306].day == "2025-01-01");
    CHECK(days[306].requests == 3);
    CHECK(days.back().day == "2025-02-28");
    CHECK(days.back().requests == 4);
    CHECK(s->total_requests == 10);
  }

  TEST_CASE("a window over a leap day lists February 29") {
    auto s = compute({{"2024-02-29", 1, 1, 0}}, 1, "2024-03-01", 3);
    REQUIRE(s.has_value());
    REQUIRE(s->requests_by_day.size() == 3);
    CHECK(s->requests_by_day[0].day == "2024-02-28");
    CHECK(s->requests_by_day[1].day == "2024-02-29");
    CHECK(s->requests_by_day[1].requests == 1);
    CHECK(s->requests_by_day[2].day == "2024-03-01");
  }

  TEST_CASE("stats for a window outside 1..365 days are refused") {
    for (int days : {0, 366}) {
      auto s = compute({}, 0, "2026-11-21", days);
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error_value().code == errc::validation_failed);
    }
  }
}
