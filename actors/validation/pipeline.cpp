#include "actors/validation/pipeline.hpp"

#include "core/validation/smtp_stage.hpp"
#include "net/dns_resolver.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <utility>

namespace mailassay::actors::validation {

namespace {

namespace stage = core::validation;
using std::chrono::milliseconds;

/// How long the ledger may take to answer (a storage write).
constexpr auto ledger_timeout = std::chrono::seconds(60);

/// How long past a request's budget the scheduler may answer (it answers
/// by the budget; this only covers a scheduler that is gone).
constexpr auto scheduler_slack = std::chrono::seconds(10);

/// How long before its caller's deadline a probe ends, so that its answer
/// (timed out, unknown) reaches the caller before the deadline answers 503.
constexpr auto deadline_margin = milliseconds(200);

// Whether nobody waits for request `req`'s answer any more.
bool abandoned(const request& req) {
  return req.answered && req.answered->load(std::memory_order_acquire);
}

// The probe's budget: the request's own, cut to end before its caller's
// deadline.
milliseconds budget_of(const request& req) {
  milliseconds budget(req.timeout_ms);
  if (!req.deadline)
    return budget;
  auto left = std::chrono::duration_cast<milliseconds>(
      *req.deadline - std::chrono::steady_clock::now() - deadline_margin);
  return std::max(milliseconds(0), std::min(budget, left));
}

// The answer of a request that was answered elsewhere: nobody reads it.
core::error abandoned_error() {
  return core::make_error(core::errc::unavailable,
                          "the request was answered before its probe");
}

/// Validations of one job, each at its own step.
struct job_state {
  std::vector<request> requests;
  std::vector<result> results;
  std::vector<stage::credit_hold> holds;
  std::vector<credits::reservation> held;
  group_callback done;
  std::shared_ptr<const core::dns::mail_route> route;
  validator::clock_type::time_point started;
  std::size_t left = 0;
  /// A batch group: its addresses go after the real-time ones.
  bool batch = false;
};

struct pipeline_state {
  pipeline_env env;
  std::unordered_map<std::uint64_t, job_state> jobs;
  std::uint64_t next_id = 0;
  static inline const char* name = "validation_pipeline";
};

using self_ptr = pipeline_actor::stateful_pointer<pipeline_state>;

job_state* find_job(self_ptr self, std::uint64_t id) {
  auto it = self->state.jobs.find(id);
  return it == self->state.jobs.end() ? nullptr : &it->second;
}

// The verdict, the answer; the job ends with its last answer.
void deliver(self_ptr self, std::uint64_t id, std::size_t i) {
  auto* j = find_job(self, id);
  if (!j)
    return;
  auto& r = j->results[i];
  validator::conclude(r, j->started);
  j->done(i, std::move(r));
  if (--j->left == 0)
    self->state.jobs.erase(id);
}

// The SMTP answer of request `i`: its honest facts, then the credit.
void on_answer(self_ptr self, std::uint64_t id, std::size_t i,
               const core::smtp::address_outcome& o) {
  auto* j = find_job(self, id);
  if (!j)
    return;
  auto& r = j->results[i];
  // Read as the domain's provider answers (docs/smtp.md, "What each
  // provider answers"); no provider: as any host.
  const auto* provider =
      j->route && j->route->provider ? &*j->route->provider : nullptr;
  r.smtp = stage::facts_of(o, core::smtp::habits_of(provider));
  r.smtp_reply.host = o.host;
  r.smtp_reply.attempts = o.attempts;
  r.smtp_reply.code = o.rcpt.code;
  if (o.rcpt.enhanced)
    r.smtp_reply.enhanced = o.rcpt.enhanced->to_string();
  r.smtp_reply.message = o.rcpt.message;
  auto hold = j->holds[i];
  r.credits_used = stage::credits_used(hold, r.smtp);
  switch (stage::settle(hold, r.smtp)) {
    case stage::settlement::none: return deliver(self, id, i);
    case stage::settlement::commit:
      // A caller that can tell whether its answer was delivered keeps the
      // credit only then (issue #29): it settles.
      if (j->requests[i].answered) {
        r.settle_credit = [ledger = self->state.env.ledger,
                           held = j->held[i]](bool delivered) {
          if (delivered)
            caf::anon_send(ledger, credits::commit_credit{held});
          else
            caf::anon_send(ledger, credits::refund_credit{held});
        };
        return deliver(self, id, i);
      }
      self->send(self->state.env.ledger, credits::commit_credit{j->held[i]});
      return deliver(self, id, i);
    case stage::settlement::refund:
      // The answer waits for the refund, so the balance it implies is
      // already stored when the caller reads it.
      self->request(self->state.env.ledger, ledger_timeout,
                    credits::refund_credit{j->held[i]})
          .then([self, id, i](bool) { deliver(self, id, i); },
                [self, id, i](caf::error&) { deliver(self, id, i); });
      return;
  }
}

// Asks the SMTP scheduler about request `i`'s address. It answers by the
// request's own deadline; the slack only covers a scheduler that is gone.
void probe(self_ptr self, std::uint64_t id, std::size_t i) {
  auto* j = find_job(self, id);
  if (!j)
    return;
  const auto& req = j->requests[i];
  const auto& a = j->results[i].address;
  smtp::probe_address ask;
  ask.domain = a.ascii_domain;
  ask.address = a.local_part + "@" + a.ascii_domain;
  ask.route = j->route;
  ask.budget = budget_of(req);
  ask.retry_deferrals = req.smtp_retry_deferrals;
  ask.batch = j->batch;
  self->request(self->state.env.scheduler, ask.budget + scheduler_slack, ask)
      .then([self, id,
             i](core::smtp::address_outcome& o) { on_answer(self, id, i, o); },
            [self, id, i, address = ask.address](caf::error&) {
              core::smtp::address_outcome o;
              o.address = address;
              o.rcpt.message = "the SMTP scheduler did not answer";
              o.timed_out = true;
              on_answer(self, id, i, o);
            });
}

// Takes the credit of request `i` before its probe; a refusal is its
// answer (402).
void reserve(self_ptr self, std::uint64_t id, std::size_t i) {
  auto* j = find_job(self, id);
  if (!j)
    return;
  // Answered already (its deadline, its client gone): no credit taken.
  if (abandoned(j->requests[i])) {
    j->results[i].refused = abandoned_error();
    return deliver(self, id, i);
  }
  self->request(
          self->state.env.ledger, ledger_timeout,
          credits::reserve_credit{j->requests[i].organization_id, "validate"})
      .then(
          [self, id, i](credits::reserve_outcome& o) {
            auto* j = find_job(self, id);
            if (!j)
              return;
            if (o.refused) {
              j->results[i].refused = std::move(o.refused);
              return deliver(self, id, i);
            }
            j->held[i] = std::move(o.held);
            // Answered while the ledger wrote: the credit goes back and no
            // probe starts.
            if (abandoned(j->requests[i])) {
              j->results[i].refused = abandoned_error();
              self->request(self->state.env.ledger, ledger_timeout,
                            credits::refund_credit{j->held[i]})
                  .then([](bool) {}, [](caf::error&) {});
              return deliver(self, id, i);
            }
            probe(self, id, i);
          },
          [self, id, i](caf::error&) {
            auto* j = find_job(self, id);
            if (!j)
              return;
            j->results[i].refused = core::make_error(
                core::errc::internal, "the credit ledger did not answer");
            deliver(self, id, i);
          });
}

// The job's mail route is known: each request's SMTP plan and credit.
void on_routed(self_ptr self, std::uint64_t id,
               std::shared_ptr<const core::dns::mail_route> route) {
  auto* j = find_job(self, id);
  if (!j)
    return;
  j->route = std::move(route);
  bool probing_on = self->state.env.scheduler != nullptr;
  // Reserving may answer at once (a request answered meanwhile), and the
  // last answer ends the job: both wait until the loop is done with `j`.
  std::vector<std::size_t> now;
  std::vector<std::size_t> to_reserve;
  for (std::size_t i = 0; i < j->requests.size(); ++i) {
    auto& r = j->results[i];
    const auto& req = j->requests[i];
    bool routed = validator::routable(r) && j->route;
    if (routed)
      r.route = j->route;
    auto plan = stage::plan_smtp(req.smtp, probing_on, r.address,
                                 routed ? j->route.get() : nullptr);
    j->holds[i] = stage::hold_for(plan, req.credits_prepaid);
    switch (j->holds[i]) {
      case stage::credit_hold::none: now.push_back(i); break;
      case stage::credit_hold::reserve: to_reserve.push_back(i); break;
      case stage::credit_hold::prepaid: probe(self, id, i); break;
    }
  }
  for (auto i : to_reserve)
    reserve(self, id, i);
  for (auto i : now)
    deliver(self, id, i);
}

void on_job(self_ptr self, smtp_job& job) {
  auto& st = self->state;
  auto& gauges = *st.env.gauges;
  if (!job.batch) {
    --gauges.queued;
    ++gauges.busy;
  }
  auto id = ++st.next_id;
  auto& j = st.jobs[id];
  // One HTTP request's job counts from the request's arrival.
  j.started = job.requests.size() == 1
                  ? validator::start_of(job.requests.front())
                  : validator::clock_type::now();
  j.batch = job.batch;
  j.requests = std::move(job.requests);
  j.done = std::move(job.done);
  j.left = j.requests.size();
  j.results.resize(j.left);
  j.holds.assign(j.left, stage::credit_hold::none);
  j.held.resize(j.left);
  const std::string* domain = nullptr;
  for (std::size_t i = 0; i < j.left; ++i) {
    st.env.free->prepare(j.requests[i], j.results[i]);
    if (!domain && validator::routable(j.results[i]))
      domain = &j.results[i].address.ascii_domain;
  }
  if (!job.batch) {
    --gauges.busy;
    ++gauges.done;
  }
  if (j.left == 0) {
    st.jobs.erase(id);
    return;
  }
  if (!domain)
    return on_routed(self, id, nullptr);
  auto& resolver = *st.env.free->shared_resolver();
  if (auto cached = resolver.cached_route(*domain))
    return on_routed(self, id, std::move(cached));
  auto me = caf::actor_cast<pipeline_actor>(self);
  resolver.resolve_mail_route(*domain, [me, id](core::dns::mail_route r) {
    caf::anon_send(me,
                   job_routed{id, std::make_shared<const core::dns::mail_route>(
                                      std::move(r))});
  });
}

pipeline_actor::behavior_type pipeline_fn(self_ptr self, pipeline_env env) {
  self->state.env = std::move(env);
  return {
      [self](smtp_job& job) { on_job(self, job); },
      [self](job_routed& r) { on_routed(self, r.job, std::move(r.route)); },
  };
}

} // namespace

pipeline_actor spawn_pipeline(caf::actor_system& sys, pipeline_env env) {
  return sys.spawn(pipeline_fn, std::move(env));
}

} // namespace mailassay::actors::validation
