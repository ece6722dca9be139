// The SMTP scheduler on CAF's deterministic test scheduler: a runner double
// records what the scheduler asks of its sessions, the test plays the
// servers' part by sending the sessions' events, and time moves only when
// the test advances it.
#include "actors/smtp/scheduler.hpp"
#include "core/validation/smtp_stage.hpp"
#include "tests/actors/smtp/mx_route.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using actors::smtp::probe_address;
using actors::smtp::scheduler_config;
using core::smtp::address_outcome;
using core::smtp::answer_source;
using core::smtp::rcpt_verdict;
using core::smtp::unasked_reason;
using mailassay::tests::smtp::mx_route;

namespace {

// What the scheduler asked of its sessions.
struct runner_double final : actors::smtp::session_runner {
  struct give_call {
    std::uint64_t session;
    std::string address;
    std::string probe;
  };
  std::vector<actors::smtp::session_spec> opened;
  std::vector<give_call> gives;
  std::vector<std::uint64_t> finished;

  void open(actors::smtp::session_spec spec,
            actors::smtp::scheduler_actor) override {
    opened.push_back(std::move(spec));
  }
  void give(std::uint64_t id, std::string address, std::string probe) override {
    gives.push_back({id, std::move(address), std::move(probe)});
  }
  void finish(std::uint64_t id) override { finished.push_back(id); }
  void shutdown() override {}
};

// "u<i>@<domain>", built with append (GCC 12 warns falsely on "u" + s).
std::string user(int i, const std::string& domain = "d.test") {
  std::string s = "u";
  s.append(std::to_string(i)).append("@").append(domain);
  return s;
}

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  caf::scheduler::test_coordinator* sched = nullptr;
  std::shared_ptr<runner_double> runner = std::make_shared<runner_double>();
  std::shared_ptr<actors::smtp::scheduler_counters> counters =
      std::make_shared<actors::smtp::scheduler_counters>();
  /// MX host name -> its address (the lookup double).
  std::map<std::string, std::string> hosts{{"mx.d.test", "192.0.2.1"},
                                           {"mx2.d.test", "192.0.2.2"},
                                           {"mx.e.test", "192.0.2.5"}};
  actors::smtp::scheduler_actor scheduler;
  int probes = 0;

  fixture() {
    cfg.set("scheduler.policy", caf::atom("testing"));
    cfg.set("logger.file-verbosity", caf::atom("quiet"));
    cfg.set("logger.console", caf::atom("none"));
    sys = std::make_unique<caf::actor_system>(cfg);
    sched = &dynamic_cast<caf::scheduler::test_coordinator&>(sys->scheduler());
  }

  ~fixture() {
    if (scheduler)
      caf::anon_send_exit(scheduler, caf::exit_reason::user_shutdown);
    sched->run();
  }

  // The per-host counters at the test clock's time.
  std::map<std::string, actors::smtp::host_counters> host_table() const {
    return counters->hosts(
        std::chrono::duration_cast<std::chrono::milliseconds>(
            sys->clock().now().time_since_epoch()));
  }

  static scheduler_config config() {
    scheduler_config c;
    c.identity = {"probe.mailassay.io", "verify@mailassay.io"};
    c.allow_private_targets = {"192.0.2.0/24"};
    c.retry_delays = {300ms, 600ms};
    c.min_step = 200ms;
    c.connections_per_second_per_host = 0;
    c.session_linger = 0ms;
    return c;
  }

  void start(scheduler_config c = config()) {
    actors::smtp::scheduler_parts parts;
    parts.runner = runner;
    auto table = hosts;
    parts.lookup = [table](std::string host,
                           std::function<void(core::dns::mail_route)> done) {
      core::dns::mail_route r;
      r.kind = core::dns::route_kind::implicit_mx;
      if (auto it = table.find(host); it != table.end())
        r.addresses.push_back(it->second);
      done(std::move(r));
    };
    parts.random_local_part = [this] {
      return "probe" + std::to_string(++probes);
    };
    scheduler = actors::smtp::spawn_scheduler(*sys, std::move(c),
                                              std::move(parts), counters);
    sched->run();
  }

