#pragma once

// Whether `POST /v2/webhooks/{id}/test` may queue one more ping
// (docs/webhooks.md, "Limits"): pings per endpoint and per organization in
// a sliding window, and a cap on the organization's pending deliveries.
// Pure: storage counts the rows and asks, in the transaction that inserts.

#include <cstdint>
#include <string>

namespace mailassay::core::webhooks {

/// The configured limits; a zero limit is no limit.
struct ping_limits {
  std::int64_t per_endpoint = 0;     ///< Pings per endpoint per window.
  std::int64_t per_organization = 0; ///< Pings per organization per window.
  std::int64_t window_ms = 60000;    ///< The sliding window.
  /// Pending deliveries (any event) an organization may have before a
  /// ping is refused.
  std::int64_t max_pending = 0;
};

/// What storage counted: pings created after now - window, and the
/// organization's pending deliveries.
struct ping_counts {
  std::int64_t endpoint_recent = 0;
  std::int64_t endpoint_oldest_ms = 0; ///< Oldest of those; 0 when none.
  std::int64_t organization_recent = 0;
  std::int64_t organization_oldest_ms = 0; ///< Oldest of those; 0 if none.
  std::int64_t organization_pending = 0;
};

/// The answer: allowed, or refused with the seconds to wait and why.
struct ping_decision {
  bool allowed = true;
  std::int64_t retry_after_seconds = 0; ///< >= 1 when refused.
  std::string reason;                   ///< The 429's message.
};

/// Decides one ping at `now_ms` (Unix milliseconds). The endpoint's window
/// is checked first, then the organization's, then the pending cap; a full
/// window reopens when its oldest ping leaves it, a full queue is asked to
/// come back after one window.
ping_decision admit_ping(const ping_counts& counts, const ping_limits& limits,
                         std::int64_t now_ms);

} // namespace mailassay::core::webhooks
