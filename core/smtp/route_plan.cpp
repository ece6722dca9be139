#include "core/smtp/route_plan.hpp"

#include <algorithm>
#include <tuple>
#include <utility>

namespace mailassay::core::smtp {

namespace {

using limits::millis;

// A reply that says what happened to the address: no need to ask again.
bool decisive(rcpt_verdict v) {
  switch (v) {
    case rcpt_verdict::accepted:
    case rcpt_verdict::no_such_user:
    case rcpt_verdict::mailbox_full:
    case rcpt_verdict::disabled:
    case rcpt_verdict::blocked_by_policy:
    case rcpt_verdict::other_permanent:
    case rcpt_verdict::smtputf8_unsupported: return true;
    default: return false;
  }
}

} // namespace

route_plan::route_plan(std::vector<probe_target> targets, std::size_t blocked,
                       route_settings settings,
                       std::optional<bool> known_catch_all)
    : targets_(std::move(targets)), standing_(targets_.size()),
      blocked_(blocked), settings_(std::move(settings)),
      rcpt_cap_(std::max<std::size_t>(1, settings_.max_rcpts_per_session)),
      catch_all_(known_catch_all) {}

void route_plan::set_max_rcpts_per_session(std::size_t n) {
  auto configured = std::max<std::size_t>(1, settings_.max_rcpts_per_session);
  bool learned = rcpt_cap_ < configured;
  settings_.max_rcpts_per_session = n;
  auto cap = std::max<std::size_t>(1, n);
  rcpt_cap_ = learned ? std::min(rcpt_cap_, cap) : cap;
}

void route_plan::add(std::string address, route_waiter waiter, millis now) {
  auto it = entries_.find(address);
  if (it != entries_.end()) {
    auto& e = it->second;
    e.waiters.push_back({waiter, true});
    // A caller that will not wait for a retry gets the deferral it joined.
    if (e.st == state::waiting && !waiter.retry_deferrals) {
      answer(e.waiters.back(), e.outcome);
      e.waiters.pop_back();
    }
    return;
  }
  // A new burst after the route ran dry may ask the catch-all question
  // again (the last ones may have had no answer).
  if (entries_.empty())
    probes_ = 0;
  if (address.empty() || !safe_argument(address)) {
    address_outcome o;
    o.address = std::move(address);
    o.rcpt =
        without_reply(rcpt_verdict::protocol_error,
                      "refused: empty address or unsafe characters", "route");
    answer({waiter, false}, std::move(o));
    return;
  }
  auto& e = entries_[address];
  e.outcome.address = address;
  e.seq = ++next_seq_;
  e.waiters.push_back({waiter, false});
  (void)now;
}

std::optional<session_wish> route_plan::want_session(millis now) const {
  std::size_t backlog = 0;
  millis latest{0};
  for (const auto& [address, e] : entries_) {
    if (e.st != state::open)
      continue;
    ++backlog;
    for (const auto& w : e.waiters)
      latest = std::max(latest, w.w.deadline);
  }
  if (backlog == 0 || latest - now < settings_.min_time_to_connect ||
      latest <= now)
    return std::nullopt;
  std::size_t alive = 0;
  for (const auto& [id, s] : sessions_) {
    // An idle session takes the work at the next step.
    if (s.stage == session_stage::idle && !s.retired)
      return std::nullopt;
    if (s.stage != session_stage::closing)
      ++alive;
  }
  // A session takes at most its RCPT cap: more waiting than that is
  // never its to serve.
  auto per_session = std::min(settings_.backlog_per_session, rcpt_cap_);
  if (alive > 0 && backlog <= per_session * alive)
    return std::nullopt;
  auto live = std::find_if(standing_.begin(), standing_.end(),
                           [](const target_state& t) { return !t.dead; });
  if (live == standing_.end())
    return std::nullopt;
  session_wish wish;
  wish.target = static_cast<std::size_t>(live - standing_.begin());
  // Share what is left among the targets still to try, so a tarpit on the
  // first MX leaves time for the next one.
  auto remaining = latest - now;
  auto live_left = static_cast<std::int64_t>(std::count_if(
      live, standing_.end(), [](const target_state& t) { return !t.dead; }));
  auto share = remaining / std::max<std::int64_t>(1, live_left);
  auto floor = std::min(settings_.min_step, remaining);
  auto ceiling = std::min(settings_.max_step, remaining);
  wish.step_timeout = std::clamp(share, floor, std::max(floor, ceiling));
  wish.tls = settings_.tls;
  if (live->tls_failed && wish.tls == tls_policy::opportunistic)
    wish.tls = tls_policy::never;
  return wish;
}

void route_plan::opened(std::uint64_t id, const session_wish& wish,
                        millis now) {
  auto& s = sessions_[id];
  s.target = wish.target;
  s.stage = session_stage::connecting;
  s.idle_since = now;
  s.step_timeout = wish.step_timeout;
}

void route_plan::learn(std::optional<bool> verdict) {
  // A mailbox refused as unknown is definitive: false wins over a true
  // (cached or probed), and nothing turns a false back.
  if (verdict == false && catch_all_ != false) {
    catch_all_ = false;
    learnt_ = false;
  } else if (verdict == true && !catch_all_) {
    catch_all_ = true;
    learnt_ = true;
  }
}

void route_plan::learn_catch_all(bool catch_all) {
  if (catch_all == false && catch_all_ != false)
    catch_all_ = false;
  else if (catch_all && !catch_all_)
    catch_all_ = true;
}

void route_plan::on_idle(std::uint64_t id, const session_result& so_far,
                         millis now, std::size_t first) {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return;
  auto& s = it->second;
  learn(so_far.catch_all);
  apply(s, so_far, now, first);
  if (flight_ == id)
    flight_.reset();
  if (s.stage != session_stage::closing) {
    s.stage = session_stage::idle;
    s.idle_since = now;
  }
}

void route_plan::on_closed(std::uint64_t id, const session_report& report,
                           millis now) {
  auto it = sessions_.find(id);
  if (it == sessions_.end())
    return;
  auto& s = it->second;
  auto& standing = standing_[s.target];
  if (report.transport != connect_failure::none) {
    // No dialogue at all: the target is down for this route.
    standing.dead = true;
    last_timeout_ = report.transport == connect_failure::timeout;
  } else {
    const auto& r = report.result;
    learn(r.catch_all);
    apply(s, r, now, 0);
    if (r.failure == session_failure::tls_failed &&
        settings_.tls == tls_policy::opportunistic && !standing.tls_failed) {
      standing.tls_failed = true;
      s.progress = true;
    }
    // A failure while connecting or asking, with nothing decided: the
    // target does not work for us. One while waiting for work (idle, or
    // after QUIT) says nothing about it.
    if (s.progress)
      standing.broken = 0;
    if (r.failure != session_failure::none &&
        s.stage == session_stage::connecting) {
      last_timeout_ = r.failure == session_failure::timeout;
      if (!s.progress)
        standing.dead = true;
    } else if (r.failure != session_failure::none &&
               s.stage == session_stage::busy && !s.progress) {
      // It greeted us, then broke on an address. Silence is the host's
      // (a tarpit on RCPT: go to the next MX now); a drop or garbage may
      // be the address's: it is asked last next time, and a second such
      // session in a row kills the target.
      last_timeout_ = r.failure == session_failure::timeout;
      if (last_timeout_ || ++standing.broken >= 2)
        standing.dead = true;
    }
  }
  // Whatever it still held goes back to the queue.
  for (auto& [address, e] : entries_)
    if (e.st == state::in_flight && e.session == id)
      e.st = state::open;
  std::erase_if(entries_, [](const auto& kv) {
    return kv.second.st == state::open && kv.second.waiters.empty();
  });
  if (flight_ == id)
    flight_.reset();
  sessions_.erase(it);
}

bool route_plan::retire(std::uint64_t id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end() || it->second.stage != session_stage::idle)
    return false;
  it->second.retired = true;
  return true;
}

