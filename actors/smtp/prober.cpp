#include "actors/smtp/prober.hpp"

#include "config/settings.hpp"
#include "core/base/ascii.hpp"
#include "core/limits/client_ip.hpp"
#include "core/smtp/address_policy.hpp"
#include "core/smtp/catch_all_cache.hpp"
#include "core/smtp/host_limits.hpp"
#include "net/dns_resolver.hpp"
#include "net/smtp_client.hpp"
#include "security/random.hpp"

#include <caf/all.hpp>

#include <deque>
#include <unordered_map>
#include <utility>

namespace mailassay::actors::smtp {

namespace {

using core::limits::millis;
using core::smtp::probe_plan;
using core::smtp::rcpt_verdict;
using core::smtp::step_kind;
using steady = std::chrono::steady_clock;

/// One MX host of a probe and its addresses as they arrive.
struct mx_host {
  std::string name;
  std::vector<std::string> v4;
  std::vector<std::string> v6;
};

/// One probe in flight.
struct probe_state {
  probe_request request;
  std::function<void(probe_result)> done;
  steady::time_point started;
  steady::time_point deadline;
  std::vector<mx_host> hosts;
  std::size_t lookups = 0; ///< DNS answers still awaited.
  std::vector<std::string> blocked;
  std::optional<bool> cached_catch_all;
  /// The catch-all verdict another probe of the domain learnt meanwhile.
  std::optional<bool> shared_catch_all;
  /// The verdict this probe last gave the others (and the cache).
  std::optional<bool> announced;
  /// Addresses decided, waiting for another probe's catch-all verdict.
  bool parked = false;
  std::optional<probe_plan> plan;
  core::smtp::probe_step step; ///< The session asked for.
  bool gated = false;          ///< Waiting for a host slot.
  bool in_session = false;
  std::uint64_t gen = 0; ///< Of the retry timer in force.
};

struct prober_state {
  prober_config config;
  core::smtp::target_policy policy;
  std::shared_ptr<net::smtp_client> client;
  std::shared_ptr<net::dns_resolver> resolver;
  std::shared_ptr<prober_counters> counters;
  std::unique_ptr<core::smtp::host_limits> limits;
  std::unique_ptr<core::smtp::catch_all_cache> cache;
  std::unordered_map<std::uint64_t, probe_state> probes;
  std::unordered_map<std::string, std::deque<std::uint64_t>> queues;
  /// Domain -> the probe whose session carries its catch-all probe now.
  std::unordered_map<std::string, std::uint64_t> flights;
  std::uint64_t next_id = 0;
  bool stopped = false;
  static inline const char* name = "smtp_prober";
};

using self_ptr = prober_actor::stateful_pointer<prober_state>;

millis now_ms(steady::time_point t) {
  return std::chrono::duration_cast<millis>(t.time_since_epoch());
}

// Rounded up, so that step time-outs derived from it never end a session
// before the probe's deadline.
millis deadline_ms(steady::time_point t) {
  return std::chrono::ceil<millis>(t.time_since_epoch());
}

// A delay for delayed_send: never negative.
millis after(millis d) {
  return std::max(d, millis{0});
}

std::string random_local_part() {
  return core::ascii_lower(security::random_base62(16));
}

void advance(self_ptr self, std::uint64_t id);

void complete(self_ptr self, std::uint64_t id, std::string failure = {},
              bool may_park = true);

// The probe's catch-all verdict: its own (cached or learnt) or one another
// probe of the domain learnt; a false on either side wins (a mailbox was
// refused as unknown).
std::optional<bool> verdict_of(const probe_state& p) {
  auto own = p.plan ? p.plan->catch_all() : p.cached_catch_all;
  if (own == false || p.shared_catch_all == false)
    return false;
  return own ? own : p.shared_catch_all;
}

bool flight_by_other(const prober_state& st, const std::string& domain,
                     std::uint64_t id) {
  auto f = st.flights.find(domain);
  return f != st.flights.end() && f->second != id;
}

// A flight of `domain` ended or a verdict landed: parked probes of the
// domain finish now unless another flight still runs.
void settle_parked(self_ptr self, const std::string& domain) {
  std::vector<std::uint64_t> ids;
  for (auto& [id, q] : self->state.probes)
    if (q.parked && q.request.domain == domain)
      ids.push_back(id);
  for (auto id : ids)
    complete(self, id);
}

// Ends `id`'s flight of `domain`, if it holds it.
void release_flight(self_ptr self, const std::string& domain,
                    std::uint64_t id) {
  auto& st = self->state;
  auto f = st.flights.find(domain);
  if (f == st.flights.end() || f->second != id)
    return;
  st.flights.erase(f);
  settle_parked(self, domain);
}

// After a session of `id`: a verdict it learnt goes to the cache and to
// every other probe of the domain; its flight (if any) ends.
void share_verdict(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto& p = st.probes.at(id);
  auto domain = p.request.domain;
  auto own = p.plan->catch_all();
  if (own && p.plan->catch_all_learnt() && own != p.announced) {
    p.announced = own;
    st.cache->store(domain, *own, now_ms(steady::now()));
    for (auto& [other, q] : st.probes)
      if (other != id && q.request.domain == domain &&
          q.shared_catch_all != false)
        q.shared_catch_all = own;
    settle_parked(self, domain);
  }
  release_flight(self, domain, id);
}

void complete(self_ptr self, std::uint64_t id, std::string failure,
              bool may_park) {
  auto& st = self->state;
  auto it = st.probes.find(id);
  if (it == st.probes.end())
    return;
  {
    auto& q = it->second;
    // Single flight: another probe is asking the domain's catch-all
    // question; wait for its answer rather than ask it again.
    if (may_park && failure.empty() && q.plan && !verdict_of(q) &&
        flight_by_other(st, q.request.domain, id) &&
        steady::now() < q.deadline) {
      if (!q.parked)
        ++st.counters->catch_all_waits;
      q.parked = true;
      return;
    }
  }
  auto p = std::move(it->second);
  st.probes.erase(it);
  release_flight(self, p.request.domain, id);
  --st.counters->active_probes;
  if (p.gated)
    --st.counters->queued;
  auto now = steady::now();
  probe_result r;
  r.domain = p.request.domain;
  r.blocked = std::move(p.blocked);
  r.elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - p.started);
  if (p.plan) {
    r.addresses = p.plan->outcomes();
    r.catch_all = verdict_of(p);
    r.catch_all_cached = r.catch_all && !p.plan->catch_all_learnt();
    for (auto& o : r.addresses)
      o.catch_all = r.catch_all;
    r.sessions = p.plan->sessions();
    r.failure = failure.empty() ? std::string{p.plan->failure()} : failure;
    // Out of time before a server was asked (queued for a busy host).
    if (failure == "budget")
      for (auto& o : r.addresses)
        if (o.rcpt.verdict == core::smtp::rcpt_verdict::not_attempted)
          o.timed_out = true;
  } else {
    r.failure = failure;
    r.catch_all = p.cached_catch_all;
    r.catch_all_cached = p.cached_catch_all.has_value();
    for (auto& a : p.request.addresses) {
      core::smtp::address_outcome o;
      o.address = a;
      o.catch_all = r.catch_all;
      o.rcpt.message = failure;
      o.timed_out = failure == "budget";
      r.addresses.push_back(std::move(o));
    }
  }
  if (p.done)
    p.done(std::move(r));
}

// Turns the MX hosts' addresses into targets, in priority order, keeping
// only what the address policy allows.
void plan_probe(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto& p = st.probes.at(id);
  std::vector<core::smtp::probe_target> targets;
  for (auto& h : p.hosts) {
    std::vector<std::string> all = h.v4;
    all.insert(all.end(), h.v6.begin(), h.v6.end());
    std::size_t taken = 0;
    for (auto& a : all) {
      if (taken == st.config.max_addresses_per_host)
        break;
      if (!st.policy.check(a).allowed) {
        p.blocked.push_back(a);
        ++st.counters->blocked;
        continue;
      }
      targets.push_back({h.name, a});
      ++taken;
    }
  }
  core::smtp::probe_settings settings;
  settings.retry_delays.clear();
  for (auto d : st.config.retry_delays)
    settings.retry_delays.push_back(d);
  settings.max_rcpts_per_session = st.config.max_rcpts_per_session;
  settings.min_step = st.config.min_step;
  settings.max_step = st.config.max_step;
  settings.tls = st.config.tls;
  // The caller parks deferred addresses itself (batch): no waiting here.
  if (!p.request.retry_deferrals)
    settings.retry_delays.clear();
  auto now = steady::now();
  // The verdict may have landed while the MX hosts were being resolved.
  if (!p.cached_catch_all) {
    p.cached_catch_all = st.cache->find(p.request.domain, now_ms(now));
    if (p.cached_catch_all)
      ++st.counters->catch_all_hits;
  }
  auto known = p.cached_catch_all ? p.cached_catch_all : p.shared_catch_all;
  p.plan.emplace(p.request.addresses, std::move(targets), p.blocked.size(),
                 std::move(settings), now_ms(now), deadline_ms(p.deadline),
                 known);
  advance(self, id);
}

void start_session(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto& p = st.probes.at(id);
  const auto& target = p.plan->targets()[p.step.target];
  p.in_session = true;
  ++st.counters->sessions;
  core::smtp::session_config cfg;
  cfg.host = target.host;
  cfg.helo = st.config.identity.helo;
  cfg.mail_from = st.config.identity.mail_from;
  cfg.tls = p.step.tls;
  core::smtp::session_request req;
  req.addresses = p.step.addresses;
  if (p.step.catch_all_probe)
    req.catch_all_probe = random_local_part() + "@" + p.request.domain;
  auto session = core::smtp::session::make(std::move(cfg), std::move(req));
  auto actor = caf::actor_cast<prober_actor>(self);
  if (!session) {
    // The identity was checked at start-up; this cannot happen.
    core::smtp::session_report r;
    r.transport = core::smtp::connect_failure::other;
    r.detail = session.error_value().message;
    self->send(self, probe_session_done{id, std::move(r)});
    return;
  }
  net::smtp_call call{target.host,         target.address,      st.config.port,
                      std::move(*session), p.step.step_timeout, p.deadline};
  st.client->run(std::move(call), [actor, id](net::smtp_call_result r) {
    caf::anon_send(actor, probe_session_done{id, std::move(r.report)});
  });
}

// Starts the sessions queued for `host` while its limits allow.
void pump(self_ptr self, const std::string& host) {
  auto& st = self->state;
  auto q = st.queues.find(host);
  if (q == st.queues.end())
    return;
  while (!q->second.empty()) {
    auto id = q->second.front();
    auto p = st.probes.find(id);
    if (p == st.probes.end() || !p->second.gated) {
      q->second.pop_front();
      continue;
    }
    // Never open a connection for a probe whose time is up.
    if (steady::now() >= p->second.deadline) {
      q->second.pop_front();
      complete(self, id, "budget");
      continue;
    }
    auto a = st.limits->try_open(host, now_ms(steady::now()));
    if (!a.granted) {
      if (a.retry_at)
        self->delayed_send(self, after(*a.retry_at - now_ms(steady::now())),
                           probe_gate_wake{host});
      return;
    }
    q->second.pop_front();
    p->second.gated = false;
    --st.counters->queued;
    start_session(self, id);
  }
  st.queues.erase(q);
}

void try_start(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto& p = st.probes.at(id);
  const auto& host = p.plan->targets()[p.step.target].host;
  auto& q = st.queues[host];
  // First come, first served: join the queue when others wait.
  if (q.empty()) {
    auto a = st.limits->try_open(host, now_ms(steady::now()));
    if (a.granted) {
      st.queues.erase(host);
      start_session(self, id);
      return;
    }
    if (a.retry_at)
      self->delayed_send(self, after(*a.retry_at - now_ms(steady::now())),
                         probe_gate_wake{host});
  }
  p.gated = true;
  ++st.counters->queued;
  q.push_back(id);
}

void advance(self_ptr self, std::uint64_t id) {
  auto& st = self->state;
  auto it = st.probes.find(id);
  if (it == st.probes.end())
    return;
  auto& p = it->second;
  if (p.in_session || p.gated || !p.plan)
    return;
  auto now = steady::now();
  // One session per domain carries the catch-all probe at a time.
  p.plan->allow_catch_all_probe(!p.shared_catch_all &&
                                !flight_by_other(st, p.request.domain, id));
  auto step = p.plan->next(now_ms(now));
  switch (step.kind) {
    case step_kind::finished: complete(self, id); return;
    case step_kind::wait:
      ++st.counters->retries;
      self->delayed_send(self, after(step.wake_at - now_ms(now)),
                         probe_wake{id, ++p.gen});
      return;
    case step_kind::session:
      if (step.catch_all_probe) {
        st.flights[p.request.domain] = id;
        ++st.counters->catch_all_probes;
      }
      p.step = std::move(step);
      try_start(self, id);
      return;
  }
}

void on_job(self_ptr self, probe_job& job) {
  auto& st = self->state;
  if (st.stopped) {
    probe_result r;
    r.domain = job.request.domain;
    r.failure = "stopped";
    if (job.done)
      job.done(std::move(r));
    return;
  }
  auto id = ++st.next_id;
  ++st.counters->probes;
  ++st.counters->active_probes;
  auto& p = st.probes[id];
  p.request = std::move(job.request);
  p.done = std::move(job.done);
  p.request.domain = core::ascii_lower(p.request.domain);
  p.started = steady::now();
  p.deadline = p.started + p.request.budget;
  p.cached_catch_all = st.cache->find(p.request.domain, now_ms(p.started));
  if (p.cached_catch_all)
    ++st.counters->catch_all_hits;
  self->delayed_send(self, p.request.budget, probe_wake{id, 0});
  const auto& route = p.request.route;
  if (route.kind == core::dns::route_kind::implicit_mx) {
    // RFC 5321 §5.1: the domain itself, with its own addresses.
    mx_host h;
    h.name = p.request.domain;
    for (auto& a : route.addresses)
      (a.find(':') == std::string::npos ? h.v4 : h.v6).push_back(a);
    p.hosts.push_back(std::move(h));
    return plan_probe(self, id);
  }
  if (route.kind != core::dns::route_kind::mx)
    return complete(self, id, "no_route");
  for (auto& mx : route.hosts) {
    if (p.hosts.size() == st.config.max_mx_hosts)
      break;
    mx_host h;
    h.name = core::ascii_lower(mx.host);
    if (auto ip = core::limits::parse_ip(h.name))
      (ip->v4 ? h.v4 : h.v6).push_back(h.name); // an IP literal as MX
    else
      ++p.lookups;
    p.hosts.push_back(std::move(h));
  }
  if (p.lookups == 0)
    return plan_probe(self, id);
  auto actor = caf::actor_cast<prober_actor>(self);
  for (std::size_t i = 0; i < p.hosts.size(); ++i) {
    if (!p.hosts[i].v4.empty() || !p.hosts[i].v6.empty())
      continue;
    if (!st.resolver) {
      self->send(self, probe_dns_answer{id, i, core::dns::mail_route{}});
      continue;
    }
    // Through the resolver's host cache: a batch of many probes at one MX
    // host asks its A and AAAA once per TTL, not once per probe.
    auto name = p.hosts[i].name;
    st.resolver->resolve_host(
        std::move(name), [actor, id, i](core::dns::mail_route r) {
          caf::anon_send(actor, probe_dns_answer{id, i, std::move(r)});
        });
  }
}

prober_actor::behavior_type
prober_behavior(self_ptr self, prober_config config,
                core::smtp::target_policy policy,
                std::shared_ptr<net::smtp_client> client,
                std::shared_ptr<net::dns_resolver> resolver,
                std::shared_ptr<prober_counters> counters) {
  auto& st = self->state;
  st.limits = std::make_unique<core::smtp::host_limits>(
      core::smtp::host_limits_config{config.max_sessions_per_host,
                                     config.connections_per_second_per_host});
  st.cache = std::make_unique<core::smtp::catch_all_cache>(
      std::chrono::duration_cast<millis>(config.catch_all_ttl),
      config.catch_all_cache_size);
  st.config = std::move(config);
  st.policy = std::move(policy);
  st.client = std::move(client);
  st.resolver = std::move(resolver);
  st.counters = std::move(counters);
  return {
      [self](probe_job& job) { on_job(self, job); },
      [self](probe_dns_answer& a) {
        auto& st = self->state;
        auto it = st.probes.find(a.probe);
        if (it == st.probes.end() || it->second.plan)
          return;
        auto& p = it->second;
        auto& h = p.hosts[a.host];
        if (a.answer.kind == core::dns::route_kind::implicit_mx)
          for (auto& address : a.answer.addresses)
            (address.find(':') == std::string::npos ? h.v4 : h.v6)
                .push_back(std::move(address));
        if (--p.lookups == 0)
          plan_probe(self, a.probe);
      },
      [self](probe_session_done& d) {
        auto& st = self->state;
        auto it = st.probes.find(d.probe);
        if (it == st.probes.end() || !it->second.in_session)
          return;
        auto& p = it->second;
        auto host = p.plan->targets()[p.step.target].host;
        auto now = steady::now();
        st.limits->close(host, now_ms(now));
        p.in_session = false;
        p.plan->on_session(d.report, now_ms(now));
        share_verdict(self, d.probe);
        advance(self, d.probe);
        pump(self, host);
      },
      [self](probe_wake& w) {
        auto& st = self->state;
        auto it = st.probes.find(w.probe);
        if (it == st.probes.end())
          return;
        auto& p = it->second;
        if (w.gen != 0) {
          if (w.gen == p.gen)
            advance(self, w.probe);
          return;
        }
        // Waited for another probe's catch-all verdict as long as allowed.
        if (p.parked)
          return complete(self, w.probe, {}, false);
        // The deadline: a session in flight ends by its own timer (the
        // client has the same deadline); anything else ends now.
        if (p.in_session)
          return;
        // A probe still queued for a host slot has a session requested from
        // its plan: asking the plan again would wait forever. It ends here.
        if (!p.plan || p.gated)
          return complete(self, w.probe, "budget");
        advance(self, w.probe);
      },
      [self](probe_gate_wake& g) { pump(self, g.host); },
      [self](prober_stop) {
        auto& st = self->state;
        st.stopped = true;
        std::vector<std::uint64_t> ids;
        for (auto& [id, p] : st.probes)
          ids.push_back(id);
        for (auto id : ids)
          complete(self, id, "stopped");
        self->quit();
        return true;
      },
  };
}

} // namespace

