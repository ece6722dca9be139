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
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

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
  std::string key_id;
  core::account::rate_limits limits; ///< nullopt / <= 0 = unlimited.
};

/// A one-window scope of the widget (per device id, per IP).
struct widget_scope {
  std::string id;
  std::int64_t limit = 0; ///< <= 0 = unlimited.
  core::limits::millis period{60000};
};

/// One request to admit. Every present scope must allow it; then one token
/// is taken from each of its windows, otherwise from none.
struct limit_check {
  std::optional<ip_scope> ip;            ///< POST /v2/email/validate per IP.
  std::optional<key_scope> key;          ///< Per API key (minute/hour/day).
  std::optional<widget_scope> device;    ///< Widget, per device id.
  std::optional<widget_scope> widget_ip; ///< Widget, per client IP.
  /// Milliseconds since an arbitrary epoch, from a monotonic clock
  /// (`steady_clock::now().time_since_epoch()`), the same for every check.
  core::limits::millis now{0};
};

/// The answer to a `limit_check`, with the numbers for the `RateLimit-*`
/// and `Retry-After` headers.
struct limit_decision {
  bool allowed = true;
  /// Scope that refused: "ip", "key", "device" ("ip" also for the widget's
  /// per-IP scope); empty when allowed.
  std::string_view refused_by;
  /// Scope whose window the numbers describe; empty when no window applied
  /// (all scopes unlimited or absent), and then all numbers are 0.
  std::string_view reported;
  std::int64_t limit = 0;               ///< RateLimit-Limit.
  std::int64_t remaining = 0;           ///< RateLimit-Remaining.
  std::int64_t reset_seconds = 0;       ///< RateLimit-Reset.
  std::int64_t retry_after_seconds = 0; ///< Retry-After when refused.
};

/// Settings of the limiter (filled from `config::limits_settings`).
struct rate_limiter_options {
  /// Default per-IP limit on validate (MAILASSAY_LIMITS_IP_PER_MINUTE).
  std::int64_t ip_per_minute = 100;
  std::size_t max_ip_buckets = 100000;        ///< Validate, per client IP.
  std::size_t max_key_buckets = 100000;       ///< Per API key.
  std::size_t max_device_buckets = 100000;    ///< Widget, per device id.
  std::size_t max_widget_ip_buckets = 100000; ///< Widget, per client IP.
  /// How often full (idle) buckets are dropped.
  std::chrono::milliseconds sweep_interval{10000};
};

/// Figures for /metrics, updated by the limiter after every message.
struct limiter_gauges {
  std::atomic<std::int64_t> ip_buckets{0};
  std::atomic<std::int64_t> key_buckets{0};
  std::atomic<std::int64_t> device_buckets{0};
  std::atomic<std::int64_t> widget_ip_buckets{0};
  std::atomic<std::int64_t> allowed{0};   ///< Checks allowed since start.
  std::atomic<std::int64_t> refused{0};   ///< Checks refused since start.
  std::atomic<std::int64_t> evictions{0}; ///< Dropped by a full table.
  /// Part of `evictions` that dropped a bucket still in use (the table
  /// bound is too small for the traffic, or a flood is under way).
  std::atomic<std::int64_t> active_evictions{0};
  std::atomic<std::int64_t> swept{0}; ///< Full buckets dropped by the tick.
};

/// A check and where its decision goes.
struct limit_job {
  limit_check check;
  /// Called once, on the limiter's thread: must not block.
  std::function<void(limit_decision)> done;
};

/// The limiter's periodic eviction tick (sent to itself).
struct limiter_tick {};

/// The limiter's typed interface: checks with a callback, checks answered
/// with a decision (for actor callers using `request`), and its own tick.
using rate_limiter_actor =
    caf::typed_actor<caf::reacts_to<limit_job>,
                     caf::replies_to<limit_check>::with<limit_decision>,
                     caf::reacts_to<limiter_tick>>;

/// One event-based actor owning every bucket table (see
/// docs/rate-limits.md for why one and not shards). Callers never see CAF:
/// `check` is one message, and the decision comes back through `done`.
class rate_limiter {
public:
  /// Spawns the limiter in `sys`.
  rate_limiter(caf::actor_system& sys, rate_limiter_options opts = {});

  /// Stops the limiter (if `stop` was not called).
  ~rate_limiter();

  rate_limiter(const rate_limiter&) = delete;
  rate_limiter& operator=(const rate_limiter&) = delete;

  /// Queues `check`; `done` receives the decision on the limiter's thread.
  void check(limit_check check, std::function<void(limit_decision)> done);

  /// Returns the limiter's counters.
  const limiter_gauges& gauges() const { return *gauges_; }

  /// Returns the actor, for actors that `request` a `limit_check`.
  const rate_limiter_actor& handle() const { return actor_; }

  /// Stops the limiter; later checks are dropped.
  void stop();

private:
  std::shared_ptr<limiter_gauges> gauges_;
  rate_limiter_actor actor_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limit_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limit_check)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limit_decision)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::limiter_tick)
