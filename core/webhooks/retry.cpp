#include "core/webhooks/retry.hpp"

#include <algorithm>

namespace mailassay::core::webhooks {

bool accepted(int status_code) {
  return status_code >= 200 && status_code <= 299;
}

std::optional<std::int64_t>
next_attempt_ms(const retry_schedule& s, int failures, std::int64_t created_ms,
                std::int64_t now_ms, double spread) {
  auto first = std::max<std::int64_t>(1, s.first_ms);
  auto cap = std::max(first, s.max_ms);
  std::int64_t wait = first;
  // Doubling stops at the cap, so no shift can overflow.
  for (int i = 1; i < failures && wait < cap; ++i)
    wait = std::min(cap, wait * 2);
  spread = std::clamp(spread, 0.0, 0.999);
  wait += static_cast<std::int64_t>(static_cast<double>(wait) * 0.1 * spread);
  auto at = now_ms + wait;
  if (at > created_ms + s.window_ms)
    return std::nullopt;
  return at;
}

bool expired(const retry_schedule& s, std::int64_t created_ms,
             std::int64_t now_ms) {
  return now_ms > created_ms + s.window_ms;
}

} // namespace mailassay::core::webhooks
