#pragma once

// Batch job execution (docs/batch.md).
//
// One runner per process claims queued jobs (or jobs whose owner's lease ran
// out) from storage and spawns one supervisor actor per job
// (actors/batch/job_supervisor.hpp). A supervisor
// reads the job's pending items page by page, sorted by domain so DNS
// answers are reused, keeps at most `concurrency` validations in flight,
// and checkpoints results in one transaction per batch of rows (results,
// counters and lease together), so a crash loses only work that was never
// written and a replay writes nothing twice. Cancelling, a lost lease or
// shutdown stops it at its next checkpoint.

#include "actors/batch/result_row.hpp"
#include "actors/storage_pool.hpp"
#include "config/settings.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::actors {

class validation_pool;

/// Counters of the batch runner, for /metrics.
struct batch_gauges {
  std::atomic<std::int64_t> running_jobs{0}; ///< Supervisors alive.
  std::atomic<std::int64_t> in_flight{0};    ///< Validations running.
  std::atomic<std::int64_t> items_done{0};   ///< Results checkpointed.
  std::atomic<std::int64_t> checkpoints{0};  ///< Checkpoints written.
  /// Times a job held back by the pace while real-time validations arrive
  /// (one per 10 ms wake-up), so tests and operators see the pacing work.
  std::atomic<std::int64_t> paced_waits{0};
};

/// What the runner needs from its surroundings.
struct batch_runner_env {
  storage_pool* storage = nullptr;
  /// Where the jobs' groups are validated (SMTP included); outlives the
  /// runner.
  validation_pool* validations = nullptr;
  config::batch_settings cfg;
  /// This process's name in job leases (unique per process).
  std::string owner;
  /// The time of the job's storage calls (leases, started and finished
  /// times): Unix seconds, or `storage::database_clock` so that every
  /// process compares leases with the database's clock (serve does).
  std::function<std::int64_t()> now;
  /// Real-time validations so far (any counter that grows with them); when
  /// it moves, jobs slow to `cfg.rate_under_load`. Empty: never slowed.
  std::function<std::int64_t()> realtime_count;
  /// Writes a done item's flags in their stored form; required (serve
  /// hands in http/codec's `batch_item_detail`: actors know no JSON).
  batch::detail_writer write_detail;
};

/// The process's batch runner: a facade over the runner actor.
class batch_runner {
public:
  /// Spawns the runner; it looks for work at once and every `cfg.poll_ms`.
  batch_runner(caf::actor_system& sys, batch_runner_env env);

  /// Stops the runner actor if `stop` was not called.
  ~batch_runner();

  /// Looks for work now (a job was just queued).
  void wake();

  /// Stops the job `job_id` at once if this process runs it (it was
  /// cancelled).
  void cancelled(const std::string& job_id);

  /// Checkpoints what is finished, releases the leases and stops every
  /// supervisor; waits at most `timeout`.
  void stop(std::chrono::milliseconds timeout);

  /// Counters for /metrics.
  const batch_gauges& gauges() const { return *gauges_; }

  /// Changes the pace of jobs while real-time validations arrive
  /// (`batch.rate_under_load`, addresses/s; 0: no cap) from their next
  /// group on: a reload (SIGHUP). Thread-safe.
  void set_rate_under_load(std::int64_t rate);

private:
  caf::actor_system& sys_;
  std::shared_ptr<batch_gauges> gauges_;
  /// Shared with the runner actor and its supervisors.
  std::shared_ptr<batch_runner_env> env_;
  caf::actor actor_;
};

/// Returns a lease owner name for this process: host, pid and a random
/// suffix.
std::string batch_owner_name();

} // namespace mailassay::actors
