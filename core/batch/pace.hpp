#pragma once

#include <chrono>
#include <cstdint>

namespace mailassay::core::batch {

/// Milliseconds since an arbitrary epoch (the caller's monotonic clock).
using millis = std::chrono::milliseconds;

/// How a batch job yields to real-time validations (docs/batch.md,
/// "Scheduling").
struct pace_settings {
  /// Addresses per second while real-time validations arrive; <= 0: never
  /// slowed.
  std::int64_t rate_under_load = 10000;
  /// Real-time traffic counts as arriving until this long after the last
  /// change of the real-time counter.
  millis quiet_after{200};
  /// Burst allowed on top of the rate: this long worth of addresses (plus
  /// one), so that a job is not woken for every single address.
  millis burst{10};
};

/// Paces a batch job: without real-time traffic it runs as fast as it can;
/// while real-time validations arrive (the counter of finished real-time
/// validations moved within `quiet_after`), at most `rate_under_load`
/// addresses per second.
///
/// Exact integer arithmetic: one address costs 1000 units and the bucket
/// gains `rate_under_load` units per millisecond. A group may start while
/// the bucket holds one address; it takes all of its addresses, so the
/// bucket may go into debt, which later groups wait out. Time is passed in;
/// time going backwards counts as none passing.
class pace {
public:
  /// A pace for `settings`, with a full bucket.
  explicit pace(pace_settings settings);

  /// Notes the real-time counter at `now`. The first reading only sets the
  /// baseline: a job that starts on a quiet machine is not slowed.
  void observe(std::int64_t realtime_count, millis now);

  /// Whether real-time validations arrived within `quiet_after` of `now`.
  bool under_load(millis now) const;

  /// Whether a group may start at `now`.
  bool allows(millis now);

  /// Takes `addresses` from the bucket at `now` (call after `allows`).
  void take(millis now, std::int64_t addresses);

  /// Changes the rate from `now` on (a configuration reload): what the
  /// bucket gained so far at the old rate stays, its capacity follows the
  /// new rate.
  void set_rate(std::int64_t rate_under_load, millis now);

  /// Returns the rate in force (addresses/s; <= 0: never slowed).
  std::int64_t rate() const { return cfg_.rate_under_load; }

  /// The earliest time after `now` at which `allows` can be true again
  /// under load (never later than `now + burst`, so a change of load is
  /// noticed soon).
  millis next_try(millis now) const;

private:
  void refill(millis now);

  pace_settings cfg_;
  std::int64_t capacity_; // units
  std::int64_t level_;    // units; negative: debt
  millis updated_{0};
  std::int64_t seen_ = -1;
  bool seen_any_ = false;
  bool changed_ = false; // the counter moved since the first reading
  millis changed_at_{0};
};

} // namespace mailassay::core::batch
