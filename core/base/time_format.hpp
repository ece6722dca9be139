#pragma once

#include <cstdint>
#include <string>

namespace mailassay::core {

/// A proleptic Gregorian date.
struct civil_date {
  std::int64_t year;
  unsigned month, day;
};

/// Converts days since 1970-01-01 to a date (Howard Hinnant's algorithm).
civil_date civil_from_days(std::int64_t days);

/// Converts a date to days since 1970-01-01.
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day);

/// Formats Unix seconds as ISO 8601 UTC: "2026-11-21T17:06:00Z".
std::string iso8601(std::int64_t unix_seconds);

/// Formats Unix seconds as the UTC day "YYYY-MM-DD".
std::string utc_day(std::int64_t unix_seconds);

} // namespace mailassay::core
