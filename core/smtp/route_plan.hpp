#pragma once

// The plan of one mail route: the addresses its callers wait for, the
// sessions open to its MX hosts, and which session asks which address next
// -- as a sans-I/O state machine (no socket, no clock, no randomness: the
// driver, actors/smtp/scheduler, passes the time in and runs the sessions).
//
// Concurrent callers of one route share its sessions. A session is
// open-ended (core/smtp/session.hpp): when it is ready it asks for work and
// gets the next waiting address, one transaction at a time (RSET between),
// until the route has none left or the session reached its RCPT cap.
// Identical addresses are asked once: a second caller joins the entry of
// the first and gets the same answer.
//
//   add(address, waiter) ──> entry [open] ──give──> [in flight] ──reply──┐
//        (joins an entry      ^    ^                                      │
//         already there)      │    └── not asked, 452 mid-session, broke  │
//                             │        once (asked last next time)        │
//                             └─ retry due ── [waiting] <── 4xx ──────────┤
//                                  (no time left for a retry: final)      │
//                                            [final] <── decisive reply ──┘
//                                               │   (accepted while another
//                                               │    session carries the
//                                               │    catch-all probe: parked
//                                               v    until its verdict)
//                                    answers, one per waiter
//
//   sessions: opened ─> [connecting] ─ready─> [idle] ─give─> [busy] ─┐
//                                               ^  └─nothing to do,  │
//                                               │    linger over (or │
//                                               │    retired): finish│
//                                               └──── reply ─────────┘
//
// When to open a session (`want_session`): addresses wait for one, some
// caller of them has at least `min_time_to_connect` left, no idle session
// can take them, and there are more than
// `backlog_per_session` waiting per session already open; on the first MX
// target (priority order) still alive. A target dies for the route when a
// session on it ends in failure before deciding anything (no connection,
// 421/554 greeting, HELO refused, TLS unavailable, a time-out; a drop or
// garbage while asking an address kills it only the second time in a row
// -- the first is blamed on the address); with
// no target alive and no session left, the remaining addresses end
// (all_hosts_failed, or unroutable_mx when the address policy refused every
// MX address). A session that fails while it waits for work (idle, or
// after QUIT) does not kill its target. A 452 "too many recipients" moves the
// address (and the rest) to the next session and caps the route's RCPTs per
// session at what the server took; a 452 to the first RCPT of a session is
// throttling and is retried like greylisting. Each caller's own deadline ends
// its wait with what is known (timed out), without disturbing the others.

#include "core/limits/token_bucket.hpp"
#include "core/smtp/outcome.hpp"
#include "core/smtp/session.hpp"
#include "core/smtp/target.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace mailassay::core::smtp {

/// How the sessions of a route are planned.
struct route_settings {
  /// Delays before asking a deferred (4xx) address again, in order; one
  /// retry per entry while some caller's deadline allows it.
  std::vector<limits::millis> retry_delays{
      limits::millis{5000}, limits::millis{15000}, limits::millis{45000}};
  /// Most RCPT commands in one session (catch-all probes included).
  std::size_t max_rcpts_per_session = 20;
  /// Shortest per-command time-out (unless less time is left).
  limits::millis min_step{2000};
  /// Longest per-command time-out.
  limits::millis max_step{300000};
  /// STARTTLS policy; with `opportunistic` a failed handshake is retried
  /// once on the same target in clear.
  tls_policy tls = tls_policy::opportunistic;
  /// Another session opens while more than this many addresses wait per
  /// session already open (the first always opens). A session asks an
  /// address in about three round trips and opens in about five: a few
  /// waiting addresses are cheaper to wait for than a new connection, and
  /// a polite prober opens few.
  std::size_t backlog_per_session = 10;
  /// How long an idle session waits for work before QUIT (0: at once).
  limits::millis linger{0};
  /// A session opens only while some waiting caller has at least this long
  /// left: a connection for callers about to give up only loads the MX
  /// host (queued callers whose slot frees as their budget ends).
  limits::millis min_time_to_connect{100};
  /// Sessions that may carry the catch-all probe before the route stops
  /// asking (a probe without an answer may be asked again once).
  std::size_t max_catch_all_probes = 2;
};

/// A caller waiting for one address.
struct route_waiter {
  /// The driver's id of the caller (answers name it).
  std::uint64_t id = 0;
  /// When the caller stops waiting: it gets what is known, timed out.
  limits::millis deadline{0};
  /// Wait for greylisting retries. False: a deferral is the caller's
  /// answer at once (a batch parks the address and asks again later).
  bool retry_deferrals = true;
  /// A batch caller: real-time callers' addresses are asked first.
  bool batch = false;
};

