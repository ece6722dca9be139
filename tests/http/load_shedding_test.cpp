// Bounded queues on the request path (issue #29): when one is full, a new
// request is answered 503 with Retry-After at once, counted in /metrics,
// instead of waiting for its deadline. Black-box: the real binary, the SMTP
// peer holding its answers, the SQLite file held by the test.
#include "tests/http/smtp_service.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <sqlite3.h>
#include <stdexcept>
#include <string>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_rcpt_behaviour;

namespace {

constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
held.test MX 10 mx.peer.test
)";

struct shed_env : smtp_service {
  explicit shed_env(std::map<std::string, std::string> extra) {
    mx.add_rule("*@held.test", smtp_rcpt_behaviour::held);
    extra["MAILASSAY_SMTP_TLS"] = "never";
    extra["MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST"] = "0";
    extra["MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST"] = "0";
    start(zone, {}, extra, "L");
  }

  ~shed_env() { mx.release_held(); }

  std::future<http_response> validate_later(const std::string& email) {
    return std::async(std::launch::async, [this, email] {
      return a->post("/v2/email/validate",
                     {{"email", email}, {"smtp", true}, {"timeout", 20000}},
                     key);
    });
  }
};

// The 503 of a full queue: at once, Retry-After 1, the queue named.
void check_shed(const http_response& r, const std::string& queue) {
  CHECK(r.status == 503);
  CHECK(r.header("retry-after") == "1");
  auto body = json::parse(r.body);
  CHECK(body["code"] == "SERVICE_UNAVAILABLE");
  CHECK(body["message"].get<std::string>().find(queue + " queue is full") !=
        std::string::npos);
}

} // namespace

TEST_SUITE("api.load_shedding") {
  TEST_CASE("beyond http.max_waiting_requests a request gets 503 and "
            "Retry-After at once; health and metrics still answer") {
    shed_env env{{{"MAILASSAY_HTTP_MAX_WAITING_REQUESTS", "3"},
                  {"MAILASSAY_HTTP_REQUEST_TIMEOUT_MS", "30000"}}};
    std::vector<std::future<http_response>> held;
    for (int i = 0; i < 3; ++i)
      held.push_back(
          env.validate_later("w" + std::to_string(i) + "@held.test"));
    REQUIRE(
        eventually([&] { return env.a->metric("mailassay_http_waiting") == 3; },
                   std::chrono::seconds(20), std::chrono::milliseconds(20)));
    for (int i = 0; i < 4; ++i) {
      auto started = std::chrono::steady_clock::now();
      auto r =
          env.a->post("/v2/email/validate",
                      {{"email", "late@held.test"}, {"smtp", true}}, env.key);
      // At once: long before the 30 s deadline.
      CHECK(std::chrono::steady_clock::now() - started <
            std::chrono::seconds(5));
      check_shed(r, "requests");
    }
    // Any other endpoint too: the bound is the process's.
    check_shed(env.a->call("GET", "/v2/auth/me", env.jwt), "requests");
    CHECK(env.a->call("GET", "/health").status == 200);
    CHECK(env.a->metric("mailassay_http_shed{queue=\"requests\"}") == 5);
    CHECK(env.a->metric("mailassay_http_shed{queue=\"storage\"}") == 0);
    // The waiting ones are answered once their server answers.
    env.mx.release_held();
    for (auto& f : held)
      CHECK(f.get().status == 200);
    CHECK(env.a->metric("mailassay_http_waiting") == 0);
    CHECK(env.a->call("GET", "/v2/auth/me", env.jwt).status == 200);
  }

  TEST_CASE("beyond actors.storage_queue_limit a request needing storage "
            "gets 503 and Retry-After at once") {
    if (!on_sqlite()) {
      MESSAGE("storage is held through SQLite's lock: SQLite only");
      return;
    }
    shed_env env{{{"MAILASSAY_ACTORS_STORAGE_WORKERS", "1"},
                  {"MAILASSAY_ACTORS_STORAGE_QUEUE_LIMIT", "1"},
                  {"MAILASSAY_HTTP_REQUEST_TIMEOUT_MS", "30000"}}};
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((env.srv->dir() + "/test.db").c_str(), &db) ==
            SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    REQUIRE(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    auto create = [&](const std::string& name) {
      return std::async(std::launch::async, [&env, name] {
        return env.a->post("/v2/api-keys", {{"name", name}}, env.jwt);
      });
    };
    // The one worker waits for the lock with the first write; the second
    // waits in the queue. The account's setup may still be counted busy:
    // only once the pool has settled is its one busy job the first's.
    env.a->storage_settled();
    auto first = create("first");
    REQUIRE(eventually(
        [&] {
          return env.a->metric("mailassay_pool_busy{pool=\"storage\"}") == 1;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20)));
    auto second = create("second");
    REQUIRE(eventually(
        [&] {
          return env.a->metric("mailassay_pool_queued{pool=\"storage\"}") >= 1;
        },
        std::chrono::seconds(20), std::chrono::milliseconds(20)));
    check_shed(env.a->post("/v2/api-keys", {{"name", "third"}}, env.jwt),
               "storage");
    CHECK(env.a->metric("mailassay_http_shed{queue=\"storage\"}") >= 1);
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    CHECK(first.get().status == 201);
    CHECK(second.get().status == 201);
  }
}
