// SMTP probing against a real MTA: Debian's Postfix, run privately on
// loopback by scripts/lib/test-postfix.sh (virtual mailboxes alice, bob and
// carol at postfix.test; every local part at catchall.postfix.test; relay
// refused elsewhere). Skipped in test_http: ctest runs this suite as
// test_http_postfix, registered only when MAILASSAY_TEST_POSTFIX
// ("address:port") was set at configure time.

#include "tests/http/fixtures.hpp"
#include "tests/http/tcp_relay.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <netinet/in.h>
#include <set>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace mailassay::testing;
using mailassay::testing::tcp_relay;
using mailassay::tests::peers::dns_peer;

namespace {

/// Where the private Postfix listens.
struct postfix_address {
  std::string ip;
  std::string port;
};

postfix_address postfix_under_test() {
  const char* value = std::getenv("MAILASSAY_TEST_POSTFIX");
  REQUIRE_MESSAGE(value != nullptr,
                  "MAILASSAY_TEST_POSTFIX is not set: run "
                  "scripts/lib/test-postfix.sh and export its last line");
  std::string s = value;
  auto colon = s.rfind(':');
  REQUIRE_MESSAGE(colon != std::string::npos, s);
  postfix_address out{s.substr(0, colon), s.substr(colon + 1)};
  // Tests never leave the machine.
  REQUIRE_MESSAGE(out.ip.rfind("127.", 0) == 0, s);
  return out;
}

// Asks the instance about box000@load.postfix.test over a plain socket:
// true when it takes it (its configuration has the load domain; a run of
// an older scripts/lib/test-postfix.sh rewrites the shared instance without
// it).
bool serves_load_domain(const postfix_address& mta) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<std::uint16_t>(std::stoi(mta.port)));
  ::inet_pton(AF_INET, mta.ip.c_str(), &a.sin_addr);
  timeval tv{5, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  std::string last;
  auto reply = [&] {
    std::string line;
    char c;
    for (;;) {
      if (::recv(fd, &c, 1, 0) != 1)
        return std::string{};
      line += c;
      if (c == '\n') {
        if (line.size() < 4 || line[3] != '-')
          return line;
        line.clear();
      }
    }
  };
  auto say = [&](const std::string& cmd) {
    auto text = cmd + "\r\n";
    ::send(fd, text.data(), text.size(), MSG_NOSIGNAL);
    return reply();
  };
  bool ok = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      reply().rfind("220", 0) == 0 &&
      say("EHLO probe.example.io").rfind("250", 0) == 0 &&
      say("MAIL FROM:<>").rfind("250", 0) == 0)
    ok = say("RCPT TO:<box000@load.postfix.test>").rfind("250", 0) == 0;
  say("QUIT");
  ::close(fd);
  return ok;
}

struct postfix_env {
  postfix_address mta = postfix_under_test();
  dns_peer dns;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;
  std::string key;

  /// Counts the connections to load.postfix.test's MX: a relay on
  /// 127.0.0.26 in front of the instance, or on 127.0.0.27 when the instance
  /// itself listens on 127.0.0.26 (scripts/check-fresh runs one there).
  std::string relay_ip = mta.ip == "127.0.0.26" ? "127.0.0.27" : "127.0.0.26";
  std::unique_ptr<tcp_relay> relay = std::make_unique<tcp_relay>(
      relay_ip, static_cast<std::uint16_t>(std::stoi(mta.port)), mta.ip,
      static_cast<std::uint16_t>(std::stoi(mta.port)));

  explicit postfix_env(std::map<std::string, std::string> extra = {}) {
    dns.load_zone("mx.postfix.test A " + mta.ip + R"(
postfix.test MX 10 mx.postfix.test
catchall.postfix.test MX 10 mx.postfix.test
elsewhere.test MX 10 mx.postfix.test
load.postfix.test MX 10 mx.load.postfix.test
)");
    dns.load_zone("mx.load.postfix.test A " + relay_ip + "\n");
    // The service's default politeness (4 sessions, 2 connections per
    // second per MX host) is kept: this is how it meets real servers.
    auto env = smtp_server_env(dns.server(), mta.port,
                               {{"MAILASSAY_SMTP_TLS", "opportunistic"},
                                {"MAILASSAY_BATCH_POLL_MS", "100"}});
    for (auto& [k, v] : extra)
      env[k] = v;
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
    std::tie(jwt, key) = smtp_account(*a, "P");
  }

