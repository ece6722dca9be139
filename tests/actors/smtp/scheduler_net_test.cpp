// The SMTP scheduler over real sockets: a threaded CAF system, the DNS
// peer resolving MX names to SMTP peers on 127.0.0.x (all on one port, as
// MX hosts on port 25 are). Nothing leaves 127.0.0.0/8. The scheduler's
// decisions are tested on the deterministic scheduler in scheduler_test.cpp;
// these check that the sockets, the client and the actor agree.
#include "actors/credits/ledger.hpp"
#include "actors/smtp/scheduler.hpp"
#include "actors/validation/validator.hpp"
#include "actors/validation_pool.hpp"
#include "config/settings.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/smtp_stage.hpp"
#include "core/validation/verdict.hpp"
#include "net/dns_resolver.hpp"
#include "tests/actors/smtp/mx_route.hpp"
#include "tests/net/smtp/support.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"
#include "tests/support/wait.hpp"

#include <caf/all.hpp>
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using actors::smtp::probe_address;
using actors::smtp::scheduler;
using actors::smtp::scheduler_config;
using core::smtp::address_outcome;
using core::smtp::rcpt_verdict;
using core::smtp::tls_policy;
using core::smtp::unasked_reason;
using mailassay::tests::smtp::mx_route;
using tests::peers::dns_peer;
using tests::peers::smtp_greeting;
using tests::peers::smtp_peer;
using tests::peers::smtp_peer_options;
using tests::peers::smtp_rcpt_behaviour;
using tests::peers::smtp_rcpt_rule;

namespace {

/// The answers to one batch of concurrent asks, in the order asked.
struct answers {
  std::vector<address_outcome> addresses;
  std::chrono::milliseconds elapsed{0};
};

// "<local><n>@<domain>", built with append (GCC 12 warns falsely on a + s).
std::string at(const std::string& local, int n, const std::string& domain) {
  std::string s = local;
  s.append(std::to_string(n)).append("@").append(domain);
  return s;
}

std::string name(const std::string& prefix, int n, const std::string& suffix) {
  std::string s = prefix;
  s.append(std::to_string(n)).append(suffix);
  return s;
}

struct fixture {
  fixture() {
    cfg.set("scheduler.max-threads", 2);
    cfg.set("logger.verbosity", caf::atom("quiet"));
    sys = std::make_unique<caf::actor_system>(cfg);
    net::dns_resolver_config rc;
    rc.servers = {dns.server()};
    rc.timeout = 300ms;
    rc.tries = 1;
    resolver = std::shared_ptr<net::dns_resolver>(
        std::move(net::dns_resolver::create(std::move(rc)).value()));
  }

  ~fixture() {
    if (p)
      p->stop();
    p.reset();
    resolver->shutdown();
    sys.reset();
  }

  // An SMTP peer for MX host `host` on `address`, in the DNS peer too.
  smtp_peer& mx(const std::string& host, const std::string& address,
                smtp_peer_options o = {}) {
    o.address = address;
    o.port = port;
    o.hostname = host;
    peers.push_back(std::make_unique<smtp_peer>(o));
    port = peers.back()->port();
    dns.add_a(host, address);
    return *peers.back();
  }

  scheduler_config config() {
    scheduler_config c;
    c.identity = {"probe.mailassay.io", "verify@mailassay.io"};
    c.allow_private_targets = {"127.0.0.0/8"};
    c.retry_delays = {300ms, 300ms};
    c.min_step = 200ms;
    c.quit_timeout = 200ms;
    c.tls = tls_policy::never;
    c.connections_per_second_per_host = 0;
    // Every ask reaches a server unless a test is about the cache.
    c.result_cache_ttl = 0s;
    return c;
  }

  void start(scheduler_config c) {
    if (port == 0)
      port = tests::smtp::closed_port("127.0.0.1");
    c.port = port;
    auto made = scheduler::create(*sys, std::move(c), resolver);
    REQUIRE(made.has_value());
    p = std::move(*made);
  }

  // Asks about every address at once; the future holds them all.
  std::future<answers>
  start_probe(std::string domain, std::vector<std::string> addresses,
              std::shared_ptr<const core::dns::mail_route> r,
              std::chrono::milliseconds budget = 3000ms, bool retry = true) {
    struct shared {
      std::mutex m;
      std::promise<answers> done;
      answers out;
      std::size_t left = 0;
      std::chrono::steady_clock::time_point t0 =
          std::chrono::steady_clock::now();
    };
    auto st = std::make_shared<shared>();
    auto future = st->done.get_future();
    st->out.addresses.resize(addresses.size());
    st->left = addresses.size();
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      probe_address req;
      req.domain = domain;
      req.address = addresses[i];
      req.route = r;
      req.budget = budget;
      req.retry_deferrals = retry;
      sys->spawn([st, i, req, h = p->handle()](caf::event_based_actor* self) {
        self->request(h, req.budget + 10s, req)
            .then([st, i](address_outcome& o) {
              std::lock_guard guard{st->m};
              st->out.addresses[i] = std::move(o);
              if (--st->left == 0) {
                st->out.elapsed =
                    std::chrono::duration_cast<std::chrono::milliseconds>(
                        std::chrono::steady_clock::now() - st->t0);
                st->done.set_value(std::move(st->out));
              }
            });
      });
    }
    return future;
  }

