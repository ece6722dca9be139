#pragma once

// The rate limiter's bucket tables, split into shards by the hash of a
// scope's id, each behind its own mutex (actors/rate_limiter.cpp decides
// with them; docs/rate-limits.md says why shards). Internal to the limiter.

#include "actors/rate_limiter.hpp"
#include "core/limits/bucket_table.hpp"
#include "core/limits/multi_window.hpp"

#include <caf/all.hpp>

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::actors {

/// Hashes a key id given as a string or a view alike (transparent lookup).
struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
};

/// One bucket table per scope.
struct limiter_tables {
  explicit limiter_tables(const rate_limiter_options& o)
      : ip(o.max_ip_buckets), keys(o.max_key_buckets),
        device(o.max_device_buckets), widget_ip(o.max_widget_ip_buckets),
        auth(o.max_auth_buckets) {}
  core::limits::bucket_table<std::string> ip;
  // Looked up by the key id's view: no copy per check.
  core::limits::bucket_table<std::string, core::limits::multi_window, text_hash,
                             std::equal_to<>>
      keys;
  core::limits::bucket_table<std::string> device;
  core::limits::bucket_table<std::string> widget_ip;
  // Login per IP and per account, sign-up per IP: ids carry the scope
  // ("login_ip:" + IP ...), so one table holds the three.
  core::limits::bucket_table<std::string> auth;
};

/// The figures of some tables the gauges sum.
struct table_figures {
  std::int64_t ip = 0, keys = 0, device = 0, widget_ip = 0, auth = 0;
  std::int64_t evictions = 0, active_evictions = 0, swept = 0;
};

/// The figures of `t` now.
table_figures figures_of(const limiter_tables& t);

/// The buckets whose ids hash to one shard -- every window of a scope
/// (an IP's, a key's minute, hour and day) lives in the shard of its id --
/// behind the shard's own mutex, with the time its sweep uses.
struct limiter_shard {
  explicit limiter_shard(const rate_limiter_options& o) : tables(o) {}

  std::mutex mtx;
  // Guarded by mtx:
  limiter_tables tables;
  // Caller time is the only truth for buckets; the actor clock only
  // measures how long ago the last check came, so the tick can sweep at
  // "last caller time + elapsed" when traffic has stopped.
  core::limits::millis last_now{0};
  // The caller time `seen_now` was taken at actor-clock time `last_seen`;
  // renewed at most once a second, so a check reads no clock of its own.
  core::limits::millis seen_now{0};
  caf::actor_clock::time_point last_seen{};
  // The figures last added to the gauges (`publish` adds the change).
  table_figures published;

  // Records caller time `now` (checks arrive in about that order).
  void saw(core::limits::millis now, const caf::actor_clock& clock) {
    if (now < last_now)
      return;
    last_now = now;
    if (now - seen_now >= std::chrono::seconds(1)) {
      seen_now = now;
      last_seen = clock.now();
    }
  }

  // Caller time now, extrapolated from the last renewal; never before the
  // last check (an estimate up to a second early only sweeps less).
  core::limits::millis estimated_now(caf::actor_clock::time_point now) const {
    auto elapsed =
        std::chrono::duration_cast<core::limits::millis>(now - last_seen);
    return std::max(last_now,
                    seen_now + std::max(elapsed, core::limits::millis{0}));
  }

  // Adds what changed in this shard's tables since the last call to `g`:
  // the gauges are the shards' sums without one shard reading another.
  void publish(limiter_gauges& g) {
    auto now = figures_of(tables);
    auto add = [](std::atomic<std::int64_t>& to, std::int64_t from,
                  std::int64_t was) {
      if (from != was)
        to.fetch_add(from - was, std::memory_order_relaxed);
    };
    add(g.ip_buckets, now.ip, published.ip);
    add(g.key_buckets, now.keys, published.keys);
    add(g.device_buckets, now.device, published.device);
    add(g.widget_ip_buckets, now.widget_ip, published.widget_ip);
    add(g.auth_buckets, now.auth, published.auth);
    add(g.evictions, now.evictions, published.evictions);
    add(g.active_evictions, now.active_evictions, published.active_evictions);
    add(g.swept, now.swept, published.swept);
    published = now;
  }
};

/// What the facade and the sweeping actor share: the shards, the counters
/// and the default per-IP limit.
struct limiter_shared {
  /// Makes the shards `o` asks for, each with its share of the bounds.
  explicit limiter_shared(const rate_limiter_options& o);

  // Both expect the shards of `c` locked (`locked_shards`).
  limit_decision check(const limit_check& c, std::int64_t ip_limit);
  limit_decision peek(const limit_check& c, std::int64_t ip_limit) const;

  std::size_t index_of(std::string_view id) const {
    return std::hash<std::string_view>{}(id) & (shards.size() - 1);
  }
  limiter_tables& tables_of(std::string_view id) const {
    return shards[index_of(id)]->tables;
  }

  const rate_limiter_options opts;
  // A power of two, so a shard is the hash's low bits.
  std::vector<std::unique_ptr<limiter_shard>> shards;
  // The default per-IP limit (`opts.ip_per_minute` until a reload).
  std::atomic<std::int64_t> ip_per_minute;
  limiter_gauges gauges;
};

} // namespace mailassay::actors