  /// One load run's figures.
  struct load_run {
    std::size_t answers = 0, wrong = 0, unknown = 0, errors = 0;
    std::vector<double> latencies_ms;
    double wall_ms = 0;
  };

  /// `total` validations, `concurrency` at a time, over the 200 addresses
  /// of load.postfix.test: every fifth is a mailbox that does not exist
  /// (nobox...), the others are box000 ... box199. Checks each answer.
  load_run load(int total, int concurrency) {
    load_run out;
    std::mutex m;
    std::atomic<int> next{0};
    auto address = [](int k) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%s%03d@load.postfix.test",
                    k % 5 == 4 ? "nobox" : "box", k);
      return std::string{buf};
    };
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (int t = 0; t < concurrency; ++t)
      threads.emplace_back([&] {
        for (int j; (j = next++) < total;) {
          auto k = j % 200;
          auto start = std::chrono::steady_clock::now();
          auto r = a->post(
              "/v2/email/validate",
              {{"email", address(k)}, {"smtp", true}, {"timeout", 30000}}, key);
          double ms = std::chrono::duration<double, std::milli>(
                          std::chrono::steady_clock::now() - start)
                          .count();
          std::lock_guard guard{m};
          out.latencies_ms.push_back(ms);
          if (r.status != 200) {
            ++out.errors;
            continue;
          }
          ++out.answers;
          auto b = json::parse(r.body);
          bool exists = k % 5 != 4;
          if (b["status"] == "unknown")
            ++out.unknown;
          if (b["status"] != (exists ? "valid" : "invalid") ||
              b["reason"] != (exists ? "accepted_email" : "rejected_email") ||
              b["smtp"]["checked"] != true || b["creditsUsed"] != 1)
            ++out.wrong;
        }
      });
    for (auto& th : threads)
      th.join();
    out.wall_ms = std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
    std::sort(out.latencies_ms.begin(), out.latencies_ms.end());
    return out;
  }

  json validate(const std::string& email) {
    auto r =
        a->post("/v2/email/validate",
                {{"email", email}, {"smtp", true}, {"timeout", 20000}}, key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }
};

} // namespace