/// An answer for one caller.
struct route_answer {
  /// The caller.
  std::uint64_t waiter = 0;
  /// What is known about its address; `source` says whether it joined a
  /// probe asked for another caller.
  address_outcome outcome;
};

/// A session the plan asks the driver to open.
struct session_wish {
  /// Index into `targets()`.
  std::size_t target = 0;
  /// STARTTLS policy of the session.
  tls_policy tls = tls_policy::opportunistic;
  /// Per-command time-out.
  limits::millis step_timeout{0};
};

/// What an idle session does next.
struct session_order {
  /// What to do.
  enum class kind {
    give,   ///< Ask `address` (and the probe, when set).
    finish, ///< QUIT.
  };
  /// The driver's id of the session.
  std::uint64_t session = 0;
  /// What to do.
  kind what = kind::finish;
  /// give: the address to ask.
  std::string address;
  /// give: carry the catch-all probe after it (the driver makes the random
  /// address).
  bool catch_all_probe = false;
};

/// Everything a `step` produced.
struct route_step {
  /// Orders for idle sessions.
  std::vector<session_order> orders;
  /// Answers for callers, each exactly once.
  std::vector<route_answer> answers;
  /// Definitive answers learnt (for the result cache).
  std::vector<address_outcome> settled;
  /// The domain's catch-all verdict, when it was learnt since the last step
  /// (for the shared catch-all cache).
  std::optional<bool> learnt_catch_all;
  /// When to call `step` again (a retry, a deadline, a linger's end).
  std::optional<limits::millis> wake_at;
  /// Greylisting retries scheduled since the last step.
  std::size_t rechecks = 0;
};

/// Counts of one route, for metrics.
struct route_counts {
  std::size_t open = 0;      ///< Addresses waiting for a session.
  std::size_t waiting = 0;   ///< Addresses waiting for a greylisting retry.
  std::size_t in_flight = 0; ///< Addresses asked in a session now.
  std::size_t waiters = 0;   ///< Callers waiting.
  std::size_t sessions = 0;  ///< Sessions open (or connecting).
};

/// The plan of one mail route; see the diagram at the top of this header.
class route_plan {
public:
  /// Plans a route over `targets` in priority order (MX hosts' addresses;
  /// empty: nothing to connect to, `blocked` counts the MX addresses the
  /// address policy refused). `known_catch_all` is the domain's cached
  /// catch-all verdict (no probe while it holds).
  route_plan(std::vector<probe_target> targets, std::size_t blocked,
             route_settings settings,
             std::optional<bool> known_catch_all = std::nullopt);

  /// A caller asks about `address` (at the route's domain). It joins the
  /// entry of an identical address already waiting or in flight. An
  /// address that cannot go on the wire is answered at once
  /// (`protocol_error`).
  void add(std::string address, route_waiter waiter, limits::millis now);

  /// Returns the session to open now, if one is wanted (see the header's
  /// comment). Call again after `opened` while it returns one and the host
  /// has room.
  std::optional<session_wish> want_session(limits::millis now) const;

  /// The driver opened session `id` for `wish` (it is connecting).
  void opened(std::uint64_t id, const session_wish& wish, limits::millis now);

  /// Session `id` is ready for work: after its greeting, or after its last
  /// address was answered; `so_far` is its result up to now, its
  /// `addresses` from the `first`th given (a driver sends only what is new).
  void on_idle(std::uint64_t id, const session_result& so_far,
               limits::millis now, std::size_t first = 0);

  /// Session `id` ended (`report` holds its whole result).
  void on_closed(std::uint64_t id, const session_report& report,
                 limits::millis now);

  /// An idle session lingering for work should end: another route needs
  /// its host slot. Returns whether `id` was such a session.
  bool retire(std::uint64_t id);

  /// Learns the domain's catch-all verdict from elsewhere (the cache).
  void learn_catch_all(bool catch_all);

  /// Everything due at `now`: orders for idle sessions, answers, time-outs
  /// and retries.
  route_step step(limits::millis now);

  /// Returns whether nothing is left: no address, no session.
  bool idle() const { return entries_.empty() && sessions_.empty(); }

  /// Returns the targets in priority order.
  const std::vector<probe_target>& targets() const { return targets_; }

  /// Returns the domain's catch-all verdict (known or learnt).
  std::optional<bool> catch_all() const { return catch_all_; }

