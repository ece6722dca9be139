// The rate-limit buckets shared through Redis: the Lua script against
// core::limits at the times Redis reports, and the limiter of two
// "processes" sharing one Redis (MAILASSAY_TEST_REDIS_URL).
#include "actors/shared_limiter.hpp"
#include "core/limits/multi_window.hpp"
#include "net/io_thread.hpp"
#include "net/redis_url.hpp"
#include "security/random.hpp"
#include "tests/support/redis_process.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <hiredis/hiredis.h>
#include <random>
#include <thread>

using namespace mailassay;
using namespace mailassay::actors;
using namespace std::chrono_literals;
using core::limits::millis;
using core::limits::token_bucket;
using core::limits::window_spec;

namespace {

// A blocking connection for the script-level tests.
struct sync_redis {
  redisContext* c = nullptr;
  explicit sync_redis(const std::string& url) {
    auto e = net::parse_redis_url(url);
    REQUIRE(e.has_value());
    c = redisConnect(e->host.c_str(), e->port);
    REQUIRE(c != nullptr);
    REQUIRE(c->err == 0);
    if (e->db != 0)
      freeReplyObject(redisCommand(c, "SELECT %d", e->db));
  }
  ~sync_redis() { redisFree(c); }

  struct result {
    bool ok = false;
    std::int64_t now = 0;
    std::vector<std::int64_t> levels;
  };

  // Runs the script over `keys` with (limit, period, mode) per key.
  result run(const std::vector<std::string>& keys,
             const std::vector<std::tuple<std::int64_t, std::int64_t, char>>&
                 windows) {
    std::vector<std::string> argv{"EVAL", shared_bucket_script(),
                                  std::to_string(keys.size())};
    for (auto& k : keys)
      argv.push_back(k);
    for (auto& [limit, period, mode] : windows) {
      argv.push_back(std::to_string(limit));
      argv.push_back(std::to_string(period));
      argv.push_back(std::string(1, mode));
    }
    std::vector<const char*> ptrs;
    std::vector<std::size_t> lens;
    for (auto& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(
        c, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
    REQUIRE(r != nullptr);
    REQUIRE_MESSAGE(r->type == REDIS_REPLY_ARRAY,
                    (r->type == REDIS_REPLY_ERROR ? r->str : "not an array"));
    result out;
    out.ok = r->element[0]->integer == 1;
    out.now = r->element[1]->integer;
    for (std::size_t i = 2; i < r->elements; ++i)
      out.levels.push_back(r->element[i]->integer);
    freeReplyObject(r);
    return out;
  }
};

std::string fresh_prefix() {
  return "mailassay-test:" + security::random_base62(10) + ":";
}

// A "process": its own local limiter beside the shared one.
struct node {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  rate_limiter local;
  shared_limiter shared;

  node(std::shared_ptr<net::redis_client> redis, const std::string& prefix,
       rate_limiter_options opts = {})
      : local(sys, opts), shared(std::move(redis), prefix, local) {}

  ~node() { local.stop(); }

  // Runs a check and waits for its decision.
  limit_decision check(limit_check c) {
    std::promise<limit_decision> p;
    auto f = p.get_future();
    shared.check(c, [&p](const limit_decision& d) { p.set_value(d); });
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    return f.get();
  }
};

std::shared_ptr<net::redis_client> connect(net::io_thread& loop,
                                           const std::string& url) {
  net::redis_options o;
  o.endpoint = *net::parse_redis_url(url);
  o.timeout = 2000ms; // a loaded machine is not a broken Redis
  auto c = net::redis_client::start(loop.context(), o);
  auto until = std::chrono::steady_clock::now() + 10s;
  while (!c->up() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(5ms);
  REQUIRE(c->up());
  return c;
}

millis steady_now() {
  return std::chrono::duration_cast<millis>(
      std::chrono::steady_clock::now().time_since_epoch());
}

limit_check key_check(const std::string& id, std::int64_t per_minute,
                      std::optional<std::int64_t> per_hour = std::nullopt) {
  limit_check c;
  c.key = key_scope{id, {per_minute, per_hour, std::nullopt}};
  c.now = steady_now();
  return c;
}

} // namespace

TEST_SUITE("actors.shared_limiter") {
  TEST_CASE("the script decides like core::limits at the times Redis "
            "reports") {
    if (!testing::require_shared_redis())
      return;
    sync_redis redis{testing::shared_redis_url()};
    auto prefix = fresh_prefix();
    std::vector<std::string> keys{prefix + "a", prefix + "b"};
    // Short periods so that refills happen within the test: 3 per 200 ms
    // and 5 per 700 ms, taken together.
    window_spec a{3, 200ms}, b{5, 700ms};
    std::optional<token_bucket> ba, bb;
    std::mt19937 rng{7};
    int allowed = 0, refused = 0;
    auto until = std::chrono::steady_clock::now() + 1500ms;
    while (std::chrono::steady_clock::now() < until) {
      auto r = redis.run(keys, {{3, 200, 't'}, {5, 700, 't'}});
      millis now{r.now};
      if (!ba) {
        ba.emplace(a, now);
        bb.emplace(b, now);
      }
      // Levels before the take, as the core sees them at that time.
      CHECK(r.levels[0] == ba->level(now));
      CHECK(r.levels[1] == bb->level(now));
      token_bucket* both[] = {&*ba, &*bb};
      auto d = core::limits::take_all(both, now);
      CHECK(d.result.allowed == r.ok);
      (r.ok ? allowed : refused)++;
      // Irregular gaps, so refills land at every phase.
      std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 40));
    }
    CHECK(allowed > 5);
    CHECK(refused > 5);
  }