  // Asks about `address`; returns where the answer lands.
  std::shared_ptr<std::optional<address_outcome>>
  ask(const std::string& address, std::chrono::milliseconds budget = 5000ms,
      std::vector<std::string> mx = {"mx.d.test"}, bool retry = true,
      bool batch = false) {
    auto out = std::make_shared<std::optional<address_outcome>>();
    probe_address req;
    req.domain = address.substr(address.find('@') + 1);
    req.address = address;
    req.route = mx_route(std::move(mx));
    req.budget = budget;
    req.retry_deferrals = retry;
    req.batch = batch;
    sys->spawn([out, req, s = scheduler](caf::event_based_actor* self) {
      self->request(s, caf::infinite, req).then([out](address_outcome& o) {
        *out = std::move(o);
      });
    });
    sched->run();
    return out;
  }

  // Session `id` is ready for work, having heard `replies` so far.
  void ready(std::uint64_t id, core::smtp::session_result so_far = {}) {
    caf::anon_send(scheduler, actors::smtp::session_idle{id, so_far});
    sched->run();
  }

  void ended(std::uint64_t id, core::smtp::session_report report = {}) {
    caf::anon_send(scheduler,
                   actors::smtp::session_ended{id, std::move(report)});
    sched->run();
  }

  void advance(std::chrono::milliseconds d) {
    sched->advance_time(d);
    sched->run();
  }

  // The gives to session `id`, in order.
  std::vector<std::string> asked(std::uint64_t id) const {
    std::vector<std::string> out;
    for (const auto& g : runner->gives)
      if (g.session == id)
        out.push_back(g.address);
    return out;
  }
};

// A session's result that grows with each reply.
struct heard {
  core::smtp::session_result r;
  heard& reply(std::string address, rcpt_verdict v, int code) {
    core::smtp::address_result a;
    a.address = std::move(address);
    a.rcpt.verdict = v;
    a.rcpt.code = code;
    r.addresses.push_back(std::move(a));
    ++r.rcpt_sent;
    return *this;
  }
};

// Runs session `id` to its end: ready, every address it is given accepted
// (250) and no catch-all, then ended.
void run_accepting(fixture& fx, std::uint64_t id) {
  fx.ready(id);
  heard h;
  for (;;) {
    auto asked = fx.asked(id);
    if (asked.size() == h.r.addresses.size())
      break;
    h.reply(asked.back(), rcpt_verdict::accepted, 250);
    h.r.catch_all = false;
    fx.ready(id, h.r);
  }
  fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
}

core::smtp::session_report refused() {
  core::smtp::session_report rep;
  rep.transport = core::smtp::connect_failure::refused;
  return rep;
}

} // namespace

