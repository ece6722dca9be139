#include "actors/rate_limiter.hpp"

#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay::actors;
using namespace std::chrono_literals;
using mailassay::core::limits::millis;

namespace {

const millis t0{10'000'000};

// An actor system on CAF's deterministic scheduler: nothing runs until the
// test calls run(), and time moves only with advance_time().
struct fixture {
  explicit fixture(rate_limiter_options opts = {}) {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
    limiter = std::make_unique<rate_limiter>(*sys, opts);
    sched->run();
  }

  ~fixture() {
    limiter.reset();
    sched->run();
  }

  limit_decision check(const limit_check& c) { return limiter->check(c); }

  limit_decision from_ip(const std::string& ip, millis now) {
    limit_check c;
    c.ip = ip_scope{ip, std::nullopt};
    c.now = now;
    return check(std::move(c));
  }

  limit_decision with_key(const std::string& id,
                          mailassay::core::account::rate_limits limits,
                          millis now) {
    limit_check c;
    c.key = key_scope{id, limits};
    c.now = now;
    return check(std::move(c));
  }

  void tick(std::chrono::milliseconds d) {
    sched->advance_time(d);
    sched->run();
  }

  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::unique_ptr<rate_limiter> limiter;
};

mailassay::core::account::rate_limits per_minute(std::int64_t n) {
  mailassay::core::account::rate_limits l;
  l.per_minute = n;
  return l;
}

} // namespace

