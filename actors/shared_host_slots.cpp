#include "actors/shared_host_slots.hpp"

#include "security/random.hpp"

#include <asio/post.hpp>
#include <asio/steady_timer.hpp>

#include <algorithm>
#include <deque>
#include <hiredis/hiredis.h>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace mailassay::actors {

namespace {

using core::limits::millis;
using steady = std::chrono::steady_clock;

// KEYS[1]: the host's slots (sorted set: member -> lease end, Redis ms).
// KEYS[2]: the host's connection bucket (hash: tokens, at).
// ARGV: member, max sessions (0: any), connections per second (0: any),
// lease ms. Returns {1, 0} granted (slot and token taken), {0, -1} every
// slot taken, {0, ms} no connection token for ms. Time is Redis'.
const char* const acquire_text = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local max, rate, lease = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if max > 0 and redis.call('ZCARD', KEYS[1]) >= max then
  return {0, -1}
end
if rate > 0 then
  local b = redis.call('HMGET', KEYS[2], 'tokens', 'at')
  local tokens, at = tonumber(b[1]), tonumber(b[2])
  if not tokens or not at then
    tokens, at = rate, now
  end
  tokens = math.min(rate, tokens + math.max(0, now - at) * rate / 1000)
  if tokens < 1 then
    return {0, math.max(1, math.ceil((1 - tokens) * 1000 / rate))}
  end
  redis.call('HSET', KEYS[2], 'tokens', tostring(tokens - 1), 'at', tostring(now))
  redis.call('PEXPIRE', KEYS[2], 2000)
end
redis.call('ZADD', KEYS[1], now + lease, ARGV[1])
redis.call('PEXPIRE', KEYS[1], lease)
return {1, 0}
)lua";

// KEYS[1]: the host's slots. ARGV: lease ms, then the members held (their
// sessions are open): their leases end `lease` from now.
const char* const renew_text = R"lua(
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
for i = 2, #ARGV do
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[1]), ARGV[i])
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return #ARGV - 1
)lua";

// How often a full host is asked again (other processes' closes are not
// heard).
constexpr millis full_poll{100};
// A grant no route took by then is given back.
constexpr auto unclaimed = std::chrono::seconds(1);
// The timer's period: unclaimed grants back, leases renewed when due (a
// sixth of the lease, so a renewal is never more than half a lease late).
std::chrono::milliseconds tick_of(std::chrono::milliseconds lease) {
  return std::clamp(lease / 6, std::chrono::milliseconds(20),
                    std::chrono::milliseconds(500));
}

} // namespace

