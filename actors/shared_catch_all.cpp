#include "actors/shared_catch_all.hpp"

#include <chrono>

namespace mailassay::actors {

namespace {

using core::limits::millis;

// KEYS[1]: the domain's key. ARGV: verdict (1/0), TTL ms, channel, domain.
// A true does not replace a stored false (false is definitive); what was
// stored is published, so the other processes' mirrors follow.
const char* const script_text = R"lua(
local set
if ARGV[1] == '1' then
  set = redis.call('SET', KEYS[1], '1', 'PX', ARGV[2], 'NX')
else
  set = redis.call('SET', KEYS[1], '0', 'PX', ARGV[2])
end
if set then
  redis.call('PUBLISH', ARGV[3], ARGV[1] .. ':' .. ARGV[4])
  return 1
end
return 0
)lua";

// The clock the scheduler passes (CAF's actor clock is the steady clock).
millis steady_now() {
  return std::chrono::duration_cast<millis>(
      std::chrono::steady_clock::now().time_since_epoch());
}

} // namespace

struct shared_catch_all::mirror {
  mirror(millis ttl, std::size_t max_entries) : cache(ttl, max_entries) {}
  mutable std::mutex mtx;
  core::smtp::catch_all_cache cache; // guarded by mtx
  std::shared_ptr<shared_catch_all_counters> counters =
      std::make_shared<shared_catch_all_counters>();
};

shared_catch_all::shared_catch_all(std::shared_ptr<net::redis_client> redis,
                                   std::string prefix, millis ttl,
                                   std::size_t max_entries)
    : mirror_(std::make_shared<mirror>(ttl, max_entries)),
      redis_(std::move(redis)), prefix_(std::move(prefix)), ttl_(ttl),
      script_(std::make_shared<net::redis_script>(script_text)) {}

std::optional<bool> shared_catch_all::find(std::string_view domain,
                                           millis now) const {
  std::lock_guard guard{mirror_->mtx};
  return mirror_->cache.find(domain, now);
}

void shared_catch_all::store(std::string_view domain, bool catch_all,
                             millis now) {
  {
    std::lock_guard guard{mirror_->mtx};
    mirror_->cache.store(domain, catch_all, now);
  }
  if (!redis_ || ttl_.count() <= 0)
    return;
  std::string d{domain};
  auto m = mirror_;
  redis_->eval(
      script_, {prefix_ + "ca:" + d},
      {catch_all ? "1" : "0", std::to_string(ttl_.count()), channel(), d},
      [m](const redisReply* r) {
        // Unanswered (Redis down): the verdict stays local.
        if (r)
          m->counters->published.fetch_add(1, std::memory_order_relaxed);
      });
}

std::string shared_catch_all::channel() const {
  return prefix_ + "catch-all";
}

std::function<void(std::string_view)> shared_catch_all::on_message() const {
  return [m = mirror_](std::string_view message) {
    if (message.size() < 3 || message[1] != ':' ||
        (message[0] != '0' && message[0] != '1'))
      return;
    std::lock_guard guard{m->mtx};
    m->cache.store(message.substr(2), message[0] == '1', steady_now());
    m->counters->heard.fetch_add(1, std::memory_order_relaxed);
  };
}

std::shared_ptr<const shared_catch_all_counters>
shared_catch_all::counters() const {
  return mirror_->counters;
}

} // namespace mailassay::actors