  std::future<answers> start_probe(std::string domain,
                                   std::vector<std::string> addresses,
                                   std::vector<std::string> hosts,
                                   std::chrono::milliseconds budget = 3000ms) {
    return start_probe(std::move(domain), std::move(addresses),
                       mx_route(std::move(hosts)), budget);
  }

  // Asks about a<i>@<prefix><i>.test for i < n at once, every domain
  // routed to MX host `host`.
  std::vector<std::future<answers>>
  start_probes(const std::string& prefix, int n, const std::string& host,
               std::chrono::milliseconds budget = 3000ms) {
    std::vector<std::future<answers>> all;
    for (int i = 0; i < n; ++i) {
      auto domain = name(prefix, i, ".test");
      all.push_back(start_probe(domain, {at("a", i, domain)}, {host}, budget));
    }
    return all;
  }

  // Waits until `n` sessions have been opened (the counter, not a time).
  bool sessions_opened(std::uint64_t n, std::chrono::milliseconds limit) {
    return mailassay::testing::eventually(
        [&] { return p->counters().sessions >= n; }, limit);
  }

  answers probe(std::string domain, std::vector<std::string> addresses,
                std::vector<std::string> hosts,
                std::chrono::milliseconds budget = 3000ms) {
    auto f = start_probe(std::move(domain), std::move(addresses),
                         std::move(hosts), budget);
    REQUIRE(f.wait_for(budget + 5s) == std::future_status::ready);
    return f.get();
  }

  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  dns_peer dns;
  std::shared_ptr<net::dns_resolver> resolver;
  std::vector<std::unique_ptr<smtp_peer>> peers;
  std::uint16_t port = 0;
  std::unique_ptr<scheduler> p;
};

smtp_peer_options with(smtp_greeting g) {
  smtp_peer_options o;
  o.greeting = g;
  return o;
}

// RCPT commands the peer received for addresses outside `asked`: the
// catch-all probes (random local parts).
std::size_t probe_rcpts(const smtp_peer& peer,
                        const std::vector<std::string>& asked) {
  std::size_t n = 0;
  for (const auto& line : peer.received()) {
    if (line.rfind("RCPT TO:<", 0) != 0)
      continue;
    auto address = line.substr(9, line.find('>') - 9);
    if (std::find(asked.begin(), asked.end(), address) == asked.end())
      ++n;
  }
  return n;
}

core::validation::verdict decide(const std::string& email,
                                 const address_outcome& o) {
  core::syntax::options opts;
  opts.allow_test_domains = true;
  static core::syntax::parsed_address a;
  a = core::syntax::parse(email, opts);
  core::validation::facts f;
  f.address = &a;
  f.route = core::dns::route_kind::mx;
  f.smtp = core::validation::facts_of(o);
  return core::validation::decide(f);
}

std::uint64_t opened(const fixture& fx, const std::string& host) {
  auto hosts = fx.p->hosts_in_use();
  auto it = hosts.find(host);
  return it == hosts.end() ? 0 : it->second.opened;
}

} // namespace

