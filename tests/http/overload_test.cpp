// Deadlines firing while answers are in flight (issue #29): Redis frozen
// under the limiter, SQLite's write lock held under storage jobs, an SMTP
// server holding its replies. Every request is answered exactly once (503
// by its deadline where it waited), the answers that come afterwards are
// dropped without harm, and the server serves normally once they are let
// go. Run under ThreadSanitizer too (`scripts/test --tsan`): the exchange
// must only be touched on its request's home thread.
#include "tests/http/smtp_service.hpp"
#include "tests/support/redis_process.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <future>
#include <sqlite3.h>
#include <string>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_rcpt_behaviour;

namespace {

constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
held.test MX 10 mx.peer.test
)";

} // namespace

TEST_SUITE("api.overload") {
  TEST_CASE("deadlines fire while Redis, storage and SMTP answers are in "
            "flight; each request is answered once and the server recovers") {
    if (!on_sqlite()) {
      MESSAGE("storage is held through SQLite's lock: SQLite only");
      return;
    }
    redis_process redis;
    smtp_service env;
    env.mx.add_rule("*@held.test", smtp_rcpt_behaviour::held);
    env.start(zone,
              {{"MAILASSAY_SMTP_TLS", "never"},
               {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
               {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
               {"MAILASSAY_HTTP_REQUEST_TIMEOUT_MS", "1000"},
               {"MAILASSAY_REDIS_URL", redis.url()},
               {"MAILASSAY_REDIS_TIMEOUT_MS", "10000"}},
              {}, "O");
    auto validate = [&](const std::string& email) {
      return std::async(std::launch::async, [&env, email] {
        return env.a->post(
            "/v2/email/validate",
            {{"email", email}, {"smtp", true}, {"timeout", 5000}}, env.key);
      });
    };
    // SMTP in flight: probes whose server holds its reply end before the
    // deadline (unknown), the replies come later.
    std::vector<std::future<http_response>> probes;
    for (int i = 0; i < 8; ++i)
      probes.push_back(validate("p" + std::to_string(i) + "@held.test"));
    for (auto& f : probes)
      CHECK(f.get().status == 200);
    // Redis frozen: the limiter's checks wait past the deadline.
    redis.pause();
    std::vector<std::future<http_response>> limited;
    for (int i = 0; i < 16; ++i)
      limited.push_back(validate("r" + std::to_string(i) + "@held.test"));
    // Storage held: key creations wait for the write lock past the deadline.
    sqlite3* db = nullptr;
    REQUIRE(sqlite3_open((env.srv->dir() + "/test.db").c_str(), &db) ==
            SQLITE_OK);
    sqlite3_busy_timeout(db, 5000);
    REQUIRE(sqlite3_exec(db, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr) ==
            SQLITE_OK);
    std::vector<std::future<http_response>> stored;
    for (int i = 0; i < 8; ++i)
      stored.push_back(std::async(std::launch::async, [&env, i] {
        return env.a->post("/v2/api-keys", {{"name", "k" + std::to_string(i)}},
                           env.jwt);
      }));
    for (auto& f : limited)
      CHECK(f.get().status == 503);
    for (auto& f : stored)
      CHECK(f.get().status == 503);
    // Everything let go at once: the late answers find their requests
    // answered.
    redis.resume();
    sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
    sqlite3_close(db);
    env.mx.release_held();
    REQUIRE(
        eventually([&] { return env.a->metric("mailassay_http_waiting") == 0; },
                   std::chrono::seconds(20), std::chrono::milliseconds(20)));
    CHECK(env.a->call("GET", "/health").status == 200);
    CHECK(env.a->post("/v2/email/validate", {{"email", "x@held.test"}}, env.key)
              .status == 200);
    CHECK(env.a->post("/v2/api-keys", {{"name", "after"}}, env.jwt).status ==
          201);
    CHECK(env.srv->running());
  }
}
