#include "actors/batch/runner.hpp"

#include "actors/batch/job_supervisor.hpp"
#include "actors/batch/messages.hpp"
#include "actors/blocking_ask.hpp"
#include "log/log.hpp"
#include "security/random.hpp"

#include <caf/all.hpp>

#include <map>
#include <unistd.h>

namespace mailassay::actors {

namespace {

using core::batch::job;
using namespace batch;

// The claimer: takes queued jobs (or jobs whose lease ran out) from storage
// while fewer than `max_jobs` run here, one supervisor each.
struct runner_state {
  std::shared_ptr<batch_runner_env> env;
  std::shared_ptr<batch_gauges> gauges;
  std::map<std::string, caf::actor> running; // job id -> supervisor
  bool claiming = false;
  bool stopping = false;
  bool handing_back = false; // a job claimed while stopping goes back
  std::vector<caf::response_promise> waiting_stop;
  static inline const char* name = "batch_runner";
};

using runner = caf::stateful_actor<runner_state>;

// Answers `stop` once nothing of this process can touch a lease any more:
// every supervisor is down and no claim is on its way (a claim answered
// after the supervisors handed their leases back would take a job again,
// for a process about to exit).
bool stopped(const runner_state& st) {
  return st.stopping && st.running.empty() && !st.claiming && !st.handing_back;
}

void maybe_stopped(runner* self) {
  auto& st = self->state;
  if (!stopped(st))
    return;
  for (auto& rp : st.waiting_stop)
    rp.deliver(true);
  st.waiting_stop.clear();
}

void claim(runner* self) {
  auto& st = self->state;
  if (st.claiming || st.stopping ||
      static_cast<int>(st.running.size()) >= st.env->cfg.max_jobs)
    return;
  st.claiming = true;
  auto owner = st.env->owner;
  auto lease = st.env->cfg.lease_seconds;
  auto max_restarts = st.env->cfg.max_restarts;
  auto now = st.env->now();
  storage_call(
      self, *st.env->storage,
      [owner, lease, now, max_restarts](storage::store& db) {
        return db.claim_batch_job(owner, lease, now, max_restarts);
      },
      [self](core::expected<std::optional<job>>& r) {
        auto& st = self->state;
        st.claiming = false;
        if (!r) {
          log::event(log::level::warn, "batch_claim_failed",
                     {{"error", r.error_value().message}});
          return maybe_stopped(self);
        }
        if (!*r)
          return maybe_stopped(self);
        if ((*r)->status == core::batch::job_status::failed) {
          // A poison job: the claim failed it instead (storage/store.hpp).
          log::event(log::level::warn, "batch_failed",
                     {{"job_id", (*r)->id},
                      {"restarts", std::to_string((*r)->restarts)},
                      {"error", (*r)->error ? (*r)->error->code : ""}});
          claim(self);
          return maybe_stopped(self);
        }
        if (st.stopping) {
          // Claimed while stopping: hand it back at once, and stop after.
          auto id = (*r)->id;
          auto owner = st.env->owner;
          st.handing_back = true;
          storage_call(
              self, *st.env->storage,
              [id, owner](storage::store& db) {
                return db.renew_batch_lease(id, owner, 0, 0);
              },
              [self](core::expected<bool>&) {
                self->state.handing_back = false;
                maybe_stopped(self);
              });
          return;
        }
        auto id = (*r)->id;
        auto sup =
            spawn_job_supervisor(self, st.env, st.gauges, std::move(**r));
        self->monitor(sup);
        st.running.emplace(id, sup);
        claim(self); // there may be more
      });
}

caf::behavior runner_fn(runner* self, std::shared_ptr<batch_runner_env> env,
                        std::shared_ptr<batch_gauges> gauges) {
  auto& st = self->state;
  st.env = std::move(env);
  st.gauges = std::move(gauges);
  self->set_down_handler([self](caf::down_msg& dm) {
    auto& st = self->state;
    for (auto i = st.running.begin(); i != st.running.end(); ++i)
      if (i->second.address() == dm.source) {
        st.running.erase(i);
        break;
      }
    if (st.stopping)
      return maybe_stopped(self);
    claim(self);
  });
  self->send(self, tick_atom::value);
  return {
      [self](in_actor& f) { f.run(); },
      [self](tick_atom) {
        auto& st = self->state;
        if (st.stopping)
          return;
        claim(self);
        self->delayed_send(self, std::chrono::milliseconds(st.env->cfg.poll_ms),
                           tick_atom::value);
      },
      [self](wake_atom) { claim(self); },
      [self](cancel_atom, const std::string& id) {
        auto& st = self->state;
        if (auto i = st.running.find(id); i != st.running.end())
          self->send(i->second, cancel_atom::value);
      },
      [self](stop_atom) -> caf::result<bool> {
        auto& st = self->state;
        st.stopping = true;
        for (auto& [id, sup] : st.running)
          self->send(sup, stop_atom::value);
        if (stopped(st))
          return true;
        st.waiting_stop.push_back(self->make_response_promise());
        return st.waiting_stop.back();
      },
  };
}

} // namespace

batch_runner::batch_runner(caf::actor_system& sys, batch_runner_env env)
    : sys_(sys), gauges_(std::make_shared<batch_gauges>()),
      env_(std::make_shared<batch_runner_env>(std::move(env))) {
  actor_ = sys.spawn(runner_fn, env_, gauges_);
}

void batch_runner::set_rate_under_load(std::int64_t rate) {
  // Atomic (config::live_int): supervisors read it at their next group.
  env_->cfg.rate_under_load = rate;
}

batch_runner::~batch_runner() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

void batch_runner::wake() {
  caf::anon_send(actor_, wake_atom::value);
}

void batch_runner::cancelled(const std::string& job_id) {
  caf::anon_send(actor_, cancel_atom::value, job_id);
}

void batch_runner::stop(std::chrono::milliseconds timeout) {
  blocking_ask(sys_, actor_, timeout, log::level::warn, "batch_stop_timeout",
               stop_atom::value);
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

std::string batch_owner_name() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  return std::string{host} + ":" + std::to_string(getpid()) + ":" +
         security::random_base62(6);
}

} // namespace mailassay::actors
