#include "core/batch/progress.hpp"

#include <algorithm>
#include <cmath>

namespace mailassay::core::batch {

double progress_percent(const job& j) {
  auto items = j.items();
  if (items == 0)
    return 100.0;
  return std::floor(1000.0 * static_cast<double>(j.processed) /
                    static_cast<double>(items)) /
         10.0;
}

std::optional<std::int64_t> eta_seconds(const job& j, std::int64_t now) {
  if (j.status == job_status::completed || j.status == job_status::cancelled ||
      j.status == job_status::failed)
    return 0;
  auto left = j.items() - j.processed;
  // Invalid rows cost nothing: the speed is the addresses'.
  auto done_here = j.processed - j.invalid_rows;
  if (j.status != job_status::processing || !j.started_at || done_here <= 0)
    return std::nullopt;
  auto elapsed = std::max<std::int64_t>(1, now - *j.started_at);
  auto rate = static_cast<double>(done_here) / static_cast<double>(elapsed);
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(left) / rate));
}

} // namespace mailassay::core::batch
