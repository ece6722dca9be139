#include "core/base/expected.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

using namespace mailassay::core;

TEST_SUITE("core.base.expected") {
  TEST_CASE("holds a value or an error, never both") {
    expected<std::string> ok{std::string{"x"}};
    CHECK(ok.has_value());
    CHECK(*ok == "x");
    expected<std::string> bad{make_error(errc::not_found, "gone")};
    CHECK_FALSE(bad.has_value());
    CHECK(bad.error_value().code == errc::not_found);
    CHECK(bad.error_value().message == "gone");
  }
  TEST_CASE("names every error kind") {
    CHECK(to_string(errc::payload_too_large) == "payload_too_large");
    CHECK(to_string(errc::active_job_exists) == "active_job_exists");
  }
}

#include "core/base/time_format.hpp"

TEST_SUITE("core.base.time_format") {
  TEST_CASE("formats Unix seconds as ISO 8601 UTC") {
    CHECK(iso8601(0) == "1970-01-01T00:00:00Z");
    CHECK(iso8601(951782400) == "2000-02-29T00:00:00Z");
    CHECK(iso8601(1795280760) == "2026-11-21T17:06:00Z");
    CHECK(iso8601(-1) == "1969-12-31T23:59:59Z");
    CHECK(utc_day(1795280760) == "2026-11-21");
  }

  TEST_CASE("formats the years 0-9999 directly, as snprintf did") {
    auto reference = [](std::int64_t t) {
      auto days = t / 86400 - (t % 86400 < 0);
      auto secs = t - days * 86400;
      auto c = civil_from_days(days);
      char buf[80];
      std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                    static_cast<long long>(c.year), c.month, c.day,
                    static_cast<long long>(secs / 3600),
                    static_cast<long long>(secs / 60 % 60),
                    static_cast<long long>(secs % 60));
      return std::string{buf};
    };
    // The first and last seconds of years 0 and 9999, beyond them, and a
    // spread of times in between.
    const std::int64_t year0 = -62167219200;     // 0000-01-01T00:00:00Z
    const std::int64_t year10000 = 253402300800; // 10000-01-01T00:00:00Z
    std::vector<std::int64_t> times = {
        year0 - 1, year0, year10000 - 1, year10000, 0, -1, 86399, 86400};
    std::uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 200000; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      times.push_back(static_cast<std::int64_t>(x % 340000000000ull) -
                      70000000000);
    }
    for (auto t : times)
      REQUIRE(iso8601(t) == reference(t));
    CHECK(iso8601(year10000 - 1) == "9999-12-31T23:59:59Z");
    CHECK(iso8601(year0) == "0000-01-01T00:00:00Z");
  }
}
