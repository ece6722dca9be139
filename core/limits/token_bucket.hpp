#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <span>

namespace mailassay::core::limits {

/// A point in time as milliseconds since an arbitrary epoch (callers use a
/// monotonic clock); the core never reads a clock.
using millis = std::chrono::milliseconds;

/// One window: at most `limit` requests per `period`, refilled continuously.
struct window_spec {
  std::int64_t limit = 0; ///< Bucket capacity; must be > 0.
  millis period{60000};   ///< Time to refill an empty bucket; must be > 0.

  /// Returns whether both windows have the same limit and period.
  friend bool operator==(const window_spec&, const window_spec&) = default;
};

/// What a bucket (or a set of buckets) answered to one request, with the
/// numbers behind the `RateLimit-*` and `Retry-After` headers.
struct decision {
  bool allowed = true;            ///< The request may proceed.
  std::int64_t limit = 0;         ///< Capacity of the reported window.
  std::int64_t remaining = 0;     ///< Whole tokens left after this request.
  std::int64_t reset_seconds = 0; ///< Seconds until that bucket is full.
  /// When refused: seconds until the request could pass (>= 1); else 0.
  std::int64_t retry_after_seconds = 0;

  /// Returns whether both decisions carry the same numbers.
  friend bool operator==(const decision&, const decision&) = default;
};

/// A token bucket of `limit` tokens refilled continuously at limit/period.
///
/// Arithmetic is exact integer: one token is `period` (ms) units and the
/// bucket gains `limit` units per millisecond, so no rounding drifts. A
/// bucket starts full and never holds more than its capacity. Time going
/// backwards (out-of-order callers) counts as no time passing.
class token_bucket {
public:
  /// Builds a full bucket for `spec` at time `now`. A limit so large that
  /// limit * period (ms) would overflow 64 bits is clamped.
  token_bucket(window_spec spec, millis now);

  /// Builds a bucket for `spec` holding `level` units (one token = period
  /// units; clamped to [0, capacity]) at time `now`: the state a bucket kept
  /// elsewhere (a shared store) reported.
  static token_bucket at_level(window_spec spec, std::int64_t level,
                               millis now);

  /// Returns the units held at `now` (one token = period units).
  std::int64_t level(millis now) const { return level_at(now); }

  /// Takes `n` tokens if they are all there; reports the state afterwards.
  decision take(millis now, std::int64_t n = 1);

  /// Returns what `take(now, n)` would decide, changing nothing.
  decision peek(millis now, std::int64_t n = 1) const;

  /// Returns whether `take(now, n)` would be allowed (`peek(now,
  /// n).allowed` without building the report).
  bool can_take(millis now, std::int64_t n = 1) const;

  /// Changes the window to `spec`, keeping the tokens already consumed (a
  /// bucket with 3 of 5 used, raised to 10, has 7 left; lowered to 2, has
  /// none). A different period restarts the bucket full.
  void reshape(window_spec spec, millis now);

  /// Returns the window this bucket enforces.
  window_spec spec() const { return spec_; }

  /// Returns the first time at or after `now` when the bucket is full.
  millis full_at(millis now) const;

  /// Returns whether the bucket is full at `now` (an owner may drop it: a
  /// new bucket would behave the same).
  bool is_full(millis now) const { return full_at(now) <= now; }

  /// Returns the time of the last allowed take (creation time before any).
  millis idle_since() const { return last_take_; }

  /// Returns whole tokens available at `now`.
  std::int64_t available(millis now) const;

private:
  std::int64_t level_at(millis now) const;
  decision report(std::int64_t level, bool allowed, std::int64_t n) const;

  window_spec spec_;
  std::int64_t level_; // in units: one token = spec_.period.count()
  millis updated_;     // time `level_` refers to
  millis last_take_;
};

/// The combined answer over several buckets, and which one it reports.
struct combined_decision {
  decision result;       ///< Headers of the reported bucket; allowed if all.
  std::size_t index = 0; ///< Index of the reported bucket (0 if none).
};

/// Takes `n` tokens from every bucket only if every bucket allows it (no
/// partial consumption). Which bucket is reported:
/// - allowed: the tightest bucket after the take, i.e. the smallest
///   `remaining`, ties broken by the shortest `reset_seconds`, then by the
///   lower index;
/// - refused: among the refusing buckets, the one with the longest
///   `retry_after_seconds` (the time the client must really wait), ties
///   broken like above. Nothing is taken from any bucket.
/// Null pointers are skipped; with no bucket at all the result is allowed
/// with all numbers 0.
combined_decision take_all(std::span<token_bucket* const> buckets, millis now,
                           std::int64_t n = 1);

/// Reports the tightest of `buckets` as they stand at `now`, for a request
/// that takes no token (an endpoint without a limit): each bucket's
/// `peek(now, 0)` (remaining = whole tokens left, reset = seconds until
/// full), the smallest remaining first, ties broken by the shortest reset,
/// then by the lower index. Always allowed; null pointers are skipped; with
/// no bucket all numbers are 0.
combined_decision peek_all(std::span<const token_bucket* const> buckets,
                           millis now);

/// Returns whether `a` is a tighter window to report than `b` (smaller
/// remaining, then shorter reset).
bool tighter(const decision& a, const decision& b);

} // namespace mailassay::core::limits
