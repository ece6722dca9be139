#pragma once

#include "core/limits/token_bucket.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace mailassay::core::smtp {

/// Where the SMTP scheduler keeps each domain's catch-all verdict. The
/// process-local `catch_all_cache` implements it; a store shared by several
/// processes (e.g. Redis) can too.
class catch_all_store {
public:
  virtual ~catch_all_store() = default;

  /// Returns the verdict for `domain` (lower-case) when fresh at `now`.
  virtual std::optional<bool> find(std::string_view domain,
                                   limits::millis now) const = 0;

  /// Stores `catch_all` for `domain` at `now`; a true does not replace a
  /// fresh false (false is definitive, see core/smtp/session.hpp).
  virtual void store(std::string_view domain, bool catch_all,
                     limits::millis now) = 0;
};

/// Remembers per domain whether it accepts any mailbox (catch-all), so the
/// random-address probe runs once per domain and TTL instead of once per
/// validation. Only definite answers are kept. Bounded: when full, expired
/// entries go first, then a tenth of the rest. Pure: time is passed
/// in.
class catch_all_cache final : public catch_all_store {
public:
  /// Keeps answers for `ttl`, at most `max_entries` domains (0: none).
  catch_all_cache(limits::millis ttl, std::size_t max_entries = 100000);

  /// Returns the cached answer for `domain` (lower-case) when fresh at
  /// `now`.
  std::optional<bool> find(std::string_view domain,
                           limits::millis now) const override;

  /// Stores `catch_all` for `domain` at `now`; a true does not replace a
  /// fresh false (false is definitive, see core/smtp/session.hpp).
  void store(std::string_view domain, bool catch_all,
             limits::millis now) override;

  /// Returns the number of domains held (fresh or not).
  std::size_t size() const { return entries_.size(); }

private:
  struct entry {
    bool catch_all = false;
    limits::millis expires{0};
  };

  limits::millis ttl_;
  std::size_t max_entries_;
  std::unordered_map<std::string, entry> entries_;
};

} // namespace mailassay::core::smtp
