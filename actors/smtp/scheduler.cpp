#include "actors/smtp/scheduler.hpp"

#include "actors/blocking_ask.hpp"
#include "actors/smtp/scheduler_state.hpp"
#include "config/settings.hpp"
#include "core/base/ascii.hpp"
#include "core/limits/client_ip.hpp"
#include "core/smtp/address_policy.hpp"
#include "core/smtp/provider_habits.hpp"
#include "core/smtp/result_cache.hpp"
#include "core/smtp/route_plan.hpp"
#include "net/dns_resolver.hpp"
#include "net/smtp_client.hpp"
#include "security/random.hpp"

#include <caf/all.hpp>

#include <algorithm>
#include <deque>
#include <optional>
#include <unordered_map>
#include <utility>

namespace mailassay::actors::smtp {

namespace {

using namespace scheduling;
using core::limits::millis;
using core::smtp::rcpt_verdict;
using core::smtp::route_plan;
using core::smtp::unasked_reason;

using self_ptr = scheduler_actor::stateful_pointer<scheduler_state>;

// The budget a session to `host` draws from: its provider's when the table
// names one, so that all MX hosts of a provider share it; else the host's.
std::string slot_of(const scheduler_state& st, const std::string& host) {
  return core::smtp::budget_key(host, st.config.providers.get());
}

// The actor system's clock: real time in the service, the test's time
// under CAF's deterministic scheduler.
millis now_ms(self_ptr self) {
  return std::chrono::duration_cast<millis>(
      self->clock().now().time_since_epoch());
}

void drive(self_ptr self, const std::string& key);
void pump(self_ptr self, const std::string& host);

// -- answers ------------------------------------------------------------------

void count_answer(scheduler_counters& c, const core::smtp::address_outcome& o,
                  std::size_t provider) {
  auto cls = static_cast<std::size_t>(classify_answer(o));
  ++c.answers[cls];
  c.count_provider_answer(provider, cls);
  if (o.source == core::smtp::answer_source::joined)
    ++c.joined;
}

void deliver(self_ptr self, std::uint64_t id,
             core::smtp::address_outcome outcome) {
  auto& st = self->state;
  auto it = st.callers.find(id);
  if (it == st.callers.end())
    return;
  count_answer(*st.counters, outcome, it->second.provider);
  --st.counters->in_flight;
  it->second.promise.deliver(std::move(outcome));
  st.callers.erase(it);
}

// What a caller gets when no probe could even be planned.
core::smtp::address_outcome unplanned(std::string address, unasked_reason why) {
  core::smtp::address_outcome o;
  o.address = std::move(address);
  o.rcpt = core::smtp::unasked(why);
  o.timed_out = why == unasked_reason::budget;
  return o;
}

// -- sessions and host slots
// ------------------------------------------------------

void host_opened(scheduler_counters& c, const std::string& host, millis now) {
  ++c.sessions;
  std::lock_guard guard{c.host_mutex};
  c.host_table.opened(host, now);
}

void host_closed(scheduler_counters& c, const std::string& host,
                 std::size_t rcpts, millis now) {
  std::size_t bucket = 0;
  while (bucket < rcpt_buckets.size() && rcpts > rcpt_buckets[bucket])
    ++bucket;
  ++c.rcpts[bucket];
  c.rcpts_sent += rcpts;
  std::lock_guard guard{c.host_mutex};
  c.host_table.closed(host, now);
}

void start_session(self_ptr self, const std::string& key, route_state& rt,
                   const core::smtp::session_wish& wish, millis now) {
  auto& st = self->state;
  const auto& target = rt.plan->targets()[wish.target];
  auto id = ++st.next_session;
  rt.plan->opened(id, wish, now);
  st.sessions[id] = {key, target.host, slot_of(st, target.host)};
  host_opened(*st.counters, target.host, now);
  session_spec spec;
  spec.id = id;
  spec.dial.host = target.host;
  spec.dial.address = target.address;
  spec.dial.port = st.config.port;
  spec.config.host = target.host;
  spec.config.helo = st.config.identity.helo;
  spec.config.mail_from = st.config.identity.mail_from;
  spec.config.tls = wish.tls;
  spec.config.probe_alone_after_452 = rt.habits.one_rcpt_per_transaction;
  spec.dial.step_timeout = wish.step_timeout;
  spec.dial.deadline = self->clock().now() + st.config.max_session;
  st.parts.runner->open(std::move(spec),
                        caf::actor_cast<scheduler_actor>(self));
}

// A budget (a host, or a provider) has no free slot: an idle session of
// another route that lingers for work gives its slot up.
void evict_lingering(self_ptr self, const std::string& slot) {
  auto& st = self->state;
  for (auto& [id, ref] : st.sessions) {
    if (ref.slot != slot)
      continue;
    auto r = st.routes.find(ref.route);
    if (r == st.routes.end() || !r->second.plan)
      continue;
    if (r->second.plan->retire(id)) {
      auto route = ref.route;
      drive(self, route);
      return;
    }
  }
}

// A host refused a session: ask again when it says (the connection rate,
// or a shared store polling a full host), after a `close` of this process,
// or when a shared store's answer is in (`pending`: its wake-up sends
// host_wake). A full host takes a lingering idle session's slot.
void refused(self_ptr self, const std::string& host,
             const core::smtp::admission& a, millis now) {
  if (a.pending)
    return;
  if (a.retry_at)
    self->delayed_send(self, std::max(millis{0}, *a.retry_at - now),
                       host_wake{host});
  if (!a.retry_at || a.full)
    evict_lingering(self, host);
}

void enqueue(self_ptr self, const std::string& key, route_state& rt,
             const std::string& host) {
  if (rt.queued)
    return;
  rt.queued = true;
  self->state.host_queues[host].push_back(key);
}

// Opens the sessions `key` wants while its host has room; else it waits
// in the host's queue (first come, first served).
void open_sessions(self_ptr self, const std::string& key, route_state& rt,
                   millis now) {
  auto& st = self->state;
  if (rt.queued)
    return;
  while (auto wish = rt.plan->want_session(now)) {
    auto host = slot_of(st, rt.plan->targets()[wish->target].host);
    auto q = st.host_queues.find(host);
    if (q != st.host_queues.end() && !q->second.empty())
      return enqueue(self, key, rt, host);
    auto a = st.parts.slots->try_open(host, now);
    if (!a.granted) {
      enqueue(self, key, rt, host);
      refused(self, host, a, now);
      return;
    }
    start_session(self, key, rt, *wish, now);
  }
}

// Starts sessions for the routes waiting for `host` while it has room.
void pump(self_ptr self, const std::string& host) {
  auto& st = self->state;
  auto now = now_ms(self);
  for (;;) {
    auto q = st.host_queues.find(host);
    if (q == st.host_queues.end())
      return;
    if (q->second.empty()) {
      st.host_queues.erase(q);
      return;
    }
    auto key = q->second.front();
    auto r = st.routes.find(key);
    std::optional<core::smtp::session_wish> wish;
    if (r != st.routes.end() && r->second.plan)
      wish = r->second.plan->want_session(now);
    if (!wish ||
        slot_of(st, r->second.plan->targets()[wish->target].host) != host) {
      q->second.pop_front();
      if (r != st.routes.end()) {
        r->second.queued = false;
        drive(self, key);
      }
      continue;
    }
    auto a = st.parts.slots->try_open(host, now);
    if (!a.granted) {
      refused(self, host, a, now);
      return;
    }
    q->second.pop_front();
    r->second.queued = false;
    start_session(self, key, r->second, *wish, now);
    drive(self, key);
  }
}

// -- routes
// ----------------------------------------------------------------------

void arm(self_ptr self, const std::string& key, route_state& rt, millis at,
         millis now) {
  if (rt.timer_at && *rt.timer_at <= at)
    return;
  rt.timer_at = at;
  self->delayed_send(self, std::max(millis{0}, at - now),
                     route_wake{key, ++rt.gen});
}

// While the MX hosts are resolved only the callers' deadlines matter.
void drive_pending(self_ptr self, const std::string& key, route_state& rt,
                   millis now) {
  std::vector<pending_add> keep;
  std::optional<millis> next;
  for (auto& p : rt.pending) {
    if (p.waiter.deadline <= now) {
      deliver(self, p.waiter.id, unplanned(p.address, unasked_reason::budget));
      continue;
    }
    next = next ? std::min(*next, p.waiter.deadline) : p.waiter.deadline;
    keep.push_back(std::move(p));
  }
  rt.pending = std::move(keep);
  if (next)
    arm(self, key, rt, *next, now);
}

// Runs a route's plan after any event: answers, orders, new sessions,
// its next timer; forgets the route when nothing is left.
void drive(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto it = st.routes.find(key);
  if (it == st.routes.end())
    return;
  auto& rt = it->second;
  auto now = now_ms(self);
  if (!rt.plan)
    return drive_pending(self, key, rt, now);
  auto step = rt.plan->step(now);
  for (auto& o : step.orders) {
    if (o.what == core::smtp::session_order::kind::finish) {
      st.parts.runner->finish(o.session);
      continue;
    }
    std::string probe;
    if (o.catch_all_probe) {
      probe = st.parts.random_local_part() + "@" + rt.domain;
      ++st.counters->catch_all_probes;
    }
    st.parts.runner->give(o.session, std::move(o.address), std::move(probe));
  }
  for (auto& a : step.answers)
    deliver(self, a.waiter, std::move(a.outcome));
  if (st.results)
    for (const auto& s : step.settled)
      st.results->store(s, now);
  if (step.learnt_catch_all)
    st.parts.catch_all->store(rt.domain, *step.learnt_catch_all, now);
  st.counters->greylist_rechecks += step.rechecks;
  open_sessions(self, key, rt, now);
  auto c = rt.plan->counts();
  auto waiting = static_cast<std::int64_t>(c.open + c.waiting);
  st.counters->waiting += waiting - rt.waiting;
  rt.waiting = waiting;
  if (step.wake_at)
    arm(self, key, rt, *step.wake_at, now);
  if (rt.plan->idle() && !rt.queued)
    st.routes.erase(it);
}

// The MX hosts' addresses are known: targets in priority order, only
// what the address policy allows; then the plan and its first callers.
void plan_route(self_ptr self, const std::string& key) {
  auto& st = self->state;
  auto& rt = st.routes.at(key);
  std::vector<core::smtp::probe_target> targets;
  std::size_t blocked = 0;
  for (auto& h : rt.hosts) {
    std::vector<std::string> all = h.v4;
    all.insert(all.end(), h.v6.begin(), h.v6.end());
    std::size_t taken = 0;
    for (auto& a : all) {
      if (taken == st.config.max_addresses_per_host)
        break;
      if (!st.policy.check(a).allowed) {
        ++blocked;
        ++st.counters->blocked;
        continue;
      }
      targets.push_back({h.name, a});
      ++taken;
    }
  }
  auto now = now_ms(self);
  // A provider that accepts every address is a catch-all by knowledge: no
  // probe (the verdict is the same, and it sees one RCPT fewer).
  auto known = rt.habits.accepts_all ? std::optional<bool>{true}
                                     : st.parts.catch_all->find(rt.domain, now);
  if (known && !rt.habits.accepts_all)
    ++st.counters->catch_all_hits;
  rt.plan.emplace(std::move(targets), blocked, settings_of_route(st.config, rt),
                  known);
  for (auto& p : rt.pending)
    rt.plan->add(std::move(p.address), p.waiter, now);
  rt.pending.clear();
  rt.timer_at.reset();
  drive(self, key);
}

// A new route: its MX hosts from the caller's mail route, their addresses
// through the resolver's host cache (a batch at one MX host asks its A and
// AAAA once per TTL, not once per address).
void open_route(self_ptr self, const std::string& key, route_state& rt,
                const core::dns::mail_route& route) {
  auto& st = self->state;
  if (route.kind == core::dns::route_kind::implicit_mx) {
    // RFC 5321 §5.1: the domain itself, with its own addresses.
    mx_host h;
    h.name = rt.domain;
    for (auto& a : route.addresses)
      (a.find(':') == std::string::npos ? h.v4 : h.v6).push_back(a);
    rt.hosts.push_back(std::move(h));
    return plan_route(self, key);
  }
  if (route.kind == core::dns::route_kind::mx)
    for (auto& mx : route.hosts) {
      if (rt.hosts.size() == st.config.max_mx_hosts)
        break;
      mx_host h;
      h.name = core::ascii_lower(mx.host);
      if (auto ip = core::limits::parse_ip(h.name))
        (ip->v4 ? h.v4 : h.v6).push_back(h.name); // an IP literal as MX
      else
        ++rt.lookups;
      rt.hosts.push_back(std::move(h));
    }
  if (rt.lookups == 0 || !st.parts.lookup)
    return plan_route(self, key);
  auto me = caf::actor_cast<scheduler_actor>(self);
  for (std::size_t i = 0; i < rt.hosts.size(); ++i) {
    if (!rt.hosts[i].v4.empty() || !rt.hosts[i].v6.empty())
      continue;
    st.parts.lookup(rt.hosts[i].name, [me, key, i](core::dns::mail_route r) {
      caf::anon_send(me, mx_addresses{key, i, std::move(r)});
    });
  }
}

// -- handlers
// --------------------------------------------------------------------

caf::typed_response_promise<core::smtp::address_outcome>
on_probe(self_ptr self, probe_address& req) {
  auto& st = self->state;
  auto rp = self->make_response_promise<core::smtp::address_outcome>();
  ++st.counters->requests;
  auto domain = core::ascii_lower(req.domain);
  auto at = req.address.rfind('@');
  auto address = at == std::string::npos
                     ? req.address
                     : req.address.substr(0, at + 1) +
                           core::ascii_lower(req.address.substr(at + 1));
  if (st.stopped) {
    rp.deliver(unplanned(std::move(address), unasked_reason::stopped));
    return rp;
  }
  auto now = now_ms(self);
  auto provider = st.counters->provider_index(
      req.route && req.route->provider
          ? std::string_view{req.route->provider->name}
          : std::string_view{});
  if (st.results)
    if (auto hit = st.results->find(address, now)) {
      ++st.counters->cache_hits;
      // The domain's verdict may have been learnt since.
      if (auto known = st.parts.catch_all->find(domain, now))
        hit->catch_all = known;
      count_answer(*st.counters, *hit, provider);
      rp.deliver(std::move(*hit));
      return rp;
    }
  auto id = ++st.next_caller;
  // Without sharing every caller has its own route: its own sessions.
  auto key =
      st.config.share_sessions ? domain : domain + "#" + std::to_string(id);
  st.callers.emplace(id, caller{key, rp, provider});
  ++st.counters->in_flight;
  core::smtp::route_waiter w{id, now + req.budget, req.retry_deferrals,
                             req.batch};
  auto [it, created] = st.routes.try_emplace(key);
  auto& rt = it->second;
  if (created) {
    rt.domain = domain;
    if (req.route && req.route->provider)
      rt.habits = core::smtp::habits_of(&*req.route->provider);
    rt.pending.push_back({std::move(address), w});
    if (req.route)
      open_route(self, key, rt, *req.route);
    else
      plan_route(self, key);
    drive(self, key);
    return rp;
  }
  if (!rt.plan)
    rt.pending.push_back({std::move(address), w});
  else
    rt.plan->add(std::move(address), w, now);
  drive(self, key);
  return rp;
}

scheduler_actor::behavior_type
scheduler_fn(self_ptr self, scheduler_config config,
             core::smtp::target_policy policy, scheduler_parts parts,
             std::shared_ptr<scheduler_counters> counters) {
  auto& st = self->state;
  if (!parts.slots)
    parts.slots =
        std::make_unique<core::smtp::host_limits>(limits_config(config));
  if (!parts.catch_all)
    parts.catch_all = std::make_unique<core::smtp::catch_all_cache>(
        std::chrono::duration_cast<millis>(config.catch_all_ttl),
        config.catch_all_cache_size);
  if (!parts.random_local_part)
    parts.random_local_part = [] {
      return core::ascii_lower(security::random_base62(16));
    };
  if (config.result_cache_ttl.count() > 0)
    st.results.emplace(
        std::chrono::duration_cast<millis>(config.result_cache_ttl),
        config.result_cache_size);
  // A shared store's answers arrive on its own thread: they come back as
  // host_wake (a weak handle: the store lives in this actor's state).
  parts.slots->set_wake(
      [weak = caf::weak_actor_ptr{self->ctrl()}](std::string host) {
        if (auto strong = weak.lock())
          caf::anon_send(caf::actor_cast<scheduler_actor>(strong),
                         host_wake{std::move(host)});
      });
  st.config = std::move(config);
  st.policy = std::move(policy);
  st.parts = std::move(parts);
  st.counters = std::move(counters);
  return {
      [self](probe_address& req) { return on_probe(self, req); },
      [self](session_idle& e) {
        auto& st = self->state;
        auto s = st.sessions.find(e.session);
        if (s == st.sessions.end())
          return;
        auto r = st.routes.find(s->second.route);
        if (r == st.routes.end() || !r->second.plan) {
          st.parts.runner->finish(e.session);
          return;
        }
        auto host = s->second.slot;
        r->second.plan->on_idle(e.session, e.so_far, now_ms(self), e.first);
        drive(self, s->second.route);
        // Routes wait for this host: an idle session with nothing more to
        // do gives its slot up now, not when its linger ends.
        auto q = st.host_queues.find(host);
        if (q != st.host_queues.end() && !q->second.empty())
          evict_lingering(self, host);
      },
      [self](session_ended& e) {
        auto& st = self->state;
        auto s = st.sessions.find(e.session);
        if (s == st.sessions.end())
          return;
        auto ref = std::move(s->second);
        st.sessions.erase(s);
        auto now = now_ms(self);
        st.parts.slots->close(ref.slot, now);
        host_closed(*st.counters, ref.host, e.report.result.rcpt_sent, now);
        auto r = st.routes.find(ref.route);
        if (r != st.routes.end() && r->second.plan) {
          r->second.plan->on_closed(e.session, e.report, now);
          drive(self, ref.route);
        }
        pump(self, ref.slot);
      },
      [self](mx_addresses& a) {
        auto& st = self->state;
        auto r = st.routes.find(a.route);
        if (r == st.routes.end() || r->second.plan ||
            a.host >= r->second.hosts.size())
          return;
        auto& h = r->second.hosts[a.host];
        if (a.answer.kind == core::dns::route_kind::implicit_mx)
          for (auto& address : a.answer.addresses)
            (address.find(':') == std::string::npos ? h.v4 : h.v6)
                .push_back(std::move(address));
        if (--r->second.lookups == 0)
          plan_route(self, a.route);
      },
      [self](route_wake& w) {
        auto& st = self->state;
        auto r = st.routes.find(w.route);
        if (r == st.routes.end() || r->second.gen != w.gen)
          return;
        r->second.timer_at.reset();
        drive(self, w.route);
      },
      [self](host_wake& w) { pump(self, w.host); },
      [self](scheduler_politeness& p) {
        auto& st = self->state;
        st.config.max_sessions_per_host = p.max_sessions_per_host;
        st.config.connections_per_second_per_host =
            p.connections_per_second_per_host;
        st.config.max_rcpts_per_session = p.max_rcpts_per_session;
        st.config.provider_limits = p.provider_limits;
        st.parts.slots->reconfigure(limits_config(st.config), now_ms(self));
        // Routes planned before the reload take the new RCPT cap too.
        for (auto& [key, rt] : st.routes)
          if (rt.plan)
            rt.plan->set_max_rcpts_per_session(
                settings_of_route(st.config, rt).max_rcpts_per_session);
        // Routes waiting for a slot may fit now.
        std::vector<std::string> hosts;
        for (auto& [host, q] : st.host_queues)
          hosts.push_back(host);
        for (auto& host : hosts)
          pump(self, host);
        return true;
      },
      [self](scheduler_forget_expired) -> std::size_t {
        auto& st = self->state;
        if (!st.results)
          return 0;
        st.results->forget_expired(now_ms(self));
        return st.results->size();
      },
      [self](scheduler_stop) {
        auto& st = self->state;
        st.stopped = true;
        std::vector<std::uint64_t> ids;
        for (auto& [id, c] : st.callers)
          ids.push_back(id);
        for (auto id : ids)
          deliver(self, id, unplanned({}, unasked_reason::stopped));
        for (auto& [id, ref] : st.sessions)
          st.parts.runner->finish(id);
        self->quit();
        return true;
      },
  };
}

} // namespace

scheduler_actor spawn_scheduler(caf::actor_system& sys, scheduler_config config,
                                scheduler_parts parts,
                                std::shared_ptr<scheduler_counters> counters) {
  {
    std::lock_guard guard{counters->host_mutex};
    counters->host_table = core::smtp::host_series{
        config.host_metrics_idle, config.host_metrics_max_hosts};
  }
  counters->set_providers(config.providers.get());
  auto policy = core::smtp::target_policy::parse(config.allow_private_targets);
  return sys.spawn(scheduler_fn, std::move(config),
                   policy ? std::move(*policy) : core::smtp::target_policy{},
                   std::move(parts), std::move(counters));
}

} // namespace mailassay::actors::smtp
