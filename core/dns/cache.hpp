#pragma once

#include "core/dns/records.hpp"
#include "core/dns/route.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mailassay::core::dns {

/// A point in time; callers pass it in (the core reads no clock).
using time_point = std::chrono::steady_clock::time_point;

/// How long outcomes stay cached.
struct cache_config {
  /// Most completed entries kept; the least recently used goes first.
  /// 0 keeps none (single flight still applies).
  std::size_t capacity = 100000;
  /// Lower bound on any positive or negative TTL, in seconds.
  std::uint32_t min_ttl = 0;
  /// Upper bound on any positive or negative TTL, in seconds.
  std::uint32_t max_ttl = 86400;
  /// TTL of a negative outcome (no_mx, invalid_domain) whose answer carried
  /// no SOA, in seconds (RFC 2308 §5).
  std::uint32_t negative_ttl = 300;
  /// TTL of a dns_error outcome, in seconds (RFC 2308 §7.1 allows up to 5
  /// minutes); 0 retries at the next request.
  std::uint32_t error_ttl = 5;
};

/// Returns the number of seconds `route` stays cached under `config`.
std::uint32_t cache_ttl(const cache_config& config, const mail_route& route);

/// What `cache::find` saw.
enum class cache_status {
  hit,       ///< A fresh outcome is cached.
  miss,      ///< Nothing fresh and nobody resolving: call `begin`.
  in_flight, ///< Another caller is resolving: call `join`.
};

/// The answer of `cache::find`.
struct cache_lookup {
  /// What was found.
  cache_status status = cache_status::miss;
  /// The cached outcome, on a hit: shared, not copied, with the caller.
  std::shared_ptr<const mail_route> route;
};

/// Counters for metrics.
struct cache_stats {
  std::uint64_t hits = 0;        ///< `find` calls answered from the cache.
  std::uint64_t misses = 0;      ///< `find` calls that found nothing.
  std::uint64_t joins = 0;       ///< Waiters added to a resolution in flight.
  std::uint64_t expirations = 0; ///< Entries dropped because their TTL ran out.
  std::uint64_t evictions = 0;   ///< Entries dropped to respect the capacity.
};

/// A TTL cache of mail routes keyed by domain, with single-flight
/// bookkeeping: the first caller to miss `begin`s a resolution, later
/// callers `join` it, and `complete` hands back every waiter to notify.
/// Not thread-safe: its owner serializes calls. `Waiter` is whatever the
/// owner needs to answer a caller (a callback, a response promise).
template <class Waiter>
class cache {
public:
  /// Creates an empty cache.
  explicit cache(cache_config config = {}) : config_(config) {}

  /// Looks `name` up at `now`; drops the entry when it has expired.
  cache_lookup find(std::string_view name, time_point now) {
    auto key = normalize_name(name);
    if (auto i = entries_.find(key); i != entries_.end()) {
      if (i->second->expires > now) {
        lru_.splice(lru_.begin(), lru_, i->second);
        ++stats_.hits;
        return {cache_status::hit, i->second->route};
      }
      lru_.erase(i->second);
      entries_.erase(i);
      ++stats_.expirations;
    }
    if (pending_.count(key) != 0)
      return {cache_status::in_flight, nullptr};
    ++stats_.misses;
    return {cache_status::miss, nullptr};
  }

  /// Marks `name` as being resolved with `first` as its first waiter;
  /// joins instead when a resolution is already in flight. Returns whether
  /// the caller must start the resolution.
  bool begin(std::string_view name, Waiter first) {
    auto [i, added] = pending_.try_emplace(normalize_name(name));
    if (!added)
      ++stats_.joins;
    i->second.push_back(std::move(first));
    return added;
  }

  /// Adds `waiter` to the resolution of `name` in flight (begins one when
  /// there is none; returns whether the caller must then start it).
  bool join(std::string_view name, Waiter waiter) {
    return begin(name, std::move(waiter));
  }

  /// Stores `route` for `name` from `now` on and returns the waiters of the
  /// resolution, to be notified by the caller (outside any lock).
  std::vector<Waiter> complete(std::string_view name, const mail_route& route,
                               time_point now) {
    auto key = normalize_name(name);
    std::vector<Waiter> waiters;
    if (auto i = pending_.find(key); i != pending_.end()) {
      waiters = std::move(i->second);
      pending_.erase(i);
    }
    store(std::move(key), route, now);
    return waiters;
  }

  /// Ends the resolution of `name` without caching anything and returns its
  /// waiters.
  std::vector<Waiter> abandon(std::string_view name) {
    std::vector<Waiter> waiters;
    if (auto i = pending_.find(normalize_name(name)); i != pending_.end()) {
      waiters = std::move(i->second);
      pending_.erase(i);
    }
    return waiters;
  }

  /// Drops the cached outcome of `name` (not a resolution in flight).
  void erase(std::string_view name) {
    if (auto i = entries_.find(normalize_name(name)); i != entries_.end()) {
      lru_.erase(i->second);
      entries_.erase(i);
    }
  }

  /// Returns the number of cached outcomes (fresh or not yet swept).
  std::size_t size() const noexcept { return entries_.size(); }

  /// Returns the number of names being resolved.
  std::size_t in_flight() const noexcept { return pending_.size(); }

  /// Returns the counters.
  const cache_stats& stats() const noexcept { return stats_; }

  /// Returns the configuration.
  const cache_config& config() const noexcept { return config_; }

private:
  struct entry {
    std::string name;
    std::shared_ptr<const mail_route> route;
    time_point expires;
  };

  void store(std::string key, const mail_route& route, time_point now) {
    if (config_.capacity == 0)
      return;
    auto ttl = std::chrono::seconds{cache_ttl(config_, route)};
    if (auto i = entries_.find(key); i != entries_.end()) {
      i->second->route = std::make_shared<const mail_route>(route);
      i->second->expires = now + ttl;
      lru_.splice(lru_.begin(), lru_, i->second);
      return;
    }
    while (entries_.size() >= config_.capacity) {
      entries_.erase(lru_.back().name);
      lru_.pop_back();
      ++stats_.evictions;
    }
    lru_.push_front(
        entry{key, std::make_shared<const mail_route>(route), now + ttl});
    entries_.emplace(std::move(key), lru_.begin());
  }

  cache_config config_;
  std::list<entry> lru_;
  std::unordered_map<std::string, typename std::list<entry>::iterator> entries_;
  std::unordered_map<std::string, std::vector<Waiter>> pending_;
  cache_stats stats_;
};

} // namespace mailassay::core::dns
