#pragma once

// When a failed delivery is tried again (docs/webhooks.md, "Retries").
//
// Every attempt that does not end with a 2xx answer (a time-out, a
// connection or TLS error, a refused address, any other status) is a
// failure. The n-th failure waits first * 2^(n-1), at most `max`, spread
// by up to 10% so endpoints that failed together are not retried in step,
// and the delivery is given up once the next attempt would fall past
// `window` after the event. With the defaults (1 min, 1 h, 24 h): 1, 2, 4,
// 8, 16, 32 minutes, then hourly, about 29 attempts in all.

#include <cstdint>
#include <optional>

namespace mailassay::core::webhooks {

/// The back-off schedule; all times in milliseconds.
struct retry_schedule {
  std::int64_t first_ms = 60000;     ///< Wait after the first failure.
  std::int64_t max_ms = 3600000;     ///< Longest wait between attempts.
  std::int64_t window_ms = 86400000; ///< No attempt later than this after
                                     ///< the event.
};

/// Whether an HTTP status means the endpoint took the delivery (2xx).
bool accepted(int status_code);

/// When to try again after `failures` (>= 1) failed attempts, the last
/// ending at `now_ms`, for a delivery created at `created_ms`; nullopt to
/// give up. `spread` in [0, 1) (the caller draws it) lengthens the wait by
/// up to 10%.
std::optional<std::int64_t> next_attempt_ms(const retry_schedule& s,
                                            int failures,
                                            std::int64_t created_ms,
                                            std::int64_t now_ms, double spread);

/// Whether a delivery created at `created_ms` is past its window at
/// `now_ms` (an endpoint disabled for longer than the window): it is given
/// up without another attempt.
bool expired(const retry_schedule& s, std::int64_t created_ms,
             std::int64_t now_ms);

} // namespace mailassay::core::webhooks
