#include "net/smtp_client.hpp"
#include "tests/net/smtp/support.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using core::smtp::connect_failure;
using core::smtp::rcpt_verdict;
using core::smtp::session_failure;
using core::smtp::tls_policy;
using tests::peers::smtp_greeting;
using tests::peers::smtp_peer;
using tests::peers::smtp_peer_options;
using tests::peers::smtp_rcpt_behaviour;

namespace {

// Every test talks to 127.0.0.0/8 only, and says so to the client.
std::unique_ptr<net::smtp_client> make_client(net::smtp_client_config c = {},
                                              bool allow_loopback = true) {
  if (allow_loopback) {
    std::vector<std::string> allow{"127.0.0.0/8"};
    c.policy = core::smtp::target_policy::parse(allow).value();
  }
  auto made = net::smtp_client::create(std::move(c));
  REQUIRE(made.has_value());
  return std::move(*made);
}

core::smtp::session make_session(std::vector<std::string> addresses,
                                 tls_policy tls = tls_policy::opportunistic,
                                 std::string probe = {}) {
  core::smtp::session_config cfg;
  cfg.host = "mx.peer.test";
  cfg.helo = "probe.mailassay.test";
  cfg.mail_from = "verify@mailassay.test";
  cfg.tls = tls;
  auto s =
      core::smtp::session::make(cfg, {std::move(addresses), std::move(probe)});
  REQUIRE(s.has_value());
  return std::move(*s);
}

net::smtp_call call_to(const std::string& address, std::uint16_t port,
                       core::smtp::session s,
                       std::chrono::milliseconds step = 2000ms,
                       std::chrono::milliseconds budget = 5000ms) {
  return net::smtp_call{{"mx.peer.test", address, port, step,
                         std::chrono::steady_clock::now() + budget},
                        std::move(s)};
}

net::smtp_call_result run(net::smtp_client& c, net::smtp_call call) {
  auto promise = std::make_shared<std::promise<net::smtp_call_result>>();
  auto future = promise->get_future();
  c.run(std::move(call), [promise](net::smtp_call_result r) {
    promise->set_value(std::move(r));
  });
  REQUIRE(future.wait_for(15s) == std::future_status::ready);
  return future.get();
}

smtp_peer_options on(const char* address) {
  smtp_peer_options o;
  o.address = address;
  return o;
}

} // namespace

