#pragma once

#include "core/limits/token_bucket.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <unordered_map>
#include <utility>

namespace mailassay::core::limits {

/// A map from keys (client IPs, device ids, API key ids) to buckets holding
/// at most `max_size` entries, so a flood of distinct keys cannot grow
/// memory without bound.
///
/// Eviction order: buckets that are full (idle) first, since forgetting a
/// full bucket changes nothing (a new one starts full); then the least
/// recently used. `sweep(now)` drops every full bucket (the owner calls it
/// periodically); an insert into a full table drops the first full bucket
/// among the `scan_depth` least recently used, else the least recently
/// used one, so an insert costs O(1) even under a flood.
///
/// Memory per entry: one hash node holding the key, the bucket and the
/// LRU links, plus its share of the hash-bucket array; `approx_entry_bytes`
/// estimates it without the key's own heap buffer. Measured (glibc, x86-64,
/// `std::string` keys, `token_bucket`): ~142 bytes for IPv4 texts, ~190
/// bytes for long IPv6 texts, so 100000 entries take 14-19 MB.
///
/// `Bucket` needs `bool is_full(millis now) const`. With a transparent
/// `Hash` and `Equal` (is_transparent), lookups take any type they accept,
/// e.g. a `std::string_view` for `std::string` keys: no key copy per lookup.
template <class Key, class Bucket = token_bucket, class Hash = std::hash<Key>,
          class Equal = std::equal_to<Key>>
class bucket_table {
public:
  /// Entries examined for a full bucket when an insert must evict.
  static constexpr std::size_t scan_depth = 16;

  /// An empty table holding at most `max_size` (at least 1) buckets.
  explicit bucket_table(std::size_t max_size)
      : max_size_(std::max<std::size_t>(max_size, 1)) {}

  bucket_table(const bucket_table&) = delete;
  bucket_table& operator=(const bucket_table&) = delete;

  /// Returns the bucket of `key` (marking it most recently used) or null.
  template <class K>
  Bucket* find(const K& key) {
    auto it = map_.find(key);
    if (it == map_.end())
      return nullptr;
    touch(&it->second);
    return &it->second.bucket;
  }

  /// Returns the bucket of `key`, creating it with `make()` (evicting one
  /// entry first when the table is full); marks it most recently used.
  template <class K, class Make>
  Bucket& find_or_insert(const K& key, millis now, Make&& make) {
    if (auto* found = find(key))
      return *found;
    if (map_.size() >= max_size_)
      evict_one(now);
    auto [it, _] =
        map_.emplace(Key(key), slot{make(), nullptr, nullptr, nullptr});
    it->second.key = &it->first;
    push_front(&it->second);
    ++changes_;
    return it->second.bucket;
  }

  /// Returns the bucket of `key` or null, without marking it used (a
  /// read for headers must not keep an idle bucket alive).
  template <class K>
  const Bucket* peek(const K& key) const {
    auto it = map_.find(key);
    return it == map_.end() ? nullptr : &it->second.bucket;
  }

  /// Removes `key`; returns whether it was there.
  template <class K>
  bool erase(const K& key) {
    auto it = map_.find(key);
    if (it == map_.end())
      return false;
    unlink(&it->second);
    map_.erase(it);
    ++changes_;
    return true;
  }

  /// Removes every bucket that is full at `now`; returns how many.
  std::size_t sweep(millis now) {
    auto before = swept_;
    while (!sweep_some(now, max_size_ + 1)) {
    }
    return static_cast<std::size_t>(swept_ - before);
  }

