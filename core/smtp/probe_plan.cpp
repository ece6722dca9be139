#include "core/smtp/probe_plan.hpp"

#include <algorithm>
#include <utility>

namespace mailassay::core::smtp {

namespace {

using limits::millis;

classification note(rcpt_verdict verdict, std::string_view why) {
  classification c;
  c.verdict = verdict;
  c.message = std::string{why};
  c.rule = "probe";
  return c;
}

// A reply that says what the mailbox is: no need to ask again.
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

std::string_view to_string(connect_failure f) {
  switch (f) {
    case connect_failure::none: return "none";
    case connect_failure::refused: return "refused";
    case connect_failure::timeout: return "timeout";
    case connect_failure::unreachable: return "unreachable";
    case connect_failure::blocked: return "blocked";
    case connect_failure::proxy: return "proxy";
    case connect_failure::other: return "other";
  }
  return "other";
}

probe_plan::probe_plan(std::vector<std::string> addresses,
                       std::vector<probe_target> targets, std::size_t blocked,
                       probe_settings settings, millis now, millis deadline,
                       std::optional<bool> known_catch_all)
    : targets_(std::move(targets)), standing_(targets_.size()),
      blocked_(blocked), settings_(std::move(settings)), deadline_(deadline),
      catch_all_(known_catch_all) {
  outcomes_.resize(addresses.size());
  states_.assign(addresses.size(), state::open);
  retry_at_.assign(addresses.size(), now);
  breaks_.assign(addresses.size(), 0);
  same_as_.resize(addresses.size());
  for (std::size_t i = 0; i < addresses.size(); ++i) {
    auto& o = outcomes_[i];
    o.address = std::move(addresses[i]);
    same_as_[i] = i;
    for (std::size_t j = 0; j < i; ++j)
      if (outcomes_[j].address == o.address) {
        same_as_[i] = j;
        states_[i] = state::final;
        break;
      }
    if (same_as_[i] == i && (o.address.empty() || !safe_argument(o.address))) {
      o.rcpt = note(rcpt_verdict::protocol_error,
                    "refused: empty address or unsafe characters");
      states_[i] = state::final;
    }
  }
  if (std::all_of(states_.begin(), states_.end(),
                  [](state s) { return s == state::final; }))
    seal();
}

probe_step probe_plan::next(millis now) {
  probe_step step;
  if (finished_)
    return step;
  if (flight_.active) {
    step.kind = step_kind::wait;
    step.wake_at = deadline_;
    return step;
  }
  for (std::size_t i = 0; i < states_.size(); ++i)
    if (states_[i] == state::waiting && retry_at_[i] <= now)
      states_[i] = state::open;
  if (now >= deadline_) {
    finish("budget", true);
    return step;
  }
  std::vector<std::size_t> open;
  millis wake = deadline_;
  bool waiting = false;
  for (std::size_t i = 0; i < states_.size(); ++i) {
    if (states_[i] == state::open)
      open.push_back(i);
    else if (states_[i] == state::waiting) {
      waiting = true;
      wake = std::min(wake, retry_at_[i]);
    }
  }
  if (open.empty() && !waiting) {
    seal();
    return step;
  }
  auto live = std::find_if(standing_.begin(), standing_.end(),
                           [](const target_state& t) { return !t.dead; });
  if (live == standing_.end()) {
    finish(targets_.empty() ? (blocked_ > 0 ? "unroutable_mx" : "no_mx_address")
                            : "all_hosts_failed",
           false);
    return step;
  }
  if (open.empty()) {
    step.kind = step_kind::wait;
    step.wake_at = wake;
    return step;
  }
  // An address that broke a session goes last, so it cannot keep the
  // others from being asked.
  std::stable_partition(open.begin(), open.end(),
                        [&](std::size_t i) { return breaks_[i] == 0; });
  auto target = static_cast<std::size_t>(live - standing_.begin());
  auto limit = one_per_session_
                   ? std::size_t{1}
                   : std::max<std::size_t>(1, settings_.max_rcpts_per_session);
  if (open.size() > limit)
    open.resize(limit);
  // Share what is left of the budget among the targets still to try, so a
  // tarpit on the first MX leaves time for the next one.
  auto remaining = deadline_ - now;
  auto live_left = static_cast<std::int64_t>(std::count_if(
      live, standing_.end(), [](const target_state& t) { return !t.dead; }));
  auto share = remaining / std::max<std::int64_t>(1, live_left);
  auto floor = std::min(settings_.min_step, remaining);
  auto ceiling = std::min(settings_.max_step, remaining);
  step.kind = step_kind::session;
  step.target = target;
  step.step_timeout = std::clamp(share, floor, std::max(floor, ceiling));
  step.catch_all_probe = !catch_all_ && !probe_done_ && probe_allowed_;
  step.tls = settings_.tls;
  if (standing_[target].tls_failed && step.tls == tls_policy::opportunistic)
    step.tls = tls_policy::never;
  for (auto i : open)
    step.addresses.push_back(outcomes_[i].address);
  flight_ = {true, target, std::move(open), step.catch_all_probe, now};
  return step;
}

void probe_plan::on_session(const session_report& report, millis now) {
  if (!flight_.active || finished_)
    return;
  flight_.active = false;
  auto& standing = standing_[flight_.target];
  const auto& target = targets_[flight_.target];
  const auto& r = report.result;
  session_log entry;
  entry.host = target.host;
  entry.address = target.address;
  entry.transport = report.transport;
  entry.duration = now - flight_.started;
  if (report.transport != connect_failure::none) {
    entry.detail = report.detail;
    log_.push_back(std::move(entry));
    standing.dead = true;
    last_timeout_ = report.transport == connect_failure::timeout;
    return;
  }
  entry.failure = r.failure;
  entry.detail = r.failure_code != 0
                     ? std::to_string(r.failure_code) + " " + r.failure_message
                     : r.failure_message;
  entry.tls = r.tls;
  entry.rcpt_sent = r.rcpt_sent;
  log_.push_back(std::move(entry));

  bool progress = false;
  if (r.failure == session_failure::tls_failed &&
      settings_.tls == tls_policy::opportunistic && !standing.tls_failed) {
    standing.tls_failed = true;
    progress = true;
  }
  // A mailbox refused as unknown is definitive: false wins over a true
  // (cached or probed), and nothing turns a false back.
  if (r.catch_all == false && catch_all_ != false) {
    catch_all_ = false;
    learnt_ = true;
  } else if (r.catch_all && !catch_all_) {
    catch_all_ = r.catch_all;
    learnt_ = true;
  }
  // The index (into the session's list) of the first address that got a
  // reply: a 452 there is the server throttling us, not a per-session
  // recipient limit.
  std::size_t first_reply = r.addresses.size();
  for (std::size_t k = 0; k < r.addresses.size(); ++k)
    if (r.addresses[k].rcpt.code != 0) {
      first_reply = k;
      break;
    }
  auto count = std::min(r.addresses.size(), flight_.addresses.size());
  for (std::size_t k = 0; k < count; ++k) {
    auto i = flight_.addresses[k];
    const auto& got = r.addresses[k].rcpt;
    auto& o = outcomes_[i];
    auto v = got.verdict;
    if (v == rcpt_verdict::not_attempted)
      continue;
    o.rcpt = got;
    if (got.code != 0)
      o.host = target.host;
    // An RCPT went out unless MAIL FROM was refused; a drop or time-out in
    // flight leaves no code but the command was sent.
    bool replied =
        got.code != 0 && r.failure != session_failure::sender_rejected;
    if (replied)
      o.answered = true;
    if (replied || v == rcpt_verdict::other_temporary ||
        v == rcpt_verdict::protocol_error)
      ++o.attempts;
    if (v == rcpt_verdict::accepted && flight_.probe)
      probe_done_ = true;
    if (decisive(v)) {
      states_[i] = state::final;
      progress = true;
    } else if (v == rcpt_verdict::greylisted_or_throttled ||
               (v == rcpt_verdict::too_many_recipients && k == first_reply)) {
      defer(i, now);
      progress = true;
    } else if (v == rcpt_verdict::too_many_recipients) {
      one_per_session_ = true;
    } else if (++breaks_[i] >= 2) {
      // protocol_error, other_temporary twice: this address breaks
      // sessions; give up on it, not on the host.
      states_[i] = state::final;
      o.timed_out = r.failure == session_failure::timeout;
      progress = true;
    }
  }
  last_timeout_ = r.failure == session_failure::timeout;
  if (!progress)
    standing.dead = true;
}

void probe_plan::defer(std::size_t i, millis now) {
  auto& o = outcomes_[i];
  auto n = o.deferrals++;
  if (n < settings_.retry_delays.size()) {
    auto at = now + settings_.retry_delays[n];
    // Worth it only if a session still fits in the budget after the wait.
    if (at + settings_.min_step / 2 < deadline_) {
      states_[i] = state::waiting;
      retry_at_[i] = at;
      return;
    }
  }
  states_[i] = state::final;
}

void probe_plan::finish(std::string_view why, bool budget_over) {
  bool any = false;
  for (std::size_t i = 0; i < states_.size(); ++i) {
    if (states_[i] == state::final)
      continue;
    any = true;
    states_[i] = state::final;
    auto& o = outcomes_[i];
    if (o.greylisted())
      continue;
    o.unroutable = targets_.empty() && blocked_ > 0;
    o.timed_out = !o.unroutable && (budget_over || last_timeout_);
    if (o.rcpt.verdict == rcpt_verdict::not_attempted)
      o.rcpt = note(rcpt_verdict::not_attempted, why);
  }
  if (any)
    failure_ = std::string{why};
  seal();
}

void probe_plan::seal() {
  for (std::size_t i = 0; i < outcomes_.size(); ++i) {
    if (same_as_[i] != i) {
      auto address = std::move(outcomes_[i].address);
      outcomes_[i] = outcomes_[same_as_[i]];
      outcomes_[i].address = std::move(address);
    }
    outcomes_[i].catch_all = catch_all_;
  }
  finished_ = true;
}

} // namespace mailassay::core::smtp
