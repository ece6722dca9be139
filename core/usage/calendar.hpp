#pragma once

#include "core/base/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::usage {

/// Smallest `days` a stats window accepts.
inline constexpr int min_window_days = 1;

/// Largest `days` a stats window accepts.
inline constexpr int max_window_days = 365;

/// `days` when the caller gives none.
inline constexpr int default_window_days = 30;

/// Returns the UTC day number (days since 1970-01-01) of Unix seconds,
/// rounding towards the past for negative times.
std::int64_t day_number(std::int64_t unix_seconds);

/// Returns the day number of "YYYY-MM-DD" (proleptic Gregorian), or nullopt
/// when the text is not exactly that form or names no real date
/// ("2025-02-29").
std::optional<std::int64_t> parse_day(std::string_view day);

/// Formats a day number as "YYYY-MM-DD" (years 0000..9999).
std::string format_day(std::int64_t day_number);

/// Returns the first day of the `days`-day window ending with `today`
/// (inclusive): `days` = 1 gives `today`, 30 gives `today` minus 29 days.
/// `days` outside [min_window_days, max_window_days] or a malformed `today`
/// -> errc::validation_failed.
expected<std::string> window_start(std::string_view today, int days);

} // namespace mailassay::core::usage
