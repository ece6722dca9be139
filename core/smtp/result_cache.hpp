#pragma once

// Definitive SMTP answers per address, for a short time: a burst of
// sign-ups retrying one address, or a batch after a real-time check, is
// answered without another RCPT. Only answers that say what the mailbox is
// (accepted, unknown user, full, disabled: `definitive`) are kept; a
// time-out, a deferral, a policy block or a failure never is. Pure: time is
// passed in.

#include "core/limits/token_bucket.hpp"
#include "core/smtp/outcome.hpp"

#include <cstddef>
#include <deque>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace mailassay::core::smtp {

/// Recent definitive answers per address. Bounded: when full, expired
/// entries go first, then a tenth of the rest. An address is forgotten
/// once its TTL passed, at the next `find`, `store` or `forget_expired`
/// (docs/privacy.md): the cache holds no address longer than it may use it.
class result_cache {
public:
  /// Keeps answers for `ttl` (0: keeps nothing), at most `max_entries`.
  result_cache(limits::millis ttl, std::size_t max_entries = 100000);

  /// Returns the answer for `address` (domain in lower case) when one is
  /// fresh at `now`; its `source` is `cache`.
  std::optional<address_outcome> find(std::string_view address,
                                      limits::millis now);

  /// Keeps `outcome` for `outcome.address` from `now` when it is
  /// definitive (and the cache is on); returns whether it did.
  bool store(const address_outcome& outcome, limits::millis now);

  /// Drops every answer whose TTL passed at `now`; amortised O(1) per
  /// stored answer (they expire in the order they were stored).
  void forget_expired(limits::millis now);

  /// Returns the number of addresses held (fresh or not).
  std::size_t size() const { return entries_.size(); }

  /// Returns whether the cache keeps anything.
  bool enabled() const { return ttl_.count() > 0 && max_entries_ > 0; }

private:
  struct entry {
    address_outcome outcome;
    limits::millis expires{0};
  };
  limits::millis ttl_;
  std::size_t max_entries_;
  std::unordered_map<std::string, entry> entries_;
  /// (expiry, address) in the order stored; one TTL for all, so the
  /// oldest expires first. A later store of an address leaves its earlier
  /// pair behind, recognised by its expiry.
  std::deque<std::pair<limits::millis, std::string>> expiries_;
};

} // namespace mailassay::core::smtp
