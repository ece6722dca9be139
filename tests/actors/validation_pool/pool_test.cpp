// Where the validation pool runs a validation: on the calling thread when it
// is cheap (no SMTP), on an actor when SMTP is asked. A real CAF system and
// resolver, the DNS peer on loopback.
#include "actors/credits/ledger.hpp"
#include "actors/validation_pool.hpp"
#include "net/dns_resolver.hpp"
#include "tests/peers/dns_peer.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>

using namespace mailassay;
using namespace std::chrono_literals;

namespace {

// A ledger store that always has credits, and counts what it was asked.
struct counting_store final : actors::credits::ledger_store {
  std::atomic<int> takes{0}, gives{0};
  void take(const actors::credits::reservation&, callback done) override {
    ++takes;
    done(core::unit{});
  }
  void give_back(const actors::credits::reservation&, callback done) override {
    ++gives;
    done(core::unit{});
  }
};

// A scheduler stand-in: every address is accepted by its MX host at once,
// so the pipeline's credit is the one left to settle.
actors::smtp::scheduler_actor::behavior_type accepting_scheduler() {
  return {
      [](actors::smtp::probe_address& ask) {
        core::smtp::address_outcome o;
        o.address = ask.address;
        o.host = "mx." + ask.domain;
        o.answered = true;
        o.attempts = 1;
        o.rcpt.verdict = core::smtp::rcpt_verdict::accepted;
        o.rcpt.code = 250;
        return o;
      },
      [](actors::smtp::session_idle&) {},
      [](actors::smtp::session_ended&) {},
      [](actors::smtp::mx_addresses&) {},
      [](actors::smtp::route_wake&) {},
      [](actors::smtp::host_wake&) {},
      [](actors::smtp::scheduler_stop&) { return true; },
      [](actors::smtp::scheduler_politeness&) { return true; },
      [](actors::smtp::scheduler_forget_expired&) { return std::size_t{0}; },
  };
}

// Whether `counter` reaches `n` within a few seconds.
bool reaches(const std::atomic<std::uint64_t>& counter, std::uint64_t n) {
  for (int i = 0; i < 500 && counter.load() < n; ++i)
    std::this_thread::sleep_for(10ms);
  return counter.load() == n;
}

struct fixture {
  tests::peers::dns_peer dns;
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::shared_ptr<net::dns_resolver> resolver;
  std::shared_ptr<counting_store> store = std::make_shared<counting_store>();
  std::shared_ptr<actors::credits::ledger_counters> counters =
      std::make_shared<actors::credits::ledger_counters>();
  actors::credits::ledger_actor ledger;
  actors::smtp::scheduler_actor scheduler;
  std::unique_ptr<actors::validation_pool> pool;

  /// `probing`: SMTP validations are probed by `accepting_scheduler`;
  /// otherwise there is no scheduler and they are answered unprobed.
  explicit fixture(std::chrono::milliseconds dns_timeout = 500ms,
                   bool probing = false) {
    dns.add_mx("cached.test", 10, "mx.cached.test");
    dns.add_mx("fresh.test", 10, "mx.fresh.test");
    cfg.set("scheduler.max-threads", 2);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    net::dns_resolver_config rc;
    rc.servers = {dns.server()};
    rc.timeout = dns_timeout;
    resolver = std::shared_ptr<net::dns_resolver>(
        std::move(net::dns_resolver::create(std::move(rc)).value()));
    core::syntax::options syntax;
    syntax.allow_test_domains = true;
    auto v = std::make_shared<actors::validation::validator>(
        std::make_shared<const core::risk::lists>(), resolver, syntax);
    ledger = actors::credits::spawn_ledger(*sys, store, counters);
    if (probing)
      scheduler = sys->spawn(accepting_scheduler);
    pool = std::make_unique<actors::validation_pool>(*sys, v, 2, ledger,
                                                     scheduler);
  }

  ~fixture() {
    pool->stop();
    caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
    if (scheduler)
      caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    resolver->shutdown();
    sys.reset();
  }

  // Where and what a validation answered.
  struct answer {
    std::thread::id thread;
    actors::validation::result result;
  };

  // Submits `email`; returns its answer to come. `answered`: the caller's
  // flag, as an HTTP request hands it on.
  std::future<answer>
  start(const std::string& email, bool smtp = false,
        std::shared_ptr<const std::atomic<bool>> answered = nullptr) {
    auto promise = std::make_shared<std::promise<answer>>();
    auto future = promise->get_future();
    actors::validation::request req;
    req.email = email;
    req.smtp = smtp;
    req.organization_id = "org";
    req.answered = std::move(answered);
    pool->submit({std::move(req), [promise](actors::validation::result r) {
                    promise->set_value({std::this_thread::get_id(), r});
                  }});
    return future;
  }