  /// One step of a sweep that an owner can spread over several calls (so
  /// a lock is never held for a whole 100000-entry pass): continues the
  /// pass under way, or starts one from the least recently used end,
  /// examines at most `budget` entries and drops the full ones. Returns
  /// true when the pass reached the most recently used end. Entries used
  /// or inserted between steps move to that end, still ahead of the pass,
  /// and are examined (and kept: they are not idle) when it gets there; an
  /// entry removed between steps is simply not visited.
  bool sweep_some(millis now, std::size_t budget) {
    if (!sweeping_) {
      sweeping_ = true;
      cursor_ = tail_;
    }
    for (std::size_t seen = 0; cursor_ && seen < budget; ++seen) {
      auto* s = cursor_;
      cursor_ = s->prev;
      if (s->bucket.is_full(now)) {
        remove(s);
        ++swept_;
      }
    }
    if (cursor_)
      return false;
    sweeping_ = false;
    return true;
  }

  /// Returns the number of buckets held.
  std::size_t size() const { return map_.size(); }

  /// Returns the most buckets held at once.
  std::size_t max_size() const { return max_size_; }

  /// Returns buckets dropped by inserts into a full table (full or not).
  std::uint64_t evictions() const { return evictions_; }

  /// Returns the part of `evictions()` that dropped a bucket that was not
  /// full: those clients got a fresh bucket (the bound is too small for
  /// the traffic).
  std::uint64_t active_evictions() const { return active_evictions_; }

  /// Returns buckets removed by `sweep`.
  std::uint64_t swept() const { return swept_; }

  /// Returns how many buckets were inserted or removed (by `erase`, an
  /// eviction or a sweep) so far: `size()` and the counters above change
  /// only with it, so an owner that publishes them can tell cheaply that
  /// nothing moved (most lookups find their bucket).
  std::uint64_t changes() const { return changes_; }

  /// Estimated bytes per entry, heap of the key itself excluded: the hash
  /// node (next pointer, key, bucket, links, cached hash), malloc's
  /// overhead, and one hash-bucket pointer.
  static constexpr std::size_t approx_entry_bytes =
      sizeof(void*) + sizeof(std::pair<const Key, Bucket>) + 4 * sizeof(void*) +
      16 + sizeof(void*);

  /// Calls `f(key, bucket)` for every entry, most recently used first.
  template <class F>
  void for_each(F&& f) {
    for (auto* s = head_; s; s = s->next)
      f(*s->key, s->bucket);
  }

private:
  struct slot {
    Bucket bucket;
    slot* prev;
    slot* next;
    const Key* key;
  };

  void evict_one(millis now) {
    auto* victim = tail_;
    std::size_t seen = 0;
    for (auto* s = tail_; s && seen < scan_depth; s = s->prev, ++seen) {
      if (s->bucket.is_full(now)) {
        victim = s;
        break;
      }
    }
    if (!victim)
      return;
    if (!victim->bucket.is_full(now))
      ++active_evictions_;
    ++evictions_;
    remove(victim);
  }

  void remove(slot* s) {
    unlink(s);
    // Erase by iterator: the key argument would live in the erased node.
    map_.erase(map_.find(*s->key));
    ++changes_;
  }

  void unlink(slot* s) {
    // A pass in progress continues from the entry after the one leaving.
    if (s == cursor_)
      cursor_ = s->prev;
    (s->prev ? s->prev->next : head_) = s->next;
    (s->next ? s->next->prev : tail_) = s->prev;
    s->prev = s->next = nullptr;
  }

  void push_front(slot* s) {
    s->prev = nullptr;
    s->next = head_;
    if (head_)
      head_->prev = s;
    head_ = s;
    if (!tail_)
      tail_ = s;
  }

  void touch(slot* s) {
    if (s == head_)
      return;
    unlink(s);
    push_front(s);
  }

  std::size_t max_size_;
  std::unordered_map<Key, slot, Hash, Equal> map_;
  slot* head_ = nullptr;   // most recently used
  slot* tail_ = nullptr;   // least recently used
  slot* cursor_ = nullptr; // next entry a sweep pass examines
  bool sweeping_ = false;
  std::uint64_t evictions_ = 0;
  std::uint64_t active_evictions_ = 0;
  std::uint64_t swept_ = 0;
  std::uint64_t changes_ = 0;
};

} // namespace mailassay::core::limits
