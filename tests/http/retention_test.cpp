// Retention of batch results (docs/privacy.md, "Retention"), black-box:
// results past the server's or the organization's retention are erased by
// the sweeper, the record stays with resultsErasedAt, the results answer
// 410 RESULTS_ERASED, and the addresses leave the SQLite file; an owner's
// PATCH /v2/organization and its bad input; the setting's bounds at start
// and on a reload.
#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

// An organization with a key on a server that sweeps every second.
struct retention_env {
  dns_peer dns;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;
  std::string key;

  explicit retention_env(std::map<std::string, std::string> extra = {}) {
    dns.load_zone("good.test MX 10 mx.good.test\n");
    std::map<std::string, std::string> env = {
        {"MAILASSAY_DNS_SERVERS", dns.server()},
        {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
        {"MAILASSAY_DNS_TRIES", "1"},
        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
        {"MAILASSAY_BATCH_POLL_MS", "100"},
        {"MAILASSAY_BATCH_RETENTION_SWEEP_SECONDS", "1"}};
    for (auto& [k, v] : extra)
      env[k] = v;
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
    jwt = a->signup("R", unique_email("r"))["accessToken"].get<std::string>();
    key = a->create_key(jwt)["key"].get<std::string>();
  }

  // Uploads `n` addresses tagged `tag`; returns the job id once it ended.
  std::string finished_job(const std::string& tag, int n) {
    std::string csv = "email\n";
    for (int i = 0; i < n; ++i)
      csv += address(tag, i) + "\n";
    auto up = a->call(
        "POST", "/v2/batch/upload", "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    wait_for(id, [](const json& j) {
      auto s = j["status"].get<std::string>();
      return s != "queued" && s != "processing";
    });
    return id;
  }

  static std::string address(const std::string& tag, int i) {
    return tag + "-" + std::to_string(i) + "-zq@good.test";
  }

  // Polls the job until `done(record)` (at most a minute); returns it.
  template <class Done>
  json wait_for(const std::string& id, Done done) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      auto r = a->call("GET", "/v2/batch/" + id, key);
      REQUIRE_MESSAGE(r.status == 200, r.body);
      auto j = json::parse(r.body);
      if (done(j))
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  json wait_erased(const std::string& id) {
    return wait_for(
        id, [](const json& j) { return !j["resultsErasedAt"].is_null(); });
  }

  http_response patch_org(const json& body, const std::string& token) {
    return a->call("PATCH", "/v2/organization", token, body.dump());
  }
};

void check_gone(const http_response& r) {
  CHECK_MESSAGE(r.status == 410, r.body);
  auto body = json::parse(r.body);
  CHECK(body["code"] == "RESULTS_ERASED");
  CHECK(body["statusCode"] == 410);
  CHECK(body["message"].get<std::string>().find("retention") !=
        std::string::npos);
}

} // namespace

