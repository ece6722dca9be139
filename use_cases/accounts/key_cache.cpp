#include "use_cases/accounts/key_cache.hpp"

#include <mutex>

namespace mailassay::use_cases::accounts {

key_cache::key_cache(std::size_t capacity, std::int64_t max_age)
    : capacity_(capacity), max_age_(max_age) {}

std::shared_ptr<const core::account::api_key>
key_cache::find(const std::string& key_hash, std::int64_t now) const {
  std::shared_lock guard{mtx_};
  auto i = entries_.find(key_hash);
  if (i == entries_.end() || now - i->second.loaded_at > max_age_)
    return nullptr;
  return i->second.key;
}

std::uint64_t key_cache::generation() const {
  std::shared_lock guard{mtx_};
  return generation_;
}

void key_cache::put(const core::account::api_key& key, std::int64_t now,
                    std::uint64_t since) {
  std::unique_lock guard{mtx_};
  if (since != generation_)
    return;
  if (entries_.size() >= capacity_ && !entries_.count(key.key_hash)) {
    // Full: drop stale entries first, else an arbitrary one. Keys are few
    // per organization, so this rarely runs.
    for (auto i = entries_.begin(); i != entries_.end();)
      i = now - i->second.loaded_at > max_age_ ? entries_.erase(i) : ++i;
    if (entries_.size() >= capacity_)
      entries_.erase(entries_.begin());
  }
  entries_.insert_or_assign(
      key.key_hash,
      entry{std::make_shared<const core::account::api_key>(key), now});
}

void key_cache::erase(const std::string& key_hash) {
  std::unique_lock guard{mtx_};
  ++generation_;
  entries_.erase(key_hash);
}

void key_cache::clear() {
  std::unique_lock guard{mtx_};
  ++generation_;
  entries_.clear();
}

std::shared_ptr<const core::account::organization>
key_cache::find_organization(const std::string& id) const {
  std::shared_lock guard{mtx_};
  auto i = organizations_.find(id);
  return i == organizations_.end() ? nullptr : i->second;
}

void key_cache::put_organization(const core::account::organization& org) {
  std::unique_lock guard{mtx_};
  if (organizations_.size() >= capacity_ && !organizations_.count(org.id))
    organizations_.erase(organizations_.begin());
  organizations_.insert_or_assign(
      org.id, std::make_shared<const core::account::organization>(org));
}

std::size_t key_cache::size() const {
  std::shared_lock guard{mtx_};
  return entries_.size();
}

} // namespace mailassay::use_cases::accounts