void route_plan::apply(session_state& s, const session_result& r, millis now,
                       std::size_t first) {
  s.rcpts = r.rcpt_sent;
  auto count = std::min(first + r.addresses.size(), s.given.size());
  for (; s.reported < count; ++s.reported)
    if (s.reported >= first)
      apply_one(s, r.addresses[s.reported - first], s.given[s.reported], r,
                now);
}

void route_plan::apply_one(session_state& s, const address_result& got,
                           const std::string& address, const session_result& r,
                           millis now) {
  auto it = entries_.find(address);
  if (it == entries_.end())
    return;
  auto& e = it->second;
  auto v = got.rcpt.verdict;
  if (v == rcpt_verdict::not_attempted) {
    // The session ended before asking it.
    return reopen(address, e);
  }
  auto& o = e.outcome;
  bool first_reply = !s.replied && got.rcpt.code != 0;
  if (got.rcpt.code != 0)
    s.replied = true;
  o.rcpt = got.rcpt;
  if (got.rcpt.code != 0)
    o.host = targets_[s.target].host;
  // An RCPT went out unless MAIL FROM was refused; a drop or time-out in
  // flight leaves no code but the command was sent.
  bool replied =
      got.rcpt.code != 0 && r.failure != session_failure::sender_rejected;
  if (replied)
    o.answered = true;
  if (replied || v == rcpt_verdict::other_temporary ||
      v == rcpt_verdict::protocol_error)
    ++o.attempts;
  if (decisive(v)) {
    s.progress = true;
    return conclude(address, e);
  }
  if (v == rcpt_verdict::greylisted_or_throttled ||
      (v == rcpt_verdict::too_many_recipients && first_reply)) {
    s.progress = true;
    return defer(address, e, now);
  }
  if (v == rcpt_verdict::too_many_recipients) {
    // The server's recipient limit per session: the RCPTs it took.
    rcpt_cap_ = std::max<std::size_t>(
        1, std::min(rcpt_cap_, r.rcpt_sent > 0 ? r.rcpt_sent - 1 : 1));
    s.progress = true;
    return reopen(address, e);
  }
  // protocol_error, other_temporary: this address broke a session; asked
  // last next time, given up on after breaking a second one.
  if (++e.breaks >= 2) {
    o.timed_out = r.failure == session_failure::timeout;
    s.progress = true;
    return conclude(address, e);
  }
  reopen(address, e);
}