TEST_SUITE("api.postfix" * doctest::skip()) {
  TEST_CASE("1000 validations, 100 at a time, over 200 addresses at one "
            "domain share a few polite sessions and are all answered right") {
    // The service's default politeness (4 sessions, 2 connections/s per MX
    // host, 20 RCPTs per session), sharing and the result cache on.
    postfix_env env{{{"MAILASSAY_CREDITS_SIGNUP_GRANT", "1000"}}};
    REQUIRE_MESSAGE(serves_load_domain(env.mta),
                    "the Postfix on " << env.mta.ip << ":" << env.mta.port
                                      << " has no load.postfix.test: run "
                                         "scripts/lib/test-postfix.sh");
    auto run = env.load(1000, 100);
    auto pct = [&](double p) {
      return run.latencies_ms[static_cast<std::size_t>(
          p * static_cast<double>(run.latencies_ms.size() - 1))];
    };
    MESSAGE("wall " << run.wall_ms << " ms, p50 " << pct(0.5) << " ms, p99 "
                    << pct(0.99) << " ms, connections "
                    << env.relay->connections() << ", most open at once "
                    << env.relay->peak());
    CHECK(run.errors == 0);
    CHECK(run.answers == 1000);
    CHECK(run.unknown == 0);
    CHECK(run.wrong == 0);
    // At most 4 sessions open to the host at any time, and at least ten
    // addresses per connection.
    CHECK(env.relay->peak() <= 4);
    CHECK(env.relay->connections() >= 1);
    CHECK(env.relay->connections() <= 200 / 10);
    auto bal =
        json::parse(env.a->call("GET", "/v2/credits/balance", env.jwt).body);
    CHECK(bal["balance"] == 0);
    CHECK(bal["consumed"] == 1000);
    // The service's own counters agree with the relay's.
    std::string metrics;
    auto value = [&](const std::string& series) {
      auto at = metrics.find("\n" + series + " ");
      REQUIRE_MESSAGE(at != std::string::npos, series);
      return std::stod(metrics.substr(at + series.size() + 2));
    };
    const std::string host = "{host=\"mx.load.postfix.test\"}";
    // The last session lingers a moment for more work, then quits.
    for (int i = 0; i < 100; ++i) {
      metrics = env.a->call("GET", "/metrics").body;
      if (value("mailassay_smtp_host_sessions_open" + host) == 0)
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(value("mailassay_smtp_host_sessions_open" + host) == 0);
    CHECK(value("mailassay_smtp_host_sessions_peak" + host) <= 4);
    CHECK(value("mailassay_smtp_host_connections_opened" + host) ==
          static_cast<double>(env.relay->connections()));
    CHECK(value("mailassay_smtp_credits{outcome=\"charged\"}") == 1000);
    CHECK(value("mailassay_smtp_credits{outcome=\"refunded\"}") == 0);
    // Each distinct address was asked once: the rest joined or hit the
    // cache.
    CHECK(value("mailassay_smtp_answers{class=\"accepted\"}") +
              value("mailassay_smtp_answers{class=\"rejected\"}") ==
          1000);
    CHECK(value("mailassay_smtp_result_cache_hits") +
              value("mailassay_smtp_joined") ==
          800);
  }

  TEST_CASE("a virtual mailbox Postfix knows is valid, and the domain is not "
            "a catch-all") {
    postfix_env env;
    for (auto email : {"alice@postfix.test", "Bob@postfix.test"}) {
      CAPTURE(email);
      auto b = env.validate(email);
      CHECK_MESSAGE(b["status"] == "valid", b.dump());
      CHECK(b["reason"] == "accepted_email");
      CHECK(b["smtp"]["checked"] == true);
      CHECK(b["smtp"]["deliverable"] == true);
      CHECK(b["smtp"]["code"] == 250);
      CHECK(b["smtp"]["host"] == "mx.postfix.test");
      // The random probe got Postfix's 550 5.1.1: not a catch-all.
      CHECK(b["smtp"]["catchAll"] == false);
      CHECK(b["smtp"]["greylisted"] == false);
      CHECK(b["creditsUsed"] == 1);
    }
  }

  TEST_CASE("with TLS required the probe runs over Postfix's STARTTLS") {
    // Postfix offers STARTTLS with a self-signed certificate (not verified by
    // default); a failed handshake would fail the host: unknown.
    postfix_env env{{{"MAILASSAY_SMTP_TLS", "required"}}};
    auto ok = env.validate("carol@postfix.test");
    CHECK_MESSAGE(ok["status"] == "valid", ok.dump());
    CHECK(ok["smtp"]["code"] == 250);
    auto gone = env.validate("nobody@postfix.test");
    CHECK_MESSAGE(gone["status"] == "invalid", gone.dump());
    CHECK(gone["smtp"]["enhancedCode"] == "5.1.1");
  }

  TEST_CASE("an unknown user gets Postfix's 550 5.1.1 and is invalid") {
    postfix_env env;
    auto b = env.validate("nobody@postfix.test");
    CHECK_MESSAGE(b["status"] == "invalid", b.dump());
    CHECK(b["reason"] == "rejected_email");
    CHECK(b["smtp"]["checked"] == true);
    CHECK(b["smtp"]["deliverable"] == false);
    CHECK(b["smtp"]["code"] == 550);
    CHECK(b["smtp"]["enhancedCode"] == "5.1.1");
    CHECK(b["smtp"]["message"].get<std::string>().find(
              "User unknown in virtual mailbox table") != std::string::npos);
    CHECK(b["smtp"]["host"] == "mx.postfix.test");
    CHECK(b["smtp"]["catchAll"] == false);
    CHECK(b["creditsUsed"] == 1);
  }

  TEST_CASE("a domain with an @domain virtual alias is a catch-all: risky") {
    postfix_env env;
    auto b = env.validate("whoever@catchall.postfix.test");
    CHECK_MESSAGE(b["status"] == "risky", b.dump());
    CHECK(b["smtp"]["checked"] == true);
    CHECK(b["smtp"]["code"] == 250);
    CHECK(b["smtp"]["catchAll"] == true);
    CHECK(b["smtp"]["host"] == "mx.postfix.test");
  }

  TEST_CASE("Postfix refusing to relay for a domain it does not serve is "
            "unknown, never invalid") {
    postfix_env env;
    auto b = env.validate("ann@elsewhere.test");
    CHECK_MESSAGE(b["status"] == "unknown", b.dump());
    CHECK(b["smtp"]["code"] == 554);
    CHECK(b["smtp"]["enhancedCode"] == "5.7.1");
    CHECK(b["smtp"]["deliverable"].is_null());
  }

  TEST_CASE("concurrent validations of one domain each get their own "
            "verdict") {
    postfix_env env;
    const std::vector<std::pair<std::string, std::string>> cases{
        {"alice@postfix.test", "valid"},
        {"bob@postfix.test", "valid"},
        {"carol@postfix.test", "valid"},
        {"dave@postfix.test", "invalid"},
        {"erin@postfix.test", "invalid"},
        {"frank@postfix.test", "invalid"},
        {"x1@catchall.postfix.test", "risky"},
        {"x2@catchall.postfix.test", "risky"}};
    std::vector<std::string> got(cases.size());
    std::vector<std::thread> threads;
    for (std::size_t i = 0; i < cases.size(); ++i)
      threads.emplace_back([&, i] {
        auto r = env.a->post(
            "/v2/email/validate",
            {{"email", cases[i].first}, {"smtp", true}, {"timeout", 20000}},
            env.key);
        got[i] = r.status == 200
                     ? json::parse(r.body)["status"].get<std::string>()
                     : "http " + std::to_string(r.status);
      });
    for (auto& t : threads)
      t.join();
    for (std::size_t i = 0; i < cases.size(); ++i) {
      CAPTURE(cases[i].first);
      CHECK(got[i] == cases[i].second);
    }
  }

  TEST_CASE("an SMTP batch of one domain gets every verdict right") {
    postfix_env env;
    std::string csv = "email\nalice@postfix.test\nbob@postfix.test\n"
                      "carol@postfix.test\nghost@postfix.test\n"
                      "nemo@postfix.test\nany@catchall.postfix.test\n";
    auto up = env.a->call(
        "POST", "/v2/batch/upload?smtp=true", "", csv,
        {{"Authorization", "Bearer " + env.key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    json done;
    for (int i = 0; i < 400; ++i) {
      done = json::parse(env.a->call("GET", "/v2/batch/" + id, env.key).body);
      if (done["status"] == "completed")
        break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE_MESSAGE(done["status"] == "completed", done.dump());
    CHECK(done["counts"]["valid"] == 3);
    CHECK(done["counts"]["invalid"] == 2);
    CHECK(done["counts"]["risky"] == 1);
    CHECK(done["creditsUsed"] == 6);
    auto res =
        env.a->call("GET", "/v2/batch/" + id + "/results?format=json", env.key);
    REQUIRE(res.status == 200);
    std::set<std::string> invalid;
    auto results = json::parse(res.body);
    for (auto& r : results["results"])
      if (r["status"] == "invalid")
        invalid.insert(r["email"].get<std::string>());
    const std::set<std::string> unknown_users{"ghost@postfix.test",
                                              "nemo@postfix.test"};
    CHECK_MESSAGE(invalid == unknown_users, res.body);
  }
}
