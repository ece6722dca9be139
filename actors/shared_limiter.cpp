#include "actors/shared_limiter.hpp"

#include "security/digest.hpp"

#include <algorithm>
#include <hiredis/hiredis.h>
#include <vector>

namespace mailassay::actors {

namespace {

using core::limits::millis;
using core::limits::token_bucket;
using core::limits::window_spec;

// Redis' Lua keeps numbers as doubles: every value the script computes
// (level + elapsed * limit < 2 * capacity) stays an exact integer when the
// capacity limit * period is at most 2^52 units.
constexpr std::int64_t max_units = std::int64_t{1} << 52;

window_spec shared_spec(window_spec s) {
  auto period = std::max<std::int64_t>(1, s.period.count());
  s.limit = std::clamp<std::int64_t>(s.limit, 1, max_units / period);
  return s;
}

// KEYS: one hash per bucket {v: level, u: updated (ms), l: limit}.
// ARGV: per bucket, its limit, its period (ms) and 't' (take) or 'r' (read).
// Reply: {1 if every 't' bucket had a token (then one was taken from each),
// Redis time in ms, each bucket's level before the take}.
//
// The arithmetic is core/limits/token_bucket.cpp's: one token = period
// units, a bucket gains limit units per ms up to limit * period, starts
// full, counts time going backwards as none, and a changed limit keeps
// what was consumed. A bucket full again is simply absent (it expires).
const char* const script_text = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local n = #KEYS
local level, updated, ok = {}, {}, 1
for i = 1, n do
  local limit = tonumber(ARGV[3 * i - 2])
  local period = tonumber(ARGV[3 * i - 1])
  local cap = limit * period
  local h = redis.call('HMGET', KEYS[i], 'v', 'u', 'l')
  local v, u = cap, now
  if h[1] then
    v, u = tonumber(h[1]), tonumber(h[2])
    local old = tonumber(h[3])
    local elapsed = now - u
    if elapsed >= period then
      v = old * period
    elseif elapsed > 0 then
      v = math.min(old * period, v + elapsed * old)
    end
    if old ~= limit then
      v = math.max(0, math.min(cap, cap - (old * period - v)))
    end
    u = math.max(u, now)
  end
  level[i], updated[i] = v, u
  if ARGV[3 * i] == 't' and v < period then ok = 0 end
end
if ok == 1 then
  for i = 1, n do
    if ARGV[3 * i] == 't' then
      local limit = tonumber(ARGV[3 * i - 2])
      local period = tonumber(ARGV[3 * i - 1])
      local v = level[i] - period
      redis.call('HSET', KEYS[i], 'v', string.format('%d', v),
                 'u', string.format('%d', updated[i]),
                 'l', string.format('%d', limit))
      -- Gone once full again: an absent bucket is a full one.
      local full_in = math.ceil((limit * period - v) / limit)
      redis.call('PEXPIRE', KEYS[i], full_in + 1000)
    end
  end
end
local reply = {ok, now}
for i = 1, n do reply[i + 2] = level[i] end
return reply
)lua";

const char* table_name(limiter_table t) {
  switch (t) {
    case limiter_table::ip: return "ip";
    case limiter_table::key: return "key";
    case limiter_table::device: return "device";
    case limiter_table::widget_ip: return "wip";
    case limiter_table::auth: return "auth";
  }
  return "?";
}

// The decision over the `count` windows from `from` (in `windows` order),
// as the local limiter reports it.
limit_decision decision_of(const std::vector<limit_window>& windows,
                           std::size_t from, std::size_t count,
                           const core::limits::combined_decision& r) {
  if (count == 0 || r.index >= count)
    return decision_of(r, limit_scope::none, core::limits::millis{0});
  const auto& w = windows[from + r.index];
  return decision_of(r, w.scope, w.spec.period);
}

// What one script call asks: the windows to take from, then those to read.
struct shared_call {
  limit_check take;
  limit_check read;
  std::vector<limit_window> windows; // take's, then read's
  std::size_t taken = 0;             // how many of `windows` are take's
};

} // namespace

const std::string& shared_bucket_script() {
  static const std::string text{script_text};
  return text;
}

shared_limiter::shared_limiter(std::shared_ptr<net::redis_client> redis,
                               std::string prefix, rate_limiter& local)
    : redis_(std::move(redis)), prefix_(std::move(prefix)), local_(local),
      counters_(std::make_shared<shared_limiter_counters>()),
      script_(std::make_shared<net::redis_script>(shared_bucket_script())) {}