void route_plan::reopen(const std::string& address, entry& e) {
  if (e.waiters.empty()) {
    entries_.erase(address);
    return;
  }
  e.st = state::open;
}

void route_plan::defer(const std::string& address, entry& e, millis now) {
  auto& o = e.outcome;
  auto n = o.deferrals++;
  // Callers that park the address themselves get the deferral now.
  std::vector<waiter_state> keep;
  for (auto& w : e.waiters) {
    if (w.w.retry_deferrals)
      keep.push_back(w);
    else
      answer(w, o);
  }
  e.waiters = std::move(keep);
  if (e.waiters.empty()) {
    entries_.erase(address);
    return;
  }
  millis latest{0};
  for (const auto& w : e.waiters)
    latest = std::max(latest, w.w.deadline);
  if (n < settings_.retry_delays.size()) {
    auto at = now + settings_.retry_delays[n];
    // Worth it only if a session still fits before the deadline.
    if (at + settings_.min_step / 2 < latest) {
      e.st = state::waiting;
      e.retry_at = at;
      ++rechecks_;
      return;
    }
  }
  conclude(address, e);
}

void route_plan::conclude(const std::string& address, entry& e) {
  e.st = state::final;
  if (definitive(e.outcome.rcpt.verdict))
    settled_.push_back(e.outcome);
  // Single flight of the catch-all probe: wait for the verdict another
  // session is asking for rather than answer without it.
  if (e.outcome.rcpt.verdict == rcpt_verdict::accepted && !catch_all_ &&
      flight_) {
    e.parked = true;
    return;
  }
  answer_all(address, e);
}

void route_plan::answer(const waiter_state& w, address_outcome o) {
  o.catch_all = catch_all_;
  o.source = w.joined ? answer_source::joined : answer_source::probe;
  answers_.push_back({w.w.id, std::move(o)});
}

void route_plan::answer_all(const std::string& address, entry& e) {
  for (const auto& w : e.waiters)
    answer(w, e.outcome);
  entries_.erase(address);
}

std::optional<std::string> route_plan::next_address() const {
  const std::string* best = nullptr;
  std::tuple<bool, bool, std::uint64_t> key{};
  for (const auto& [address, e] : entries_) {
    if (e.st != state::open)
      continue;
    bool batch = std::all_of(e.waiters.begin(), e.waiters.end(),
                             [](const waiter_state& w) { return w.w.batch; });
    // Real-time first; an address that broke a session goes last, so it
    // cannot keep the others from being asked; then arrival order.
    std::tuple<bool, bool, std::uint64_t> k{batch, e.breaks > 0, e.seq};
    if (!best || k < key) {
      best = &address;
      key = k;
    }
  }
  if (!best)
    return std::nullopt;
  return *best;
}

bool route_plan::probe_allowed() const {
  return !catch_all_ && !flight_ && probes_ < settings_.max_catch_all_probes;
}

bool route_plan::any_live_target() const {
  return std::any_of(standing_.begin(), standing_.end(),
                     [](const target_state& t) { return !t.dead; });
}

