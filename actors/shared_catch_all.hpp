#pragma once

// Catch-all verdicts shared by every process through Redis
// (docs/deployment.md), so a catch-all domain is probed once across the
// deployment instead of once per process.
//
// The SMTP scheduler asks its store synchronously (`find` at plan time), and
// actors never wait for I/O, so each process keeps a local mirror that it
// reads at once: a verdict learnt here is written to Redis (`<prefix>ca:
// <domain>`, expiring with smtp.catch_all_ttl_seconds) and published on
// `<prefix>catch-all` in the same script; every process's subscriber
// (net::redis_subscriber) copies published verdicts into its
// mirror. A false (not a catch-all) is definitive and replaces a true; a
// true never replaces a stored false (core/smtp/catch_all_cache.hpp).
//
// What this does not cover: two processes planning the same domain within
// the moment a verdict takes to travel both probe it; a process that
// starts (or whose subscriber reconnects) hears only verdicts published
// from then on. Redis down: the mirror goes on as a local cache.

#include "core/smtp/catch_all_cache.hpp"
#include "net/redis_client.hpp"

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

namespace mailassay::actors {

/// Figures for /metrics.
struct shared_catch_all_counters {
  std::atomic<std::int64_t> published{0}; ///< Verdicts sent to Redis.
  std::atomic<std::int64_t> heard{0};     ///< Verdicts heard from Redis.
};

/// The shared store: the local mirror plus Redis.
class shared_catch_all final : public core::smtp::catch_all_store {
public:
  /// The state the subscriber's callback shares with the store.
  struct mirror;

  /// Verdicts live under `prefix` for `ttl`; `redis` sends them (null:
  /// local only). At most `max_entries` domains in the mirror.
  shared_catch_all(std::shared_ptr<net::redis_client> redis, std::string prefix,
                   core::limits::millis ttl, std::size_t max_entries);

  std::optional<bool> find(std::string_view domain,
                           core::limits::millis now) const override;

  void store(std::string_view domain, bool catch_all,
             core::limits::millis now) override;

  /// The channel the subscriber must listen to.
  std::string channel() const;

  /// The subscriber's callback: applies a published verdict ("1:domain" or
  /// "0:domain"; anything else is ignored). Thread-safe; stays valid after
  /// the store is gone.
  std::function<void(std::string_view)> on_message() const;

  /// The counters (shared: /metrics may read them after the scheduler
  /// that owns the store is gone).
  std::shared_ptr<const shared_catch_all_counters> counters() const;

private:
  std::shared_ptr<mirror> mirror_;
  std::shared_ptr<net::redis_client> redis_;
  std::string prefix_;
  core::limits::millis ttl_;
  std::shared_ptr<const net::redis_script> script_;
};

} // namespace mailassay::actors
