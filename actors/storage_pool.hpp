#pragma once

#include "config/settings.hpp"
#include "core/base/errc.hpp"
#include "security/jwt_keyring.hpp"
#include "storage/store.hpp"
#include "use_cases/accounts/types.hpp"

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::actors {

/// What a storage job sees: the worker's connection (null while the
/// database cannot be opened, with the reason in `open_error`) and the
/// shared services use cases need.
struct job_context {
  storage::store* db = nullptr;
  core::error open_error;
  const config::settings* cfg = nullptr;
  use_cases::accounts::key_cache* keys = nullptr;
  security::jwt_keyring* jwt = nullptr;
  const use_cases::accounts::change_echo* echo = nullptr;

  /// Builds the use-case environment at `now`; requires `db`.
  use_cases::accounts::account_env env(std::int64_t now) const {
    return use_cases::accounts::account_env{*db, *cfg, *keys, *jwt, now, echo};
  }
};

/// A unit of blocking work (storage, password hashing) for a storage worker.
struct storage_job {
  std::function<void(job_context&)> run;
};

/// Occupancy figures of the pool, for /metrics.
struct pool_gauges {
  std::atomic<std::int64_t> queued{0}; ///< Submitted, not yet started.
  std::atomic<std::int64_t> busy{0};   ///< Running now.
  std::atomic<std::int64_t> done{0};   ///< Finished since start.
};

/// How a pool's worker threads run.
struct storage_lane {
  int workers = 1;
  /// Above 0: the workers' threads get this niceness (batch work).
  int nice = 0;
  /// Thread name (at most 15 characters).
  const char* thread_name = "storage";
};

/// A bounded set of detached actors, each owning one storage connection.
///
/// SOCI calls and argon2id block, so they never run on CAF's shared
/// scheduler threads: each worker has its own thread and connection, and
/// jobs are spread round-robin.
class storage_pool {
public:
  /// Spawns `cfg.actors.storage_workers` workers in `sys`.
  storage_pool(caf::actor_system& sys, const config::settings& cfg,
               use_cases::accounts::key_cache& keys,
               std::shared_ptr<security::jwt_keyring> jwt);

  /// Spawns the workers of `lane` in `sys` (a separate lane for batch work
  /// keeps its writes from queueing in front of real-time requests).
  storage_pool(caf::actor_system& sys, const config::settings& cfg,
               use_cases::accounts::key_cache& keys,
               std::shared_ptr<security::jwt_keyring> jwt, storage_lane lane);

  /// Queues a job; it runs on some worker thread.
  void submit(storage_job job);

  /// Lets jobs wait for the echo of the changes they notify (set once,
  /// before requests arrive).
  void set_change_echo(const use_cases::accounts::change_echo* echo);

  /// Returns the pool's occupancy counters.
  const pool_gauges& gauges() const { return *gauges_; }

  /// Returns the number of workers.
  int size() const { return size_; }

  /// Stops the workers after the jobs already queued.
  void stop();

  /// State the workers share with the pool.
  struct shared;

private:
  std::shared_ptr<shared> shared_;
  std::shared_ptr<pool_gauges> gauges_;
  caf::actor pool_;
  int size_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::storage_job)
