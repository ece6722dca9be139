#include "core/usage/calendar.hpp"

#include "core/base/time_format.hpp"

#include <cstdio>

namespace mailassay::core::usage {

namespace {

bool is_leap(std::int64_t y) {
  return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0);
}

unsigned days_in_month(std::int64_t y, unsigned m) {
  static constexpr unsigned lengths[] = {31, 28, 31, 30, 31, 30,
                                         31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : lengths[m - 1];
}

// Reads `n` ASCII digits at `pos`; -1 when any is not a digit.
int digits(std::string_view s, std::size_t pos, std::size_t n) {
  int v = 0;
  for (std::size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9')
      return -1;
    v = v * 10 + (s[i] - '0');
  }
  return v;
}

} // namespace

std::int64_t day_number(std::int64_t t) {
  return t / 86400 - ((t % 86400 != 0) && (t < 0));
}

std::optional<std::int64_t> parse_day(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-')
    return std::nullopt;
  auto y = digits(s, 0, 4);
  auto m = digits(s, 5, 2);
  auto d = digits(s, 8, 2);
  if (y < 0 || m < 1 || m > 12 || d < 1)
    return std::nullopt;
  if (static_cast<unsigned>(d) > days_in_month(y, static_cast<unsigned>(m)))
    return std::nullopt;
  return days_from_civil(y, static_cast<unsigned>(m), static_cast<unsigned>(d));
}

std::string format_day(std::int64_t n) {
  auto c = civil_from_days(n);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04lld-%02u-%02u",
                static_cast<long long>(c.year), c.month, c.day);
  return buf;
}

expected<std::string> window_start(std::string_view today, int days) {
  if (days < min_window_days || days > max_window_days)
    return make_error(errc::validation_failed,
                      "days must be between 1 and 365");
  auto last = parse_day(today);
  if (!last)
    return make_error(errc::validation_failed,
                      "day must be a date in the form YYYY-MM-DD");
  return format_day(*last - (days - 1));
}

} // namespace mailassay::core::usage
