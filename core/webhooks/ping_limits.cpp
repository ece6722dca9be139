#include "core/webhooks/ping_limits.hpp"

#include <algorithm>

namespace mailassay::core::webhooks {

namespace {

std::int64_t seconds_until(std::int64_t at_ms, std::int64_t now_ms) {
  auto ms = std::max<std::int64_t>(0, at_ms - now_ms);
  return std::max<std::int64_t>(1, (ms + 999) / 1000);
}

} // namespace

ping_decision admit_ping(const ping_counts& counts, const ping_limits& limits,
                         std::int64_t now_ms) {
  if (limits.per_endpoint > 0 && counts.endpoint_recent >= limits.per_endpoint)
    return {false,
            seconds_until(counts.endpoint_oldest_ms + limits.window_ms, now_ms),
            "Too many test deliveries for this webhook: at most " +
                std::to_string(limits.per_endpoint) + " per " +
                std::to_string(limits.window_ms / 1000) + " s"};
  if (limits.per_organization > 0 &&
      counts.organization_recent >= limits.per_organization)
    return {
        false,
        seconds_until(counts.organization_oldest_ms + limits.window_ms, now_ms),
        "Too many test deliveries for this organization: at most " +
            std::to_string(limits.per_organization) + " per " +
            std::to_string(limits.window_ms / 1000) + " s"};
  if (limits.max_pending > 0 &&
      counts.organization_pending >= limits.max_pending)
    return {false, seconds_until(now_ms + limits.window_ms, now_ms),
            "Too many deliveries waiting for this organization: at most " +
                std::to_string(limits.max_pending) + " pending"};
  return {};
}

} // namespace mailassay::core::webhooks