TEST_SUITE("actors.smtp.scheduler") {
  TEST_CASE("concurrent callers of a domain share one session; an address "
            "in flight is asked once") {
    fixture fx;
    fx.start();
    auto a1 = fx.ask("ann@d.test");
    auto b = fx.ask("bob@d.test");
    auto a2 = fx.ask("ann@d.test");
    // Two distinct addresses: one session is enough.
    REQUIRE(fx.runner->opened.size() == 1);
    const auto& spec = fx.runner->opened[0];
    CHECK(spec.dial.host == "mx.d.test");
    CHECK(spec.dial.address == "192.0.2.1");
    CHECK(spec.config.helo == "probe.mailassay.io");
    auto id = spec.id;
    fx.ready(id);
    REQUIRE(fx.asked(id) == std::vector<std::string>{"ann@d.test"});
    // The first address carries the catch-all probe.
    CHECK(fx.runner->gives[0].probe == "probe1@d.test");
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    h.r.catch_all = false;
    fx.ready(id, h.r);
    REQUIRE(a1->has_value());
    REQUIRE(a2->has_value());
    CHECK((*a1)->rcpt.verdict == rcpt_verdict::accepted);
    CHECK((*a1)->source == answer_source::probe);
    CHECK((*a2)->source == answer_source::joined);
    CHECK((*a2)->answered);
    CHECK((*a1)->catch_all == false);
    CHECK(fx.asked(id) == std::vector<std::string>{"ann@d.test", "bob@d.test"});
    h.reply("bob@d.test", rcpt_verdict::no_such_user, 550);
    fx.ready(id, h.r);
    REQUIRE(b->has_value());
    CHECK((*b)->rcpt.verdict == rcpt_verdict::no_such_user);
    // Nothing left: QUIT (no linger in this configuration).
    CHECK(fx.runner->finished == std::vector<std::uint64_t>{id});
    fx.ended(id, core::smtp::session_report{
                     core::smtp::connect_failure::none, {}, h.r});
    CHECK(fx.counters->joined == 1);
    CHECK(fx.counters->requests == 3);
    CHECK(fx.counters->in_flight == 0);
    auto hosts = fx.host_table();
    CHECK(hosts["mx.d.test"].opened == 1);
    CHECK(hosts["mx.d.test"].open == 0);
    CHECK(fx.counters->rcpts[1] == 1); // 2 RCPTs: the "<= 2" bucket
    CHECK(fx.counters->rcpts_sent == 2);
  }

  TEST_CASE("holds at most max_sessions_per_host sessions; the others wait "
            "for a slot") {
    fixture fx;
    auto c = fixture::config();
    c.max_sessions_per_host = 2;
    c.max_rcpts_per_session = 2;
    fx.start(c);
    std::vector<std::shared_ptr<std::optional<address_outcome>>> got;
    for (int i = 0; i < 12; ++i)
      got.push_back(fx.ask(user(i)));
    CHECK(fx.runner->opened.size() == 2);
    auto hosts = fx.host_table();
    CHECK(hosts["mx.d.test"].peak == 2);
    // Each session takes two addresses, then ends; a waiting session opens
    // for each slot that frees.
    std::size_t next = 0;
    while (next < fx.runner->opened.size())
      run_accepting(fx, fx.runner->opened[next++].id);
    std::size_t done = 0;
    for (auto& g : got)
      done += g->has_value() ? 1 : 0;
    CHECK(done == 12);
    CHECK(fx.runner->opened.size() == 6);
    hosts = fx.host_table();
    CHECK(hosts["mx.d.test"].peak == 2);
    CHECK(hosts["mx.d.test"].opened == 6);
  }

  TEST_CASE("spaces new connections by the host's connection rate") {
    fixture fx;
    auto c = fixture::config();
    c.max_sessions_per_host = 0;
    c.connections_per_second_per_host = 2;
    fx.start(c);
    // Enough waiting addresses to want more sessions than the rate allows.
    for (int i = 0; i < 60; ++i)
      fx.ask(user(i));
    // A burst of two, then one token every 500 ms.
    CHECK(fx.runner->opened.size() == 2);
    fx.advance(499ms);
    CHECK(fx.runner->opened.size() == 2);
    fx.advance(1ms);
    CHECK(fx.runner->opened.size() == 3);
  }

  TEST_CASE("new politeness (a reload) applies to the next session; open "
            "sessions stay open") {
    fixture fx;
    auto c = fixture::config();
    c.max_sessions_per_host = 1;
    c.max_rcpts_per_session = 2;
    fx.start(c);
    for (int i = 0; i < 40; ++i)
      fx.ask(user(i));
    REQUIRE(fx.runner->opened.size() == 1);
    // Raised to 3: the waiting route opens two more sessions at once.
    bool applied = false;
    auto raise = [&](std::size_t sessions) {
      applied = false;
      fx.sys->spawn(
          [&applied, sessions, s = fx.scheduler](caf::event_based_actor* self) {
            self->request(s, caf::infinite,
                          actors::smtp::scheduler_politeness{sessions, 0, 2})
                .then([&applied](bool ok) { applied = ok; });
          });
      fx.sched->run();
    };
    raise(3);
    CHECK(applied);
    CHECK(fx.runner->opened.size() == 3);
    CHECK(fx.host_table()["mx.d.test"].open == 3);
    // Lowered to 1: nobody is cut off, and no new session opens while
    // more than one is open.
    raise(1);
    CHECK(applied);
    CHECK(fx.runner->finished.empty());
    // Each session answers what it is given up to its cap, then ends.
    run_accepting(fx, fx.runner->opened[0].id);
    run_accepting(fx, fx.runner->opened[1].id);
    CHECK(fx.runner->opened.size() == 3); // one still open: the limit
    run_accepting(fx, fx.runner->opened[2].id);
    CHECK(fx.runner->opened.size() == 4); // none open: one more
    CHECK(fx.host_table()["mx.d.test"].open == 1);
  }

  TEST_CASE("a reloaded RCPT cap reaches a route that exists already "
            "(issue #29)") {
    fixture fx;
    auto c = fixture::config();
    c.max_sessions_per_host = 1;
    c.max_rcpts_per_session = 2;
    fx.start(c);
    for (int i = 0; i < 40; ++i)
      fx.ask(user(i));
    REQUIRE(fx.runner->opened.size() == 1);
    run_accepting(fx, fx.runner->opened[0].id);
    CHECK(fx.asked(fx.runner->opened[0].id).size() == 2);
    bool applied = false;
    fx.sys->spawn([&applied, s = fx.scheduler](caf::event_based_actor* self) {
      self->request(s, caf::infinite,
                    actors::smtp::scheduler_politeness{1, 0, 5})
          .then([&applied](bool ok) { applied = ok; });
    });
    fx.sched->run();
    REQUIRE(applied);
    // The same route's next session takes five.
    REQUIRE(fx.runner->opened.size() == 2);
    run_accepting(fx, fx.runner->opened[1].id);
    CHECK(fx.asked(fx.runner->opened[1].id).size() == 5);
  }

  TEST_CASE("a caller's deadline ends its wait; a tarpit never holds up "
            "another domain") {
    fixture fx;
    fx.start();
    // d.test's session connects and never gets a greeting.
    auto slow = fx.ask("ann@d.test", 1000ms);
    REQUIRE(fx.runner->opened.size() == 1);
    // e.test is answered meanwhile.
    auto quick = fx.ask("eve@e.test", 5000ms, {"mx.e.test"});
    REQUIRE(fx.runner->opened.size() == 2);
    auto e_id = fx.runner->opened[1].id;
    fx.ready(e_id);
    heard h;
    h.reply("eve@e.test", rcpt_verdict::accepted, 250);
    fx.ready(e_id, h.r);
    REQUIRE(quick->has_value());
    CHECK_FALSE(slow->has_value());
    fx.advance(999ms);
    CHECK_FALSE(slow->has_value());
    fx.advance(1ms);
    REQUIRE(slow->has_value());
    CHECK((*slow)->timed_out);
    CHECK((*slow)->rcpt.why_unasked == unasked_reason::budget);
    CHECK_FALSE((*slow)->answered);
    auto facts = core::validation::facts_of(**slow);
    CHECK_FALSE(facts.checked);
    CHECK(facts.timed_out);
    CHECK(fx.counters->answers[static_cast<std::size_t>(
              actors::smtp::answer_class::timeout)] == 1);
  }

  TEST_CASE("greylisted, then accepted: the retry waits for its delay, and "
            "the answer says both") {
    fixture fx;
    fx.start();
    auto got = fx.ask("grey@d.test", 5000ms);
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    heard h;
    h.reply("grey@d.test", rcpt_verdict::greylisted_or_throttled, 450);
    fx.ready(id, h.r);
    CHECK_FALSE(got->has_value());
    CHECK(fx.counters->greylist_rechecks == 1);
    // Nothing to do until the retry: the session quits.
    CHECK(fx.runner->finished.size() == 1);
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    fx.advance(299ms);
    CHECK(fx.runner->opened.size() == 1);
    fx.advance(1ms);
    REQUIRE(fx.runner->opened.size() == 2);
    auto again = fx.runner->opened[1].id;
    fx.ready(again);
    CHECK(fx.asked(again) == std::vector<std::string>{"grey@d.test"});
    heard h2;
    h2.reply("grey@d.test", rcpt_verdict::accepted, 250);
    fx.ready(again, h2.r);
    REQUIRE(got->has_value());
    CHECK((*got)->rcpt.verdict == rcpt_verdict::accepted);
    CHECK((*got)->attempts == 2);
    CHECK((*got)->deferrals == 1);
    auto facts = core::validation::facts_of(**got);
    CHECK(facts.greylisted);
    CHECK(facts.deliverable == true);
  }

  TEST_CASE("a definitive answer is reused within the cache's TTL; a "
            "time-out never is") {
    fixture fx;
    auto c = fixture::config();
    c.result_cache_ttl = 60s;
    fx.start(c);
    auto first = fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    h.r.catch_all = false;
    fx.ready(id, h.r);
    REQUIRE(first->has_value());
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    // Same address (domain in another case): from the cache, no session.
    auto again = fx.ask("ann@D.TEST");
    REQUIRE(again->has_value());
    CHECK((*again)->source == answer_source::cache);
    CHECK((*again)->rcpt.verdict == rcpt_verdict::accepted);
    CHECK((*again)->answered);
    CHECK((*again)->catch_all == false);
    CHECK(fx.runner->opened.size() == 1);
    CHECK(fx.counters->cache_hits == 1);
    // After the TTL: probed again.
    fx.advance(60s);
    auto later = fx.ask("ann@d.test");
    CHECK(fx.runner->opened.size() == 2);
    CHECK_FALSE(later->has_value());
    // A time-out is not kept.
    fx.advance(6s);
    REQUIRE(later->has_value());
    CHECK((*later)->timed_out);
    auto after = fx.ask("ann@d.test");
    CHECK_FALSE(after->has_value());
  }

  TEST_CASE("the retention sweeper's tick drops answers past their TTL "
            "while no check arrives") {
    fixture fx;
    auto c = fixture::config();
    c.result_cache_ttl = 60s;
    fx.start(c);
    auto first = fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id, h.r);
    REQUIRE(first->has_value());
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    // Asks the scheduler to forget what expired; returns what it holds.
    auto held = [&] {
      std::optional<std::size_t> out;
      fx.sys->spawn([&out, s = fx.scheduler](caf::event_based_actor* self) {
        self->request(s, caf::infinite,
                      actors::smtp::scheduler_forget_expired{})
            .then([&out](std::size_t n) { out = n; });
      });
      fx.sched->run();
      REQUIRE(out.has_value());
      return *out;
    };
    CHECK(held() == 1);
    fx.advance(59s);
    CHECK(held() == 1);
    // No lookup or store since: only the tick lets the address go.
    fx.advance(1s);
    CHECK(held() == 0);
  }

  TEST_CASE("with TTL 0 there is no result cache") {
    fixture fx;
    auto c = fixture::config();
    c.result_cache_ttl = 0s;
    fx.start(c);
    fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id, h.r);
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    auto again = fx.ask("ann@d.test");
    CHECK_FALSE(again->has_value());
    CHECK(fx.runner->opened.size() == 2);
  }

  TEST_CASE("with sharing off every caller gets its own session") {
    fixture fx;
    auto c = fixture::config();
    c.share_sessions = false;
    c.result_cache_ttl = 0s;
    fx.start(c);
    auto a1 = fx.ask("ann@d.test");
    auto a2 = fx.ask("ann@d.test");
    REQUIRE(fx.runner->opened.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      auto id = fx.runner->opened[i].id;
      fx.ready(id);
      CHECK(fx.asked(id) == std::vector<std::string>{"ann@d.test"});
      heard h;
      h.reply("ann@d.test", rcpt_verdict::accepted, 250);
      fx.ready(id, h.r);
    }
    REQUIRE(a1->has_value());
    REQUIRE(a2->has_value());
    CHECK((*a2)->source == answer_source::probe);
    CHECK(fx.counters->joined == 0);
  }

  // One session per MX host that lingers 1 s for work once idle.
  scheduler_config one_lingering_slot() {
    auto c = fixture::config();
    c.max_sessions_per_host = 1;
    c.session_linger = 1000ms;
    c.min_step = 5000ms;
    return c;
  }

  TEST_CASE("an idle session lingering for work gives its slot up to "
            "another domain of the same host") {
    fixture fx;
    fx.start(one_lingering_slot());
    auto d = fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id, h.r);
    REQUIRE(d->has_value());
    // Lingering: no QUIT yet.
    CHECK(fx.runner->finished.empty());
    auto e = fx.ask("eve@d.test", 5000ms, {"mx.d.test"});
    // Same route: it takes the lingering session, no new one.
    CHECK(fx.asked(id).size() == 2);
    h.reply("eve@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id, h.r);
    REQUIRE(e->has_value());
    // Another domain on the same MX host: the idle one quits for it.
    auto other = fx.ask("zed@e.test", 5000ms, {"mx.d.test"});
    CHECK(fx.runner->finished == std::vector<std::uint64_t>{id});
    CHECK(fx.runner->opened.size() == 1);
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    REQUIRE(fx.runner->opened.size() == 2);
    CHECK(fx.runner->opened[1].dial.host == "mx.d.test");
    CHECK_FALSE(other->has_value());
  }

  TEST_CASE("a session that goes idle while another domain waits for its "
            "host gives its slot up at once, not at the linger's end") {
    fixture fx;
    fx.start(one_lingering_slot());
    auto d = fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    // Asked while the only session is busy: it waits in the host's queue.
    auto other = fx.ask("zed@e.test", 5000ms, {"mx.d.test"});
    CHECK(fx.runner->finished.empty());
    CHECK(fx.runner->opened.size() == 1);
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id, h.r);
    REQUIRE(d->has_value());
    // Idle with nothing more for it, and a route waits: QUIT now.
    CHECK(fx.runner->finished == std::vector<std::uint64_t>{id});
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    REQUIRE(fx.runner->opened.size() == 2);
    CHECK(fx.runner->opened[1].dial.host == "mx.d.test");
    CHECK_FALSE(other->has_value());
  }

  TEST_CASE("a refused MX moves to the next; none left is all_hosts_failed") {
    fixture fx;
    fx.start();
    auto got = fx.ask("ann@d.test", 5000ms, {"mx.d.test", "mx2.d.test"});
    auto first = fx.runner->opened.at(0);
    CHECK(first.dial.host == "mx.d.test");
    fx.ended(first.id, refused());
    REQUIRE(fx.runner->opened.size() == 2);
    CHECK(fx.runner->opened[1].dial.host == "mx2.d.test");
    fx.ended(fx.runner->opened[1].id, refused());
    REQUIRE(got->has_value());
    CHECK((*got)->rcpt.why_unasked == unasked_reason::all_hosts_failed);
    CHECK_FALSE((*got)->answered);
    CHECK(fx.counters->answers[static_cast<std::size_t>(
              actors::smtp::answer_class::refused)] == 1);
  }

  TEST_CASE("the catch-all verdict is cached per domain: no probe next "
            "time") {
    fixture fx;
    auto c = fixture::config();
    c.result_cache_ttl = 0s;
    fx.start(c);
    fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    fx.ready(id);
    CHECK_FALSE(fx.runner->gives.at(0).probe.empty());
    heard h;
    h.reply("ann@d.test", rcpt_verdict::accepted, 250);
    h.r.catch_all = true;
    h.r.rcpt_sent = 2;
    fx.ready(id, h.r);
    fx.ended(id, {core::smtp::connect_failure::none, {}, h.r});
    auto next = fx.ask("bob@d.test");
    auto id2 = fx.runner->opened.at(1).id;
    fx.ready(id2);
    CHECK(fx.runner->gives.at(1).probe.empty());
    heard h2;
    h2.reply("bob@d.test", rcpt_verdict::accepted, 250);
    fx.ready(id2, h2.r);
    REQUIRE(next->has_value());
    CHECK((*next)->catch_all == true);
    CHECK(fx.counters->catch_all_hits == 1);
    CHECK(fx.counters->catch_all_probes == 1);
  }

  TEST_CASE("the per-host counters keep at most the configured hosts, never "
            "dropping one with a session open") {
    fixture fx;
    auto c = fixture::config();
    c.allow_private_targets = {"10.0.0.0/8"};
    c.host_metrics_max_hosts = 100;
    fx.start(c);
    // MX hosts given as IP literals: no lookup.
    for (int i = 0; i < 110; ++i) {
      std::string ip = "10.0.0.";
      ip.append(std::to_string(i + 1));
      std::string domain = "h";
      domain.append(std::to_string(i)).append(".test");
      fx.ask(user(i, domain), 5000ms, {ip});
      fx.ended(fx.runner->opened.back().id, refused());
      CHECK(fx.host_table().size() <= 100);
    }
    CHECK(fx.runner->opened.size() == 110);
    // A host with an open session is never forgotten.
    fx.ask("ann@open.test", 5000ms, {"10.9.9.9"});
    auto hosts = fx.host_table();
    CHECK(hosts["10.9.9.9"].open == 1);
  }

  TEST_CASE("a host's counters go once it has been idle for the window") {
    fixture fx;
    auto c = fixture::config();
    c.host_metrics_idle = 2s;
    fx.start(c);
    fx.ask("ann@d.test");
    auto id = fx.runner->opened.at(0).id;
    CHECK(fx.host_table().at("mx.d.test").open == 1);
    fx.advance(5s); // open: kept however long
    CHECK(fx.host_table().count("mx.d.test") == 1);
    fx.ended(id, refused());
    CHECK(fx.host_table().at("mx.d.test").opened == 1);
    fx.advance(1s);
    CHECK(fx.host_table().count("mx.d.test") == 1);
    fx.advance(1500ms);
    CHECK(fx.host_table().count("mx.d.test") == 0);
  }

  TEST_CASE("stop answers every caller") {
    fixture fx;
    fx.start();
    auto got = fx.ask("ann@d.test");
    auto stopped = std::make_shared<bool>(false);
    fx.sys->spawn([stopped, s = fx.scheduler](caf::event_based_actor* self) {
      self->request(s, caf::infinite, actors::smtp::scheduler_stop{})
          .then([stopped](bool ok) { *stopped = ok; });
    });
    fx.sched->run();
    CHECK(*stopped);
    REQUIRE(got->has_value());
    CHECK((*got)->rcpt.why_unasked == unasked_reason::stopped);
    fx.scheduler = actors::smtp::scheduler_actor{};
  }
}
