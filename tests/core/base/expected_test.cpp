#include "core/base/expected.hpp"

#include <doctest/doctest.h>
#include <string>

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
}
