#pragma once

#include "core/account/records.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace mailassay::use_cases::accounts {

/// API keys by secret hash, and their organizations, shared by every
/// actor that authenticates.
///
/// Reads never block on storage: a miss is resolved by a storage worker,
/// which then `put`s the row. Writers (revoke, update, delete) `erase` at
/// once, so a revoke is visible to the very next request of this process;
/// other processes erase it when the database's notification arrives
/// (actors/cluster_events.hpp), and `clear` everything when they may have
/// missed one. Entries older than `max_age` are treated as misses: the
/// backstop that bounds how late a change is seen if a notification is lost.
///
/// A row read before an invalidation must not be put back after it (the
/// reader would resurrect a revoked key until `max_age`): readers take the
/// `generation` before reading storage and `put` with it; a put is dropped
/// when any invalidation happened since.
class key_cache {
public:
  /// Creates a cache holding at most `capacity` keys for `max_age` seconds.
  key_cache(std::size_t capacity, std::int64_t max_age);

  /// Returns the key with this hash if cached and fresh at `now`; the
  /// entry is shared, not copied (a `put` replaces it, never changes it).
  std::shared_ptr<const core::account::api_key>
  find(const std::string& key_hash, std::int64_t now) const;

  /// Returns the invalidation count, to pass to `put`.
  std::uint64_t generation() const;

  /// Stores (or refreshes) a key loaded at `now` from a read that started
  /// at `since` (a `generation()`); does nothing when an `erase` or `clear`
  /// came in between.
  void put(const core::account::api_key& key, std::int64_t now,
           std::uint64_t since);

  /// Forgets a key; the next request loads it from storage.
  void erase(const std::string& key_hash);

  /// Forgets every key (organizations never change and stay).
  void clear();

  /// Returns the number of cached keys.
  std::size_t size() const;

  /// Returns the organization `id` if cached. An organization never changes
  /// once created (and is never deleted), so an entry never goes stale.
  std::shared_ptr<const core::account::organization>
  find_organization(const std::string& id) const;

  /// Remembers an organization read from storage (at most `capacity` of
  /// them, like keys).
  void put_organization(const core::account::organization& org);

private:
  struct entry {
    std::shared_ptr<const core::account::api_key> key;
    std::int64_t loaded_at;
  };
  std::size_t capacity_;
  std::int64_t max_age_;
  std::uint64_t generation_ = 0; // guarded by mtx_
  mutable std::shared_mutex mtx_;
  std::unordered_map<std::string, entry> entries_;
  std::unordered_map<std::string,
                     std::shared_ptr<const core::account::organization>>
      organizations_;
};

} // namespace mailassay::use_cases::accounts
