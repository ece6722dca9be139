#include "core/usage/calendar.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using namespace mailassay::core::usage;
using mailassay::core::errc;

TEST_SUITE("core.usage") {
  TEST_CASE("day numbers and day strings convert both ways") {
    struct row {
      const char* day;
      std::int64_t number;
    };
    const row rows[] = {
        {"1970-01-01", 0},     {"1970-01-02", 1},     {"1969-12-31", -1},
        {"2000-02-29", 11016}, {"2000-03-01", 11017}, {"2024-02-29", 19782},
        {"2024-12-31", 20088}, {"2025-01-01", 20089}, {"2026-11-21", 20778},
        {"2100-02-28", 47540}, {"2100-03-01", 47541}, {"9999-12-31", 2932896},
    };
    for (const auto& r : rows) {
      CAPTURE(r.day);
      CHECK(parse_day(r.day) == std::optional<std::int64_t>{r.number});
      CHECK(format_day(r.number) == r.day);
    }
  }

  TEST_CASE("malformed or impossible days are rejected") {
    for (const char* bad :
         {"", "2026-1-01", "2026-01-1", "2026/01/01", "2026-00-10",
          "2026-13-01", "2026-01-00", "2026-01-32", "2026-04-31", "2025-02-29",
          "2100-02-29", "1900-02-29", "2026-11-21T00:00:00Z", " 2026-11-21",
          "2026-1a-21", "+026-11-21"}) {
      CAPTURE(bad);
      CHECK_FALSE(parse_day(bad).has_value());
    }
    CHECK(parse_day("2000-02-29").has_value());
    CHECK(parse_day("2028-02-29").has_value());
  }

  TEST_CASE("unix seconds fall on the UTC day that contains them") {
    CHECK(day_number(0) == 0);
    CHECK(day_number(86399) == 0);
    CHECK(day_number(86400) == 1);
    CHECK(day_number(-1) == -1);
    CHECK(day_number(-86400) == -1);
    CHECK(day_number(-86401) == -2);
    // 2026-11-21T23:59:59Z and 2026-11-22T00:00:00Z.
    CHECK(format_day(day_number(1795305599)) == "2026-11-21");
    CHECK(format_day(day_number(1795305600)) == "2026-11-22");
  }

  TEST_CASE("the window's first day counts back days - 1 from today") {
    struct row {
      const char* today;
      int days;
      const char* first;
    };
    const row rows[] = {
        {"2026-11-21", 1, "2026-11-21"},   // today only
        {"2026-11-21", 2, "2026-11-20"},   //
        {"2026-11-21", 30, "2026-10-23"},  // the default
        {"2026-03-01", 2, "2026-02-28"},   // month boundary, common year
        {"2024-03-01", 2, "2024-02-29"},   // leap day
        {"2024-03-01", 3, "2024-02-28"},   //
        {"2027-01-01", 2, "2026-12-31"},   // year boundary
        {"2026-11-21", 365, "2025-11-22"}, // the largest window
        {"2025-02-27", 365, "2024-02-29"}, // starts on a leap day
        {"2024-12-31", 365, "2024-01-02"}, // a leap year is 366 days
        {"2023-12-31", 365, "2023-01-01"}, // a common year is 365 days
        {"2100-03-01", 2, "2100-02-28"},   // 2100 is not a leap year
        {"2000-03-01", 2, "2000-02-29"},   // 2000 is
    };
    for (const auto& r : rows) {
      CAPTURE(r.today);
      CAPTURE(r.days);
      auto first = window_start(r.today, r.days);
      REQUIRE(first.has_value());
      CHECK(*first == r.first);
    }
  }

  TEST_CASE("a window outside 1..365 days or with a bad today is refused") {
    for (int days : {0, -1, 366, 1000}) {
      CAPTURE(days);
      auto r = window_start("2026-11-21", days);
      REQUIRE_FALSE(r.has_value());
      CHECK(r.error_value().code == errc::validation_failed);
    }
    auto r = window_start("2026-02-30", 30);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::validation_failed);
    CHECK(default_window_days == 30);
  }
}