  /// Returns the route's counts.
  route_counts counts() const;

  /// A reload's new `max_rcpts_per_session` (issue #29): the route applies
  /// it from its next RCPT on, unless a server already taught it a lower
  /// cap (a 452), which stays.
  void set_max_rcpts_per_session(std::size_t n);

  /// Returns the RCPT cap the route applies now (lowered by a 452).
  std::size_t rcpt_cap() const { return rcpt_cap_; }

private:
  /// Where an address stands.
  enum class state { open, waiting, in_flight, final };

  /// A caller and how it came.
  struct waiter_state {
    route_waiter w;
    bool joined = false;
  };

  /// One distinct address and its callers.
  struct entry {
    address_outcome outcome;
    state st = state::open;
    limits::millis retry_at{0};
    /// Sessions it was in flight in when they broke.
    int breaks = 0;
    /// Arrival order.
    std::uint64_t seq = 0;
    std::vector<waiter_state> waiters;
    /// Final and accepted, waiting for another session's catch-all verdict.
    bool parked = false;
    /// The session it is in flight in.
    std::uint64_t session = 0;
  };

  /// Where a session stands.
  enum class session_stage { connecting, idle, busy, closing };

  /// One session of the route.
  struct session_state {
    std::size_t target = 0;
    session_stage stage = session_stage::connecting;
    /// Addresses given, in order (indexes into the session's results).
    std::vector<std::string> given;
    /// Results already applied.
    std::size_t reported = 0;
    /// RCPT commands sent so far.
    std::size_t rcpts = 0;
    /// A reply came in this session (a 452 before any is throttling).
    bool replied = false;
    /// Something was decided or deferred in it.
    bool progress = false;
    /// When it last became idle.
    limits::millis idle_since{0};
    /// Its per-command time-out (a linger stays well inside it).
    limits::millis step_timeout{0};
    /// Asked to end its linger early.
    bool retired = false;
  };

  /// Applies the results of `s` not applied yet; `r.addresses` starts with
  /// the `first`th address given.
  void apply(session_state& s, const session_result& r, limits::millis now,
             std::size_t first);
  /// Applies one address's result.
  void apply_one(session_state& s, const address_result& got,
                 const std::string& address, const session_result& r,
                 limits::millis now);
  /// Learns a session's catch-all verdict (false is definitive).
  void learn(std::optional<bool> verdict);
  /// Defers `e` after a 4xx: answers the callers that do not wait,
  /// schedules a retry if a caller's deadline allows, else final.
  void defer(const std::string& address, entry& e, limits::millis now);
  /// Makes `e` final and answers (or parks) its callers.
  void conclude(const std::string& address, entry& e);
  /// Answers every caller of `e` and forgets it.
  void answer_all(const std::string& address, entry& e);
  /// Answers one caller with `o`.
  void answer(const waiter_state& w, address_outcome o);
  /// Puts `e` back in the queue (or forgets it when nobody waits).
  void reopen(const std::string& address, entry& e);
  /// The next open address for an idle session, if any.
  std::optional<std::string> next_address() const;
  /// Whether the next give may carry the catch-all probe.
  bool probe_allowed() const;
  /// Whether some target is still alive.
  bool any_live_target() const;
  /// Ends every address that is not final; those never asked get `why`.
  void finish_all(unasked_reason why, limits::millis now);

  std::vector<probe_target> targets_;
  /// Per target: dead for this route; TLS failed (retry in clear).
  struct target_state {
    bool dead = false;
    bool tls_failed = false;
    /// Sessions in a row that broke on an address after a good greeting
    /// (a drop or a time-out on RCPT) without deciding anything.
    int broken = 0;
  };
  std::vector<target_state> standing_;
  std::size_t blocked_ = 0;
  route_settings settings_;
  std::size_t rcpt_cap_;
  std::unordered_map<std::string, entry> entries_;
  std::map<std::uint64_t, session_state> sessions_;
  std::uint64_t next_seq_ = 0;
  std::optional<bool> catch_all_;
  /// A verdict learnt since the last step.
  std::optional<bool> learnt_;
  /// The session carrying the catch-all probe now.
  std::optional<std::uint64_t> flight_;
  /// Sessions asked to carry the probe so far.
  std::size_t probes_ = 0;
  /// The last failed session ended in a time-out.
  bool last_timeout_ = false;
  std::vector<route_answer> answers_;
  std::vector<address_outcome> settled_;
  std::size_t rechecks_ = 0;
};

} // namespace mailassay::core::smtp
