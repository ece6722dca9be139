// The asynchronous Redis client against a real redis-server that is
// stopped, started and frozen under it.
#include "net/io_thread.hpp"
#include "net/redis_client.hpp"
#include "tests/support/redis_process.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <hiredis/hiredis.h>
#include <optional>
#include <thread>

using namespace mailassay;
using namespace std::chrono_literals;
using mailassay::testing::eventually;
using mailassay::testing::redis_process;

namespace {

// The reply of one command as text (nullopt: no reply), waiting for it.
std::optional<std::string> run(net::redis_client& c,
                               std::vector<std::string> argv) {
  std::promise<std::optional<std::string>> p;
  auto f = p.get_future();
  c.command(std::move(argv), [&p](const redisReply* r) {
    if (!r)
      return p.set_value(std::nullopt);
    if (r->type == REDIS_REPLY_INTEGER)
      return p.set_value(std::to_string(r->integer));
    p.set_value(std::string{r->str ? r->str : "", r->str ? r->len : 0});
  });
  REQUIRE(f.wait_for(20s) == std::future_status::ready);
  return f.get();
}

std::shared_ptr<net::redis_client> start(net::io_thread& loop,
                                         const std::string& url,
                                         std::chrono::milliseconds timeout) {
  net::redis_options o;
  o.endpoint = *net::parse_redis_url(url);
  o.timeout = timeout;
  return net::redis_client::start(loop.context(), o);
}

} // namespace

TEST_SUITE("net.redis_client") {
  TEST_CASE("commands are answered; a stopped server is noticed, commands "
            "then answer at once without a reply, and it reconnects") {
    redis_process redis;
    net::io_thread loop{"redis-test"};
    auto c = start(loop, redis.url(), 2000ms);
    REQUIRE(eventually([&] { return c->up(); }));
    CHECK(run(*c, {"SET", "k", "v"}) == std::optional<std::string>{"OK"});
    CHECK(run(*c, {"GET", "k"}) == std::optional<std::string>{"v"});

    redis.stop();
    REQUIRE(eventually([&] { return !c->up(); }));
    auto t = std::chrono::steady_clock::now();
    CHECK_FALSE(run(*c, {"PING"}).has_value());
    CHECK(std::chrono::steady_clock::now() - t < 1s);
    CHECK(c->counters().failures.load() >= 1);

    redis.start();
    REQUIRE(eventually([&] { return c->up(); }));
    CHECK(run(*c, {"PING"}) == std::optional<std::string>{"PONG"});
    CHECK(c->counters().connects.load() >= 2);
    c->stop();
    loop.stop();
  }

  TEST_CASE("a frozen server: the command gets no reply after the time-out, "
            "the connection is dropped and made again once it answers") {
    redis_process redis;
    net::io_thread loop{"redis-test"};
    auto c = start(loop, redis.url(), 300ms);
    REQUIRE(eventually([&] { return c->up(); }));
    redis.pause();
    auto t = std::chrono::steady_clock::now();
    CHECK_FALSE(run(*c, {"PING"}).has_value());
    auto waited = std::chrono::steady_clock::now() - t;
    CHECK(waited >= 250ms);
    CHECK(waited < 10s);
    CHECK(c->counters().timeouts.load() == 1);
    CHECK_FALSE(c->up());
    redis.resume();
    REQUIRE(eventually([&] { return c->up(); }));
    CHECK(run(*c, {"PING"}) == std::optional<std::string>{"PONG"});
    c->stop();
    loop.stop();
  }

  TEST_CASE("a script the server lost is sent again in full") {
    redis_process redis;
    net::io_thread loop{"redis-test"};
    auto c = start(loop, redis.url(), 2000ms);
    REQUIRE(eventually([&] { return c->up(); }));
    auto script = std::make_shared<const net::redis_script>("return 7");
    auto eval = [&] {
      std::promise<std::int64_t> p;
      auto f = p.get_future();
      c->eval(script, {}, {}, [&p](const redisReply* r) {
        p.set_value(r && r->type == REDIS_REPLY_INTEGER ? r->integer : -1);
      });
      REQUIRE(f.wait_for(20s) == std::future_status::ready);
      return f.get();
    };
    CHECK(eval() == 7); // NOSCRIPT, then EVAL
    CHECK(eval() == 7); // EVALSHA
    CHECK(run(*c, {"SCRIPT", "FLUSH"}) == std::optional<std::string>{"OK"});
    CHECK(eval() == 7);
    c->stop();
    loop.stop();
  }
}