  TEST_CASE("a changed limit keeps what was consumed, a read takes nothing") {
    if (!testing::require_shared_redis())
      return;
    sync_redis redis{testing::shared_redis_url()};
    auto key = fresh_prefix() + "k";
    constexpr std::int64_t hour = 3600000;
    for (int i = 0; i < 3; ++i)
      CHECK(redis.run({key}, {{5, hour, 't'}}).ok);
    // 3 of 5 used, raised to 10: 7 left (read only: nothing taken).
    auto raised = redis.run({key}, {{10, hour, 'r'}});
    CHECK(raised.levels[0] / hour == 7);
    CHECK(redis.run({key}, {{10, hour, 'r'}}).levels[0] / hour == 7);
    // Lowered to 2 below what was used: none left, refused.
    auto lowered = redis.run({key}, {{2, hour, 't'}});
    CHECK_FALSE(lowered.ok);
    CHECK(lowered.levels[0] / hour == 0);
    // A read never refuses the request it comes with.
    auto other = fresh_prefix() + "o";
    auto mixed = redis.run({other, key}, {{5, hour, 't'}, {2, hour, 'r'}});
    CHECK(mixed.ok);
  }

  TEST_CASE("all or nothing: a refused request takes from no bucket") {
    if (!testing::require_shared_redis())
      return;
    sync_redis redis{testing::shared_redis_url()};
    auto p = fresh_prefix();
    constexpr std::int64_t hour = 3600000;
    CHECK(redis.run({p + "tight"}, {{1, hour, 't'}}).ok);
    auto refused =
        redis.run({p + "wide", p + "tight"}, {{10, hour, 't'}, {1, hour, 't'}});
    CHECK_FALSE(refused.ok);
    // The wide bucket was not touched: still absent, i.e. full.
    CHECK(redis.run({p + "wide"}, {{10, hour, 'r'}}).levels[0] == 10 * hour);
  }

