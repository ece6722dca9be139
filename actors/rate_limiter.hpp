#pragma once

#include "core/account/records.hpp"
#include "core/limits/token_bucket.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::actors {

/// The validate endpoint's per-client-IP scope.
struct ip_scope {
  std::string ip; ///< Client IP (see `core::limits::client_ip`).
  /// Requests per minute; nullopt = `rate_limiter_options::ip_per_minute`;
  /// <= 0 = unlimited.
  std::optional<std::int64_t> per_minute;
};

/// An API key's scope: its limits travel with each request because they can
/// change at any time; a change applies to that very request.
struct key_scope {
  /// Borrowed: the caller keeps the key (a key cache entry) until the
  /// decision, as a request to the actor waits for its answer.
  std::string_view key_id;
  core::account::rate_limits limits; ///< nullopt / <= 0 = unlimited.
};

/// A one-window scope of the widget (per device id, per IP).
struct widget_scope {
  std::string id;
  std::int64_t limit = 0; ///< <= 0 = unlimited.
  core::limits::millis period{60000};
};

/// A one-window scope of any endpoint (the account endpoints' throttles).
using window_scope = widget_scope;

/// One request to admit. Every present scope must allow it; then one token
/// is taken from each of its windows, otherwise from none.
struct limit_check {
  std::optional<ip_scope> ip;            ///< POST /v2/email/validate per IP.
  std::optional<key_scope> key;          ///< Per API key (minute/hour/day).
  std::optional<widget_scope> device;    ///< Widget, per device id.
  std::optional<widget_scope> widget_ip; ///< Widget, per client IP.
  /// POST /v2/auth/login per client IP: every attempt.
  std::optional<window_scope> login_ip;
  /// POST /v2/auth/login per account (the email as given, lower-cased):
  /// failed attempts only (docs/rate-limits.md).
  std::optional<window_scope> login_account;
  /// POST /v2/auth/signup per client IP.
  std::optional<window_scope> signup_ip;
  /// Milliseconds since an arbitrary epoch, from a monotonic clock
  /// (`steady_clock::now().time_since_epoch()`), the same for every check.
  core::limits::millis now{0};
};

/// The scope a limit window belongs to: what refused a request, or whose
/// window the `RateLimit-*` numbers describe.
enum class limit_scope {
  none,          ///< No window (allowed, or nothing limited).
  ip,            ///< Per client IP: validate's, and the widget's.
  key,           ///< Per API key (minute, hour, day).
  device,        ///< Widget, per device id.
  login_ip,      ///< POST /v2/auth/login per client IP.
  login_account, ///< POST /v2/auth/login per account (failures only).
  signup_ip,     ///< POST /v2/auth/signup per client IP.
};

/// The scope's name ("login_ip" ...): the prefix of its buckets' ids in the
/// account endpoints' table, locally and in a shared store.
std::string_view to_string(limit_scope s);

/// The answer to a `limit_check`, with the numbers for the `RateLimit-*`
/// and `Retry-After` headers.
struct limit_decision {
  bool allowed = true;
  /// Scope that refused; `none` when allowed.
  limit_scope refused_by = limit_scope::none;
  /// Scope whose window the numbers describe; `none` when no window applied
  /// (all scopes unlimited or absent), and then all numbers are 0.
  limit_scope reported = limit_scope::none;
  std::int64_t limit = 0;               ///< RateLimit-Limit.
  std::int64_t remaining = 0;           ///< RateLimit-Remaining.
  std::int64_t reset_seconds = 0;       ///< RateLimit-Reset.
  std::int64_t retry_after_seconds = 0; ///< Retry-After when refused.
  /// Period of the reported window (60 s for a per-minute limit, 3600 s per
  /// hour, 86400 s per day); 0 when no window applied.
  core::limits::millis period{0};
};

/// The decision `r` over a limiter's windows as it is reported: the figures
/// of the window that decided, `reported` its scope and `period` its period
/// (`none` and 0 when no window applied); a refusal names that scope. The
/// local and the shared limiter answer through it alike.
limit_decision decision_of(const core::limits::combined_decision& r,
                           limit_scope reported, core::limits::millis period);

/// Settings of the limiter (filled from `config::limits_settings`).
struct rate_limiter_options {
  /// Default per-IP limit on validate (MAILASSAY_LIMITS_IP_PER_MINUTE).
  std::int64_t ip_per_minute = 100;
  std::size_t max_ip_buckets = 100000;        ///< Validate, per client IP.
  std::size_t max_key_buckets = 100000;       ///< Per API key.
  std::size_t max_device_buckets = 100000;    ///< Widget, per device id.
  std::size_t max_widget_ip_buckets = 100000; ///< Widget, per client IP.
  /// Login (per IP and per account) and sign-up (per IP), one table.
  std::size_t max_auth_buckets = 100000;
  /// How often full (idle) buckets are dropped.
  std::chrono::milliseconds sweep_interval{10000};
  /// Entries one sweep step examines in all, split over the shards (each
  /// part under its shard's lock); a pass over big tables is spread over
  /// several steps (messages).
  std::size_t sweep_step = 1024;
  /// Shards of the tables, each with its own lock, rounded up to a power
  /// of two (at most 64); 0: one per hardware thread. The `max_*_buckets`
  /// bounds are split evenly over them (at least 8 buckets each).
  std::size_t shards = 0;
};

