// Privacy and the data lifecycle (docs/privacy.md), black-box: deleting a
// batch job, and what an erase leaves in the database file.
#include "security/digest.hpp"
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

constexpr const char* zone = R"(
good.test MX 10 mx.good.test
*.slow.test MX 10 mx.slow.test
*.slow.test DELAY 150
)";

// An organization with a key and a running server answering its DNS from
// the zone above.
struct privacy_env {
  dns_peer dns;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;
  std::string key;

  explicit privacy_env(std::map<std::string, std::string> extra = {}) {
    dns.load_zone(zone);
    std::map<std::string, std::string> env = {
        {"MAILASSAY_DNS_SERVERS", dns.server()},
        {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
        {"MAILASSAY_DNS_TRIES", "1"},
        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
        {"MAILASSAY_BATCH_POLL_MS", "100"}};
    for (auto& [k, v] : extra)
      env[k] = v;
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
    jwt = a->signup("P", unique_email("p"))["accessToken"].get<std::string>();
    key = a->create_key(jwt)["key"].get<std::string>();
  }

  http_response upload(const std::string& csv) {
    return a->call(
        "POST", "/v2/batch/upload", "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
  }

  // Polls until the job leaves the active states (at most a minute).
  json wait_done(const std::string& id) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      auto r = a->call("GET", "/v2/batch/" + id, key);
      REQUIRE_MESSAGE(r.status == 200, r.body);
      auto j = json::parse(r.body);
      auto s = j["status"].get<std::string>();
      if (s != "queued" && s != "processing")
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
};

} // namespace

TEST_SUITE("api.privacy") {
  TEST_CASE("DELETE /v2/batch/{id} erases a job: 204, then 404 everywhere, "
            "and its addresses leave the database file") {
    privacy_env env;
    std::string csv = "email\n";
    for (int i = 0; i < 30; ++i)
      csv += "erase-me-" + std::to_string(i) + "-zq@good.test\n";
    auto up = env.upload(csv);
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    CHECK(env.wait_done(id)["status"] == "completed");
    auto results = env.a->call("GET", "/v2/batch/" + id + "/results", env.key);
    CHECK(results.body.find("erase-me-7-zq@good.test") != std::string::npos);
    if (on_sqlite())
      CHECK(database_holds(*env.srv, "erase-me-7-zq@good.test"));

    // Another organization: 404, as if the job did not exist.
    auto other =
        env.a->signup("O", unique_email("o"))["accessToken"].get<std::string>();
    auto foreign = env.a->call("DELETE", "/v2/batch/" + id, other);
    CHECK(foreign.status == 404);
    CHECK(json::parse(foreign.body)["code"] == "NOT_FOUND");
    // A member may read the job but not delete it.
    auto member = env.a->member_token(env.jwt);
    auto denied = env.a->call("DELETE", "/v2/batch/" + id, member);
    CHECK(denied.status == 403);
    CHECK(json::parse(denied.body)["code"] == "FORBIDDEN");
    CHECK(env.a->call("GET", "/v2/batch/" + id, member).status == 200);
    CHECK(env.a->call("DELETE", "/v2/batch/" + id).status == 401);
    // A test key sees no live job, so it cannot erase one either.
    auto test_key =
        env.a->create_key(env.jwt, {{"name", "t"}, {"mode", "test"}})["key"]
            .get<std::string>();
    CHECK(env.a->call("DELETE", "/v2/batch/" + id, test_key).status == 404);
    CHECK(env.a->call("GET", "/v2/batch/" + id, env.key).status == 200);

    auto erased = env.a->call("DELETE", "/v2/batch/" + id, env.jwt);
    CHECK_MESSAGE(erased.status == 204, erased.body);
    CHECK(erased.body.empty());
    CHECK(env.a->call("GET", "/v2/batch/" + id, env.key).status == 404);
    CHECK(env.a->call("GET", "/v2/batch/" + id + "/results", env.key).status ==
          404);
    auto list = json::parse(env.a->call("GET", "/v2/batch", env.key).body);
    CHECK(list["items"].empty());
    CHECK(env.a->call("DELETE", "/v2/batch/" + id, env.jwt).status == 404);
    // Erased means erased: no address in the file's bytes, WAL included
    // (secure_delete zeroes the rows, the checkpoint empties the WAL).
    if (on_sqlite())
      for (int i = 0; i < 30; ++i)
        CHECK_FALSE(database_holds(*env.srv, "erase-me-" + std::to_string(i) +
                                                 "-zq@good.test"));
  }

  TEST_CASE("a key deletes its organization's active job: it stops and the "
            "slot is free") {
    privacy_env env;
    std::string csv = "email\n";
    for (int i = 0; i < 300; ++i)
      csv += "user" + std::to_string(i) + "@d" + std::to_string(i) +
             ".slow.test\n";
    auto up = env.upload(csv);
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto id = json::parse(up.body)["id"].get<std::string>();
    CHECK(env.upload("a@good.test\n").status == 409);
    auto erased = env.a->call("DELETE", "/v2/batch/" + id, env.key);
    CHECK_MESSAGE(erased.status == 204, erased.body);
    CHECK(env.a->call("GET", "/v2/batch/" + id, env.key).status == 404);
    auto next = env.upload("a@good.test\n");
    CHECK_MESSAGE(next.status == 201, next.body);
    // The process keeps serving: the new job completes.
    CHECK(env.wait_done(
              json::parse(next.body)["id"].get<std::string>())["status"] ==
          "completed");
  }

  TEST_CASE("at the default log level no full address reaches the log "
            "during a validation and a batch") {
    // Unset: the binary's default level (info), not the tests' warn.
    privacy_env env{{{"MAILASSAY_LOG_LEVEL", unset_variable}}};
    auto v = env.a->post("/v2/email/validate",
                         {{"email", "logcheck-rt-zq@good.test"}}, env.key);
    CHECK_MESSAGE(v.status == 200, v.body);
    auto up = env.upload("email\nlogcheck-batch-zq@good.test\nbad@@x\n");
    REQUIRE_MESSAGE(up.status == 201, up.body);
    CHECK(env.wait_done(
              json::parse(up.body)["id"].get<std::string>())["status"] ==
          "completed");
    auto log = env.srv->log();
    // The log is written (an info line at least), without the addresses.
    CHECK(log.find("\"level\":\"info\"") != std::string::npos);
    CHECK(log.find("logcheck-rt-zq") == std::string::npos);
    CHECK(log.find("logcheck-batch-zq") == std::string::npos);
  }

  TEST_CASE("the distinct-address count stores a keyed hash, not a bare "
            "SHA-256 a dictionary reverses") {
    if (!on_sqlite())
      return; // the bytes of a file of ours
    const std::string server_key(64, 'c');
    privacy_env env{{{"MAILASSAY_WEBHOOKS_SECRET_KEY", server_key}}};
    const std::string address = "counted-zq@good.test";
    auto v = env.a->post("/v2/email/validate", {{"email", address}}, env.key);
    REQUIRE_MESSAGE(v.status == 200, v.body);
    auto u = json::parse(env.a->call("GET", "/v2/usage?days=1", env.jwt).body);
    REQUIRE(u["topEmails"] == 1);
    namespace sec = mailassay::security;
    // The key is derived from the server key (app/serve.cpp).
    auto keyed = sec::hmac_sha256_hex(
        sec::hmac_sha256(server_key, "mailassay usage address hash"), address);
    CHECK(database_holds(*env.srv, keyed));
    CHECK_FALSE(database_holds(*env.srv, sec::sha256_hex(address)));
  }

  TEST_CASE("GET /v2/organization/export holds every part and no secret; "
            "owners and admins only") {
    privacy_env env{
        {{"MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
         {"MAILASSAY_WEBHOOKS_ALLOW_HTTP", "true"},
         {"MAILASSAY_WEBHOOKS_ALLOW_ANY_PORT", "true"}}};
    auto member = env.a->member_token(env.jwt);
    auto admin = env.a->member_token(env.jwt, "admin");
    auto hook = env.a->post("/v2/webhooks",
                            {{"url", "http://127.0.0.1:9/hook?token=t0k3n"},
                             {"events", {"batch.completed"}}},
                            env.jwt);
    REQUIRE_MESSAGE(hook.status == 201, hook.body);
    auto hook_secret = json::parse(hook.body)["secret"].get<std::string>();
    auto up = env.upload("email\nexported-row-zq@good.test\n");
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job_id = json::parse(up.body)["id"].get<std::string>();
    env.wait_done(job_id);
    CHECK(env.a->post("/v2/email/validate", {{"email", "a@good.test"}}, env.key)
              .status == 200);

    auto r = env.a->call("GET", "/v2/organization/export", env.jwt);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    auto doc = json::parse(r.body);
    auto org =
        json::parse(env.a->call("GET", "/v2/organization", env.jwt).body);
    CHECK(doc["organization"]["id"] == org["id"]);
    CHECK(doc["organization"]["credits"] == org["credits"]);
    CHECK(doc["members"].size() == 3);
    REQUIRE(doc["apiKeys"].size() == 1);
    CHECK(doc["apiKeys"][0]["prefix"].is_string());
    REQUIRE(doc["webhooks"].size() == 1);
    CHECK(doc["webhooks"][0]["url"] == "http://127.0.0.1:9/hook?token=t0k3n");
    CHECK(doc["usage"]["days"] == 365);
    // Usage reaches storage in batches (usage.flush_ms): its shape here.
    CHECK(doc["usage"]["keys"].is_array());
    CHECK(doc["ledger"].size() >= 1);
    CHECK(doc["ledger"].back()["kind"] == "signup");
    REQUIRE(doc["jobs"].size() == 1);
    CHECK(doc["jobs"][0]["id"] == job_id);
    CHECK(doc["exportedAt"].is_string());
    // No secret and no customer row: the key, the signing secret, password
    // hashes, the job's addresses.
    CHECK(r.body.find(env.key) == std::string::npos);
    CHECK(r.body.find(hook_secret) == std::string::npos);
    CHECK(r.body.find("argon2") == std::string::npos);
    CHECK(r.body.find("password") == std::string::npos);
    CHECK(r.body.find("exported-row-zq") == std::string::npos);
    CHECK(r.header("cache-control") == "no-store");

    CHECK(env.a->call("GET", "/v2/organization/export", admin).status == 200);
    auto denied = env.a->call("GET", "/v2/organization/export", member);
    CHECK(denied.status == 403);
    CHECK(json::parse(denied.body)["code"] == "FORBIDDEN");
    CHECK(env.a->call("GET", "/v2/organization/export", env.key).status == 403);
    CHECK(env.a->call("GET", "/v2/organization/export").status == 401);
    // Another organization exports its own data only.
    auto other =
        env.a->signup("O", unique_email("o"))["accessToken"].get<std::string>();
    auto theirs =
        json::parse(env.a->call("GET", "/v2/organization/export", other).body);
    CHECK(theirs["jobs"].empty());
    CHECK(theirs["apiKeys"].empty());
    CHECK(theirs["members"].size() == 1);
  }

  TEST_CASE("DELETE /v2/organization: owner and password only; then nothing "
            "of it is left and its tokens and keys are refused at once") {
    privacy_env env;
    auto member = env.a->member_token(env.jwt);
    auto admin = env.a->member_token(env.jwt, "admin");
    auto other_owner = env.a->signup("O", unique_email("o"));
    auto other_jwt = other_owner["accessToken"].get<std::string>();
    auto other_key = env.a->create_key(other_jwt)["key"].get<std::string>();
    auto org_id =
        json::parse(env.a->call("GET", "/v2/organization", env.jwt).body)["id"]
            .get<std::string>();
    std::string owner_email;
    auto listed = env.a->call("GET", "/v2/organization/members", env.jwt);
    REQUIRE_MESSAGE(listed.status == 200, listed.body);
    auto people = json::parse(listed.body);
    for (auto& m : people["items"])
      if (m["role"] == "owner")
        owner_email = m["email"].get<std::string>();
    REQUIRE_FALSE(owner_email.empty());
    std::string csv = "email\n";
    for (int i = 0; i < 20; ++i)
      csv += "org-erase-" + std::to_string(i) + "-zq@good.test\n";
    auto up = env.upload(csv);
    REQUIRE_MESSAGE(up.status == 201, up.body);
    env.wait_done(json::parse(up.body)["id"].get<std::string>());
    if (on_sqlite())
      CHECK(database_holds(*env.srv, "org-erase-3-zq@good.test"));
    auto erase = [&](const std::string& token, const std::string& body) {
      return env.a->call("DELETE", "/v2/organization", token, body);
    };
    const std::string right = R"({"password": "correct horse battery"})";

    // Refused, and nothing erased.
    CHECK(erase(member, right).status == 403);
    CHECK(erase(admin, right).status == 403);
    CHECK(erase(env.key, right).status == 403);
    CHECK(erase("", right).status == 401);
    auto wrong = erase(env.jwt, R"({"password": "not the password"})");
    CHECK(wrong.status == 403);
    CHECK(json::parse(wrong.body)["code"] == "FORBIDDEN");
    CHECK(erase(env.jwt, "{}").status == 422);
    CHECK(erase(env.jwt, R"({"password": 7})").status == 422);
    CHECK(erase(env.jwt, "not json").status == 400);
    CHECK(env.a->call("GET", "/v2/organization", env.jwt).status == 200);
    CHECK(env.a->call("GET", "/v2/batch", env.key).status == 200);

    auto done = erase(env.jwt, right);
    CHECK_MESSAGE(done.status == 204, done.body);
    // Its tokens and keys: refused at once.
    CHECK(env.a->call("GET", "/v2/auth/me", env.jwt).status == 401);
    CHECK(env.a->call("GET", "/v2/auth/me", member).status == 401);
    CHECK(env.a->call("GET", "/v2/auth/me", admin).status == 401);
    CHECK(env.a->call("GET", "/v2/batch", env.key).status == 401);
    CHECK(env.a->post("/v2/email/validate", {{"email", "a@good.test"}}, env.key)
              .status == 401);
    CHECK(env.a
              ->post("/v2/auth/login", {{"email", owner_email},
                                        {"password", "correct horse battery"}})
              .status == 401);
    // Another organization goes on.
    CHECK(env.a->call("GET", "/v2/batch", other_key).status == 200);
    CHECK(env.a->call("GET", "/v2/organization", other_jwt).status == 200);
    // Erased means erased: neither its id nor its rows in the file.
    if (on_sqlite()) {
      CHECK_FALSE(database_holds(*env.srv, org_id));
      for (int i = 0; i < 20; ++i)
        CHECK_FALSE(database_holds(*env.srv, "org-erase-" + std::to_string(i) +
                                                 "-zq@good.test"));
    }
  }
}