TEST_SUITE("actors.rate_limiter") {
  TEST_CASE("refuses the 101st request from one IP while another IP is "
            "served") {
    fixture f;
    for (int i = 1; i <= 100; ++i) {
      auto d = f.from_ip("198.51.100.1", t0 + millis{i});
      REQUIRE(d.allowed);
      CHECK(d.reported == limit_scope::ip);
      CHECK(d.limit == 100);
    }
    auto refused = f.from_ip("198.51.100.1", t0 + 100ms);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.refused_by == limit_scope::ip);
    CHECK(refused.remaining == 0);
    CHECK(refused.retry_after_seconds == 1);
    auto other = f.from_ip("198.51.100.2", t0 + 100ms);
    CHECK(other.allowed);
    CHECK(other.remaining == 99);
    // One token back after 600 ms.
    CHECK(f.from_ip("198.51.100.1", t0 + 701ms).allowed);
    CHECK(f.limiter->gauges().refused == 1);
    CHECK(f.limiter->gauges().ip_buckets == 2);
  }

  TEST_CASE("uses the IP limit passed with the check over the default") {
    fixture f;
    limit_check c;
    c.ip = ip_scope{"203.0.113.5", 2};
    c.now = t0;
    CHECK(f.check(c).allowed);
    CHECK(f.check(c).allowed);
    CHECK_FALSE(f.check(c).allowed);
    c.ip->per_minute = 0; // unlimited
    auto d = f.check(c);
    CHECK(d.allowed);
    CHECK(d.reported == limit_scope::none);
  }

  TEST_CASE("enforces a key's per-minute limit") {
    fixture f;
    for (int i = 0; i < 5; ++i)
      REQUIRE(f.with_key("key-1", per_minute(5), t0).allowed);
    auto refused = f.with_key("key-1", per_minute(5), t0);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.refused_by == limit_scope::key);
    CHECK(refused.limit == 5);
    CHECK(refused.retry_after_seconds == 12);
    CHECK(f.with_key("key-2", per_minute(5), t0).allowed);
    CHECK(f.with_key("key-1", per_minute(5), t0 + 12s).allowed);
  }

  TEST_CASE("applies changed key limits to the very next request") {
    fixture f;
    for (int i = 0; i < 5; ++i)
      REQUIRE(f.with_key("key-1", per_minute(5), t0).allowed);
    CHECK_FALSE(f.with_key("key-1", per_minute(5), t0).allowed);
    auto raised = f.with_key("key-1", per_minute(10), t0);
    CHECK(raised.allowed);
    CHECK(raised.limit == 10);
    CHECK(raised.remaining == 4);
    CHECK_FALSE(f.with_key("key-1", per_minute(2), t0).allowed);
    mailassay::core::account::rate_limits day_only;
    day_only.per_day = 1000;
    auto d = f.with_key("key-1", day_only, t0);
    CHECK(d.allowed);
    CHECK(d.limit == 1000);
    auto unlimited = f.with_key("key-1", {}, t0);
    CHECK(unlimited.allowed);
    CHECK(unlimited.reported == limit_scope::none);
    CHECK(f.limiter->gauges().key_buckets == 0);
  }

  TEST_CASE("reports the tightest window across scopes and consumes none "
            "when one refuses") {
    fixture f;
    limit_check c;
    c.ip = ip_scope{"198.51.100.7", std::nullopt};
    c.key = key_scope{"key-9", per_minute(3)};
    c.now = t0;
    auto first = f.check(c);
    CHECK(first.reported == limit_scope::key);
    CHECK(first.limit == 3);
    CHECK(first.remaining == 2);
    f.check(c);
    f.check(c);
    auto refused = f.check(c);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.refused_by == limit_scope::key);
    // The refused requests took nothing from the IP bucket.
    auto ip_only = f.from_ip("198.51.100.7", t0);
    CHECK(ip_only.remaining == 96);
  }

  TEST_CASE("limits the widget per device and per IP") {
    fixture f;
    limit_check c;
    c.device = widget_scope{"device-1", 2, 60s};
    c.widget_ip = widget_scope{"198.51.100.8", 3, 60s};
    c.now = t0;
    CHECK(f.check(c).allowed);
    CHECK(f.check(c).allowed);
    auto by_device = f.check(c);
    CHECK_FALSE(by_device.allowed);
    CHECK(by_device.refused_by == limit_scope::device);
    c.device->id = "device-2";
    CHECK(f.check(c).allowed);
    auto by_ip = f.check(c);
    CHECK_FALSE(by_ip.allowed);
    CHECK(by_ip.refused_by == limit_scope::ip);
  }

  TEST_CASE("reports a key's hour or day window when it is the tightest") {
    fixture f;
    mailassay::core::account::rate_limits l;
    l.per_minute = 100;
    l.per_hour = 5;
    l.per_day = 1000;
    auto d = f.with_key("key-h", l, t0);
    CHECK(d.reported == limit_scope::key);
    CHECK(d.limit == 5);
    CHECK(d.remaining == 4);
    CHECK(d.reset_seconds == 720); // one token every 12 minutes
    CHECK(d.period == 1h);
    mailassay::core::account::rate_limits day;
    day.per_minute = 10;
    day.per_day = 2;
    CHECK(f.with_key("key-d", day, t0).period == 24h);
    CHECK(f.with_key("key-d", day, t0).remaining == 0);
    auto refused = f.with_key("key-d", day, t0 + 1s);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.refused_by == limit_scope::key);
    CHECK(refused.period == 24h);
    CHECK(refused.limit == 2);
    CHECK(refused.retry_after_seconds == 43200 - 1);
  }

  TEST_CASE("a key's refusal names the window that refused: the minute, "
            "later the day") {
    fixture f;
    mailassay::core::account::rate_limits l;
    l.per_minute = 2;
    l.per_day = 3;
    REQUIRE(f.with_key("key-1", l, t0).allowed);
    REQUIRE(f.with_key("key-1", l, t0).allowed);
    auto refused = f.with_key("key-1", l, t0);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.period == 1min);
    CHECK(refused.retry_after_seconds == 30);
    // One more passes after 30 s; then the day window is the one refusing.
    REQUIRE(f.with_key("key-1", l, t0 + 30s).allowed);
    auto by_day = f.with_key("key-1", l, t0 + 90s);
    CHECK_FALSE(by_day.allowed);
    CHECK(by_day.period == 24h);
  }

  TEST_CASE("peek reports the window without taking a token or creating a "
            "bucket") {
    fixture f;
    limit_check c;
    c.ip = ip_scope{"198.51.100.20", std::nullopt};
    c.now = t0;
    auto fresh = f.limiter->peek(c);
    CHECK(fresh.allowed);
    CHECK(fresh.reported == limit_scope::ip);
    CHECK(fresh.limit == 100);
    CHECK(fresh.remaining == 100);
    CHECK(fresh.reset_seconds == 0);
    CHECK(f.limiter->gauges().ip_buckets == 0);
    f.check(c);
    f.check(c);
    auto after = f.limiter->peek(c);
    CHECK(after.remaining == 98);
    CHECK(after.reset_seconds == 2); // 1.2 s until full, rounded up
    CHECK(f.limiter->peek(c).remaining == 98);
    CHECK(f.check(c).remaining == 97);
    CHECK(f.limiter->gauges().allowed == 3);
  }

  TEST_CASE("peek reports the tightest key window and sees changed limits "
            "at once") {
    fixture f;
    limit_check c;
    c.ip = ip_scope{"198.51.100.21", std::nullopt};
    c.key = key_scope{"key-p", per_minute(5)};
    c.now = t0;
    auto unused = f.limiter->peek(c);
    CHECK(unused.reported == limit_scope::key);
    CHECK(unused.limit == 5);
    CHECK(unused.remaining == 5);
    f.check(c);
    f.check(c);
    auto used = f.limiter->peek(c);
    CHECK(used.limit == 5);
    CHECK(used.remaining == 3);
    c.key->limits = per_minute(10);
    auto raised = f.limiter->peek(c);
    CHECK(raised.limit == 10);
    CHECK(raised.remaining == 8);
    c.key->limits = {};
    auto unlimited = f.limiter->peek(c);
    CHECK(unlimited.reported == limit_scope::ip);
    CHECK(unlimited.remaining == 98);
    limit_check nothing;
    nothing.now = t0;
    CHECK(f.limiter->peek(nothing).reported == limit_scope::none);
    CHECK(f.limiter->peek(nothing).limit == 0);
  }

  TEST_CASE("peek of the widget scopes reports the tightest of device and "
            "IP") {
    fixture f;
    limit_check c;
    c.device = widget_scope{"device-1", 10, 60s};
    c.widget_ip = widget_scope{"198.51.100.22", 60, 60s};
    c.now = t0;
    for (int i = 0; i < 4; ++i)
      f.check(c);
    auto d = f.limiter->peek(c);
    CHECK(d.reported == limit_scope::device);
    CHECK(d.remaining == 6);
    c.device->id = "device-2";
    auto other = f.limiter->peek(c);
    CHECK(other.reported == limit_scope::device);
    CHECK(other.remaining == 10);
  }

  TEST_CASE("a sweep pass is spread over steps, and checks run between "
            "them") {
    rate_limiter_options opts;
    opts.sweep_step = 100;
    opts.sweep_interval = 10s;
    fixture f(opts);
    for (int i = 0; i < 1000; ++i)
      REQUIRE(f.from_ip("10.1." + std::to_string(i / 256) + "." +
                            std::to_string(i % 256),
                        t0)
                  .allowed);
    limit_check busy;
    busy.ip = ip_scope{"203.0.113.9", std::nullopt};
    busy.now = t0;
    for (int i = 0; i < 100; ++i)
      f.check(busy);
    REQUIRE(f.limiter->gauges().ip_buckets == 1001);
    f.sched->advance_time(10s);
    f.sched->run_once(); // the tick: starts a pass
    f.sched->run_once(); // one step: the 100 least recently used
    CHECK(f.limiter->gauges().ip_buckets == 901);
    CHECK(f.from_ip("198.51.100.99", t0 + 10s).allowed);
    f.sched->run();
    // The busy bucket is not full yet; the new one came after the pass.
    CHECK(f.limiter->gauges().ip_buckets == 2);
    CHECK(f.limiter->gauges().swept == 1000);
  }

  TEST_CASE("answers a limit_check request from another actor") {
    fixture f;
    caf::scoped_actor self{*f.sys};
    limit_check c;
    c.ip = ip_scope{"198.51.100.3", std::nullopt};
    c.now = t0;
    self->send(f.limiter->handle(), c);
    f.sched->run();
    bool answered = false;
    self->receive([&](const limit_decision& d) {
      answered = true;
      CHECK(d.allowed);
      CHECK(d.remaining == 99);
    });
    CHECK(answered);
  }

  TEST_CASE("the eviction tick and the table bound keep memory bounded") {
    rate_limiter_options opts;
    opts.max_ip_buckets = 1000;
    opts.sweep_interval = 10s;
    fixture f(opts);
    for (int i = 0; i < 5000; ++i) {
      std::string ip = "10.0.";
      ip += std::to_string(i / 256);
      ip += '.';
      ip += std::to_string(i % 256);
      REQUIRE(f.from_ip(ip, t0).allowed);
      REQUIRE(f.limiter->gauges().ip_buckets <= 1000);
    }
    CHECK(f.limiter->gauges().evictions == 4000);
    // One busy client: empty bucket, full again only after 60 s.
    limit_check busy;
    busy.ip = ip_scope{"203.0.113.1", std::nullopt};
    busy.now = t0;
    for (int i = 0; i < 100; ++i)
      f.check(busy);
    f.tick(10s);
    CHECK(f.limiter->gauges().ip_buckets == 1);
    CHECK(f.limiter->gauges().swept == 999);
    f.tick(50s);
    CHECK(f.limiter->gauges().ip_buckets == 0);
  }

  TEST_CASE("decision_of reports the deciding window's figures and scope") {
    mailassay::core::limits::combined_decision allowed;
    allowed.result = {true, 100, 42, 30, 0};
    auto a = decision_of(allowed, limit_scope::key, millis{3'600'000});
    CHECK(a.allowed);
    CHECK(a.limit == 100);
    CHECK(a.remaining == 42);
    CHECK(a.reset_seconds == 30);
    CHECK(a.retry_after_seconds == 0);
    CHECK(a.reported == limit_scope::key);
    CHECK(a.period == millis{3'600'000});
    CHECK(a.refused_by == limit_scope::none);

    mailassay::core::limits::combined_decision refused;
    refused.result = {false, 10, 0, 50, 6};
    auto r = decision_of(refused, limit_scope::ip, millis{60'000});
    CHECK_FALSE(r.allowed);
    CHECK(r.retry_after_seconds == 6);
    CHECK(r.reported == limit_scope::ip);
    CHECK(r.refused_by == limit_scope::ip);

    // No window applied: nothing reported, nothing named.
    auto none = decision_of({}, limit_scope::none, millis{0});
    CHECK(none.allowed);
    CHECK(none.reported == limit_scope::none);
    CHECK(none.refused_by == limit_scope::none);
    CHECK(none.limit == 0);
    CHECK(none.period == millis{0});
  }

  TEST_CASE("checks from several threads never admit more than a limit, "
            "across shards") {
    // Shards locked in order: the IP windows (one per thread) and the
    // shared key window live in different shards, yet a check is still
    // all-or-nothing and the key admits exactly its limit.
    for (std::size_t shards :
         {std::size_t{0}, std::size_t{1}, std::size_t{8}}) {
      CAPTURE(shards);
      rate_limiter_options opts;
      opts.shards = shards;
      caf::actor_system_config cfg;
      cfg.set("scheduler.max-threads", 1);
      cfg.set("logger.verbosity", caf::atom("quiet"));
      caf::actor_system sys{cfg};
      rate_limiter limiter{sys, opts};
      // Enough checks that the threads overlap on a busy 2-core machine,
      // and limits that run out half-way, while every thread still asks.
      constexpr int threads = 6;
      constexpr int per_thread = 20000;
      constexpr std::int64_t ip_limit = per_thread; // never the one refusing
      constexpr std::int64_t key_limit = threads * per_thread / 2;
      constexpr std::int64_t shared_ip_limit = threads * per_thread / 3;
      std::atomic<std::int64_t> key_allowed{0}, shared_allowed{0};
      std::atomic<bool> go{false};
      std::vector<std::int64_t> own_allowed(threads, 0);
      std::vector<std::thread> pool;
      for (int t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
          while (!go.load())
            std::this_thread::yield();
          for (int i = 0; i < per_thread; ++i) {
            limit_check c;
            c.ip = ip_scope{"10.9.0." + std::to_string(t), ip_limit};
            c.key = key_scope{"hammered-key", per_minute(key_limit)};
            c.now = t0;
            if (limiter.check(c).allowed) {
              ++key_allowed;
              ++own_allowed[t];
            }
            // One IP every thread shares, alone.
            limit_check one;
            one.ip = ip_scope{"203.0.113.77", shared_ip_limit};
            one.now = t0;
            if (limiter.check(one).allowed)
              ++shared_allowed;
          }
        });
      go = true;
      for (auto& th : pool)
        th.join();
      CHECK(key_allowed == key_limit);
      CHECK(shared_allowed == shared_ip_limit);
      // A refusal by the key took no token from the IP: each IP window
      // lost exactly what its thread was allowed.
      for (int t = 0; t < threads; ++t) {
        limit_check c;
        c.ip = ip_scope{"10.9.0." + std::to_string(t), ip_limit};
        c.now = t0;
        auto d = limiter.peek(c);
        CHECK(d.remaining == ip_limit - own_allowed[t]);
      }
      CHECK(limiter.gauges().allowed == key_limit + shared_ip_limit);
      CHECK(limiter.gauges().refused ==
            threads * per_thread * 2 - key_limit - shared_ip_limit);
      CHECK(limiter.gauges().ip_buckets == threads + 1);
      CHECK(limiter.gauges().key_buckets == 1);
      limiter.stop();
    }
  }
}
