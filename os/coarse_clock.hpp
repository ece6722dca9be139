#pragma once

#include <chrono>
#include <cstdint>
#include <ctime>

namespace mailassay::os {

// The kernel's clocks as of its last tick: up to one tick (1-4 ms) behind
// and read without the TSC, ~3 ns a read against ~20 ns for the precise
// ones here. For deadlines, TTLs and rate windows of a second and more,
// which every request reads.

/// steady_clock's time (CLOCK_MONOTONIC, the same base) as of the last
/// tick: never ahead of `std::chrono::steady_clock::now()`.
inline std::chrono::steady_clock::time_point coarse_steady_now() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point{
      std::chrono::duration_cast<std::chrono::steady_clock::duration>(
          std::chrono::seconds{ts.tv_sec} +
          std::chrono::nanoseconds{ts.tv_nsec})};
}

/// Unix time in whole seconds as of the last tick.
inline std::int64_t coarse_unix_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME_COARSE, &ts);
  return ts.tv_sec;
}

} // namespace mailassay::os
