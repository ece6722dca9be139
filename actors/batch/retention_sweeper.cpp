#include "actors/batch/retention_sweeper.hpp"

#include "actors/storage_call.hpp"
#include "core/batch/retention.hpp"
#include "log/log.hpp"

#include <caf/all.hpp>

namespace mailassay::actors {

namespace {

using rtn_tick_atom = caf::atom_constant<caf::atom("rtn_tick")>;

struct sweeper_state {
  std::shared_ptr<retention_sweeper_env> env;
  std::shared_ptr<retention_gauges> gauges;
  bool sweeping = false;
  static inline const char* name = "retention_sweeper";
};

using sweeper_actor = caf::stateful_actor<sweeper_state>;

// On a storage worker: every organization's due jobs, one call each.
core::expected<std::int64_t> sweep(storage::store& db, std::int64_t now,
                                   std::int64_t server_seconds) {
  auto policies = db.list_retention_policies();
  if (!policies)
    return std::move(policies).error_value();
  std::int64_t erased = 0;
  for (const auto& p : *policies) {
    auto cutoff = core::batch::retention_cutoff(now, server_seconds,
                                                p.batch_retention_seconds);
    if (!cutoff)
      continue; // kept forever
    auto n = db.erase_expired_batch_results(p.organization_id, *cutoff, now,
                                            retention_jobs_per_call);
    if (!n)
      return std::move(n).error_value();
    erased += *n;
  }
  return erased;
}

caf::behavior sweeper_fn(sweeper_actor* self,
                         std::shared_ptr<retention_sweeper_env> env,
                         std::shared_ptr<retention_gauges> gauges) {
  self->state.env = std::move(env);
  self->state.gauges = std::move(gauges);
  self->send(self, rtn_tick_atom::value);
  return {
      [self](in_actor& f) { f.run(); },
      [self](rtn_tick_atom) {
        auto& st = self->state;
        self->delayed_send(self, st.env->interval, rtn_tick_atom::value);
        if (st.env->on_tick)
          st.env->on_tick();
        if (st.sweeping)
          return; // a slow sweep: this tick's work is in it
        st.sweeping = true;
        auto now = st.env->now();
        std::int64_t server = st.env->retention_seconds->get();
        storage_call(
            self, *st.env->storage,
            [now, server](storage::store& db) {
              return sweep(db, now, server);
            },
            [self](core::expected<std::int64_t>& r) {
              auto& st = self->state;
              st.sweeping = false;
              if (!r) {
                ++st.gauges->failures;
                log::event(log::level::warn, "batch_retention_failed",
                           {{"error", r.error_value().message}});
                return;
              }
              ++st.gauges->sweeps;
              if (*r == 0)
                return;
              st.gauges->jobs_erased += *r;
              log::event(log::level::info, "batch_results_erased",
                         {{"jobs", std::to_string(*r)}});
            });
      },
  };
}

} // namespace

retention_sweeper::retention_sweeper(caf::actor_system& sys,
                                     retention_sweeper_env env)
    : gauges_(std::make_shared<retention_gauges>()) {
  actor_ = sys.spawn(sweeper_fn,
                     std::make_shared<retention_sweeper_env>(std::move(env)),
                     gauges_);
}

retention_sweeper::~retention_sweeper() {
  stop();
}

void retention_sweeper::stop() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
