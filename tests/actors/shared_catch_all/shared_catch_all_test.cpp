// Catch-all verdicts shared through a real redis-server: two "processes",
// each with its store and subscriber.
#include "actors/shared_catch_all.hpp"
#include "net/io_thread.hpp"
#include "net/redis_subscriber.hpp"
#include "security/random.hpp"
#include "tests/support/redis_process.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

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

// One process's side: a command connection, the store, its subscriber.
struct node {
  std::shared_ptr<net::redis_client> redis;
  std::shared_ptr<net::redis_subscriber> sub;
  std::unique_ptr<actors::shared_catch_all> store;

  node(net::io_thread& loop, const std::string& url,
       const std::string& prefix) {
    net::redis_options o;
    o.endpoint = *net::parse_redis_url(url);
    o.timeout = 2000ms; // a loaded machine is not a broken Redis
    redis = net::redis_client::start(loop.context(), o);
    store = std::make_unique<actors::shared_catch_all>(redis, prefix, 60000ms,
                                                       1000);
    sub = net::redis_subscriber::start(loop.context(), o.endpoint,
                                       store->channel(), store->on_message());
    REQUIRE(eventually([&] { return redis->up() && sub->up(); }));
  }
  ~node() {
    sub->stop();
    redis->stop();
  }
};

} // namespace

TEST_SUITE("actors.shared_catch_all") {
  TEST_CASE("a verdict learnt by one process is found by the other") {
    redis_process server;
    net::io_thread loop{"catch-all-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix};
    node b{loop, server.url(), prefix};
    CHECK_FALSE(b.store->find("catchall.test", steady_now()).has_value());
    a.store->store("catchall.test", true, steady_now());
    CHECK(a.store->find("catchall.test", steady_now()) == true);
    REQUIRE(eventually(
        [&] { return b.store->find("catchall.test", steady_now()) == true; }));
    CHECK(b.store->counters()->heard.load() >= 1);
    CHECK(a.store->counters()->published.load() == 1);
    // Kept in Redis with the TTL.
    CHECK(redis_command(server.port(), "GET " + prefix + "ca:catchall.test") ==
          "$1\r\n1\r\n");
    // An integer reply: ":<ms>\r\n".
    auto ttl = std::stol(
        redis_command(server.port(), "PTTL " + prefix + "ca:catchall.test")
            .substr(1));
    CHECK(ttl > 0);
    CHECK(ttl <= 60000);
  }

  TEST_CASE("false is definitive: a later true from another process does "
            "not replace it") {
    redis_process server;
    net::io_thread loop{"catch-all-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix};
    node b{loop, server.url(), prefix};
    a.store->store("strict.test", false, steady_now());
    REQUIRE(eventually(
        [&] { return b.store->find("strict.test", steady_now()) == false; }));
    b.store->store("strict.test", true, steady_now());
    CHECK(b.store->find("strict.test", steady_now()) == false);
    CHECK(redis_command(server.port(), "GET " + prefix + "ca:strict.test") ==
          "$1\r\n0\r\n");
    // Nothing published for the refused true: the first process keeps false.
    std::this_thread::sleep_for(50ms); // nothing to wait for: a non-event
    CHECK(a.store->find("strict.test", steady_now()) == false);
  }

  TEST_CASE("without Redis the store is a local cache") {
    redis_process server;
    net::io_thread loop{"catch-all-test"};
    auto prefix = "t" + security::random_base62(8) + ":";
    node a{loop, server.url(), prefix};
    server.stop();
    REQUIRE(eventually([&] { return !a.redis->up(); }));
    a.store->store("alone.test", true, steady_now());
    CHECK(a.store->find("alone.test", steady_now()) == true);
    CHECK(a.store->counters()->published.load() == 0);
  }
}