/// Figures for /metrics, updated by the limiter after every check.
struct limiter_gauges {
  std::atomic<std::int64_t> ip_buckets{0};
  std::atomic<std::int64_t> key_buckets{0};
  std::atomic<std::int64_t> device_buckets{0};
  std::atomic<std::int64_t> widget_ip_buckets{0};
  std::atomic<std::int64_t> auth_buckets{0}; ///< Login and sign-up.
  std::atomic<std::int64_t> allowed{0};      ///< Checks allowed since start.
  std::atomic<std::int64_t> refused{0};      ///< Checks refused since start.
  std::atomic<std::int64_t> evictions{0};    ///< Dropped by a full table.
  /// Part of `evictions` that dropped a bucket still in use (the table
  /// bound is too small for the traffic, or a flood is under way).
  std::atomic<std::int64_t> active_evictions{0};
  std::atomic<std::int64_t> swept{0}; ///< Full buckets dropped by the tick.
};

/// The bucket tables of the limiter.
enum class limiter_table { ip, key, device, widget_ip, auth };

/// One window a `limit_check` names.
struct limit_window {
  limiter_table table = limiter_table::ip;
  /// The bucket's id in its table: the client IP, the key id, the device
  /// id, or "<scope>:<id>" in the account endpoints' table.
  std::string id;
  core::limits::window_spec spec;
  limit_scope scope = limit_scope::none; ///< The window's scope.
};

/// Returns every window of `c` with a limit, in the order the limiter
/// breaks ties in: ip, key (minute, hour, day), device, widget ip,
/// login ip, login account, sign-up ip. A shared store (actors/
/// shared_limiter.hpp) keeps these same buckets.
std::vector<limit_window> windows_of(const limit_check& c,
                                     std::int64_t ip_per_minute);

/// The limiter's periodic eviction tick (sent to itself).
struct limiter_tick {};

/// One step of a sweep pass (sent to itself until the pass is done).
struct limiter_sweep {};

/// The limiter actor's typed interface: checks answered with a decision
/// (for actor callers using `request`), and its own tick and sweep steps.
using rate_limiter_actor =
    caf::typed_actor<caf::replies_to<limit_check>::with<limit_decision>,
                     caf::reacts_to<limiter_tick>,
                     caf::reacts_to<limiter_sweep>>;

struct limiter_shared;

/// The bucket tables split into shards by the hash of a scope's id (an IP,
/// a key id, a device id), each shard behind its own short critical
/// section, plus an actor that sweeps idle buckets on a timer (see
/// docs/rate-limits.md: why the check runs on the caller's thread and not
/// as a message, and why shards).
///
/// `check` and `peek` run on the calling thread (the HTTP I/O threads, a
/// storage worker); they hold the locks of the shards their scopes live in
/// (one or two, taken in index order) for a table lookup and a few integer
/// operations (well under a microsecond) and never wait for an actor, so
/// checks of different clients rarely meet. Decisions are those of one
/// table: every window of a scope lives in one shard, and a check holds all
/// its shards while it decides. Actors may instead `request` a
/// `limit_check` from `handle()`.
class rate_limiter {
public:
  /// Creates the tables and spawns the sweeping actor in `sys`.
  rate_limiter(caf::actor_system& sys, rate_limiter_options opts = {});

  /// Stops the actor (if `stop` was not called).
  ~rate_limiter();

  rate_limiter(const rate_limiter&) = delete;
  rate_limiter& operator=(const rate_limiter&) = delete;

  /// Admits `c`: when every window of every scope allows it, takes one
  /// token from each; otherwise takes nothing. Thread-safe.
  limit_decision check(const limit_check& c);

  /// Reports the tightest window the scopes of `c` name as it stands at
  /// `c.now` (`core::limits::peek_all`), for a request that is not
  /// limited: takes no token, creates no bucket and does not mark any as
  /// used (an absent bucket reports a full window). Thread-safe.
  limit_decision peek(const limit_check& c) const;

  /// Changes the default per-IP limit (`rate_limiter_options::ip_per_minute`)
  /// from the next check on: a reload (SIGHUP). Buckets already held take
  /// the new window when next checked, keeping the tokens used.
  /// Thread-safe.
  void set_ip_per_minute(std::int64_t limit);

  /// Sets the windows of `c` (in `windows_of` order) to hold `levels` units
  /// (one token = period units) at `c.now`: the state a shared store
  /// reported after deciding `c`, so that `peek` reads it and a fall-back
  /// to local decisions starts from it. Thread-safe.
  void adopt(const limit_check& c, std::span<const std::int64_t> levels);

  /// Returns the default per-IP limit now (the option, or the last
  /// `set_ip_per_minute`). Thread-safe.
  std::int64_t ip_per_minute() const;

  /// Returns the limiter's counters.
  const limiter_gauges& gauges() const;

  /// Returns the sweeping actor, for actors that `request` a `limit_check`.
  const rate_limiter_actor& handle() const { return actor_; }

  /// Stops the sweeping actor; `check` and `peek` keep working.
  void stop();

private:
  caf::actor_system& sys_;
  std::shared_ptr<limiter_shared> shared_;
  rate_limiter_actor actor_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limit_check)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limit_decision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limiter_tick)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limiter_sweep)