void route_plan::finish_all(unasked_reason why, millis now) {
  (void)now;
  std::vector<std::string> left;
  for (auto& [address, e] : entries_)
    if (e.st == state::open || e.st == state::waiting)
      left.push_back(address);
  for (auto& address : left) {
    auto& e = entries_.at(address);
    auto& o = e.outcome;
    if (!o.greylisted()) {
      o.unroutable = targets_.empty() && blocked_ > 0;
      o.timed_out = !o.unroutable && last_timeout_;
      if (o.rcpt.verdict == rcpt_verdict::not_attempted)
        o.rcpt = unasked(why);
    }
    e.st = state::final;
    answer_all(address, e);
  }
}

route_step route_plan::step(millis now) {
  route_step out;
  // Callers whose deadline passed get what is known.
  std::vector<std::string> emptied;
  for (auto& [address, e] : entries_) {
    std::vector<waiter_state> keep;
    for (auto& w : e.waiters) {
      if (w.w.deadline > now) {
        keep.push_back(w);
        continue;
      }
      auto o = e.outcome;
      if (e.st != state::final && !o.greylisted()) {
        o.timed_out = true;
        if (o.rcpt.verdict == rcpt_verdict::not_attempted)
          o.rcpt = unasked(unasked_reason::budget);
      }
      answer(w, std::move(o));
    }
    e.waiters = std::move(keep);
    if (e.waiters.empty() && e.st != state::in_flight)
      emptied.push_back(address);
  }
  for (auto& address : emptied)
    entries_.erase(address);
  // Retries that are due.
  for (auto& [address, e] : entries_)
    if (e.st == state::waiting && e.retry_at <= now)
      e.st = state::open;
  // Parked answers whose catch-all flight ended.
  if (!flight_) {
    std::vector<std::string> parked;
    for (auto& [address, e] : entries_)
      if (e.parked)
        parked.push_back(address);
    for (auto& address : parked)
      answer_all(address, entries_.at(address));
  }
  // Nothing can be asked any more: no target alive, no session left.
  if (!any_live_target() && sessions_.empty())
    finish_all(targets_.empty() ? (blocked_ > 0 ? unasked_reason::unroutable_mx
                                                : unasked_reason::no_mx_address)
                                : unasked_reason::all_hosts_failed,
               now);
  // Orders for idle sessions, oldest first.
  for (auto& [id, s] : sessions_) {
    if (s.stage != session_stage::idle)
      continue;
    auto next = s.rcpts < rcpt_cap_ ? next_address() : std::nullopt;
    if (next) {
      auto& e = entries_.at(*next);
      e.st = state::in_flight;
      e.session = id;
      session_order o;
      o.session = id;
      o.what = session_order::kind::give;
      o.address = *next;
      o.catch_all_probe = probe_allowed() && s.rcpts + 1 < rcpt_cap_;
      if (o.catch_all_probe) {
        flight_ = id;
        ++probes_;
      }
      s.given.push_back(*next);
      s.stage = session_stage::busy;
      out.orders.push_back(std::move(o));
      continue;
    }
    bool full = s.rcpts >= rcpt_cap_;
    // Well inside the session's own step time-out, which bounds the wait.
    auto until = s.idle_since + std::min(settings_.linger, s.step_timeout / 2);
    if (!full && !s.retired && now < until) {
      out.wake_at = out.wake_at ? std::min(*out.wake_at, until) : until;
      continue;
    }
    s.stage = session_stage::closing;
    out.orders.push_back({id, session_order::kind::finish, {}, false});
  }
  // When to look again.
  for (const auto& [address, e] : entries_) {
    for (const auto& w : e.waiters)
      out.wake_at =
          out.wake_at ? std::min(*out.wake_at, w.w.deadline) : w.w.deadline;
    if (e.st == state::waiting)
      out.wake_at =
          out.wake_at ? std::min(*out.wake_at, e.retry_at) : e.retry_at;
  }
  out.answers = std::move(answers_);
  answers_.clear();
  out.settled = std::move(settled_);
  settled_.clear();
  out.learnt_catch_all = learnt_;
  learnt_.reset();
  out.rechecks = rechecks_;
  rechecks_ = 0;
  return out;
}

route_counts route_plan::counts() const {
  route_counts c;
  for (const auto& [address, e] : entries_) {
    c.waiters += e.waiters.size();
    switch (e.st) {
      case state::open: ++c.open; break;
      case state::waiting: ++c.waiting; break;
      case state::in_flight: ++c.in_flight; break;
      case state::final: break;
    }
  }
  for (const auto& [id, s] : sessions_)
    if (s.stage != session_stage::closing)
      ++c.sessions;
  return c;
}

} // namespace mailassay::core::smtp