prober_config make_prober_config(const config::smtp_settings& s,
                                 std::string_view hostname) {
  prober_config c;
  c.identity.helo = core::smtp::choose_helo(s.helo, hostname);
  c.identity.mail_from = s.mail_from;
  c.force_identity = s.force_identity;
  c.port = static_cast<std::uint16_t>(s.port);
  c.tls = s.tls == "never"      ? core::smtp::tls_policy::never
          : s.tls == "required" ? core::smtp::tls_policy::required
                                : core::smtp::tls_policy::opportunistic;
  c.verify_tls = s.tls_verify;
  c.allow_private_targets = s.allow_private_targets;
  c.retry_delays.clear();
  for (auto ms : s.retry_delays_ms)
    c.retry_delays.push_back(std::chrono::milliseconds{ms});
  c.max_sessions_per_host =
      static_cast<std::size_t>(std::max(0, s.max_sessions_per_host));
  c.connections_per_second_per_host = s.connections_per_second_per_host;
  c.catch_all_ttl = std::chrono::seconds{s.catch_all_ttl_seconds};
  c.socks5_proxy = s.socks5_proxy;
  c.io_threads = s.io_threads;
  return c;
}

core::expected<std::unique_ptr<prober>>
prober::create(caf::actor_system& sys, prober_config config,
               std::shared_ptr<net::dns_resolver> resolver) {
  if (auto ok = core::smtp::check_identity(
          config.identity, config.force_identity, config.is_free_mail);
      !ok)
    return std::move(ok).error_value();
  auto policy = core::smtp::target_policy::parse(config.allow_private_targets);
  if (!policy)
    return std::move(policy).error_value();
  net::smtp_client_config cc;
  cc.io_threads = config.io_threads;
  cc.policy = *policy;
  cc.verify_tls = config.verify_tls;
  cc.socks5_proxy = config.socks5_proxy;
  cc.quit_timeout = config.quit_timeout;
  auto client = net::smtp_client::create(std::move(cc));
  if (!client)
    return std::move(client).error_value();
  auto counters = std::make_shared<prober_counters>();
  std::shared_ptr<net::smtp_client> shared = std::move(*client);
  std::unique_ptr<prober> p{new prober(sys, shared, counters)};
  p->actor_ = sys.spawn(prober_behavior, std::move(config), std::move(*policy),
                        std::move(shared), std::move(resolver), counters);
  return p;
}

prober::prober(caf::actor_system& sys, std::shared_ptr<net::smtp_client> client,
               std::shared_ptr<prober_counters> counters)
    : sys_(&sys), client_(std::move(client)), counters_(std::move(counters)) {}

prober::~prober() {
  stop();
}

void prober::probe(probe_request request,
                   std::function<void(probe_result)> done) {
  {
    std::shared_lock guard{stopping_};
    if (!stopped_) {
      caf::anon_send(actor_, probe_job{std::move(request), std::move(done)});
      return;
    }
  }
  probe_result r;
  r.domain = request.domain;
  r.failure = "stopped";
  if (done)
    done(std::move(r));
}

void prober::stop() {
  {
    std::unique_lock guard{stopping_};
    if (stopped_)
      return;
    stopped_ = true;
  }
  {
    caf::scoped_actor self{*sys_};
    self->request(actor_, std::chrono::seconds(10), prober_stop{})
        .receive([](bool) {}, [](caf::error&) {});
  }
  client_->shutdown();
}

} // namespace mailassay::actors::smtp
