#pragma once

#include "core/limits/token_bucket.hpp"

#include <cstdint>
#include <optional>
#include <vector>

namespace mailassay::core::limits {

/// One minute, one hour and one day, the periods of per-key limits.
inline constexpr millis minute{60'000};
inline constexpr millis hour{3'600'000};
inline constexpr millis day{86'400'000};

/// Returns the windows of a key's limits: one per present, positive value
/// (per minute, per hour, per day, in that order). nullopt or a value <= 0
/// is unlimited and yields no window.
std::vector<window_spec> key_windows(std::optional<std::int64_t> per_minute,
                                     std::optional<std::int64_t> per_hour,
                                     std::optional<std::int64_t> per_day);

/// Several windows enforced together for one key (e.g. 10 per minute and
/// 500 per day).
///
/// A request is allowed only if every window allows it, and then it is
/// taken from all of them; a refused request takes nothing from any window.
/// The reported headers follow `take_all`: when allowed, the tightest window
/// (smallest remaining, ties -> shortest reset); when refused, the refusing
/// window with the longest retry-after. With no window the key is unlimited:
/// always allowed, all numbers 0.
class multi_window {
public:
  /// Builds full buckets for `specs` at `now`.
  multi_window(std::vector<window_spec> specs, millis now);

  /// Takes `n` from every window if all allow it.
  decision take(millis now, std::int64_t n = 1);

  /// Returns what `take(now, n)` would decide, changing nothing.
  decision peek(millis now, std::int64_t n = 1) const;

  /// Switches to `specs` if they differ from the current ones. Windows
  /// whose period is kept keep their consumed tokens (`token_bucket::
  /// reshape`); new periods start full; dropped periods are forgotten.
  void reshape(const std::vector<window_spec>& specs, millis now);

  /// Returns the windows enforced, in the order given.
  const std::vector<window_spec>& specs() const { return specs_; }

  /// Returns the buckets, in the order of `specs()`.
  std::vector<token_bucket>& buckets() { return buckets_; }

  /// Returns the buckets, in the order of `specs()`, for reading.
  const std::vector<token_bucket>& buckets() const { return buckets_; }

  /// Returns the first time every window is full.
  millis full_at(millis now) const;

  /// Returns whether every window is full at `now`.
  bool is_full(millis now) const { return full_at(now) <= now; }

  /// Returns the latest allowed take over all windows.
  millis idle_since() const;

private:
  std::vector<window_spec> specs_;
  std::vector<token_bucket> buckets_;
  millis created_;
};

} // namespace mailassay::core::limits
