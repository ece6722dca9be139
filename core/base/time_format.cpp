#include "core/base/time_format.hpp"

#include <cstdio>

namespace mailassay::core {

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  return a / b - ((a % b != 0) && ((a < 0) != (b < 0)));
}

} // namespace

// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian, UTC).
civil_date civil_from_days(std::int64_t z) {
  z += 719468;
  auto era = (z >= 0 ? z : z - 146096) / 146097;
  auto doe = static_cast<unsigned>(z - era * 146097);
  auto yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  auto y = static_cast<std::int64_t>(yoe) + era * 400;
  auto doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  auto mp = (5 * doy + 2) / 153;
  auto d = doy - (153 * mp + 2) / 5 + 1;
  auto m = mp < 10 ? mp + 3 : mp - 9;
  return {y + (m <= 2), m, d};
}

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  auto era = (y >= 0 ? y : y - 399) / 400;
  auto yoe = static_cast<unsigned>(y - era * 400);
  auto doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  auto doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

std::string iso8601(std::int64_t t) {
  auto days = floor_div(t, 86400);
  auto secs = t - days * 86400;
  auto c = civil_from_days(days);
  if (c.year >= 0 && c.year <= 9999) {
    // Every record written carries a few: without snprintf's format parse.
    char out[20] = {'0', '0', '0', '0', '-', '0', '0', '-', '0', '0',
                    'T', '0', '0', ':', '0', '0', ':', '0', '0', 'Z'};
    auto two = [&out](std::size_t at, unsigned v) {
      out[at] = static_cast<char>('0' + v / 10);
      out[at + 1] = static_cast<char>('0' + v % 10);
    };
    auto y = static_cast<unsigned>(c.year);
    two(0, y / 100);
    two(2, y % 100);
    two(5, c.month);
    two(8, c.day);
    two(11, static_cast<unsigned>(secs / 3600));
    two(14, static_cast<unsigned>(secs / 60 % 60));
    two(17, static_cast<unsigned>(secs % 60));
    return std::string(out, sizeof out);
  }
  char buf[80];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(c.year), c.month, c.day,
                static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60),
                static_cast<long long>(secs % 60));
  return buf;
}

std::string utc_day(std::int64_t t) {
  return iso8601(t).substr(0, 10);
}

} // namespace mailassay::core