TEST_SUITE("actors.smtp.scheduler.net") {
  TEST_CASE("concurrent asks at one domain share one session and read each "
            "reply") {
    fixture fx;
    auto& peer = fx.mx("mx.one.test", "127.0.0.101");
    peer.add_rule("alice", smtp_rcpt_behaviour::accept);
    peer.add_rule("full", smtp_rcpt_behaviour::mailbox_full);
    peer.add_rule("off", smtp_rcpt_behaviour::disabled);
    peer.add_rule("spam", smtp_rcpt_behaviour::policy_block);
    peer.set_default({"*", smtp_rcpt_behaviour::no_such_user});
    fx.start(fx.config());
    auto r = fx.probe("one.test",
                      {"alice@one.test", "ghost@one.test", "full@one.test",
                       "off@one.test", "spam@one.test"},
                      {"mx.one.test"});
    REQUIRE(r.addresses.size() == 5);
    struct row {
      rcpt_verdict verdict;
      const char* status;
      const char* reason;
    };
    const row rows[] = {
        {rcpt_verdict::accepted, "valid", "accepted_email"},
        {rcpt_verdict::no_such_user, "invalid", "rejected_email"},
        {rcpt_verdict::mailbox_full, "risky", "mailbox_full"},
        {rcpt_verdict::disabled, "invalid", "mailbox_disabled"},
        {rcpt_verdict::blocked_by_policy, "unknown", "smtp_error"},
    };
    for (std::size_t i = 0; i < 5; ++i) {
      const auto& o = r.addresses[i];
      CAPTURE(o.address);
      CHECK(o.rcpt.verdict == rows[i].verdict);
      CHECK(o.host == "mx.one.test");
      CHECK(o.attempts == 1);
      CHECK(o.catch_all == false);
      auto v = decide(o.address, o);
      CHECK(to_string(v.state) == rows[i].status);
      CHECK(v.reason == rows[i].reason);
    }
    // One connection; RSET between the transactions. The catch-all probe
    // goes with the first address asked: when that is a refused one, the
    // 550 settles the domain and no probe is needed.
    CHECK(peer.connections() == 1);
    CHECK(peer.commands("RCPT") >= 5);
    CHECK(peer.commands("RCPT") <= 6);
    CHECK(peer.commands("RSET") == 4);
    CHECK(opened(fx, "mx.one.test") == 1);
  }

  TEST_CASE("a 452 moves the rest to the next session and caps the RCPTs") {
    fixture fx;
    smtp_peer_options o;
    o.max_rcpts_per_session = 2;
    auto& peer = fx.mx("mx.two.test", "127.0.0.102", o);
    fx.start(fx.config());
    auto r = fx.probe("two.test",
                      {"a@two.test", "b@two.test", "c@two.test", "d@two.test"},
                      {"mx.two.test"});
    for (auto& a : r.addresses)
      CHECK(a.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r.addresses[0].catch_all == true);
    // The first address and the probe fill the first session; the next is
    // refused with 452 there and asked again in the next one.
    std::size_t twice = 0;
    for (auto& a : r.addresses)
      twice += a.attempts == 2 ? 1 : 0;
    CHECK(twice == 1);
    CHECK(peer.connections() >= 2);
    CHECK(peer.connections() <= 4);
  }

  TEST_CASE("retries a greylisted address with the same sender, in the "
            "session that waits for work") {
    fixture fx;
    auto& peer = fx.mx("mx.grey.test", "127.0.0.103");
    peer.add_rule({"grey-*", smtp_rcpt_behaviour::greylist, 250ms, ""});
    peer.add_rule({"never", smtp_rcpt_behaviour::greylist, 60s, ""});
    auto c = fx.config();
    c.min_step = 2000ms; // lingers up to a second for the retries
    fx.start(c);
    auto r = fx.probe("grey.test", {"grey-1@grey.test", "never@grey.test"},
                      {"mx.grey.test"}, 6000ms);
    const auto& ok = r.addresses[0];
    CHECK(ok.rcpt.verdict == rcpt_verdict::accepted);
    CHECK(ok.deferrals == 1);
    CHECK(ok.attempts == 2);
    // Greylisted, then accepted: the facts say both.
    auto ok_facts = core::validation::facts_of(ok);
    CHECK(ok_facts.greylisted);
    CHECK_FALSE(ok_facts.deferred);
    CHECK(ok_facts.checked);
    CHECK(ok_facts.deliverable == true);
    const auto& grey = r.addresses[1];
    CHECK(grey.greylisted());
    CHECK(grey.deferrals == 3);
    auto facts = core::validation::facts_of(grey);
    CHECK(facts.greylisted);
    CHECK(facts.deferred);
    CHECK_FALSE(facts.deliverable.has_value());
    CHECK(r.elapsed >= 600ms);
    // Answered after the two 300 ms retries, not at the 6 s budget's end:
    // 4 s leaves a busy machine 3.4 s and stays 2 s short of the budget.
    CHECK(r.elapsed < 4000ms);
    CHECK(fx.p->counters().greylist_rechecks == 3);
    // Every attempt came from the same sender (greylisting keys on it).
    for (auto& line : peer.received())
      if (line.rfind("MAIL", 0) == 0)
        CHECK(line == "MAIL FROM:<verify@mailassay.io>");
  }

  TEST_CASE("finds a catch-all domain once and reuses the verdict") {
    fixture fx;
    auto& peer = fx.mx("mx.catch.test", "127.0.0.104");
    fx.start(fx.config());
    auto first =
        fx.probe("catch.test", {"alice@catch.test"}, {"mx.catch.test"});
    CHECK(first.addresses[0].catch_all == true);
    CHECK(peer.commands("RCPT") == 2);
    auto v = decide("alice@catch.test", first.addresses[0]);
    CHECK(v.reason == "catch_all");
    auto second = fx.probe("catch.test", {"bob@catch.test"}, {"mx.catch.test"});
    CHECK(second.addresses[0].catch_all == true);
    CHECK(peer.commands("RCPT") == 3); // no new probe RCPT
    CHECK(fx.p->counters().catch_all_probes == 1);
  }

  TEST_CASE("concurrent asks at one domain send one catch-all probe and "
            "share its verdict") {
    fixture fx;
    smtp_peer_options o;
    o.reply_delay = 20ms; // keeps the sessions overlapping
    auto& peer = fx.mx("mx.flight.test", "127.0.0.120", o);
    auto c = fx.config();
    c.max_sessions_per_host = 0;
    fx.start(c);
    std::vector<std::string> asked;
    for (int k = 0; k < 24; ++k)
      asked.push_back(at("u", k, "flight.test"));
    auto r = fx.probe("flight.test", asked, {"mx.flight.test"}, 6000ms);
    for (const auto& a : r.addresses) {
      CHECK(a.rcpt.verdict == rcpt_verdict::accepted);
      CHECK(a.catch_all == true);
    }
    CHECK(peer.sessions() >= 2); // more than one session ran at once
    CHECK(probe_rcpts(peer, asked) == 1);
    CHECK(peer.commands("RCPT") == asked.size() + 1);
    CHECK(fx.p->counters().catch_all_probes == 1);
  }

  TEST_CASE("a catch-all probe without an answer leaves the verdict null, "
            "and a later route asks again") {
    fixture fx;
    smtp_peer_options o;
    o.reply_delay = 20ms;
    auto& peer = fx.mx("mx.noanswer.test", "127.0.0.121", o);
    // Random local parts are letters and digits only: never "user-*".
    peer.add_rule("user-*", smtp_rcpt_behaviour::accept);
    // The random address is deferred: no verdict.
    peer.set_default({"*", smtp_rcpt_behaviour::greylist, 60s, ""});
    auto c = fx.config();
    c.session_linger = 0ms; // the route ends with its last answer
    fx.start(c);
    std::vector<std::string> asked;
    for (int g = 0; g < 4; ++g)
      asked.push_back(at("user-", g, "noanswer.test"));
    auto r = fx.probe("noanswer.test", asked, {"mx.noanswer.test"}, 4000ms);
    for (const auto& a : r.addresses) {
      CHECK(a.rcpt.verdict == rcpt_verdict::accepted);
      CHECK_FALSE(a.catch_all.has_value()); // null, never false
    }
    auto before = probe_rcpts(peer, asked);
    CHECK(before >= 1);
    CHECK(before <= 2);
    auto again = fx.probe("noanswer.test", {"user-9@noanswer.test"},
                          {"mx.noanswer.test"});
    asked.push_back("user-9@noanswer.test");
    CHECK_FALSE(again.addresses[0].catch_all.has_value());
    CHECK(probe_rcpts(peer, asked) == before + 1);
  }

  TEST_CASE("a mailbox refused as unknown caches false over a cached true") {
    fixture fx;
    auto& peer = fx.mx("mx.turn.test", "127.0.0.122");
    fx.start(fx.config());
    auto first = fx.probe("turn.test", {"alice@turn.test"}, {"mx.turn.test"});
    CHECK(first.addresses[0].catch_all == true);
    peer.add_rule("ghost", smtp_rcpt_behaviour::no_such_user);
    auto second = fx.probe("turn.test", {"ghost@turn.test", "bob@turn.test"},
                           {"mx.turn.test"});
    CHECK(second.addresses[0].rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(second.addresses[0].catch_all == false);
    // bob may have been answered before ghost's reply (with the cached
    // true); every answer after it says false.
    auto third = fx.probe("turn.test", {"carol@turn.test"}, {"mx.turn.test"});
    CHECK(third.addresses[0].catch_all == false);
    CHECK(peer.commands("RCPT") == 5); // one probe RCPT in all
  }

  TEST_CASE("resolves an MX host's addresses once for several asks") {
    fixture fx;
    fx.mx("mx.dnsonce.test", "127.0.0.123");
    fx.start(fx.config());
    auto a =
        fx.start_probe("dnsonce.test", {"a@dnsonce.test"}, {"mx.dnsonce.test"});
    auto b =
        fx.start_probe("dnsonce.test", {"b@dnsonce.test"}, {"mx.dnsonce.test"});
    REQUIRE(a.wait_for(5s) == std::future_status::ready);
    REQUIRE(b.wait_for(5s) == std::future_status::ready);
    auto c = fx.probe("dnsonce.test", {"c@dnsonce.test"}, {"mx.dnsonce.test"});
    CHECK(a.get().addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(b.get().addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(c.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    using tests::peers::dns_type;
    CHECK(fx.dns.queries("mx.dnsonce.test", dns_type::a) == 1);
    CHECK(fx.dns.queries("mx.dnsonce.test", dns_type::aaaa) == 1);
  }

  TEST_CASE("with deferral retries off a greylisted address comes back at "
            "once") {
    fixture fx;
    auto& peer = fx.mx("mx.park.test", "127.0.0.124");
    peer.add_rule({"grey-*", smtp_rcpt_behaviour::greylist, 250ms, ""});
    auto c = fx.config();
    c.retry_delays = {1500ms, 1500ms};
    c.min_step = 2000ms;
    fx.start(c);
    auto f =
        fx.start_probe("park.test", {"grey-1@park.test", "alice@park.test"},
                       mx_route({"mx.park.test"}), 5000ms, false);
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    auto r = f.get();
    const auto& grey = r.addresses[0];
    CHECK(grey.greylisted());
    CHECK(grey.attempts == 1);
    CHECK(grey.deferrals == 1);
    CHECK_FALSE(grey.timed_out);
    auto v = decide(grey.address, grey);
    CHECK(v.state == core::validation::status::unknown);
    CHECK(v.reason == "smtp_error"); // as when the retries run out
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::accepted);
    // No retry: one attempt, no re-check scheduled (the counters say so; a
    // clock would only say how busy the machine was).
    CHECK(fx.p->counters().greylist_rechecks == 0);
    CHECK(peer.sessions() == 1);
    // The same address with retries on waits and gets the mailbox's answer.
    auto f2 = fx.start_probe("park.test", {"grey-2@park.test"},
                             mx_route({"mx.park.test"}), 5000ms, true);
    REQUIRE(f2.wait_for(6s) == std::future_status::ready);
    auto r2 = f2.get();
    CHECK(r2.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r2.addresses[0].attempts == 2);
    CHECK(r2.elapsed >= 1500ms);
  }

  TEST_CASE("submit_group honours smtp_retry_deferrals per request") {
    fixture fx;
    auto& peer = fx.mx("mx.mixed.test", "127.0.0.125");
    peer.add_rule({"grey-*", smtp_rcpt_behaviour::greylist, 250ms, ""});
    fx.dns.add_mx("mixed.test", 10, "mx.mixed.test");
    fx.start(fx.config());
    core::syntax::options syntax;
    syntax.allow_test_domains = true;
    auto v = std::make_shared<actors::validation::validator>(
        std::make_shared<const core::risk::lists>(), fx.resolver, syntax);
    auto ledger = actors::credits::spawn_ledger(
        *fx.sys, nullptr, std::make_shared<actors::credits::ledger_counters>());
    actors::validation_pool pool{*fx.sys, v, 1, ledger, fx.p->handle()};
    std::vector<actors::validation::request> reqs(2);
    reqs[0].email = "grey-1@mixed.test";
    reqs[0].smtp_retry_deferrals = false; // parked by the caller
    reqs[1].email = "grey-2@mixed.test";
    for (auto& r : reqs) {
      r.smtp = true;
      r.credits_prepaid = true;
      r.timeout_ms = 4000;
    }
    std::vector<std::promise<actors::validation::result>> done(2);
    pool.submit_group(reqs,
                      [&done](std::size_t i, actors::validation::result r) {
                        done[i].set_value(std::move(r));
                      });
    auto parked = done[0].get_future();
    auto waited = done[1].get_future();
    REQUIRE(parked.wait_for(5s) == std::future_status::ready);
    REQUIRE(waited.wait_for(5s) == std::future_status::ready);
    auto a = parked.get();
    auto b = waited.get();
    CHECK(a.smtp.greylisted);
    CHECK(a.smtp.deferred);
    CHECK(core::validation::recheck_later(a.smtp));
    CHECK(a.smtp_reply.attempts == 1);
    CHECK(a.credits_used == 1); // a server answered (450)
    CHECK(a.verdict.state == core::validation::status::unknown);
    CHECK(b.smtp.deliverable == true);
    CHECK(b.smtp_reply.attempts == 2);
    CHECK(b.smtp.greylisted);
    CHECK(b.credits_used == 1);
    pool.stop();
    caf::anon_send_exit(ledger, caf::exit_reason::user_shutdown);
  }

  TEST_CASE("a tarpit uses its caller's budget while another domain is "
            "answered") {
    fixture fx;
    fx.mx("mx.tarpit.test", "127.0.0.105", with(smtp_greeting::tarpit));
    fx.mx("mx.healthy.test", "127.0.0.106");
    fx.start(fx.config());
    // The healthy domain is answered while the tarpit still holds its
    // caller (an order, not a time: a busy machine may take a while).
    auto tarpit = fx.start_probe("tarpit.test", {"a@tarpit.test"},
                                 {"mx.tarpit.test"}, 2000ms);
    auto healthy =
        fx.probe("healthy.test", {"a@healthy.test"}, {"mx.healthy.test"});
    CHECK(healthy.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(tarpit.wait_for(0ms) != std::future_status::ready);
    REQUIRE(tarpit.wait_for(5s) == std::future_status::ready);
    auto r = tarpit.get();
    // Its own budget (to the millisecond the clocks round to), not a
    // command time-out or the request's 10 s margin; the upper bound leaves
    // a loaded machine 1.5 s to run the timer.
    CHECK(r.elapsed >= 1990ms);
    CHECK(r.elapsed < 3500ms);
    CHECK(r.addresses[0].timed_out);
    CHECK_FALSE(r.addresses[0].answered);
    CHECK(decide("a@tarpit.test", r.addresses[0]).reason == "timeout");
  }

  TEST_CASE("waits for a slow dripping server within the budget") {
    fixture fx;
    smtp_peer_options o;
    o.drip_delay = 2ms;
    o.reply_delay = 100ms;
    fx.mx("mx.slow.test", "127.0.0.107", o);
    fx.start(fx.config());
    auto r = fx.probe("slow.test", {"a@slow.test"}, {"mx.slow.test"}, 4000ms);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("a drop mid-session leaves that address undecided, the others "
            "answered") {
    fixture fx;
    auto& peer = fx.mx("mx.drop.test", "127.0.0.108");
    peer.add_rule("dropme", smtp_rcpt_behaviour::drop);
    fx.start(fx.config());
    auto r = fx.probe("drop.test",
                      {"a@drop.test", "dropme@drop.test", "b@drop.test"},
                      {"mx.drop.test"});
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::other_temporary);
    CHECK_FALSE(r.addresses[1].timed_out);
    CHECK(r.addresses[2].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(decide("dropme@drop.test", r.addresses[1]).reason == "smtp_error");
  }

  TEST_CASE("falls to the next MX after garbage, a busy greeting or a "
            "refused port") {
    fixture fx;
    fx.mx("mx1.garbage.test", "127.0.0.109", with(smtp_greeting::garbage));
    fx.mx("mx1.busy.test", "127.0.0.110", with(smtp_greeting::busy));
    auto& good = fx.mx("mx2.good.test", "127.0.0.111");
    fx.dns.add_a("mx1.refused.test", "127.0.0.112"); // nothing listens
    fx.start(fx.config());
    // One domain per case: a domain's route outlives its last answer for a
    // moment (an idle session lingers), with the MX hosts it started with.
    int n = 0;
    for (auto first :
         {"mx1.garbage.test", "mx1.busy.test", "mx1.refused.test"}) {
      CAPTURE(first);
      auto domain = name("d", ++n, ".test");
      auto r = fx.probe(domain, {"a@" + domain}, {first, "mx2.good.test"});
      CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
      CHECK(r.addresses[0].host == "mx2.good.test");
      CHECK(opened(fx, first) == 1);
    }
    auto refused = fx.probe("e.test", {"a@e.test"}, {"mx1.refused.test"});
    CHECK(refused.addresses[0].rcpt.why_unasked ==
          unasked_reason::all_hosts_failed);
    CHECK_FALSE(refused.addresses[0].answered);
    CHECK(good.connections() == 3);
  }

  TEST_CASE("skips an MX host without addresses") {
    fixture fx;
    fx.mx("mx2.noaddr.test", "127.0.0.113");
    fx.start(fx.config());
    auto r = fx.probe("noaddr.test", {"a@noaddr.test"},
                      {"mx1.noaddr.test", "mx2.noaddr.test"});
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(fx.p->counters().sessions == 1);
  }

  TEST_CASE("upgrades with STARTTLS, or requires it") {
    fixture fx;
    smtp_peer_options tls;
    tls.starttls = true;
    auto& secure = fx.mx("mx.tls.test", "127.0.0.114", tls);
    auto& plain = fx.mx("mx.plain.test", "127.0.0.115");
    auto c = fx.config();
    c.tls = tls_policy::opportunistic;
    fx.start(c);
    auto a = fx.probe("tls.test", {"a@tls.test"}, {"mx.tls.test"});
    CHECK(a.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(secure.tls_sessions() == 1);
    auto b = fx.probe("plain.test", {"a@plain.test"}, {"mx.plain.test"});
    CHECK(b.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    fx.p->stop();
    auto strict = fx.config();
    strict.tls = tls_policy::required;
    fx.start(strict);
    auto d = fx.probe("tls.test", {"a@tls.test"}, {"mx.tls.test"});
    CHECK(d.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(secure.tls_sessions() == 2);
    auto e = fx.probe("plain.test", {"a@plain.test"}, {"mx.plain.test"});
    CHECK(e.addresses[0].rcpt.verdict == rcpt_verdict::not_attempted);
    CHECK(e.addresses[0].rcpt.why_unasked == unasked_reason::all_hosts_failed);
    CHECK(plain.commands("MAIL") == 1); // only the opportunistic probe
  }

  TEST_CASE("never connects to loopback with an empty allow-list") {
    fixture fx;
    auto& peer = fx.mx("mx.local.test", "127.0.0.1");
    auto c = fx.config();
    c.allow_private_targets.clear();
    fx.start(c);
    auto r = fx.probe("local.test", {"a@local.test"}, {"mx.local.test"});
    CHECK(peer.connections() == 0);
    const auto& o = r.addresses[0];
    CHECK(o.unroutable);
    CHECK(o.rcpt.why_unasked == unasked_reason::unroutable_mx);
    auto v = decide("a@local.test", o);
    CHECK(v.state == core::validation::status::unknown);
    CHECK(v.reason == "unroutable_mx");
    CHECK(fx.p->counters().blocked == 1);
    // An MX given as an IP literal, and an implicit MX, are checked too.
    auto literal = fx.probe("local.test", {"a@local.test"}, {"127.0.0.1"});
    CHECK(literal.addresses[0].unroutable);
    auto implicit = std::make_shared<core::dns::mail_route>();
    implicit->kind = core::dns::route_kind::implicit_mx;
    implicit->addresses = {"127.0.0.1", "::1"};
    auto imp =
        fx.start_probe("local.test", {"a@local.test"}, implicit, 1000ms).get();
    CHECK(imp.addresses[0].unroutable);
    CHECK(fx.p->counters().blocked == 4);
    CHECK(peer.connections() == 0);
  }

  TEST_CASE("holds at most max_sessions_per_host sessions per host, across "
            "domains") {
    fixture fx;
    smtp_peer_options o;
    o.reply_delay = 30ms;
    auto& peer = fx.mx("mx.busy.test", "127.0.0.116", o);
    auto c = fx.config();
    c.max_sessions_per_host = 2;
    c.min_step = 2000ms;
    // Idle sessions would linger past every budget: they must give way.
    c.session_linger = 30s;
    fx.start(c);
    auto all = fx.start_probes("d", 6, "mx.busy.test");
    for (auto& f : all) {
      REQUIRE(f.wait_for(8s) == std::future_status::ready);
      CHECK(f.get().addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    }
    CHECK(peer.connections() == 6);
    CHECK(peer.peak_dialogues() == 2);
    CHECK(fx.p->hosts_in_use()["mx.busy.test"].peak == 2);
  }

  // Issue #30: two MX hosts of one provider (their names end in
  // prov.test, which the test's own table maps to "google") are one
  // budget. Both names lead to one SMTP peer, so its peak of dialogues at
  // once is the provider's peak.
  void provider_budget_case(std::size_t expected_peak,
                            std::vector<std::string> limits,
                            std::size_t rcpts_per_session = 5) {
    fixture fx;
    smtp_peer_options o;
    o.reply_delay = 20ms;
    auto& peer = fx.mx("mx1.prov.test", "127.0.0.118", o);
    fx.dns.add_a("mx2.prov.test", "127.0.0.118");
    auto c = fx.config();
    c.max_sessions_per_host = 2;
    c.max_rcpts_per_session = 5;
    auto table = core::provider::table::parse("prov.test google mailbox\n");
    REQUIRE(table.has_value());
    c.providers =
        std::make_shared<const core::provider::table>(std::move(*table));
    auto parsed = core::smtp::parse_provider_limits(limits);
    REQUIRE(parsed.has_value());
    c.provider_limits = std::move(*parsed);
    fx.start(c);
    // 200 distinct addresses at two domains, one per MX host, all at once.
    std::vector<std::string> one, two;
    for (int i = 0; i < 100; ++i) {
      one.push_back(at("a", i, "one.test"));
      two.push_back(at("b", i, "two.test"));
    }
    // As the resolver names them, from the route's first MX host.
    auto routed = [&](const std::string& host) {
      auto r = *mx_route({host});
      r.provider = *c.providers->find(host);
      return std::make_shared<const core::dns::mail_route>(std::move(r));
    };
    auto f1 = fx.start_probe("one.test", one, routed("mx1.prov.test"), 20000ms);
    auto f2 = fx.start_probe("two.test", two, routed("mx2.prov.test"), 20000ms);
    REQUIRE(f1.wait_for(30s) == std::future_status::ready);
    REQUIRE(f2.wait_for(30s) == std::future_status::ready);
    for (auto* f : {&f1, &f2})
      for (auto& a : f->get().addresses) {
        CAPTURE(a.address);
        CHECK(a.rcpt.verdict == rcpt_verdict::accepted);
      }
    CHECK(peer.peak_dialogues() <= expected_peak);
    // 200 addresses at 5 a session keep the budget full.
    CHECK(peer.peak_dialogues() == expected_peak);
    // /metrics's answers per provider: the table's names and none, each
    // answer counted once, under its route's provider.
    const auto& k = fx.p->counters();
    CHECK(k.provider_names() == std::vector<std::string>{"google", "none"});
    auto accepted =
        static_cast<std::size_t>(actors::smtp::answer_class::accepted);
    CHECK(k.provider_answers(k.provider_index("google"))[accepted] == 200);
    CHECK(k.provider_answers(k.provider_index("none"))[accepted] == 0);
    CHECK(k.provider_index("yahoo") == k.provider_index("none"));
    // No session sent more RCPTs than the provider's cap (the per-host 5
    // unless overridden).
    CHECK(peer.commands("RCPT") <= rcpts_per_session * peer.sessions());
    CHECK(peer.commands("RCPT") >= 200);
  }

  TEST_CASE("all MX hosts of one provider share the per-host budget "
            "(issue #30)") {
    provider_budget_case(2, {});
  }

  TEST_CASE("a per-provider override sets the provider's budget "
            "(issue #30)") {
    provider_budget_case(3, {"google=3", "yahoo=1/1"});
  }

  TEST_CASE("a per-provider RCPT cap applies to every MX host of the "
            "provider (issue #30)") {
    provider_budget_case(2, {"google=//2"}, 2);
  }

  TEST_CASE("spaces new connections per host by the configured rate") {
    fixture fx;
    auto& peer = fx.mx("mx.rate.test", "127.0.0.117");
    auto c = fx.config();
    c.max_sessions_per_host = 0;
    c.connections_per_second_per_host = 4;
    fx.start(c);
    auto t0 = std::chrono::steady_clock::now();
    auto all = fx.start_probes("r", 10, "mx.rate.test", 8000ms);
    for (auto& f : all)
      REQUIRE(f.wait_for(13s) == std::future_status::ready);
    // Four at once, then one every 250 ms: the tenth at 1.5 s.
    auto took = std::chrono::steady_clock::now() - t0;
    CHECK(took >= 1450ms);
    // One a second (the rate ignored) would take 6 s: 3.5 s leaves a busy
    // machine 2 s and stays 2.5 s short of that.
    CHECK(took < 3500ms);
    CHECK(peer.connections() == 10);
  }

  TEST_CASE("many asks against a tarpit add no threads") {
    fixture fx;
    tests::smtp::silent_listener tarpit("127.0.0.118");
    fx.port = tarpit.port();
    fx.dns.add_a("mx.pit.test", "127.0.0.118");
    auto c = fx.config();
    c.max_sessions_per_host = 0;
    fx.start(c);
    // Warm up: the resolver and the scheduler threads exist already.
    fx.probe("warm.test", {"a@warm.test"}, {"mx.pit.test"}, 200ms);
    auto before = tests::smtp::thread_count();
    auto all = fx.start_probes("p", 300, "mx.pit.test", 1500ms);
    CHECK(fx.sessions_opened(301, 5s));
    CHECK(tests::smtp::thread_count() == before);
    for (auto& f : all) {
      REQUIRE(f.wait_for(5s) == std::future_status::ready);
      CHECK(f.get().addresses[0].timed_out);
    }
  }

  TEST_CASE("asks queued behind a tarpit's busy slots end at their "
            "deadline") {
    fixture fx;
    tests::smtp::silent_listener tarpit("127.0.0.119");
    fx.port = tarpit.port();
    fx.dns.add_a("mx.slots.test", "127.0.0.119");
    auto c = fx.config();
    c.max_sessions_per_host = 2;
    c.connections_per_second_per_host = 0;
    fx.start(c);
    // Two asks with a long budget take both slots first (a condition: the
    // session counter, not a time), so the six asked next wait behind them.
    auto holders = fx.start_probes("h", 2, "mx.slots.test", 4000ms);
    REQUIRE(fx.sessions_opened(2, 3s));
    REQUIRE(fx.p->counters().sessions == 2);
    auto queued = fx.start_probes("q", 6, "mx.slots.test", 600ms);
    for (auto& f : queued) {
      REQUIRE(f.wait_for(5s) == std::future_status::ready);
      auto r = f.get();
      // Its own 600 ms deadline, not a slot freed at the holders' 4 s: 3 s
      // leaves a busy machine 2.4 s and stays 1 s short of the slots.
      CHECK(r.elapsed < 3000ms);
      CHECK(r.addresses[0].timed_out);
    }
    // An order, not a time: every queued ask ended while both slots were
    // still held, and none of them opened a session.
    for (auto& h : holders)
      CHECK(h.wait_for(0ms) != std::future_status::ready);
    CHECK(fx.p->counters().sessions == 2);
    for (auto& h : holders) {
      REQUIRE(h.wait_for(8s) == std::future_status::ready);
      CHECK(h.get().addresses[0].timed_out);
    }
    // Idle afterwards: the tarpitted sessions end by their own timer and
    // nothing opens for the queued asks once the slots are free.
    std::this_thread::sleep_for(300ms);
    CHECK(fx.p->counters().sessions.load() == 2);
  }

  TEST_CASE("stop answers asks in flight, and later ones at once") {
    fixture fx;
    fx.mx("mx.stop.test", "127.0.0.119", with(smtp_greeting::tarpit));
    fx.start(fx.config());
    auto f =
        fx.start_probe("stop.test", {"a@stop.test"}, {"mx.stop.test"}, 30s);
    fx.sessions_opened(1, 5s);
    fx.p->stop();
    REQUIRE(f.wait_for(2s) == std::future_status::ready);
    CHECK(f.get().addresses[0].rcpt.why_unasked == unasked_reason::stopped);
  }

  TEST_CASE("refuses a local identity at start unless forced") {
    fixture fx;
    auto c = fx.config();
    c.identity.helo = "localhost.localdomain";
    CHECK_FALSE(scheduler::create(*fx.sys, c, fx.resolver).has_value());
    c.force_identity = true;
    auto forced = scheduler::create(*fx.sys, c, fx.resolver);
    REQUIRE(forced.has_value());
    (*forced)->stop();
    auto d = fx.config();
    d.identity.mail_from = "me@gmail.com";
    d.is_free_mail = [](std::string_view domain) {
      return domain == "gmail.com";
    };
    CHECK_FALSE(scheduler::create(*fx.sys, d, fx.resolver).has_value());
    auto e = fx.config();
    e.allow_private_targets = {"nonsense"};
    CHECK_FALSE(scheduler::create(*fx.sys, e, fx.resolver).has_value());
  }

  TEST_CASE("a route without MX hosts probes nothing") {
    fixture fx;
    fx.start(fx.config());
    auto none = std::make_shared<core::dns::mail_route>();
    none->kind = core::dns::route_kind::null_mx;
    auto r = fx.start_probe("null.test", {"a@null.test"}, none, 1000ms).get();
    REQUIRE(r.addresses.size() == 1);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::not_attempted);
    CHECK(r.addresses[0].rcpt.why_unasked == unasked_reason::no_mx_address);
    CHECK(fx.p->counters().sessions == 0);
  }

  TEST_CASE("builds its settings from the [smtp] section") {
    config::smtp_settings s;
    s.tls = tls_policy::required;
    s.retry_delays_ms = {100, 200};
    s.allow_private_targets = {"127.0.0.0/8"};
    auto c = actors::smtp::make_scheduler_config(s, "Mail.Example.IO");
    CHECK(c.identity.helo == "mail.example.io");
    CHECK(c.identity.mail_from.empty());
    CHECK(c.tls == tls_policy::required);
    CHECK(c.retry_delays ==
          std::vector<std::chrono::milliseconds>{100ms, 200ms});
    CHECK(c.port == 25);
    CHECK(c.max_sessions_per_host == 4);
    CHECK(c.connections_per_second_per_host == 2);
    CHECK(c.max_rcpts_per_session == 20);
    CHECK(c.share_sessions);
    CHECK(c.session_linger == 1000ms);
    CHECK(c.result_cache_ttl == 300s);
    CHECK(c.allow_private_targets == s.allow_private_targets);
    s.share_sessions = false;
    s.result_cache_seconds = 0;
    s.max_rcpts_per_session = 5;
    auto off = actors::smtp::make_scheduler_config(s, "a1b2c3d4");
    CHECK_FALSE(off.share_sessions);
    CHECK(off.result_cache_ttl == 0s);
    CHECK(off.max_rcpts_per_session == 5);
    CHECK(off.identity.helo.empty());
    s.helo = "probe.example.io";
    CHECK(actors::smtp::make_scheduler_config(s, "a1b2c3d4").identity.helo ==
          "probe.example.io");
  }
}