  TEST_CASE("two processes share one window; remaining counts down across "
            "them") {
    if (!testing::require_shared_redis())
      return;
    net::io_thread loop{"test-redis"};
    auto redis = connect(loop, testing::shared_redis_url());
    auto prefix = fresh_prefix();
    node a{redis, prefix}, b{redis, prefix};
    std::vector<limit_decision> ds;
    for (int i = 0; i < 8; ++i) {
      // 5 per minute and 100 per hour: the minute window is reported.
      auto c = key_check("key_1", 5, 100);
      ds.push_back(i % 2 ? b.check(c) : a.check(c));
    }
    for (int i = 0; i < 5; ++i) {
      CAPTURE(i);
      CHECK(ds[i].allowed);
      CHECK(ds[i].reported == limit_scope::key);
      CHECK(ds[i].limit == 5);
      CHECK(ds[i].remaining == 4 - i);
      CHECK(ds[i].period == core::limits::minute);
    }
    for (int i = 5; i < 8; ++i) {
      CHECK_FALSE(ds[i].allowed);
      CHECK(ds[i].refused_by == limit_scope::key);
      CHECK(ds[i].retry_after_seconds >= 1);
      CHECK(ds[i].retry_after_seconds <= 12);
    }
    // Each process's own buckets follow the shared ones, for the headers
    // of requests that take nothing.
    auto seen = b.local.peek(key_check("key_1", 5, 100));
    CHECK(seen.remaining == 0);
    CHECK(a.shared.counters().shared.load() == 4);
    CHECK(a.shared.counters().fallbacks.load() == 0);
    redis->stop();
  }

  TEST_CASE("the login throttle's read of an account comes with its IP "
            "token") {
    if (!testing::require_shared_redis())
      return;
    net::io_thread loop{"test-redis"};
    auto redis = connect(loop, testing::shared_redis_url());
    node a{redis, fresh_prefix()};
    limit_check ip;
    ip.login_ip = window_scope{"192.0.2.1", 30, core::limits::minute};
    ip.now = steady_now();
    limit_check account;
    account.login_account =
        window_scope{"someone@example.com", 2, core::limits::hour};
    account.now = ip.now;
    // Two failures taken from the account's window.
    a.check(account);
    a.check(account);
    std::promise<std::pair<limit_decision, limit_decision>> p;
    a.shared.check_and_peek(
        ip, account, [&](const limit_decision& d, const limit_decision& r) {
          p.set_value({d, r});
        });
    auto [taken, read] = p.get_future().get();
    CHECK(taken.allowed);
    CHECK(taken.reported == limit_scope::login_ip);
    CHECK(taken.remaining == 29);
    CHECK(read.reported == limit_scope::login_account);
    CHECK(read.remaining == 0);
    // The email is not in any key name.
    auto w = windows_of(account, a.local.ip_per_minute());
    REQUIRE(w.size() == 1);
    CHECK(a.shared.key_of(w[0]).find("someone") == std::string::npos);
    redis->stop();
  }

  TEST_CASE("without Redis the local limiter decides, counted as a "
            "fall-back") {
    net::io_thread loop{"test-redis"};
    net::redis_options o;
    // A port nothing listens on.
    o.endpoint = *net::parse_redis_url("redis://127.0.0.1:1/0");
    auto redis = net::redis_client::start(loop.context(), o);
    node a{redis, fresh_prefix()};
    for (int i = 0; i < 7; ++i) {
      auto d = a.check(key_check("key_2", 5));
      CHECK(d.allowed == (i < 5));
    }
    CHECK(a.shared.counters().fallbacks.load() == 7);
    CHECK(a.shared.counters().shared.load() == 0);
    redis->stop();
  }

  TEST_CASE("a check of no limited window never asks Redis") {
    net::io_thread loop{"test-redis"};
    net::redis_options o;
    o.endpoint = *net::parse_redis_url("redis://127.0.0.1:1/0");
    auto redis = net::redis_client::start(loop.context(), o);
    node a{redis, fresh_prefix()};
    auto d = a.check(key_check("key_3", 0));
    CHECK(d.allowed);
    CHECK(d.reported == limit_scope::none);
    CHECK(a.shared.counters().fallbacks.load() == 0);
    redis->stop();
  }
}
