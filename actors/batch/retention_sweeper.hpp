#pragma once

// Erases the results of finished batch jobs past their retention
// (docs/privacy.md, "Retention"). Every process runs one; they share the
// work without repeating it, because each job's erase is claimed in the
// database (store::erase_expired_batch_results).
//
//   tick (every batch.retention_sweep_seconds)
//     │ a sweep still running? skip this tick
//     ▼
//   on a storage worker: every organization's own retention
//     │ per organization: core::batch::retention_cutoff(now, server's,
//     │   its own) -> none (kept forever) or a cutoff
//     ▼
//   erase_expired_batch_results(organization, cutoff)   [claim + erase]
//     ▼
//   swept: count logged and added to the gauge; `on_tick` runs each tick
//   (the SMTP result cache drops its expired answers)

#include "actors/storage_pool.hpp"
#include "config/settings.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>

namespace mailassay::actors {

/// Counters of the sweeper, for /metrics and tests.
struct retention_gauges {
  std::atomic<std::int64_t> sweeps{0};      ///< Sweeps finished.
  std::atomic<std::int64_t> jobs_erased{0}; ///< Jobs this process erased.
  std::atomic<std::int64_t> failures{0};    ///< Sweeps that failed.
};

/// What the sweeper needs from its surroundings.
struct retention_sweeper_env {
  storage_pool* storage = nullptr;
  /// The server's retention (`batch.retention_seconds`), read at each tick:
  /// a reload changes it.
  const config::live_int* retention_seconds = nullptr;
  std::chrono::seconds interval{30};
  /// Unix seconds.
  std::function<std::int64_t()> now;
  /// Runs at every tick on the sweeper's thread (must not block); empty:
  /// nothing.
  std::function<void()> on_tick;
};

/// Jobs one organization has erased per storage call; the rest go at the
/// next tick (a bounded transaction).
inline constexpr std::int64_t retention_jobs_per_call = 100;

/// The process's retention sweeper: a facade over its actor.
class retention_sweeper {
public:
  /// Spawns the actor; it sweeps at once and every `env.interval`.
  retention_sweeper(caf::actor_system& sys, retention_sweeper_env env);

  /// Stops the actor.
  ~retention_sweeper();

  retention_sweeper(const retention_sweeper&) = delete;
  retention_sweeper& operator=(const retention_sweeper&) = delete;

  /// Stops sweeping (a sweep running on a storage worker finishes there;
  /// its answer is dropped).
  void stop();

  /// Counters for /metrics.
  const retention_gauges& gauges() const { return *gauges_; }

private:
  std::shared_ptr<retention_gauges> gauges_;
  caf::actor actor_;
};

} // namespace mailassay::actors
