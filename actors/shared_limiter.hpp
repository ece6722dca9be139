#pragma once

// Rate-limit buckets shared by every process through Redis
// (docs/rate-limits.md, "Several processes").
//
// One check is one Lua script run on the Redis server: it reads the time
// from Redis (TIME), refills every bucket the request names, and takes one
// token from each only if all of them have one — the all-or-nothing rule
// of the local limiter, atomic across processes because Redis runs one
// script at a time. It answers with every bucket's level, from which the
// decision and its RateLimit numbers are computed here with the very code
// of the local limiter (core/limits), so both paths report alike. The
// levels are also copied into the local limiter (`rate_limiter::adopt`):
// headers of unmetered responses read them, and a fall-back starts there.
//
// Nothing waits for Redis on the caller's thread: `check` sends the script
// and returns; the continuation runs on the Redis loop's thread when the
// reply arrives. When Redis is down (or does not answer within
// `redis.timeout_ms`), the local limiter decides at once instead — each
// process then enforces the limits on its own — and the fall-back is
// counted; the client reconnects in the background.

#include "actors/rate_limiter.hpp"
#include "net/redis_client.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::actors {

/// Figures for /metrics.
struct shared_limiter_counters {
  std::atomic<std::int64_t> shared{0};    ///< Checks decided by Redis.
  std::atomic<std::int64_t> fallbacks{0}; ///< Decided locally: Redis down.
};

/// The limiter shared through Redis, with the local one as fall-back.
class shared_limiter {
public:
  /// Runs with the decision, on the Redis loop's thread (or on the caller's
  /// when the local limiter decided).
  using decided_fn = std::function<void(const limit_decision&)>;
  /// Runs with the decision of the taken scopes and the reading of the
  /// read-only ones.
  using decided_pair_fn =
      std::function<void(const limit_decision&, const limit_decision&)>;

  /// Keys live under `prefix` ("mailassay:" + "rl:..."); `local` decides
  /// when Redis cannot.
  shared_limiter(std::shared_ptr<net::redis_client> redis, std::string prefix,
                 rate_limiter& local);

  /// Admits `c` like `rate_limiter::check`, across every process.
  void check(const limit_check& c, decided_fn done);

  /// Admits `take` and, in the same script, reads the windows of `read`
  /// without taking from them (`rate_limiter::peek`): the login throttle
  /// takes an IP token and reads the account's failures at once.
  void check_and_peek(const limit_check& take, const limit_check& read,
                      decided_pair_fn done);

  /// The limiter's counters.
  const shared_limiter_counters& counters() const { return *counters_; }

  /// The Redis key of a window (tests look at it).
  std::string key_of(const limit_window& w) const;

private:
  std::shared_ptr<net::redis_client> redis_;
  std::string prefix_;
  rate_limiter& local_;
  std::shared_ptr<shared_limiter_counters> counters_;
  std::shared_ptr<const net::redis_script> script_;
};

/// The Lua text of the shared buckets' script (tests run it directly).
const std::string& shared_bucket_script();

} // namespace mailassay::actors