struct shared_host_slots::state
    : std::enable_shared_from_this<shared_host_slots::state> {
  state(asio::io_context& io, core::smtp::host_limits_config cfg)
      : io(io), config(cfg), local(cfg) {}

  struct grant {
    std::string member;
    steady::time_point at;
  };
  struct host_state {
    std::deque<grant> ready;        // granted by Redis, no session yet
    std::vector<std::string> open;  // Redis slots of open sessions
    std::size_t local_open = 0;     // sessions the fall-back admitted
    bool asking = false;            // a script in flight
    std::optional<millis> retry_in; // the last refusal's wait
    bool full = false;              // ... because every slot was taken
    bool unanswered = false;        // the last ask got no reply
    bool idle() const {
      return ready.empty() && open.empty() && local_open == 0 && !asking &&
             !retry_in;
    }
  };

  asio::io_context& io;
  std::shared_ptr<net::redis_client> redis;
  std::string prefix;
  std::string node = security::random_base62(12);
  std::chrono::milliseconds lease{15000};
  std::shared_ptr<shared_host_slots_counters> counters =
      std::make_shared<shared_host_slots_counters>();
  std::shared_ptr<const net::redis_script> acquire =
      std::make_shared<net::redis_script>(acquire_text);
  std::shared_ptr<const net::redis_script> renew =
      std::make_shared<net::redis_script>(renew_text);

  std::mutex mtx; // guards everything below
  core::smtp::host_limits_config config;
  core::smtp::host_limits local;
  std::function<void(std::string)> wake;
  std::unordered_map<std::string, host_state> hosts;
  std::uint64_t next_member = 0;
  steady::time_point renewed = steady::now();

  std::string slots_key(const std::string& host) const {
    return prefix + "mx:" + host;
  }
  std::string rate_key(const std::string& host) const {
    return prefix + "mxr:" + host;
  }

  void release(const std::string& host, const std::string& member) {
    redis->command({"ZREM", slots_key(host), member}, [](const redisReply*) {});
  }

  // The script's answer for `member` of `host` (on the loop's thread, or
  // at once on the caller's when Redis is down).
  void answered(const std::string& host, std::string member,
                const redisReply* r) {
    std::function<void(std::string)> tell;
    {
      std::lock_guard guard{mtx};
      auto& h = hosts[host];
      h.asking = false;
      if (!r || r->type != REDIS_REPLY_ARRAY || r->elements < 2 ||
          r->element[0]->type != REDIS_REPLY_INTEGER ||
          r->element[1]->type != REDIS_REPLY_INTEGER) {
        h.unanswered = true;
      } else if (r->element[0]->integer == 1) {
        h.ready.push_back({std::move(member), steady::now()});
      } else {
        counters->refused.fetch_add(1, std::memory_order_relaxed);
        auto wait = r->element[1]->integer;
        h.full = wait < 0;
        h.retry_in = h.full ? full_poll : millis{wait};
      }
      tell = wake;
    }
    if (tell)
      tell(host);
  }

  // Every tick: grants nobody took go back; every third of the lease the
  // slots of open sessions are renewed.
  void on_tick() {
    std::vector<std::pair<std::string, std::string>> returned;
    std::vector<std::pair<std::string, std::vector<std::string>>> held;
    auto now = steady::now();
    {
      std::lock_guard guard{mtx};
      for (auto& [host, h] : hosts)
        while (!h.ready.empty() && now - h.ready.front().at >= unclaimed) {
          returned.emplace_back(host, std::move(h.ready.front().member));
          h.ready.pop_front();
        }
      if (now - renewed >= lease / 3) {
        renewed = now;
        for (auto& [host, h] : hosts) {
          std::vector<std::string> members = h.open;
          for (auto& g : h.ready)
            members.push_back(g.member);
          if (!members.empty())
            held.emplace_back(host, std::move(members));
        }
      }
      std::erase_if(hosts, [](const auto& kv) { return kv.second.idle(); });
    }
    counters->returned.fetch_add(static_cast<std::int64_t>(returned.size()),
                                 std::memory_order_relaxed);
    for (auto& [host, member] : returned)
      release(host, member);
    for (auto& [host, members] : held) {
      // A lease renewed here after it ran out (Redis away meanwhile)
      // counts the session again: it is still open.
      redis->eval(
          renew, {slots_key(host)},
          [&] {
            std::vector<std::string> args{std::to_string(lease.count())};
            args.insert(args.end(), members.begin(), members.end());
            return args;
          }(),
          [](const redisReply*) {});
    }
  }
};

namespace {

// The timer runs on the Redis loop while the store lives; it holds the
// store weakly, so it stops by itself (at its next tick) once the store
// is gone, and the timer itself dies on the loop's thread.
void schedule_tick(std::shared_ptr<asio::steady_timer> timer,
                   std::weak_ptr<shared_host_slots::state> weak,
                   std::chrono::milliseconds every) {
  timer->expires_after(every);
  timer->async_wait([timer, weak, every](const asio::error_code& ec) {
    if (ec)
      return;
    auto st = weak.lock();
    if (!st)
      return;
    st->on_tick();
    schedule_tick(timer, weak, every);
  });
}

} // namespace

shared_host_slots::shared_host_slots(asio::io_context& ioctx,
                                     std::shared_ptr<net::redis_client> redis,
                                     std::string prefix,
                                     core::smtp::host_limits_config config,
                                     std::chrono::milliseconds lease)
    : state_(std::make_shared<state>(ioctx, config)) {
  state_->redis = std::move(redis);
  state_->prefix = std::move(prefix);
  state_->lease = lease;
  auto timer = std::make_shared<asio::steady_timer>(ioctx);
  asio::post(ioctx,
             [timer, weak = std::weak_ptr<state>(state_),
              every = tick_of(lease)] { schedule_tick(timer, weak, every); });
}

