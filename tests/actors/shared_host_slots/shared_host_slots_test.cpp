// Per-MX-host politeness shared through a real redis-server: several
// "processes" (stores with their own connection) on one Redis.
#include "actors/shared_host_slots.hpp"
#include "net/io_thread.hpp"
#include "security/random.hpp"
#include "tests/support/redis_process.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

using namespace mailassay;
using namespace std::chrono_literals;
using mailassay::testing::eventually;
using mailassay::testing::redis_command;
using mailassay::testing::redis_process;
using mailassay::testing::steady_now;

namespace {

// One process's side: its Redis connection and its store, which wakes it
// as the scheduler would be.
struct node {
  std::shared_ptr<net::redis_client> redis;
  std::unique_ptr<actors::shared_host_slots> slots;
  std::atomic<int> wakes{0};

  node(net::io_thread& loop, const std::string& url, const std::string& prefix,
       core::smtp::host_limits_config config,
       std::chrono::milliseconds lease = 15s) {
    net::redis_options o;
    o.endpoint = *net::parse_redis_url(url);
    o.timeout = 2000ms; // a loaded machine is not a broken Redis
    o.max_backoff = 200ms;
    redis = net::redis_client::start(loop.context(), o);
    slots = std::make_unique<actors::shared_host_slots>(loop.context(), redis,
                                                        prefix, config, lease);
    slots->set_wake([this](std::string) { ++wakes; });
    REQUIRE(eventually([&] { return redis->up(); }));
  }
  ~node() {
    slots.reset();
    redis->stop();
  }

  // Asks as the scheduler does: while the answer is pending, waits for the
  // wake-up and asks again. Returns the final answer.
  core::smtp::admission open(const std::string& host) {
    for (;;) {
      int before = wakes.load();
      auto a = slots->try_open(host, steady_now());
      if (!a.pending)
        return a;
      REQUIRE(eventually([&] { return wakes.load() > before; }));
    }
  }
};

// The number of slots taken (the reply is RESP: ":<n>\r\n"; -1 without
// one).
long long zcard(const redis_process& server, const std::string& key) {
  auto reply = redis_command(server.port(), "ZCARD " + key);
  if (reply.size() < 2 || reply[0] != ':')
    return -1;
  return std::stoll(reply.substr(1));
}

} // namespace

TEST_SUITE("actors.shared_host_slots") {
  TEST_CASE("two processes share a host's sessions; a closed session frees "
            "its slot at once") {
    redis_process server;
    net::io_thread loop{"slots-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix, {2, 0}};
    node b{loop, server.url(), prefix, {2, 0}};
    CHECK(a.open("mx.one.test").granted);
    CHECK(b.open("mx.one.test").granted);
    CHECK(zcard(server, prefix + "mx:mx.one.test") == 2);
    // Full across both: refused, with a time to ask again (the other
    // process's close is not heard) and `full` (a lingering session of
    // this process may give its slot up).
    auto refused = a.open("mx.one.test");
    CHECK_FALSE(refused.granted);
    CHECK(refused.full);
    REQUIRE(refused.retry_at.has_value());
    CHECK(*refused.retry_at > steady_now() - 1000ms);
    // Another host has its own slots.
    CHECK(b.open("mx.two.test").granted);
    b.slots->close("mx.one.test", steady_now());
    REQUIRE(eventually(
        [&] { return zcard(server, prefix + "mx:mx.one.test") == 1; }));
    CHECK(a.open("mx.one.test").granted);
    CHECK(a.slots->counters()->redis.load() == 2);
    CHECK(a.slots->counters()->refused.load() == 1);
    CHECK(a.slots->counters()->fallback.load() == 0);
    a.slots->close("mx.one.test", steady_now());
    a.slots->close("mx.one.test", steady_now());
    b.slots->close("mx.two.test", steady_now());
    REQUIRE(eventually([&] {
      return zcard(server, prefix + "mx:mx.one.test") == 0 &&
             zcard(server, prefix + "mx:mx.two.test") == 0;
    }));
  }

  TEST_CASE("the connection rate per host is shared too") {
    redis_process server;
    net::io_thread loop{"slots-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix, {0, 2}};
    node b{loop, server.url(), prefix, {0, 2}};
    CHECK(a.open("mx.rate.test").granted);
    CHECK(b.open("mx.rate.test").granted);
    auto later = a.open("mx.rate.test");
    CHECK_FALSE(later.granted);
    CHECK_FALSE(later.full);
    REQUIRE(later.retry_at.has_value());
    // One token refills in 500 ms.
    CHECK(*later.retry_at <= steady_now() + 600ms);
    CHECK(eventually([&] { return b.open("mx.rate.test").granted; }, 5s));
  }

  TEST_CASE("a process that dies leaves slots that expire with their lease") {
    redis_process server;
    net::io_thread loop{"slots-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node survivor{loop, server.url(), prefix, {1, 0}};
    {
      node dying{loop, server.url(), prefix, {1, 0}, 600ms};
      CHECK(dying.open("mx.lease.test").granted);
      // Dies without a word: its connection goes first, so neither the
      // release nor a renewal reaches Redis.
      dying.redis->stop();
    }
    CHECK_FALSE(survivor.open("mx.lease.test").granted);
    CHECK(eventually([&] { return survivor.open("mx.lease.test").granted; },
                     10s));
  }

  TEST_CASE("a session open longer than its lease keeps its slot (renewed)") {
    redis_process server;
    net::io_thread loop{"slots-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix, {1, 0}, 600ms};
    node b{loop, server.url(), prefix, {1, 0}, 600ms};
    CHECK(a.open("mx.long.test").granted);
    auto until = std::chrono::steady_clock::now() + 2s;
    while (std::chrono::steady_clock::now() < until) {
      CHECK_FALSE(b.open("mx.long.test").granted);
      std::this_thread::sleep_for(100ms);
    }
    a.slots->close("mx.long.test", steady_now());
    CHECK(eventually([&] { return b.open("mx.long.test").granted; }));
  }

  TEST_CASE("while Redis is away the process's own limits decide, and Redis "
            "decides again once it is back") {
    redis_process server;
    net::io_thread loop{"slots-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix, {2, 0}};
    server.stop();
    REQUIRE(eventually([&] { return !a.redis->up(); }));
    CHECK(a.open("mx.away.test").granted);
    CHECK(a.open("mx.away.test").granted);
    auto full = a.open("mx.away.test");
    CHECK_FALSE(full.granted);
    CHECK(full.full);
    CHECK(a.slots->counters()->fallback.load() == 2);
    // Closes go to the local limits first.
    a.slots->close("mx.away.test", steady_now());
    CHECK(a.open("mx.away.test").granted);
    CHECK(a.slots->counters()->fallback.load() == 3);
    server.start();
    REQUIRE(eventually([&] { return a.redis->up(); }));
    CHECK(a.open("mx.back.test").granted);
    CHECK(a.slots->counters()->redis.load() == 1);
    CHECK(zcard(server, prefix + "mx:mx.back.test") == 1);
  }
}
