#pragma once

// Uploads whose body is being read, per organization and per client address
// (issue #28, docs/security.md): a slot is held from the admission of an
// upload's head until its body was read or its connection ended, so that
// concurrent uploads cannot hold unbounded memory. One per server, shared by
// its event loops.

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace mailassay::http {

class upload_slots : public std::enable_shared_from_this<upload_slots> {
public:
  /// At most `per_key` uploads at once for each key.
  explicit upload_slots(std::int64_t per_key) : per_key_(per_key) {}

  /// A slot of `key` (an organization id, a client address), released when
  /// the last copy of the returned pointer goes; nullptr when `key` holds
  /// all of its slots already.
  std::shared_ptr<void> take(const std::string& key) {
    {
      std::lock_guard g{mtx_};
      auto& n = held_[key];
      if (n >= per_key_)
        return nullptr;
      ++n;
    }
    return std::make_shared<slot>(shared_from_this(), key);
  }

  /// Slots held now, all keys together (/metrics).
  std::int64_t total() const {
    std::lock_guard g{mtx_};
    std::int64_t n = 0;
    for (const auto& [key, held] : held_)
      n += held;
    return n;
  }

  /// Slots held now for `key` (tests, metrics).
  std::int64_t held(const std::string& key) const {
    std::lock_guard g{mtx_};
    auto it = held_.find(key);
    return it == held_.end() ? 0 : it->second;
  }

private:
  // One slot taken; gives it back when it goes.
  struct slot {
    slot(std::shared_ptr<upload_slots> o, std::string k)
        : owner(std::move(o)), key(std::move(k)) {}
    ~slot() {
      std::lock_guard g{owner->mtx_};
      if (auto it = owner->held_.find(key);
          it != owner->held_.end() && --it->second <= 0)
        owner->held_.erase(it);
    }
    std::shared_ptr<upload_slots> owner;
    std::string key;
  };

  const std::int64_t per_key_;
  mutable std::mutex mtx_;
  std::map<std::string, std::int64_t> held_;
};

} // namespace mailassay::http