TEST_SUITE("net.smtp.client") {
  TEST_CASE("probes addresses over one connection") {
    smtp_peer peer(on("127.0.0.81"));
    peer.add_rule("ghost", smtp_rcpt_behaviour::no_such_user);
    auto client = make_client();
    auto r =
        run(*client, call_to(peer.address(), peer.port(),
                             make_session({"alice@d.test", "ghost@d.test"},
                                          tls_policy::never, "zq8rnd@d.test")));
    CHECK(r.report.transport == connect_failure::none);
    const auto& s = r.report.result;
    CHECK(s.failure == session_failure::none);
    REQUIRE(s.addresses.size() == 2);
    CHECK(s.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(s.addresses[1].rcpt.verdict == rcpt_verdict::no_such_user);
    // The random address was accepted, but a real one was refused as
    // unknown: the domain does not take everything (docs/smtp.md).
    CHECK(s.catch_all == false);
    CHECK(peer.connections() == 1);
    CHECK(peer.commands("RCPT") == 3);
    CHECK(peer.commands("QUIT") == 1);
    CHECK(client->counters().connected == 1);
    CHECK(client->counters().active == 0);
  }

  TEST_CASE("upgrades with STARTTLS when offered (opportunistic)") {
    auto o = on("127.0.0.82");
    o.starttls = true;
    smtp_peer peer(o);
    auto client = make_client();
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::none);
    CHECK(r.report.result.tls);
    CHECK(r.report.result.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(peer.tls_sessions() == 1);
    CHECK(client->counters().tls == 1);
  }

  TEST_CASE("goes on in clear when STARTTLS is not offered (opportunistic)") {
    smtp_peer peer(on("127.0.0.82"));
    auto client = make_client();
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK_FALSE(r.report.result.tls);
    CHECK(r.report.result.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("requires TLS when told to") {
    auto o = on("127.0.0.83");
    o.starttls = true;
    o.require_tls = true;
    smtp_peer with_tls(o);
    smtp_peer without(on("127.0.0.84"));
    auto client = make_client();
    auto ok = run(
        *client, call_to(with_tls.address(), with_tls.port(),
                         make_session({"alice@d.test"}, tls_policy::required)));
    CHECK(ok.report.result.tls);
    CHECK(ok.report.result.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    auto refused = run(
        *client, call_to(without.address(), without.port(),
                         make_session({"alice@d.test"}, tls_policy::required)));
    CHECK(refused.report.result.failure == session_failure::tls_unavailable);
    CHECK(refused.report.result.addresses[0].rcpt.verdict ==
          rcpt_verdict::not_attempted);
    CHECK(without.commands("MAIL") == 0);
  }

  TEST_CASE("verifying certificates fails on the peer's self-signed one") {
    auto o = on("127.0.0.85");
    o.starttls = true;
    smtp_peer peer(o);
    net::smtp_client_config c;
    c.verify_tls = true;
    auto client = make_client(c);
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK(r.report.result.failure == session_failure::tls_failed);
  }

  TEST_CASE("reports a refused connection") {
    auto client = make_client();
    auto port = tests::smtp::closed_port("127.0.0.86");
    auto r = run(*client,
                 call_to("127.0.0.86", port, make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::refused);
  }

  TEST_CASE("never connects to an address the policy refuses") {
    smtp_peer peer(on("127.0.0.87"));
    auto client = make_client({}, false);
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::blocked);
    CHECK(r.report.detail.find("loopback") != std::string::npos);
    CHECK(peer.connections() == 0);
    CHECK(client->counters().blocked == 1);
    CHECK(client->counters().connected == 0);
  }

  TEST_CASE("times out a tarpit greeting after the step time-out") {
    auto o = on("127.0.0.88");
    o.greeting = smtp_greeting::tarpit;
    smtp_peer peer(o);
    auto client = make_client();
    auto r =
        run(*client, call_to(peer.address(), peer.port(),
                             make_session({"alice@d.test"}), 300ms, 10000ms));
    CHECK(r.report.transport == connect_failure::none);
    CHECK(r.report.result.failure == session_failure::timeout);
    CHECK(r.elapsed >= 290ms);
    // The 300 ms step, not the 10 s budget: 5 s leaves a busy machine room.
    CHECK(r.elapsed < 5000ms);
  }

  TEST_CASE("the deadline bounds the whole session") {
    auto o = on("127.0.0.88");
    o.reply_delay = 150ms;
    smtp_peer peer(o);
    auto client = make_client();
    // Each reply comes within the step, but the session needs ~6 of them.
    auto r =
        run(*client, call_to(peer.address(), peer.port(),
                             make_session({"alice@d.test"}), 5000ms, 500ms));
    CHECK(r.report.result.failure == session_failure::timeout);
    // The 500 ms deadline, not a 5 s step: 3 s leaves a busy machine 2.5 s.
    CHECK(r.elapsed < 3000ms);
  }

  TEST_CASE("waits for a slow server and a dripping one") {
    auto slow_o = on("127.0.0.89");
    slow_o.reply_delay = 200ms;
    smtp_peer slow(slow_o);
    auto drip_o = on("127.0.0.90");
    drip_o.drip_delay = 2ms;
    smtp_peer drip(drip_o);
    auto client = make_client();
    // Each step waits up to 3 s, 15 times the slow server's delay and about
    // five times what the dripping greeting takes: room for a busy machine,
    // which once timed out against a 1 s step.
    for (auto* peer : {&slow, &drip}) {
      auto r = run(*client,
                   call_to(peer->address(), peer->port(),
                           make_session({"alice@d.test"}), 3000ms, 15000ms));
      CHECK(r.report.result.failure == session_failure::none);
      CHECK(r.report.result.addresses[0].rcpt.verdict ==
            rcpt_verdict::accepted);
    }
  }

  TEST_CASE("reports garbage, drops and busy greetings") {
    auto g = on("127.0.0.91");
    g.greeting = smtp_greeting::garbage;
    smtp_peer garbage(g);
    auto b = on("127.0.0.92");
    b.greeting = smtp_greeting::busy;
    smtp_peer busy(b);
    smtp_peer dropper(on("127.0.0.93"));
    dropper.add_rule("dropme", smtp_rcpt_behaviour::drop);
    auto client = make_client();
    auto r1 = run(*client, call_to(garbage.address(), garbage.port(),
                                   make_session({"alice@d.test"})));
    CHECK(r1.report.result.failure == session_failure::protocol_error);
    auto r2 = run(*client, call_to(busy.address(), busy.port(),
                                   make_session({"alice@d.test"})));
    CHECK(r2.report.result.failure == session_failure::greeting_rejected);
    CHECK(r2.report.result.failure_code == 421);
    auto r3 = run(
        *client,
        call_to(dropper.address(), dropper.port(),
                make_session({"alice@d.test", "dropme@d.test", "bob@d.test"})));
    const auto& s = r3.report.result;
    CHECK(s.failure == session_failure::connection_closed);
    CHECK(s.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(s.addresses[1].rcpt.verdict == rcpt_verdict::other_temporary);
    CHECK(s.addresses[2].rcpt.verdict == rcpt_verdict::not_attempted);
  }

  TEST_CASE("holds many tarpitted sessions without adding threads") {
    auto n = 500;
    if (auto* env = std::getenv("MAILASSAY_TEST_SMTP_TARPIT_SESSIONS"))
      n = std::atoi(env);
    tests::smtp::silent_listener tarpit("127.0.0.94");
    auto client = make_client();
    auto before = tests::smtp::thread_count();
    std::atomic<int> done{0};
    std::atomic<int> timeouts{0};
    auto started = std::chrono::steady_clock::now();
    for (int i = 0; i < n; ++i)
      client->run(call_to("127.0.0.94", tarpit.port(),
                          make_session({"alice@d.test"}), 3000ms, 3000ms),
                  [&](net::smtp_call_result r) {
                    if (r.report.result.failure == session_failure::timeout)
                      ++timeouts;
                    ++done;
                  });
    // All connected and waiting for a greeting (the counter, not a time;
    // none times out before 3 s).
    while (client->counters().connected < static_cast<std::uint64_t>(n) &&
           std::chrono::steady_clock::now() - started < 2500ms)
      std::this_thread::sleep_for(5ms);
    CHECK(client->counters().active == static_cast<std::uint64_t>(n));
    CHECK(client->counters().connected == static_cast<std::uint64_t>(n));
    CHECK(tests::smtp::thread_count() == before);
    while (done < n && std::chrono::steady_clock::now() - started <
                           std::chrono::seconds(15))
      std::this_thread::sleep_for(20ms);
    auto took = std::chrono::steady_clock::now() - started;
    CHECK(done == n);
    CHECK(timeouts == n);
    // Every session ends at its own 3 s time-out, together: 6 s leaves a
    // busy machine 3 s, far below sessions timed out one after another.
    CHECK(took < std::chrono::milliseconds(6000));
    MESSAGE(
        n << " tarpitted sessions, threads " << before << " -> "
          << tests::smtp::thread_count() << ", all ended in "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count()
          << " ms");
  }

  TEST_CASE("shutdown ends the calls in flight and refuses new ones") {
    tests::smtp::silent_listener tarpit("127.0.0.95");
    auto client = make_client();
    std::atomic<int> done{0};
    for (int i = 0; i < 20; ++i)
      client->run(call_to("127.0.0.95", tarpit.port(),
                          make_session({"alice@d.test"}), 30s, 30s),
                  [&](net::smtp_call_result) { ++done; });
    std::this_thread::sleep_for(200ms);
    auto t = std::chrono::steady_clock::now();
    client->shutdown();
    CHECK(std::chrono::steady_clock::now() - t < 2s);
    CHECK(done == 20);
    auto late = run(*client, call_to("127.0.0.95", tarpit.port(),
                                     make_session({"alice@d.test"})));
    CHECK(late.report.transport == connect_failure::other);
  }

  TEST_CASE("connects through a SOCKS5 proxy") {
    smtp_peer peer(on("127.0.0.96"));
    tests::smtp::socks5_server proxy;
    net::smtp_client_config c;
    c.socks5_proxy = proxy.endpoint();
    auto client = make_client(c);
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::none);
    CHECK(r.report.result.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(proxy.connects() == 1);
    CHECK(proxy.last_target() == "127.0.0.96:" + std::to_string(peer.port()));
    CHECK(peer.connections() == 1);
  }

  TEST_CASE("binds every connection to the source address") {
    smtp_peer peer(on("127.0.0.97"));
    net::smtp_client_config c;
    c.source_address = "127.0.0.42";
    std::vector<std::string> allow{"127.0.0.0/8", "::1/128"};
    c.policy = core::smtp::target_policy::parse(allow).value();
    auto client = make_client(c, false);
    auto r = run(*client, call_to(peer.address(), peer.port(),
                                  make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::none);
    CHECK(r.report.result.greeting_code == 220);
    CHECK(r.report.result.greeting.find("mx.peer.test") != std::string::npos);
    CHECK(peer.client_addresses() == std::vector<std::string>{"127.0.0.42"});

    net::smtp_client_config bad;
    bad.source_address = "not-an-ip";
    CHECK_FALSE(net::smtp_client::create(bad).has_value());
    // An IPv6 target from an IPv4 source: refused before connecting.
    auto v6 = run(*client,
                  call_to("::1", peer.port(), make_session({"alice@d.test"})));
    CHECK(v6.report.transport == connect_failure::other);
  }

  TEST_CASE("reports a SOCKS5 refusal and a bad proxy setting") {
    tests::smtp::socks5_server proxy(true);
    net::smtp_client_config c;
    c.socks5_proxy = proxy.endpoint();
    auto client = make_client(c);
    auto r =
        run(*client, call_to("127.0.0.97", 25, make_session({"alice@d.test"})));
    CHECK(r.report.transport == connect_failure::refused);
    net::smtp_client_config bad;
    bad.socks5_proxy = "proxy.example.org:1080";
    CHECK_FALSE(net::smtp_client::create(bad).has_value());
  }
}

TEST_SUITE("net.smtp.client.open_ended") {
  // An open-ended call: the test plays the scheduler's part, answering each
  // `on_need_more` with `give` or `finish`.
  struct open_call {
    std::mutex m;
    std::condition_variable cv;
    std::vector<core::smtp::session_result> needs;
    std::promise<net::smtp_call_result> done;
  };

  std::pair<net::smtp_client::call_id, std::shared_ptr<open_call>> start_open(
      net::smtp_client & client, const smtp_peer& peer,
      tls_policy tls = tls_policy::never) {
    core::smtp::session_config cfg;
    cfg.host = "mx.peer.test";
    cfg.helo = "probe.mailassay.test";
    cfg.mail_from = "verify@mailassay.test";
    cfg.tls = tls;
    core::smtp::session_request req;
    req.open_ended = true;
    auto s = core::smtp::session::make(cfg, req);
    REQUIRE(s.has_value());
    auto st = std::make_shared<open_call>();
    auto call = call_to(peer.address(), peer.port(), std::move(*s));
    call.on_need_more = [st](const core::smtp::session_result& r) {
      std::lock_guard guard{st->m};
      st->needs.push_back(r);
      st->cv.notify_all();
    };
    auto id = client.run(std::move(call), [st](net::smtp_call_result r) {
      st->done.set_value(std::move(r));
    });
    return {id, st};
  }

  // Waits for the `n`th `on_need_more` (from 1) and returns its result.
  core::smtp::session_result need(open_call & c, std::size_t n) {
    std::unique_lock guard{c.m};
    REQUIRE(c.cv.wait_for(guard, 10s, [&] { return c.needs.size() >= n; }));
    return c.needs[n - 1];
  }

  TEST_CASE("asks each address given, RSET between, and QUITs on finish") {
    smtp_peer peer(on("127.0.0.98"));
    peer.add_rule("ghost", smtp_rcpt_behaviour::no_such_user);
    auto client = make_client();
    auto [id, call] = start_open(*client, peer);
    CHECK(id != 0);
    // Ready after EHLO, nothing asked yet.
    CHECK(need(*call, 1).addresses.empty());
    client->give(id, "alice@d.test", "zq8rnd@d.test");
    auto first = need(*call, 2);
    REQUIRE(first.addresses.size() == 1);
    CHECK(first.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(first.catch_all == true);
    client->give(id, "ghost@d.test", "");
    auto second = need(*call, 3);
    REQUIRE(second.addresses.size() == 2);
    CHECK(second.addresses[1].rcpt.verdict == rcpt_verdict::no_such_user);
    client->finish(id);
    auto f = call->done.get_future();
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    auto r = f.get();
    CHECK(r.report.transport == connect_failure::none);
    CHECK(r.report.result.failure == session_failure::none);
    CHECK(peer.connections() == 1);
    CHECK(peer.commands("RSET") == 1);
    CHECK(peer.commands("QUIT") == 1);
    // A call that ended ignores late work.
    client->give(id, "late@d.test", "");
    client->finish(id);
    CHECK(client->counters().active == 0);
  }

  TEST_CASE("works over STARTTLS too") {
    auto o = on("127.0.0.99");
    o.starttls = true;
    smtp_peer peer(o);
    auto client = make_client();
    auto [id, call] = start_open(*client, peer, tls_policy::opportunistic);
    need(*call, 1);
    client->give(id, "alice@d.test", "");
    CHECK(need(*call, 2).addresses.at(0).rcpt.verdict ==
          rcpt_verdict::accepted);
    client->give(id, "bob@d.test", "");
    CHECK(need(*call, 3).addresses.at(1).rcpt.verdict ==
          rcpt_verdict::accepted);
    client->finish(id);
    auto r = call->done.get_future().get();
    CHECK(r.report.result.tls);
    CHECK(r.report.result.failure == session_failure::none);
    CHECK(peer.tls_sessions() == 1);
  }

  TEST_CASE("a session left waiting for work ends by its step time-out") {
    smtp_peer peer(on("127.0.0.100"));
    auto client = make_client();
    auto [id, call] = start_open(*client, peer);
    need(*call, 1);
    // Nobody answers: the step time-out (2 s here) ends it.
    auto f = call->done.get_future();
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    auto r = f.get();
    CHECK(r.report.result.failure == session_failure::timeout);
    CHECK(r.report.result.addresses.empty());
  }
}
