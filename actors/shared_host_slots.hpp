#pragma once

// Per-MX-host politeness shared by every process through Redis
// (docs/deployment.md): at most `smtp.max_sessions_per_host` sessions open
// to one MX host across the deployment, and at most
// `smtp.connections_per_second_per_host` new connections per second.
//
// The scheduler actor never waits for Redis, so admission is asynchronous:
//
//   try_open(host) ─ a grant is ready ───────────────────────> granted
//       │ none: one script in flight per host ─────────────> pending
//       v
//   Redis (one Lua script, Redis' clock): drop expired slots; a free slot
//       and a connection token? take both : say when to ask again
//       │ reply on the cluster-io thread
//       v
//   granted: kept ready for the host │ full / rate: ask again later
//       └──────── wake(host) ─> host_wake ─> the scheduler asks again
//
// A slot is a member of a sorted set `<prefix>mx:<host>` scored by its
// lease's end; `close` removes it (ZREM), a timer renews the slots of the
// sessions still open every third of the lease, and a process that dies
// leaves slots that expire with their lease (`lease`, 15 s). A grant no
// route took within a second is given back.
//
// Redis down (not connected, or no reply): the process's own
// core::smtp::host_limits decides, as a single process would; counted in
// /metrics (`decided_by="local_fallback"`), logged by the Redis client
// (`redis_down`); Redis decides again from the next request once it is
// back. Sessions opened meanwhile are not in Redis (the deployment may
// briefly open more than the limit); their `close` goes to the local
// limits first.

#include "core/smtp/host_limits.hpp"
#include "net/redis_client.hpp"

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

namespace mailassay::actors {

/// Figures for /metrics.
struct shared_host_slots_counters {
  std::atomic<std::int64_t> redis{0};    ///< Sessions Redis granted.
  std::atomic<std::int64_t> fallback{0}; ///< Sessions the local limits
                                         ///< granted while Redis was down.
  std::atomic<std::int64_t> refused{0};  ///< Redis answers "not now".
  std::atomic<std::int64_t> returned{0}; ///< Grants no route took.
};

/// The shared store.
class shared_host_slots final : public core::smtp::host_slots {
public:
  /// Slots live under `prefix` on `redis`, whose loop (`ioctx`) runs the
  /// renewal timer; `config` applies to every host; a slot's lease lasts
  /// `lease` and is renewed while its session is open.
  shared_host_slots(asio::io_context& ioctx,
                    std::shared_ptr<net::redis_client> redis,
                    std::string prefix, core::smtp::host_limits_config config,
                    std::chrono::milliseconds lease = std::chrono::seconds(15));

  /// Gives back every slot still held (sessions normally closed before).
  ~shared_host_slots() override;

  shared_host_slots(const shared_host_slots&) = delete;
  shared_host_slots& operator=(const shared_host_slots&) = delete;

  core::smtp::admission try_open(std::string_view host,
                                 core::limits::millis now) override;

  void close(std::string_view host, core::limits::millis now) override;

  void reconfigure(const core::smtp::host_limits_config& config,
                   core::limits::millis now) override;

  void set_wake(std::function<void(std::string host)> wake) override;

  /// The counters (shared: /metrics may read them after the scheduler
  /// that owns the store is gone).
  std::shared_ptr<const shared_host_slots_counters> counters() const;

  /// The state the Redis callbacks share with the store.
  struct state;

private:
  std::shared_ptr<state> state_;
};

} // namespace mailassay::actors
