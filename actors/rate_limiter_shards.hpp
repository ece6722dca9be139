#pragma once

// The rate limiter's bucket tables, split into shards by the hash of a
// scope's id, each behind its own mutex (actors/rate_limiter.cpp decides
// with them; docs/rate-limits.md says why shards). Internal to the limiter.

#include "actors/rate_limiter.hpp"
#include "core/limits/bucket_table.hpp"
#include "core/limits/multi_window.hpp"

#include <caf/all.hpp>

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::actors {

/// A scope's id with its hash, taken once per check: the hash picks the
/// shard and then finds the bucket in the shard's table (a lookup by
/// `hashed_id` hashes nothing). Views the id, which must outlive it.
struct hashed_id {
  hashed_id() = default;
  explicit hashed_id(std::string_view id)
      : text(id), hash(std::hash<std::string_view>{}(id)) {}
  /// The key a table stores when it inserts the bucket.
  explicit operator std::string() const { return std::string{text}; }

  std::string_view text;
  std::size_t hash = 0;
};

/// Hashes an id given as a string, a view or a `hashed_id` alike
/// (transparent lookup). Not noexcept, so the tables keep each node's hash
/// and never hash a stored key again.
struct text_hash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const {
    return std::hash<std::string_view>{}(s);
  }
  std::size_t operator()(const hashed_id& id) const { return id.hash; }
};

/// Compares ids given as strings, views or `hashed_id`s alike.
struct text_equal {
  using is_transparent = void;
  bool operator()(std::string_view a, std::string_view b) const {
    return a == b;
  }
  bool operator()(const hashed_id& a, std::string_view b) const {
    return a.text == b;
  }
  bool operator()(std::string_view a, const hashed_id& b) const {
    return a == b.text;
  }
};

/// A table of one-window buckets, looked up by `hashed_id`.
using text_table =
    core::limits::bucket_table<std::string, core::limits::token_bucket,
                               text_hash, text_equal>;

/// The ids of the scopes a `limit_check` names, each hashed once (the
/// account endpoints' "<scope>:<id>" built once). Views `c`'s ids: lives
/// while `c` does, and is neither copied nor moved (it views its own
/// strings too).
struct scope_ids {
  explicit scope_ids(const limit_check& c);
  scope_ids(const scope_ids&) = delete;
  scope_ids& operator=(const scope_ids&) = delete;

  /// Calls `f(id)` for every id held.
  template <class F>
  void for_each(F f) const {
    if (ip)
      f(*ip);
    if (key)
      f(*key);
    if (device)
      f(*device);
    if (widget_ip)
      f(*widget_ip);
    for (std::size_t i = 0; i < auth_size; ++i)
      f(auth[i]);
  }

  std::optional<hashed_id> ip, key, device, widget_ip;
  /// The account endpoints' scopes present (login ip, login account,
  /// sign-up ip, in that order): their ids and the ids' texts.
  /// (Only the account endpoints' checks have them: the texts are made
  /// then, no empty strings for the others.)
  std::optional<std::array<std::string, 3>> auth_text;
  hashed_id auth[3];
  std::size_t auth_size = 0;
};

/// One bucket table per scope.
struct limiter_tables {
  explicit limiter_tables(const rate_limiter_options& o)
      : ip(o.max_ip_buckets), keys(o.max_key_buckets),
        device(o.max_device_buckets), widget_ip(o.max_widget_ip_buckets),
        auth(o.max_auth_buckets) {}
  text_table ip;
  core::limits::bucket_table<std::string, core::limits::multi_window, text_hash,
                             text_equal>
      keys;
  text_table device;
  text_table widget_ip;
  // Login per IP and per account, sign-up per IP: ids carry the scope
  // ("login_ip:" + IP ...), so one table holds the three.
  text_table auth;
};

/// The figures of some tables the gauges sum.
struct table_figures {
  std::int64_t ip = 0, keys = 0, device = 0, widget_ip = 0, auth = 0;
  std::int64_t evictions = 0, active_evictions = 0, swept = 0;
};

/// The figures of `t` now.
table_figures figures_of(const limiter_tables& t);

/// The buckets inserted into and removed from `t` so far: its figures
/// change only with it.
inline std::uint64_t changes_of(const limiter_tables& t) {
  return t.ip.changes() + t.keys.changes() + t.device.changes() +
         t.widget_ip.changes() + t.auth.changes();
}

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
  // The figures last added to the gauges (`publish` adds the change), and
  // `changes_of(tables)` then.
  table_figures published;
  std::uint64_t published_changes = 0;

  // Records caller time `now` (checks arrive in about that order).
  // The actor clock is asked only then (`sys.clock()` is a call).
  void saw(core::limits::millis now, caf::actor_system& sys) {
    if (now < last_now)
      return;
    last_now = now;
    if (now - seen_now >= std::chrono::seconds(1)) {
      seen_now = now;
      last_seen = sys.clock().now();
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
  // Most checks find their buckets: then nothing changed, and nothing is
  // summed.
  void publish(limiter_gauges& g) {
    auto changes = changes_of(tables);
    if (changes == published_changes)
      return;
    published_changes = changes;
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

  // Both expect the shards of `c` locked (`locked_shards`); `ids` are
  // `c`'s.
  limit_decision check(const limit_check& c, const scope_ids& ids,
                       std::int64_t ip_limit);
  limit_decision peek(const limit_check& c, const scope_ids& ids,
                      std::int64_t ip_limit) const;

  std::size_t index_of(const hashed_id& id) const {
    return id.hash & (shards.size() - 1);
  }
  limiter_tables& tables_of(const hashed_id& id) const {
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
