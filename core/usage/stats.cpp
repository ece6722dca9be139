#include "core/usage/stats.hpp"

#include "core/usage/calendar.hpp"

#include <utility>

namespace mailassay::core::usage {

expected<key_stats> compute(const std::vector<day_counts>& stored,
                            std::int64_t distinct, const std::string& today,
                            int days) {
  auto first_day = window_start(today, days);
  if (!first_day)
    return std::move(first_day).error_value();
  auto first = *parse_day(*first_day);

  key_stats out;
  out.requests_by_day.resize(static_cast<std::size_t>(days));
  for (int i = 0; i < days; ++i)
    out.requests_by_day[static_cast<std::size_t>(i)].day =
        format_day(first + i);
  for (const auto& d : stored) {
    auto n = parse_day(d.day);
    if (!n || *n < first || *n >= first + days)
      continue;
    auto& slot = out.requests_by_day[static_cast<std::size_t>(*n - first)];
    slot.requests += d.requests;
    slot.successful += d.successful;
    slot.credits += d.credits;
  }
  std::int64_t successful = 0;
  for (const auto& d : out.requests_by_day) {
    out.total_requests += d.requests;
    successful += d.successful;
    out.credits_consumed += d.credits;
  }
  // Clamped so that inconsistent stored rows cannot leave [0, 1].
  if (out.total_requests > 0 && successful > 0)
    out.success_rate = successful >= out.total_requests
                           ? 1.0
                           : static_cast<double>(successful) /
                                 static_cast<double>(out.total_requests);
  out.top_emails = distinct;
  return out;
}

} // namespace mailassay::core::usage
