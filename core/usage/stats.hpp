#pragma once

#include "core/base/expected.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace mailassay::core::usage {

/// Counters of one key on one UTC day (as stored, or as reported).
struct day_counts {
  std::string day; ///< "YYYY-MM-DD".
  std::int64_t requests = 0;
  std::int64_t successful = 0; ///< Requests answered 200.
  std::int64_t credits = 0;
};

/// Usage statistics of one key over a window of days.
struct key_stats {
  std::int64_t total_requests = 0;
  /// successful / total_requests, in [0, 1]; 0 when there were no requests.
  double success_rate = 0;
  std::int64_t credits_consumed = 0;
  /// Distinct addresses validated in the window (the design's `topEmails`).
  std::int64_t top_emails = 0;
  /// One item per day of the window, oldest first; days without traffic
  /// are zeros.
  std::vector<day_counts> requests_by_day;
};

/// Computes the stats of the `days`-day window ending with `today`
/// (inclusive) from the `stored` days of the key (any order; days outside
/// the window are ignored, a day listed twice is summed) and the number of
/// `distinct` addresses in the window. `days` outside [1, 365] or a
/// malformed `today` -> errc::validation_failed.
expected<key_stats> compute(const std::vector<day_counts>& stored,
                            std::int64_t distinct, const std::string& today,
                            int days);

} // namespace mailassay::core::usage