shared_host_slots::~shared_host_slots() {
  std::vector<std::pair<std::string, std::string>> held;
  {
    std::lock_guard guard{state_->mtx};
    state_->wake = nullptr;
    for (auto& [host, h] : state_->hosts) {
      for (auto& m : h.open)
        held.emplace_back(host, m);
      for (auto& g : h.ready)
        held.emplace_back(host, g.member);
    }
    state_->hosts.clear();
  }
  for (auto& [host, member] : held)
    state_->release(host, member);
}

core::smtp::admission shared_host_slots::try_open(std::string_view host_view,
                                                  millis now) {
  core::smtp::admission a;
  std::string host{host_view};
  std::string member;
  // The budget's own limits: a provider's override, else the per-host
  // values (issue #30).
  core::smtp::budget_limits limits;
  {
    auto& st = *state_;
    std::lock_guard guard{st.mtx};
    limits = st.config.limits_of(host);
    if (limits.max_sessions == 0 && limits.connections_per_second == 0) {
      a.granted = true; // no limits: nothing to share
      return a;
    }
    auto& h = st.hosts[host];
    if (!h.ready.empty()) {
      h.open.push_back(std::move(h.ready.front().member));
      h.ready.pop_front();
      st.counters->redis.fetch_add(1, std::memory_order_relaxed);
      a.granted = true;
      return a;
    }
    if (h.asking) {
      a.pending = true;
      return a;
    }
    if (h.retry_in) {
      a.retry_at = now + *h.retry_in;
      a.full = h.full;
      h.retry_in.reset();
      return a;
    }
    if (!st.redis->up() || h.unanswered) {
      // Redis is away: this process decides alone (and asks Redis again
      // next time).
      h.unanswered = false;
      a = st.local.try_open(host, now);
      if (a.granted) {
        ++h.local_open;
        st.counters->fallback.fetch_add(1, std::memory_order_relaxed);
      }
      return a;
    }
    h.asking = true;
    member = st.node + ":" + std::to_string(++st.next_member);
    a.pending = true;
  }
  auto& st = *state_;
  st.redis->eval(
      st.acquire, {st.slots_key(host), st.rate_key(host)},
      {member, std::to_string(limits.max_sessions),
       std::to_string(limits.connections_per_second),
       std::to_string(st.lease.count())},
      [weak = std::weak_ptr<state>(state_), redis = st.redis, host,
       key = st.slots_key(host), member](const redisReply* r) {
        if (auto s = weak.lock())
          return s->answered(host, member, r);
        // The store is gone: a slot granted now is nobody's.
        if (r && r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
            r->element[0]->type == REDIS_REPLY_INTEGER &&
            r->element[0]->integer == 1)
          redis->command({"ZREM", key, member}, [](const redisReply*) {});
      });
  return a;
}

void shared_host_slots::close(std::string_view host_view, millis now) {
  std::string host{host_view};
  std::string member;
  {
    auto& st = *state_;
    std::lock_guard guard{st.mtx};
    auto it = st.hosts.find(host);
    if (it == st.hosts.end())
      return;
    auto& h = it->second;
    // Sessions of the fall-back first: the deployment errs on fewer.
    if (h.local_open > 0) {
      --h.local_open;
      st.local.close(host, now);
    } else if (!h.open.empty()) {
      member = std::move(h.open.back());
      h.open.pop_back();
    }
    if (h.idle())
      st.hosts.erase(it);
  }
  if (!member.empty())
    state_->release(host, member);
}

void shared_host_slots::reconfigure(const core::smtp::host_limits_config& c,
                                    millis now) {
  std::lock_guard guard{state_->mtx};
  state_->config = c;
  state_->local.reconfigure(c, now);
}

void shared_host_slots::set_wake(std::function<void(std::string)> wake) {
  std::lock_guard guard{state_->mtx};
  state_->wake = std::move(wake);
}

std::shared_ptr<const shared_host_slots_counters>
shared_host_slots::counters() const {
  return state_->counters;
}

} // namespace mailassay::actors