  // Submits `email`; returns whether it was answered before `submit`
  // returned, and the answer.
  std::pair<bool, answer> run(const std::string& email, bool smtp = false) {
    auto future = start(email, smtp);
    bool at_once = future.wait_for(0s) == std::future_status::ready;
    REQUIRE(future.wait_for(5s) == std::future_status::ready);
    return {at_once, future.get()};
  }
};

} // namespace

TEST_SUITE("actors.validation_pool") {
  TEST_CASE("a syntax failure is answered on the calling thread") {
    fixture f;
    auto [at_once, a] = f.run("not-an-address");
    CHECK(at_once);
    CHECK(a.thread == std::this_thread::get_id());
    CHECK_FALSE(a.result.address.valid);
    CHECK(f.pool->gauges().done == 1);
    CHECK(f.pool->gauges().queued == 0);
    CHECK(f.pool->gauges().busy == 0);
  }

  TEST_CASE("a cached route is answered on the calling thread") {
    fixture f;
    auto [first_at_once, first] = f.run("jane@cached.test");
    // The first lookup went to the DNS peer: answered from the resolver.
    CHECK(first.thread != std::this_thread::get_id());
    REQUIRE(first.result.route != nullptr);
    auto [at_once, a] = f.run("john@cached.test");
    CHECK(at_once);
    CHECK(a.thread == std::this_thread::get_id());
    REQUIRE(a.result.route != nullptr);
    CHECK(a.result.route->kind == core::dns::route_kind::mx);
    CHECK(f.pool->gauges().done == 2);
  }

  TEST_CASE("validate_now answers what needs no waiting, and only that") {
    fixture f;
    actors::validation::request req;
    req.email = "not-an-address";
    actors::validation::result bad;
    REQUIRE(f.pool->validate_now(req, bad));
    CHECK_FALSE(bad.address.valid);
    CHECK(bad.verdict.reason == "invalid_syntax");
    CHECK(f.pool->gauges().done == 1);

    // Not cached yet: nothing, and nothing counted as done.
    req.email = "jane@cached.test";
    actors::validation::result miss;
    CHECK_FALSE(f.pool->validate_now(req, miss));
    CHECK(f.pool->gauges().done == 1);
    CHECK(f.pool->gauges().busy == 0);

    // Once the route is cached, the same answer as submit gives.
    auto [_, submitted] = f.run("jane@cached.test");
    actors::validation::result now;
    REQUIRE(f.pool->validate_now(req, now));
    REQUIRE(now.route != nullptr);
    CHECK(now.route->kind == core::dns::route_kind::mx);
    CHECK(now.verdict.state == submitted.result.verdict.state);
    CHECK(now.verdict.score == submitted.result.verdict.score);
    CHECK(now.verdict.reason == submitted.result.verdict.reason);

    // SMTP always goes through submit (credits, the pipeline's actors).
    req.smtp = true;
    actors::validation::result smtp;
    CHECK_FALSE(f.pool->validate_now(req, smtp));
    req.email = "not-an-address";
    actors::validation::result smtp_bad;
    CHECK_FALSE(f.pool->validate_now(req, smtp_bad));
  }

  TEST_CASE("durationMs counts from when the request was received") {
    fixture f;
    f.run("jane@cached.test");
    auto received = std::chrono::steady_clock::now() - 250ms;
    actors::validation::request req;
    req.email = "jane@cached.test";
    req.received = received;
    actors::validation::result now;
    REQUIRE(f.pool->validate_now(req, now));
    CHECK(now.duration_ms >= 250);
    // Without it, from the validation's own start.
    req.received.reset();
    actors::validation::result own;
    REQUIRE(f.pool->validate_now(req, own));
    CHECK(own.duration_ms < 250);

    // Through a pipeline actor too (an SMTP request's job).
    auto promise = std::make_shared<std::promise<double>>();
    auto future = promise->get_future();
    req.smtp = true;
    req.organization_id = "org";
    req.received = received;
    f.pool->submit({std::move(req), [promise](actors::validation::result r) {
                      promise->set_value(r.duration_ms);
                    }});
    REQUIRE(future.wait_for(5s) == std::future_status::ready);
    CHECK(future.get() >= 250);
  }

  TEST_CASE("a validation with SMTP goes to a pipeline actor") {
    fixture f;
    // Cached, so only the hop can move it off this thread (no scheduler:
    // probing is off, the pipeline concludes without probing).
    f.run("jane@fresh.test");
    auto [at_once, a] = f.run("jane@fresh.test", true);
    CHECK(a.thread != std::this_thread::get_id());
    CHECK(a.result.route != nullptr);
    // Probing off: not attempted, nothing reserved, free.
    CHECK_FALSE(a.result.smtp.attempted);
    CHECK_FALSE(a.result.smtp.checked);
    CHECK(a.result.credits_used == 0);
    CHECK(f.store->takes == 0);
    // The actor counts its job done just after the answer.
    for (int i = 0; i < 100 && f.pool->gauges().done < 2; ++i)
      std::this_thread::sleep_for(10ms);
    CHECK(f.pool->gauges().done == 2);
    CHECK(f.pool->gauges().queued == 0);
  }

  TEST_CASE("an SMTP validation arriving after the pool stopped is answered "
            "503, not dropped") {
    fixture f;
    f.pool->stop();
    auto [at_once, a] = f.run("jane@fresh.test", true);
    CHECK(at_once);
    REQUIRE(a.result.refused);
    CHECK(a.result.refused->code == core::errc::unavailable);
    CHECK(a.result.refused->message == "The server is shutting down");
    // Without SMTP nothing waits for an actor: still answered.
    auto [_, free] = f.run("not-an-address");
    CHECK_FALSE(free.result.refused);
    CHECK(free.result.verdict.reason == "invalid_syntax");
  }

  TEST_CASE("an SMTP validation a pipeline actor holds when it stops is "
            "answered 503") {
    // The domain's DNS never answers and the resolver waits longer than
    // the test: the job sits in the actor's state until the actor quits.
    fixture f{60s};
    f.dns.set_behaviour("silent.test", tests::peers::dns_behaviour::drop);
    auto pending = f.start("jane@silent.test", true);
    for (int i = 0; i < 500 && f.dns.queries("silent.test") == 0; ++i)
      std::this_thread::sleep_for(10ms);
    REQUIRE(f.dns.queries("silent.test") > 0);
    CHECK(pending.wait_for(0s) == std::future_status::timeout);
    f.pool->stop();
    REQUIRE(pending.wait_for(5s) == std::future_status::ready);
    auto a = pending.get();
    REQUIRE(a.result.refused);
    CHECK(a.result.refused->code == core::errc::unavailable);
    CHECK(a.result.refused->message == "The server is shutting down");
  }

  TEST_CASE("a probe's credit is settled by a caller that can tell whether "
            "its answer was delivered: kept if it was, given back if not") {
    fixture f{500ms, true};
    auto flag = std::make_shared<std::atomic<bool>>(false);
    auto first = f.start("jane@fresh.test", true, flag);
    REQUIRE(first.wait_for(5s) == std::future_status::ready);
    auto a = first.get();
    CHECK(a.result.smtp.checked);
    CHECK(a.result.credits_used == 1);
    CHECK(f.store->takes == 1);
    // Neither kept nor given back until the caller says.
    REQUIRE(a.result.settle_credit);
    std::this_thread::sleep_for(50ms);
    CHECK(f.counters->committed == 0);
    CHECK(f.store->gives == 0);
    // Its request was answered (the deadline's 503) before this answer
    // arrived: the credit goes back.
    a.result.settle_credit(false);
    CHECK(reaches(f.counters->refunded, 1));
    CHECK(f.store->gives == 1);
    CHECK(f.counters->committed == 0);

    // Delivered: kept.
    auto second = f.start("john@fresh.test", true, flag);
    REQUIRE(second.wait_for(5s) == std::future_status::ready);
    auto b = second.get();
    REQUIRE(b.result.settle_credit);
    b.result.settle_credit(true);
    CHECK(reaches(f.counters->committed, 1));
    CHECK(f.store->gives == 1);
  }

  TEST_CASE("a caller that always takes the answer (a batch, the CLI) has "
            "the credit kept by the pipeline") {
    fixture f{500ms, true};
    auto pending = f.start("jane@fresh.test", true);
    REQUIRE(pending.wait_for(5s) == std::future_status::ready);
    auto a = pending.get();
    CHECK(a.result.smtp.checked);
    CHECK_FALSE(a.result.settle_credit);
    CHECK(reaches(f.counters->committed, 1));
    CHECK(f.store->gives == 0);
  }
}
