// Work for a request that was already answered (issue #29): the HTTP
// deadline covers the whole request, DNS and ledger included; once it
// answered, no credit is kept and no probe starts. Black-box: the real
// binary, the SMTP peer, and the SQLite file held by the test.
#include "tests/http/smtp_service.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <map>
#include <sqlite3.h>
#include <stdexcept>
#include <string>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_rcpt_behaviour;

namespace {

constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
smtp.test MX 10 mx.peer.test
held.test MX 10 mx.peer.test
slowdns.test MX 10 mx.peer.test
bighead.test MX 10 mx.peer.test
)";

struct answered_env : smtp_service {
  explicit answered_env(std::string request_timeout_ms = "1500") {
    // held.test's server answers RCPT only when the test lets it.
    mx.add_rule("*@held.test", smtp_rcpt_behaviour::held);
    mx.add_rule("*@smtp.test", smtp_rcpt_behaviour::accept);
    start(zone,
          {{"MAILASSAY_HTTP_REQUEST_TIMEOUT_MS", request_timeout_ms},
           {"MAILASSAY_DNS_TIMEOUT_MS", "10000"},
           {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
           {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
           {"MAILASSAY_SMTP_TLS", "never"}},
          {}, "A");
  }

  ~answered_env() { mx.release_held(); }

  http_response validate(const std::string& email, bool smtp = true) {
    return a->post("/v2/email/validate",
                   {{"email", email}, {"smtp", smtp}, {"timeout", 10000}}, key);
  }

  // Sends a validation of `email` with SMTP (and `padding` bytes of an
  // extra header), then waits 300 ms for nothing and closes: a client that
  // leaves. Returns whether nothing was answered by then.
  bool leave_after_sending(const std::string& email, std::size_t padding = 0) {
    std::string body =
        R"({"email":")" + email + R"(","smtp":true,"timeout":10000})";
    std::string head = "POST /v2/email/validate HTTP/1.1\r\nHost: t\r\n";
    if (padding > 0)
      head += "X-Padding: " + std::string(padding, 'p') + "\r\n";
    head += "Authorization: Bearer " + key +
            "\r\nContent-Type: application/json\r\nContent-Length: " +
            std::to_string(body.size()) + "\r\n\r\n";
    return raw_exchange(srv->port(), head + body, 300).empty();
  }

  // Whether no request waits any more within two seconds.
  bool none_waiting_soon() {
    return eventually([&] { return a->metric("mailassay_http_waiting") == 0; },
                      std::chrono::milliseconds(2000),
                      std::chrono::milliseconds(20));
  }

  std::int64_t balance() {
    auto r = a->call("GET", "/v2/credits/balance", jwt);
    return json::parse(r.body)["balance"].get<std::int64_t>();
  }

  // The sum of the ledger's entries of `kind`.
  std::int64_t ledger_sum(const std::string& kind) {
    auto r = a->call("GET", "/v2/credits/transactions?limit=100", jwt);
    std::int64_t sum = 0;
    auto page = json::parse(r.body);
    for (auto& e : page["items"])
      if (e["kind"] == kind)
        sum += e["delta"].get<std::int64_t>();
    return sum;
  }
};

// Holds SQLite's write lock on the server's database file until released:
// every write of the service (the ledger's reservation first) waits.
struct write_lock {
  sqlite3* db = nullptr;

  explicit write_lock(const std::string& path) {
    if (sqlite3_open(path.c_str(), &db) != SQLITE_OK)
      throw std::runtime_error("cannot open " + path);
    sqlite3_busy_timeout(db, 5000);
    if (sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) !=
        SQLITE_OK)
      throw std::runtime_error(sqlite3_errmsg(db));
  }

  void release() {
    if (!db)
      return;
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    db = nullptr;
  }

  ~write_lock() { release(); }
};

} // namespace