TEST_SUITE("api.retention") {
  TEST_CASE("an owner's shorter retention erases a finished job's results: "
            "410 RESULTS_ERASED, the record keeps its counts, and the "
            "addresses leave the database file") {
    retention_env env;
    auto id = env.finished_job("keep-short", 20);
    // The server's 30 days: the results are there.
    auto results = env.a->call("GET", "/v2/batch/" + id + "/results", env.key);
    REQUIRE(results.status == 200);
    CHECK(results.body.find(retention_env::address("keep-short", 7)) !=
          std::string::npos);
    auto before =
        json::parse(env.a->call("GET", "/v2/batch/" + id, env.key).body);
    CHECK(before["resultsErasedAt"].is_null());
    if (on_sqlite())
      CHECK(database_holds(*env.srv, retention_env::address("keep-short", 7)));

    auto set = env.patch_org({{"batchRetentionSeconds", 1}}, env.jwt);
    REQUIRE_MESSAGE(set.status == 200, set.body);
    CHECK(json::parse(set.body)["batchRetentionSeconds"] == 1);

    auto after = env.wait_erased(id);
    CHECK(after["status"] == before["status"]);
    CHECK(after["processed"] == 20);
    CHECK(after["uniqueEmails"] == 20);
    CHECK(after["counts"] == before["counts"]);
    CHECK(after["finishedAt"] == before["finishedAt"]);
    CHECK(after["resultsErasedAt"].get<std::string>() >=
          after["finishedAt"].get<std::string>());
    check_gone(env.a->call("GET", "/v2/batch/" + id + "/results", env.key));
    check_gone(env.a->call("GET", "/v2/batch/" + id + "/results?format=json",
                           env.jwt));
    auto list = json::parse(env.a->call("GET", "/v2/batch", env.key).body);
    REQUIRE(list["items"].size() == 1);
    CHECK(list["items"][0]["resultsErasedAt"] == after["resultsErasedAt"]);
    // This process did the erase (on SQLite no other process shares the
    // database; on PostgreSQL another test's server may have swept first).
    // The count follows the erase's commit, a moment after the record.
    if (on_sqlite()) {
      auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (env.a->metric("mailassay_batch_results_erased") < 1 &&
             std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      CHECK(env.a->metric("mailassay_batch_results_erased") == 1);
    }
    // Erased means erased: no address in the file's bytes, WAL included.
    if (on_sqlite())
      for (int i = 0; i < 20; ++i)
        CHECK_FALSE(
            database_holds(*env.srv, retention_env::address("keep-short", i)));
    // Another organization's job is untouched: still 404 to this one.
    auto other =
        env.a->signup("O", unique_email("o"))["accessToken"].get<std::string>();
    CHECK(env.a->call("GET", "/v2/batch/" + id + "/results", other).status ==
          404);
  }

  TEST_CASE("MAILASSAY_BATCH_RETENTION_SECONDS erases results on its own") {
    // SQLite only: on PostgreSQL every test server shares one database, and
    // a server-wide retention of a second would erase the other tests'
    // results too (the organization's retention above covers PostgreSQL).
    if (!on_sqlite())
      return;
    retention_env env{{{"MAILASSAY_BATCH_RETENTION_SECONDS", "1"}}};
    auto id = env.finished_job("server-short", 5);
    auto after = env.wait_erased(id);
    CHECK(after["processed"] == 5);
    check_gone(env.a->call("GET", "/v2/batch/" + id + "/results", env.key));
    // The file is looked at once the erase's checkpoint ran: the count
    // follows it (the record shows the erase from its commit on).
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (env.a->metric("mailassay_batch_results_erased") < 1 &&
           std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK(env.a->metric("mailassay_batch_results_erased") == 1);
    if (on_sqlite())
      for (int i = 0; i < 5; ++i)
        CHECK_FALSE(database_holds(*env.srv,
                                   retention_env::address("server-short", i)));
    // The organization shows that the server's retention applies.
    auto org =
        json::parse(env.a->call("GET", "/v2/organization", env.key).body);
    CHECK(org["batchRetentionSeconds"].is_null());
  }

  TEST_CASE("PATCH /v2/organization: owners only, 0 < value <= the server's "
            "retention, null for the server's") {
    retention_env env{{{"MAILASSAY_BATCH_RETENTION_SECONDS", "86400"}}};
    auto admin = env.a->member_token(env.jwt, "admin");
    auto member = env.a->member_token(env.jwt, "member");
    for (const auto& token : {admin, member, env.key}) {
      auto r = env.patch_org({{"batchRetentionSeconds", 60}}, token);
      CHECK_MESSAGE(r.status == 403, r.body);
      CHECK(json::parse(r.body)["code"] == "FORBIDDEN");
    }
    CHECK(env.patch_org({{"batchRetentionSeconds", 60}}, "").status == 401);
    auto refused = [&](const json& body, const std::string& says) {
      auto r = env.patch_org(body, env.jwt);
      CHECK_MESSAGE(r.status == 422, r.body);
      auto messages = json::parse(r.body)["message"].dump();
      CHECK_MESSAGE(messages.find(says) != std::string::npos, messages);
    };
    refused({{"batchRetentionSeconds", 0}}, "greater than 0");
    refused({{"batchRetentionSeconds", -5}}, "greater than 0");
    refused({{"batchRetentionSeconds", 86401}},
            "must not be longer than the server's retention, 86400 seconds");
    refused({{"batchRetentionSeconds", "60"}}, "must be an integer number");
    refused({{"batchRetentionSeconds", 1.5}}, "must be an integer number");
    refused(json::object(), "batchRetentionSeconds should not be empty");
    refused({{"batchRetentionSeconds", 60}, {"name", "x"}},
            "property name should not exist");
    auto broken =
        env.a->call("PATCH", "/v2/organization", env.jwt, "{not json");
    CHECK(broken.status == 400);
    // Nothing was set by any of those.
    auto org = [&] {
      return json::parse(env.a->call("GET", "/v2/organization", env.jwt).body);
    };
    CHECK(org()["batchRetentionSeconds"].is_null());
    auto ok = env.patch_org({{"batchRetentionSeconds", 86400}}, env.jwt);
    REQUIRE_MESSAGE(ok.status == 200, ok.body);
    auto shown = json::parse(ok.body);
    CHECK(shown["batchRetentionSeconds"] == 86400);
    CHECK(shown.contains("members"));
    CHECK(shown.contains("credits"));
    CHECK(org()["batchRetentionSeconds"] == 86400);
    auto cleared = env.patch_org({{"batchRetentionSeconds", nullptr}}, env.jwt);
    REQUIRE_MESSAGE(cleared.status == 200, cleared.body);
    CHECK(json::parse(cleared.body)["batchRetentionSeconds"].is_null());
    CHECK(org()["batchRetentionSeconds"].is_null());
  }

  TEST_CASE("a retention out of range stops the start with a clear message") {
    std::string out;
    for (auto bad : {"-1", "315360001", "30d"}) {
      CAPTURE(bad);
      CHECK(run_binary({"serve"}, {{"MAILASSAY_BATCH_RETENTION_SECONDS", bad}},
                       out) == 2);
      CHECK_MESSAGE(out.find("MAILASSAY_BATCH_RETENTION_SECONDS") !=
                        std::string::npos,
                    out);
    }
    CHECK(out.find("expected an integer") != std::string::npos);
    run_binary({"serve"}, {{"MAILASSAY_BATCH_RETENTION_SECONDS", "-1"}}, out);
    CHECK_MESSAGE(out.find("must be between 0 and 315360000, got -1") !=
                      std::string::npos,
                  out);
    CHECK(run_binary({"serve"},
                     {{"MAILASSAY_BATCH_RETENTION_SWEEP_SECONDS", "61"}},
                     out) == 2);
    CHECK(out.find("MAILASSAY_BATCH_RETENTION_SWEEP_SECONDS must be between 1 "
                   "and 60") != std::string::npos);
  }
}

TEST_SUITE("app.admin_reload") {
  TEST_CASE("a reload applies a new retention and refuses one out of range, "
            "keeping the old") {
    auto dir = temp_dir("retention-reload");
    auto file = dir + "/mailassay.toml";
    auto write = [&](const std::string& text) {
      std::ofstream{file, std::ios::trunc} << text;
    };
    write("[batch]\nretention_seconds = 86400\n");
    server_process srv{{{"MAILASSAY_CONFIG", file},
                        {"MAILASSAY_BATCH_RETENTION_SECONDS", unset_variable}}};
    api a{srv};
    auto jwt =
        a.signup("L", unique_email("l"))["accessToken"].get<std::string>();
    auto socket = srv.dir() + "/control.sock";
    auto reload = [&](std::string& out) {
      return run_binary({"admin", "reload", "--socket", socket}, {}, out);
    };
    // The server's retention bounds an owner's: 86400 here.
    CHECK(a.call("PATCH", "/v2/organization", jwt,
                 R"({"batchRetentionSeconds": 100000})")
              .status == 422);
    write("[batch]\nretention_seconds = 315360001\n");
    std::string out;
    CHECK(reload(out) == 1);
    CHECK_MESSAGE(out.find("batch.retention_seconds must be between 0 and "
                           "315360000, got 315360001") != std::string::npos,
                  out);
    CHECK(out.find("every setting kept as it was") != std::string::npos);
    CHECK(a.call("PATCH", "/v2/organization", jwt,
                 R"({"batchRetentionSeconds": 100000})")
              .status == 422);
    write("[batch]\nretention_seconds = 200000\n");
    REQUIRE_MESSAGE(reload(out) == 0, out);
    CHECK_MESSAGE(
        out.find("applied: batch.retention_seconds 86400 -> 200000") !=
            std::string::npos,
        out);
    // Applied at once: the bound of the next PATCH is the new one.
    auto r = a.call("PATCH", "/v2/organization", jwt,
                    R"({"batchRetentionSeconds": 100000})");
    CHECK_MESSAGE(r.status == 200, r.body);
  }
}
