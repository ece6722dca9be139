#pragma once

// The plan of one probe: which MX address to talk to next, with which
// addresses, for how long, when to retry a greylisted address, and when to
// stop — as a sans-I/O state machine over sessions (core/smtp/session.hpp).
// The driver (actors/smtp/prober) resolves the MX hosts, runs each session
// the plan asks for and reports it back; the plan never sees a socket, a
// clock or a random number.
//
//          +---------------------------- next(now) -----------------------+
//          v                                                              |
//   [address states]  open ------session-----> final (a decisive reply)   |
//          |            ^  \                                              |
//          |            |   `--4xx/throttled--> waiting(retry_at) --------+
//          |            |                          | schedule or budget
//          |            `-- not asked, 452, -------+ exhausted: final
//          |                drop, time-out (asked    (greylisted)
//          |                last; final the 2nd time)
//          v
//   next(now): every address final          -> finished
//              deadline reached             -> finish the rest, finished
//              open addresses, a live target -> session on the first live
//                                              target (priority order)
//              open addresses, no live target-> finish them, finished
//              only waiting addresses       -> wait until the first retry
//
// A target dies for this probe when a session on it decides nothing (no
// connection, 421/554 greeting, HELO refused, TLS unavailable, time-out or
// drop before any decisive reply): the next session goes to the next
// target (RFC 5321 §5.1: try the MX hosts in order). Termination: every
// session either decides or defers an address (bounded by the retry
// schedule) or kills a target (bounded by the target list).

#include "core/limits/token_bucket.hpp"
#include "core/smtp/classify.hpp"
#include "core/smtp/outcome.hpp"
#include "core/smtp/session.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::smtp {

/// One place to connect to: an MX host name and one of its addresses.
struct probe_target {
  /// MX host name (the domain itself for an implicit MX), lower-case.
  std::string host;
  /// IP address in text form.
  std::string address;
};

/// Why no SMTP dialogue took place on a target.
enum class connect_failure {
  none,        ///< Connected: the session result tells the rest.
  refused,     ///< Connection refused.
  timeout,     ///< No connection within the step time-out.
  unreachable, ///< No route to the network or host.
  blocked,     ///< The address policy refused the address: never connected.
  proxy,       ///< The SOCKS5 proxy failed or refused the connection.
  other,       ///< Any other socket error, or the client is shutting down.
};

/// Returns the lower-case name of `f`, e.g. "refused".
std::string_view to_string(connect_failure f);

/// What one session on a target yielded, as the driver reports it.
struct session_report {
  /// Why there was no dialogue; `none` when there was one.
  connect_failure transport = connect_failure::none;
  /// Socket or proxy error text, for logs.
  std::string detail;
  /// The session's result; meaningful when `transport == none`.
  session_result result;
};

/// How a probe is planned.
struct probe_settings {
  /// Delays before asking a greylisted (4xx) address again, in order; one
  /// retry per entry while the budget allows. Empty: a deferral is final at
  /// once (greylisted), for callers that park the address themselves.
  std::vector<limits::millis> retry_delays{
      limits::millis{5000}, limits::millis{15000}, limits::millis{45000}};
  /// Most addresses asked in one session.
  std::size_t max_rcpts_per_session = 20;
  /// Shortest per-command time-out (unless less budget is left): a server
  /// that takes a few seconds per reply is slow, not dead.
  limits::millis min_step{2000};
  /// Longest per-command time-out (RFC 5321 §4.5.3.2 suggests minutes; the
  /// budget usually ends sooner).
  limits::millis max_step{300000};
  /// STARTTLS policy. With `opportunistic`, a failed handshake is retried
  /// once on the same target in clear (what MTAs do, RFC 3207 §4.1).
  tls_policy tls = tls_policy::opportunistic;
};

/// One session of a probe, for the result's log.
struct session_log {
  /// MX host name.
  std::string host;
  /// The address connected to.
  std::string address;
  /// Why there was no dialogue (`none`: there was one).
  connect_failure transport = connect_failure::none;
  /// Why the dialogue ended early (`none`: it ran its course).
  session_failure failure = session_failure::none;
  /// Reply code or text of the failure, or the socket error.
  std::string detail;
  /// Whether it ran over TLS.
  bool tls = false;
  /// RCPT TO commands sent, catch-all probe included.
  std::size_t rcpt_sent = 0;
  /// Time from the step to the report.
  limits::millis duration{0};
};

/// What the driver does next.
enum class step_kind {
  session,  ///< Run a session (fields below), then call `on_session`.
  wait,     ///< Call `next` again at `wake_at`.
  finished, ///< Done: read `outcomes()`.
};

