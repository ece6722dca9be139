#pragma once

#include "core/account/records.hpp"

#include <cstdint>
#include <memory>
#include <optional>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace mailassay::actors {

/// API keys by secret hash, and their organizations, shared by every
/// actor that authenticates.
///
/// Reads never block on storage: a miss is resolved by a storage worker,
/// which then `put`s the row. Writers (revoke, update, delete) `erase` at
/// once, so a revoke is visible to the very next request of this process;
/// entries older than `max_age` are treated as misses, which bounds how late
/// another process's revoke is seen.
class key_cache {
public:
  /// Creates a cache holding at most `capacity` keys for `max_age` seconds.
  key_cache(std::size_t capacity, std::int64_t max_age);

  /// Returns the key with this hash if cached and fresh at `now`; the
  /// entry is shared, not copied (a `put` replaces it, never changes it).
  std::shared_ptr<const core::account::api_key>
  find(const std::string& key_hash, std::int64_t now) const;

  /// Stores (or refreshes) a key loaded at `now`.
  void put(const core::account::api_key& key, std::int64_t now);

  /// Forgets a key; the next request loads it from storage.
  void erase(const std::string& key_hash);

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
  mutable std::shared_mutex mtx_;
  std::unordered_map<std::string, entry> entries_;
  std::unordered_map<std::string,
                     std::shared_ptr<const core::account::organization>>
      organizations_;
};

} // namespace mailassay::actors