std::string shared_limiter::key_of(const limit_window& w) const {
  std::string key = prefix_;
  key += "rl:";
  key += table_name(w.table);
  key += ':';
  // An account's email is no business of Redis' (nor of whoever reads its
  // keys): it goes in hashed.
  if (w.scope == limit_scope::login_account)
    key += security::sha256_hex(w.id);
  else
    key += w.id;
  key += ':';
  key += std::to_string(w.spec.period.count());
  return key;
}

void shared_limiter::check(const limit_check& c, decided_fn done) {
  check_and_peek(c, limit_check{},
                 [done = std::move(done)](const limit_decision& d,
                                          const limit_decision&) { done(d); });
}

void shared_limiter::check_and_peek(const limit_check& take,
                                    const limit_check& read,
                                    decided_pair_fn done) {
  auto ip_per_minute = local_.ip_per_minute();
  auto call = std::make_shared<shared_call>();
  call->windows = windows_of(take, ip_per_minute);
  call->taken = call->windows.size();
  for (auto& w : windows_of(read, ip_per_minute))
    call->windows.push_back(std::move(w));
  for (auto& w : call->windows)
    w.spec = shared_spec(w.spec);
  auto local = [this](const limit_check& t, const limit_check& r,
                      const decided_pair_fn& then) {
    auto d = local_.check(t);
    auto p = local_.peek(r);
    then(d, p);
  };
  // Nothing limited: nothing to share.
  if (call->windows.empty())
    return local(take, read, done);
  if (!redis_->up()) {
    counters_->fallbacks.fetch_add(1, std::memory_order_relaxed);
    return local(take, read, done);
  }
  std::vector<std::string> keys;
  std::vector<std::string> args;
  keys.reserve(call->windows.size());
  args.reserve(3 * call->windows.size());
  for (std::size_t i = 0; i < call->windows.size(); ++i) {
    const auto& w = call->windows[i];
    keys.push_back(key_of(w));
    args.push_back(std::to_string(w.spec.limit));
    args.push_back(std::to_string(w.spec.period.count()));
    args.push_back(i < call->taken ? "t" : "r");
  }
  // The scopes' views (a key id) must not outlive this call: the copies in
  // `call` keep what the continuation needs.
  call->take = take;
  call->read = read;
  call->take.key.reset();
  call->read.key.reset();
  auto counters = counters_;
  redis_->eval(
      script_, std::move(keys), std::move(args),
      [this, call, counters, local, done = std::move(done),
       take_key =
           take.key ? std::optional<std::string>{std::string{take.key->key_id}}
                    : std::nullopt,
       take_limits = take.key
                         ? take.key->limits
                         : core::account::rate_limits{}](const redisReply* r) {
        // Restores the key scope (its id now owned by this closure).
        auto with_key = [&](limit_check c) {
          if (take_key)
            c.key = key_scope{*take_key, take_limits};
          return c;
        };
        auto n = call->windows.size();
        bool usable = r && r->type == REDIS_REPLY_ARRAY && r->elements == n + 2;
        for (std::size_t i = 0; usable && i < r->elements; ++i)
          usable = r->element[i]->type == REDIS_REPLY_INTEGER;
        if (!usable) {
          counters->fallbacks.fetch_add(1, std::memory_order_relaxed);
          return local(with_key(call->take), call->read, done);
        }
        counters->shared.fetch_add(1, std::memory_order_relaxed);
        bool allowed = r->element[0]->integer == 1;
        millis now{r->element[1]->integer};
        std::vector<token_bucket> buckets;
        buckets.reserve(n);
        for (std::size_t i = 0; i < n; ++i)
          buckets.push_back(token_bucket::at_level(
              call->windows[i].spec, r->element[i + 2]->integer, now));
        std::vector<token_bucket*> taken;
        std::vector<const token_bucket*> read_only;
        for (std::size_t i = 0; i < n; ++i)
          (i < call->taken ? taken.push_back(&buckets[i])
                           : read_only.push_back(&buckets[i]));
        auto d = decision_of(call->windows, 0, call->taken,
                             core::limits::take_all(taken, now));
        // The script decided; the numbers above come from the same state.
        d.allowed = allowed;
        if (allowed)
          d.refused_by = limit_scope::none;
        else if (d.refused_by == limit_scope::none)
          d.refused_by = d.reported;
        auto p = decision_of(call->windows, call->taken, n - call->taken,
                             core::limits::peek_all(read_only, now));
        // This process's buckets follow the shared ones.
        std::vector<std::int64_t> levels;
        levels.reserve(call->taken);
        for (std::size_t i = 0; i < call->taken; ++i)
          levels.push_back(buckets[i].level(now));
        auto mirror = with_key(call->take);
        local_.adopt(mirror, levels);
        done(d, p);
      });
}

} // namespace mailassay::actors