/// One instruction of the plan.
struct probe_step {
  /// What to do.
  step_kind kind = step_kind::finished;
  /// session: index into `targets()`.
  std::size_t target = 0;
  /// session: the addresses to ask, in order.
  std::vector<std::string> addresses;
  /// session: add a random address at the domain (catch-all probe).
  bool catch_all_probe = false;
  /// session: STARTTLS policy for this session.
  tls_policy tls = tls_policy::opportunistic;
  /// session: per-command time-out.
  limits::millis step_timeout{0};
  /// wait: when to call `next` again.
  limits::millis wake_at{0};
};

/// The plan of one probe; see the diagram at the top of this header.
class probe_plan {
public:
  /// Plans a probe of `addresses` (all at one domain) over `targets` in
  /// priority order, from `now` until `deadline`. `blocked` counts the MX
  /// addresses the address policy refused (all of them refused and no
  /// target: every address is `unroutable`). `known_catch_all` is the
  /// cached catch-all verdict of the domain (no probe when set). Addresses
  /// that cannot go on the wire (`safe_argument`) are final at once with
  /// `protocol_error`; duplicates are asked once.
  probe_plan(std::vector<std::string> addresses,
             std::vector<probe_target> targets, std::size_t blocked,
             probe_settings settings, limits::millis now,
             limits::millis deadline,
             std::optional<bool> known_catch_all = std::nullopt);

  /// Returns the next step. Must not be called while a session asked for
  /// is still running (until its `on_session`).
  probe_step next(limits::millis now);

  /// Takes the report of the session the last `next` asked for.
  void on_session(const session_report& report, limits::millis now);

  /// Returns whether every address is final.
  bool finished() const { return finished_; }

  /// Returns one outcome per requested address, in request order; final
  /// once `finished()`.
  const std::vector<address_outcome>& outcomes() const { return outcomes_; }

  /// Returns the targets in the order tried.
  const std::vector<probe_target>& targets() const { return targets_; }

  /// Returns the domain's catch-all verdict (known or learnt).
  std::optional<bool> catch_all() const { return catch_all_; }

  /// Returns whether this probe learnt the catch-all verdict (to cache it).
  /// A session that refused a mailbox as unknown makes the verdict false
  /// even over a known true.
  bool catch_all_learnt() const { return learnt_; }

  /// Lets the next sessions carry the catch-all probe or not (the driver
  /// allows one probing session per domain at a time); allowed by default.
  void allow_catch_all_probe(bool allowed) { probe_allowed_ = allowed; }

  /// Returns the sessions run, oldest first.
  const std::vector<session_log>& sessions() const { return log_; }

  /// Returns why addresses were left undecided, for the result:
  /// "unroutable_mx", "no_mx_address", "all_hosts_failed", "budget", or
  /// empty.
  std::string_view failure() const { return failure_; }

private:
  /// Where an address stands.
  enum class state { open, waiting, final };

  /// One target's standing in this probe.
  struct target_state {
    bool dead = false;
    bool tls_failed = false;
  };

  /// Defers address `i` after a 4xx: waiting, or final when the schedule or
  /// the budget is exhausted.
  void defer(std::size_t i, limits::millis now);
  /// Makes every address that is not final final; `why` for `failure()`.
  void finish(std::string_view why, bool budget_over);
  /// Copies the catch-all verdict into every outcome and ends the plan.
  void seal();

  std::vector<probe_target> targets_;
  std::vector<target_state> standing_;
  std::size_t blocked_ = 0;
  probe_settings settings_;
  limits::millis deadline_;
  std::vector<address_outcome> outcomes_;
  std::vector<state> states_;
  std::vector<limits::millis> retry_at_;
  /// Sessions each address was in flight in when it broke (drop, time-out,
  /// garbage): asked last next time, final after the second.
  std::vector<int> breaks_;
  /// Index of the first occurrence of each address (duplicates follow it).
  std::vector<std::size_t> same_as_;
  std::optional<bool> catch_all_;
  bool learnt_ = false;
  bool probe_done_ = false;
  bool probe_allowed_ = true;
  /// After a 452 mid-session: one address per session.
  bool one_per_session_ = false;
  /// The last failed session or connection ended in a time-out.
  bool last_timeout_ = false;
  bool finished_ = false;
  std::string failure_;
  std::vector<session_log> log_;
  /// The session in flight.
  struct flight {
    bool active = false;
    std::size_t target = 0;
    std::vector<std::size_t> addresses;
    bool probe = false;
    limits::millis started{0};
  } flight_;
};

} // namespace mailassay::core::smtp
