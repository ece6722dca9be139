#include "actors/storage_pool.hpp"

#include "log/log.hpp"
#include "os/thread_priority.hpp"

#include <caf/all.hpp>

namespace mailassay::actors {

struct storage_pool::shared {
  const config::settings& cfg;
  use_cases::accounts::key_cache& keys;
  std::shared_ptr<security::jwt_keyring> jwt;
  std::shared_ptr<pool_gauges> gauges;
  storage_lane lane;
  std::atomic<const use_cases::accounts::change_echo*> echo{nullptr};
};

namespace {

struct worker_state {
  std::unique_ptr<storage::store> db;
  bool thread_set = false;
  static inline const char* name = "storage_worker";
};

caf::behavior storage_worker(caf::stateful_actor<worker_state>* self,
                             std::shared_ptr<storage_pool::shared> sh) {
  return {
      [self, sh](storage_job& job) {
        sh->gauges->queued--;
        sh->gauges->busy++;
        if (!self->state.thread_set) {
          // Here, not at spawn: this runs on the worker's own thread.
          self->state.thread_set = true;
          if (sh->lane.nice > 0)
            os::lower_thread_priority(sh->lane.nice, sh->lane.thread_name);
        }
        job_context ctx;
        ctx.cfg = &sh->cfg;
        ctx.keys = &sh->keys;
        ctx.jwt = sh->jwt.get();
        ctx.echo = sh->echo.load(std::memory_order_relaxed);
        if (!self->state.db) {
          // Opened lazily and again after a failure, so a database that comes
          // back is picked up without a restart.
          auto opened = storage::open_store(sh->cfg.database.url);
          if (opened)
            self->state.db = std::move(*opened);
          else
            ctx.open_error = opened.error_value();
        }
        ctx.db = self->state.db.get();
        try {
          job.run(ctx);
        } catch (const std::exception& e) {
          log::event(log::level::error, "storage_job_failed",
                     {{"error", e.what()}});
        }
        // Done before not busy: a reader that sees the pool idle also sees
        // every finished job counted.
        sh->gauges->done++;
        sh->gauges->busy--;
      },
  };
}

} // namespace

storage_pool::storage_pool(caf::actor_system& sys, const config::settings& cfg,
                           use_cases::accounts::key_cache& keys,
                           std::shared_ptr<security::jwt_keyring> jwt)
    : storage_pool(sys, cfg, keys, std::move(jwt),
                   storage_lane{cfg.actors.storage_workers, 0, "storage"}) {}

storage_pool::storage_pool(caf::actor_system& sys, const config::settings& cfg,
                           use_cases::accounts::key_cache& keys,
                           std::shared_ptr<security::jwt_keyring> jwt,
                           storage_lane lane)
    : shared_(std::make_shared<shared>(cfg, keys, std::move(jwt),
                                       std::make_shared<pool_gauges>(), lane)),
      size_(lane.workers) {
  gauges_ = shared_->gauges;
  auto sh = shared_;
  pool_ = caf::actor_pool::make(
      sys.dummy_execution_unit(), static_cast<size_t>(size_),
      [&sys, sh] { return sys.spawn<caf::detached>(storage_worker, sh); },
      caf::actor_pool::round_robin());
}

void storage_pool::submit(storage_job job) {
  gauges_->queued++;
  caf::anon_send(pool_, std::move(job));
}

void storage_pool::set_change_echo(
    const use_cases::accounts::change_echo* echo) {
  shared_->echo.store(echo);
}

void storage_pool::stop() {
  caf::anon_send_exit(pool_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
