#pragma once

#include <cstdint>
#include <string>

namespace mailassay::core {

/// Formats Unix seconds as ISO 8601 UTC: "2026-11-21T17:06:00Z".
std::string iso8601(std::int64_t unix_seconds);

/// Formats Unix seconds as the UTC day "YYYY-MM-DD".
std::string utc_day(std::int64_t unix_seconds);

} // namespace mailassay::core