TEST_SUITE("api.answered_work") {
  TEST_CASE("a request answered 503 while the ledger is held is never "
            "charged, and its probe never starts") {
    if (!on_sqlite()) {
      MESSAGE("the ledger is held through SQLite's lock: SQLite only");
      return;
    }
    answered_env env;
    // The key and the domain's route are cached: only the ledger's write
    // waits for the lock.
    REQUIRE(env.validate("warm@smtp.test", false).status == 200);
    auto before = env.balance();
    auto rcpts = env.mx.commands("RCPT");
    write_lock lock{env.srv->dir() + "/test.db"};
    auto r = env.validate("ann@smtp.test");
    CHECK(r.status == 503);
    CHECK(json::parse(r.body)["code"] == "SERVICE_UNAVAILABLE");
    // The deadline's 503 tells when to come back, as a shed's does.
    CHECK(r.header("retry-after") == "1");
    lock.release();
    // The reservation went through once the lock was let go, and was given
    // back: the refund is the proof the ledger was reached.
    REQUIRE(eventually([&] { return env.ledger_sum("smtp_refund") == 1; },
                       std::chrono::seconds(20),
                       std::chrono::milliseconds(50)));
    CHECK(env.ledger_sum("smtp_check") == -1);
    CHECK(env.balance() == before);
    // No RCPT for it, ever: wait for what a started probe would have sent.
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    CHECK(env.mx.commands("RCPT") == rcpts);
  }

  TEST_CASE("a request answered 503 while its DNS lookup is in flight takes "
            "no credit at all, and its probe never starts") {
    answered_env env;
    // The domain's answer comes a second after the request's deadline.
    env.dns.set_delay("slowdns.test", std::chrono::milliseconds(2500));
    auto before = env.balance();
    auto rcpts = env.mx.commands("RCPT");
    auto r = env.validate("ann@slowdns.test");
    CHECK(r.status == 503);
    // The answer reaches the pipeline after the 503; give its reservation,
    // were one made, ample time to be written (a few milliseconds).
    REQUIRE(eventually([&] { return env.dns.peak_delayed() >= 1; }));
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    CHECK(env.ledger_sum("smtp_check") == 0);
    CHECK(env.ledger_sum("smtp_refund") == 0);
    CHECK(env.balance() == before);
    CHECK(env.mx.commands("RCPT") == rcpts);
  }

  TEST_CASE("a probe held by its server ends before the request's deadline: "
            "the client gets its answer, not 503, and is not charged") {
    answered_env env;
    auto before = env.balance();
    auto started = std::chrono::steady_clock::now();
    // The request allows the probe 10 s; the server's deadline is 1.5 s.
    auto r = env.validate("someone@held.test");
    auto took = std::chrono::steady_clock::now() - started;
    REQUIRE(r.status == 200);
    auto body = json::parse(r.body);
    CHECK(body["status"] == "unknown");
    CHECK(body["smtp"]["checked"] == false);
    CHECK(took < std::chrono::milliseconds(1500));
    CHECK(env.mx.held_waiting() == 1);
    // The credit taken for the probe came back before the answer.
    CHECK(env.balance() == before);
    env.mx.release_held();
  }

  TEST_CASE("a request still waiting when the server stops gets its 503 "
            "before the server goes, not a closed connection") {
    // Its deadline is far; its domain's answer comes after the drain's
    // grace (10 s).
    answered_env env{"60000"};
    env.dns.set_delay("slowdns.test", std::chrono::seconds(30));
    auto pending = std::async(std::launch::async,
                              [&] { return env.validate("ann@slowdns.test"); });
    REQUIRE(eventually([&] { return env.dns.peak_delayed() >= 1; }));
    CHECK(env.srv->stop() == 0);
    REQUIRE(pending.wait_for(std::chrono::seconds(5)) ==
            std::future_status::ready);
    auto r = pending.get();
    CHECK(r.status == 503);
    CHECK(json::parse(r.body)["message"] == "The server is shutting down");
  }

  TEST_CASE("a client that leaves while its request waits ends the request "
            "at once: no credit is taken and no probe starts") {
    answered_env env{"60000"};
    // The domain's answer comes seconds after the client has gone.
    env.dns.set_delay("slowdns.test", std::chrono::milliseconds(3000));
    auto before = env.balance();
    auto rcpts = env.mx.commands("RCPT");
    CHECK(env.leave_after_sending("ann@slowdns.test"));
    REQUIRE(eventually([&] { return env.dns.peak_delayed() >= 1; }));
    // The request ended with its client, not at its deadline (a minute) nor
    // once its domain answered.
    CHECK(env.none_waiting_soon());
    // Once the domain answered: no credit, no probe.
    std::this_thread::sleep_for(std::chrono::milliseconds(3500));
    CHECK(env.ledger_sum("smtp_check") == 0);
    CHECK(env.balance() == before);
    CHECK(env.mx.commands("RCPT") == rcpts);
    // The connection's next client is served as ever.
    CHECK(env.validate("next@smtp.test", false).status == 200);
  }

  TEST_CASE("a client that leaves is seen when its request's head was "
            "larger than RESTinio's read buffer") {
    answered_env env{"60000"};
    env.dns.set_delay("bighead.test", std::chrono::milliseconds(3000));
    // 12 kB of header: the gate reads the head into its own buffer and
    // hands it to RESTinio in pieces (gated_socket.hpp).
    CHECK(env.leave_after_sending("ann@bighead.test", 12000));
    REQUIRE(eventually([&] { return env.dns.peak_delayed() >= 1; }));
    CHECK(env.none_waiting_soon());
    env.dns.set_delay("bighead.test", std::chrono::milliseconds(0));
  }
}
