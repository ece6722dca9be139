#include "actors/batch/job_supervisor.hpp"

#include "actors/batch/messages.hpp"
#include "actors/batch/result_row.hpp"
#include "actors/validation_pool.hpp"
#include "core/base/ascii.hpp"
#include "core/batch/pace.hpp"
#include "core/validation/smtp_stage.hpp"
#include "log/log.hpp"
#include "os/thread_priority.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <unordered_map>

namespace mailassay::actors::batch {

namespace {

/// One validation of a batch item, back at its supervisor.
struct item_done {
  std::int64_t seq = 0;
  std::string email;
  validation::result r;
};

} // namespace
} // namespace mailassay::actors::batch

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::batch::item_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::core::batch::job)

namespace mailassay::actors::batch {

namespace {

using core::batch::item;
using core::batch::job;

std::string domain_of(const std::string& email) {
  auto at = email.rfind('@');
  return at == std::string::npos ? std::string{}
                                 : core::ascii_lower(email.substr(at + 1));
}

using steady = std::chrono::steady_clock;

// Rows read from storage at a time: at least this many, or eight rounds of
// the job's concurrency, so the queue never runs dry between two reads.
constexpr std::int64_t min_page_rows = 1000;
// Addresses at one domain validated as one group: one route lookup for the
// group; in an SMTP job one session asks them all, and 20 keeps it well
// inside a server's recipient limit (RFC 5321 §4.5.3.1.8 requires at least
// 100; some servers set fewer).
constexpr std::size_t smtp_group_size = 20;
constexpr std::size_t free_group_size = 64;
// One batch address's time budget: no caller waits on it, so it is longer
// than a real-time request's, yet bounded (a tarpit must not hold a slot
// of the job's concurrency for long).
constexpr std::int64_t item_timeout_ms = 30000;

/// A greylisted address waiting for its next probe.
struct parked_item {
  steady::time_point due;
  item it;
};

/// Earlier passes of an address that was greylisted.
struct deferral {
  std::size_t passes = 0;
  bool reached = false; ///< Some pass reached a server (the credit is used).
  std::size_t attempts = 0; ///< RCPTs of the earlier passes.
};

struct supervisor_state {
  std::shared_ptr<batch_runner_env> env;
  std::shared_ptr<batch_gauges> gauges;
  job current;
  std::deque<item> queue;      // read, not yet handed to the validator
  std::int64_t after_seq = -1; // paging cursor over pending items
  bool loading = false;
  bool exhausted = false;     // every pending item has been read
  bool saving = false;        // a checkpoint is being written
  bool finishing = false;     // finish_batch_job sent
  bool stopping = false;      // cancel, lost lease or shutdown
  bool release_lease = false; // shutdown: let another process resume
  bool releasing = false;     // the lease is being handed back: write no more
  int in_flight = 0;
  std::vector<item> buffer; // results not yet checkpointed
  // Greylisted addresses wait here instead of in the prober, so their
  // wait holds no concurrency slot and the rest of the job goes on.
  std::deque<parked_item> parked;                       // sorted by due time
  std::unordered_map<std::int64_t, deferral> deferrals; // by seq
  // Pacing while real-time validations arrive (core/batch/pace.hpp).
  core::batch::pace pace{core::batch::pace_settings{}};
  bool pace_pending = false; // a btch_pace wake-up is on its way
  std::chrono::steady_clock::time_point last_write;
  static inline const char* name = "batch_supervisor";
};

using supervisor = caf::stateful_actor<supervisor_state>;

void pump(supervisor* self);
void checkpoint(supervisor* self);

void quit_after_release(supervisor* self) {
  auto& st = self->state;
  if (!st.release_lease)
    return self->quit();
  // A checkpoint after this would renew the lease it hands back and keep
  // the job from the next owner for a whole lease: results arriving now
  // stay pending for whoever resumes it.
  st.releasing = true;
  // A zero lease expires at once: the next start (or another process) claims
  // the job without waiting for the lease to run out.
  auto id = st.current.id;
  auto owner = st.env->owner;
  storage_call(
      self, *st.env->storage,
      [id, owner](storage::store& db) {
        return db.renew_batch_lease(id, owner, 0, 0);
      },
      [self](core::expected<bool>&) { self->quit(); });
}

// Stops at the next safe point: after the checkpoint in progress.
void stop(supervisor* self, const char* why) {
  auto& st = self->state;
  if (!st.stopping)
    log::event(log::level::info, "batch_stopped",
               {{"job_id", st.current.id}, {"why", why}});
  st.stopping = true;
  st.queue.clear();
  // Parked addresses stay pending in storage: whoever resumes the job
  // probes them again.
  st.parked.clear();
  if (st.saving || st.finishing)
    return;
  if (!st.buffer.empty() && st.release_lease)
    return checkpoint(self);
  quit_after_release(self);
}

void maybe_finish(supervisor* self) {
  auto& st = self->state;
  if (st.stopping || st.finishing || st.saving || !st.exhausted ||
      !st.queue.empty() || st.in_flight > 0 || !st.buffer.empty() ||
      !st.parked.empty())
    return;
  st.finishing = true;
  auto id = st.current.id;
  auto owner = st.env->owner;
  auto now = st.env->now();
  storage_call(
      self, *st.env->storage,
      [id, owner, now](storage::store& db) {
        return db.finish_batch_job(id, owner,
                                   core::batch::job_status::completed, now);
      },
      [self](core::expected<job>& r) {
        auto& st = self->state;
        if (r) {
          log::event(log::level::info, "batch_completed",
                     {{"job_id", r->id},
                      {"items", std::to_string(r->items())},
                      {"credits_used", std::to_string(r->credits_used)}});
        } else {
          log::event(
              log::level::warn, "batch_finish_failed",
              {{"job_id", st.current.id}, {"error", r.error_value().message}});
          if (r.error_value().code != core::errc::conflict) {
            // Storage hiccup: try again on the next tick, unless stopping
            // (the ticks have ended; whoever resumes the job finishes it).
            st.finishing = false;
            if (st.stopping)
              quit_after_release(self);
            return;
          }
        }
        self->quit();
      });
}

void checkpoint(supervisor* self) {
  auto& st = self->state;
  if (st.saving || st.buffer.empty())
    return;
  st.saving = true;
  auto rows = std::move(st.buffer);
  st.buffer.clear();
  auto id = st.current.id;
  auto owner = st.env->owner;
  auto lease = st.env->cfg.lease_seconds;
  auto now = st.env->now();
  auto shared_rows = std::make_shared<std::vector<item>>(std::move(rows));
  storage_call(
      self, *st.env->storage,
      [id, owner, lease, now, shared_rows](storage::store& db) {
        return db.save_batch_results(id, owner, *shared_rows, lease, now);
      },
      [self, shared_rows](core::expected<job>& r) {
        auto& st = self->state;
        st.saving = false;
        st.last_write = std::chrono::steady_clock::now();
        if (r) {
          st.current = *r;
          st.gauges->items_done +=
              static_cast<std::int64_t>(shared_rows->size());
          ++st.gauges->checkpoints;
          if (st.stopping)
            return stop(self, "shutdown");
          pump(self);
          return maybe_finish(self);
        }
        if (r.error_value().code == core::errc::conflict) {
          // Cancelled, or another process holds the job now.
          st.release_lease = false;
          return stop(self, "cancelled_or_lease_lost");
        }
        // Storage hiccup: keep the rows for the next tick's checkpoint.
        log::event(
            log::level::warn, "batch_checkpoint_failed",
            {{"job_id", st.current.id}, {"error", r.error_value().message}});
        st.buffer.insert(st.buffer.end(), shared_rows->begin(),
                         shared_rows->end());
        if (st.stopping)
          quit_after_release(self);
      });
}

void load_page(supervisor* self) {
  auto& st = self->state;
  if (st.loading || st.exhausted || st.stopping)
    return;
  st.loading = true;
  auto id = st.current.id;
  auto after = st.after_seq;
  std::int64_t page =
      std::max<std::int64_t>(min_page_rows, st.env->cfg.concurrency * 8);
  storage_call(
      self, *st.env->storage,
      [id, after, page](storage::store& db) {
        return db.pending_batch_items(id, after, page);
      },
      [self, page](core::expected<std::vector<item>>& r) {
        auto& st = self->state;
        st.loading = false;
        if (!r) {
          log::event(
              log::level::warn, "batch_read_failed",
              {{"job_id", st.current.id}, {"error", r.error_value().message}});
          return; // the next tick pumps again
        }
        auto& items = *r;
        if (!items.empty())
          st.after_seq = items.back().seq;
        if (static_cast<std::int64_t>(items.size()) < page)
          st.exhausted = true;
        // Neighbours share a domain: its DNS answer is looked up once and
        // then served from the cache.
        // Each domain is lower-cased once, not once per comparison.
        std::vector<std::pair<std::string, std::size_t>> order;
        order.reserve(items.size());
        for (std::size_t i = 0; i < items.size(); ++i)
          order.emplace_back(domain_of(items[i].email), i);
        std::stable_sort(
            order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
        for (auto& [domain, i] : order)
          st.queue.push_back(std::move(items[i]));
        pump(self);
        maybe_finish(self);
      });
}

// Milliseconds of the steady clock, the pace's time base.
core::batch::millis steady_millis() {
  return std::chrono::duration_cast<core::batch::millis>(
      steady::now().time_since_epoch());
}

// Whether the pace allows another group now; if not, arranges a wake-up.
// Without real-time traffic a job runs as fast as it can; with it, at most
// `rate_under_load` addresses/s, so the rest of the CPU stays free for the
// requests (on this 2-core machine even a niced busy thread doubles their
// p99: docs/performance.md, "Batch jobs").
bool paced_allows(supervisor* self, core::batch::millis now) {
  auto& st = self->state;
  // The rate may have changed since the job started (a reload, SIGHUP).
  st.pace.set_rate(st.env->cfg.rate_under_load, now);
  if (st.env->realtime_count)
    st.pace.observe(st.env->realtime_count(), now);
  if (st.pace.allows(now))
    return true;
  if (!st.pace_pending) {
    st.pace_pending = true;
    ++st.gauges->paced_waits;
    self->delayed_send(self, st.pace.next_try(now) - now, pace_atom::value);
  }
  return false;
}

void pump(supervisor* self) {
  auto& st = self->state;
  if (st.stopping)
    return;
  auto limit = st.env->cfg.concurrency;
  // Weak: a validation still waiting (slow DNS, a long probe) must not keep
  // a stopped supervisor, and its thread, alive.
  auto me = self->address();
  while (st.in_flight < limit && !st.queue.empty()) {
    auto now = steady_millis();
    if (!paced_allows(self, now))
      break;
    // The queue is sorted by domain: neighbours at one domain go as one
    // group, so its route is looked up once (one lock of the DNS cache
    // shared with real-time requests, not one per address) and, in an SMTP
    // job, a session asks several recipients (smtp_group_size).
    std::size_t most = st.current.smtp ? smtp_group_size : free_group_size;
    std::size_t take = 1;
    auto domain = domain_of(st.queue.front().email);
    while (take < st.queue.size() && take < most &&
           domain_of(st.queue[take].email) == domain)
      ++take;
    std::vector<validation::request> reqs;
    std::vector<std::pair<std::int64_t, std::string>> ids;
    for (std::size_t k = 0; k < take; ++k) {
      auto it = std::move(st.queue.front());
      st.queue.pop_front();
      validation::request req;
      req.email = it.email;
      // The job reserved one credit per address at upload; each item
      // records whether it used it.
      req.smtp = st.current.smtp;
      req.sandbox = st.current.sandbox;
      req.credits_prepaid = true;
      req.organization_id = st.current.organization_id;
      req.timeout_ms = item_timeout_ms;
      // A deferral comes back at once and is parked here (see `parked`).
      req.smtp_retry_deferrals = false;
      reqs.push_back(std::move(req));
      ids.emplace_back(it.seq, std::move(it.email));
    }
    st.in_flight += static_cast<int>(take);
    st.pace.take(now, static_cast<std::int64_t>(take));
    st.gauges->in_flight += static_cast<std::int64_t>(take);
    auto shared_ids = std::make_shared<decltype(ids)>(std::move(ids));
    st.env->validations->submit_group(
        std::move(reqs), [me, shared_ids](std::size_t i, validation::result r) {
          // May run on the resolver thread: the row is built by the
          // supervisor, on its low-priority thread.
          auto& [seq, email] = (*shared_ids)[i];
          if (auto sup = caf::actor_cast<caf::actor>(me))
            caf::anon_send(sup, item_done{seq, email, std::move(r)});
        });
  }
  if (st.queue.size() < static_cast<std::size_t>(limit))
    load_page(self);
}

// Parks `done` when the server deferred it (greylisting) and passes are
// left; returns whether it did.
bool park_if_deferred(supervisor* self, item_done& done) {
  auto& st = self->state;
  auto& waits = st.env->cfg.greylist_retry_ms;
  if (!st.current.smtp || !core::validation::recheck_later(done.r.smtp))
    return false;
  auto& d = st.deferrals[done.seq];
  if (d.passes >= waits.size())
    return false;
  d.reached = d.reached || done.r.credits_used > 0;
  d.attempts += done.r.smtp_reply.attempts;
  auto due = steady::now() + std::chrono::milliseconds(waits[d.passes]);
  ++d.passes;
  item it;
  it.seq = done.seq;
  it.email = std::move(done.email);
  // Kept sorted by due time, whatever the configured waits.
  auto pos = std::upper_bound(
      st.parked.begin(), st.parked.end(), due,
      [](steady::time_point t, const parked_item& p) { return t < p.due; });
  st.parked.insert(pos, parked_item{due, std::move(it)});
  pump(self);
  maybe_finish(self);
  return true;
}

// The row of a final result; an address some earlier pass reached has used
// its credit even when the last pass did not reach a server.
// Its facts count every pass: it met greylisting, and the RCPTs of the
// parked passes are attempts too.
item settle(supervisor* self, item_done& done) {
  auto& st = self->state;
  auto d = st.deferrals.find(done.seq);
  if (d != st.deferrals.end()) {
    done.r.smtp.greylisted = true;
    done.r.smtp.checked = done.r.smtp.checked || d->second.reached;
    done.r.smtp_reply.attempts += d->second.attempts;
  }
  auto it = batch::item_from_result(done.seq, done.email, done.r,
                                    st.env->write_detail);
  if (d != st.deferrals.end()) {
    if (d->second.reached)
      it.credits = 1;
    st.deferrals.erase(d);
  }
  return it;
}

// Puts parked addresses whose wait is over at the head of the queue, in
// their order (neighbours at one domain stay together).
void unpark_due(supervisor* self) {
  auto& st = self->state;
  auto now = steady::now();
  std::vector<item> due;
  while (!st.parked.empty() && st.parked.front().due <= now) {
    due.push_back(std::move(st.parked.front().it));
    st.parked.pop_front();
  }
  for (auto i = due.rbegin(); i != due.rend(); ++i)
    st.queue.push_front(std::move(*i));
}

caf::behavior supervisor_fn(supervisor* self,
                            std::shared_ptr<batch_runner_env> env,
                            std::shared_ptr<batch_gauges> gauges, job j) {
  // Spawned detached: this runs on the supervisor's own thread, where the
  // job's syntax, risk and verdict work happens.
  if (env->cfg.nice > 0)
    os::lower_thread_priority(env->cfg.nice, "batch-job");
  auto& st = self->state;
  st.env = env;
  st.pace = core::batch::pace{{env->cfg.rate_under_load}};
  st.gauges = gauges;
  st.current = std::move(j);
  st.last_write = std::chrono::steady_clock::now();
  ++gauges->running_jobs;
  self->attach_functor([gauges] { --gauges->running_jobs; });
  log::event(log::level::info, "batch_claimed",
             {{"job_id", st.current.id},
              {"processed", std::to_string(st.current.processed)},
              {"items", std::to_string(st.current.items())}});
  self->send(self, tick_atom::value);
  load_page(self);
  return {
      [self](item_done& done) {
        auto& st = self->state;
        --st.in_flight;
        --st.gauges->in_flight;
        if (st.stopping && (!st.release_lease || st.releasing))
          return;
        if (park_if_deferred(self, done))
          return;
        st.buffer.push_back(settle(self, done));
        if (static_cast<int>(st.buffer.size()) >= st.env->cfg.checkpoint_rows)
          checkpoint(self);
        pump(self);
        maybe_finish(self);
      },
      [self](in_actor& f) { f.run(); },
      [self](tick_atom) {
        auto& st = self->state;
        if (st.stopping)
          return;
        self->delayed_send(self, std::chrono::seconds(1), tick_atom::value);
        unpark_due(self);
        if (!st.buffer.empty()) {
          checkpoint(self);
        } else if (!st.saving) {
          // Nothing to write for a while (slow DNS): renew the lease, which
          // also tells us when the job was cancelled elsewhere.
          auto idle = std::chrono::steady_clock::now() - st.last_write;
          if (idle > std::chrono::seconds(st.env->cfg.lease_seconds) / 3) {
            st.last_write = std::chrono::steady_clock::now();
            auto id = st.current.id;
            auto owner = st.env->owner;
            auto lease = st.env->cfg.lease_seconds;
            auto now = st.env->now();
            storage_call(
                self, *st.env->storage,
                [id, owner, lease, now](storage::store& db) {
                  return db.renew_batch_lease(id, owner, lease, now);
                },
                [self](core::expected<bool>& held) {
                  if (held && !*held) {
                    self->state.release_lease = false;
                    stop(self, "cancelled_or_lease_lost");
                  }
                });
          }
        }
        pump(self);
        maybe_finish(self);
      },
      [self](cancel_atom) {
        self->state.release_lease = false;
        stop(self, "cancelled");
      },
      [self](pace_atom) {
        self->state.pace_pending = false;
        pump(self);
      },
      [self](stop_atom) {
        self->state.release_lease = true;
        stop(self, "shutdown");
      },
  };
}

} // namespace

caf::actor spawn_job_supervisor(caf::event_based_actor* parent,
                                std::shared_ptr<batch_runner_env> env,
                                std::shared_ptr<batch_gauges> gauges,
                                core::batch::job j) {
  // Detached: a thread of its own, with a lower priority than the threads
  // serving real-time requests (docs/batch.md).
  return parent->spawn<caf::detached>(supervisor_fn, std::move(env),
                                      std::move(gauges), std::move(j));
}

} // namespace mailassay::actors::batch
