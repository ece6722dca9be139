// Webhooks, black-box (docs/webhooks.md): the real binary delivers to a
// scriptable receiver on loopback (tests/peers/http_peer.hpp).
#include "security/digest.hpp"
#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/http_peer.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <sys/stat.h>
#include <thread>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::http_peer;
using mailassay::tests::peers::http_peer_reply;
using mailassay::tests::peers::http_peer_request;
using namespace std::chrono_literals;

namespace {

// One key for every server of these tests: a restarted server (or another
// one on the shared PostgreSQL database) opens the secrets sealed before.
constexpr const char* server_key = test_server_key;

std::string source_dir() {
  return std::getenv("MAILASSAY_SOURCE_DIR");
}

// Polls `done` every 50 ms until it holds or `limit` passes.
bool eventually(const std::function<bool()>& done,
                std::chrono::milliseconds limit = 30s) {
  auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    if (done())
      return true;
    std::this_thread::sleep_for(50ms);
  }
  return done();
}

std::string hex(const std::string& raw) {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : raw) {
    out += digits[c >> 4];
    out += digits[c & 0xF];
  }
  return out;
}

// The receiver's check of docs/webhooks.md: t and every v1 of the header,
// HMAC-SHA256 over "<t>.<raw body>" under `secret`.
bool signed_with(const http_peer_request& r, const std::string& secret) {
  auto header = r.header("mailassay-signature");
  std::string t;
  std::vector<std::string> v1;
  std::size_t start = 0;
  while (start <= header.size()) {
    auto comma = header.find(',', start);
    auto item = header.substr(
        start, comma == std::string::npos ? std::string::npos : comma - start);
    if (item.rfind("t=", 0) == 0)
      t = item.substr(2);
    else if (item.rfind("v1=", 0) == 0)
      v1.push_back(item.substr(3));
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  if (t.empty())
    return false;
  auto expected =
      hex(mailassay::security::hmac_sha256(secret, t + "." + r.body));
  for (auto& s : v1)
    if (s == expected)
      return true;
  return false;
}

struct hook_env {
  std::unique_ptr<pg_schema> schema; // outlives the server
  http_peer peer;
  std::map<std::string, std::string> env;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;

  explicit hook_env(std::map<std::string, std::string> extra = {}) {
    // Fixed secrets: a restarted server opens what the first one sealed
    // and accepts the tokens it issued.
    env = {{"MAILASSAY_WEBHOOKS_SECRET_KEY", server_key},
           {"MAILASSAY_AUTH_JWT_SECRET",
            "webhooks-test-jwt-secret-0123456789abcdef"},
           {"MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
           {"MAILASSAY_WEBHOOKS_ALLOW_HTTP", "true"},
           // The receivers listen on random ports.
           {"MAILASSAY_WEBHOOKS_ALLOW_ANY_PORT", "true"},
           {"MAILASSAY_WEBHOOKS_POLL_MS", "100"},
           {"MAILASSAY_WEBHOOKS_RETRY_FIRST_MS", "300"},
           {"MAILASSAY_WEBHOOKS_TIMEOUT_MS", "5000"},
           {"MAILASSAY_BATCH_POLL_MS", "100"},
           {"MAILASSAY_RISK_DATA_DIR", source_dir() + "/data/risk"}};
    for (auto& [k, v] : extra)
      env[k] = v;
    schema = own_schema(env, "mailassay_wh");
    start();
    jwt = a->signup("W", unique_email("w"))["accessToken"].get<std::string>();
  }

  void start() {
    a.reset();
    srv = std::make_unique<server_process>(env);
    a = std::make_unique<api>(api{*srv});
  }

  http_response call(const std::string& method, const std::string& path,
                     const json& body = nullptr) {
    return a->call(method, path, jwt, body.is_null() ? "" : body.dump());
  }

  // Creates an endpoint at the receiver; returns the 201 body.
  json create(json body = {}) {
    if (!body.contains("url"))
      body["url"] = peer.url("/hook");
    if (!body.contains("events"))
      body["events"] = {"batch.completed", "batch.failed", "batch.cancelled",
                        "credits.low", "key.revoked"};
    auto r = call("POST", "/v2/webhooks", body);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    return json::parse(r.body);
  }

  json deliveries(const std::string& webhook) {
    auto r = call("GET", "/v2/webhooks/" + webhook + "/deliveries");
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body)["items"];
  }

  // The requests the receiver got for delivery `id`.
  std::vector<http_peer_request> received(const std::string& id) {
    std::vector<http_peer_request> out;
    for (auto& r : peer.requests())
      if (r.header("mailassay-delivery") == id)
        out.push_back(r);
    return out;
  }

  // The first request the receiver got whose body's `type` is `event` and
  // whose `data` satisfies `match`.
  std::optional<http_peer_request>
  wait_event(const std::string& event,
             const std::function<bool(const json&)>& match,
             std::chrono::milliseconds limit = 30s) {
    std::optional<http_peer_request> found;
    eventually(
        [&] {
          for (auto& r : peer.requests()) {
            auto b = json::parse(r.body, nullptr, false);
            if (b.is_object() && b.value("type", "") == event &&
                match(b["data"])) {
              found = r;
              return true;
            }
          }
          return false;
        },
        limit);
    return found;
  }
};

// Whether `log` holds the line of the server claiming job `id`.
bool claimed_in(const std::string& log, const std::string& id) {
  std::size_t start = 0;
  while (start < log.size()) {
    auto end = log.find('\n', start);
    auto line = log.substr(start, end == std::string::npos ? std::string::npos
                                                           : end - start);
    if (line.find("\"event\":\"batch_claimed\"") != std::string::npos &&
        line.find("\"job_id\":\"" + id + "\"") != std::string::npos)
      return true;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return false;
}

// The settings of the poison-job tests: a database that survives the kills
// (`dir`), a job on `dns` whose lookups never return (DROP), so no row is
// ever checkpointed before a kill; short leases, two take-overs in a row at
// most, the claims logged.
std::map<std::string, std::string> poison_env(const std::string& dir,
                                              const std::string& dns) {
  auto env = durable_db(dir);
  env.insert({{"MAILASSAY_DNS_SERVERS", dns},
              {"MAILASSAY_DNS_TIMEOUT_MS", "60000"},
              {"MAILASSAY_DNS_TRIES", "1"},
              {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
              {"MAILASSAY_BATCH_LEASE_SECONDS", "3"},
              {"MAILASSAY_BATCH_MAX_RESTARTS", "2"},
              {"MAILASSAY_LOG_LEVEL", "info"}});
  return env;
}

std::string stuck_csv(int n) {
  std::string csv = "email\n";
  for (int i = 0; i < n; ++i)
    csv += "p" + std::to_string(i) + "@d" + std::to_string(i) + ".stuck.test\n";
  return csv;
}

} // namespace

TEST_SUITE("api.webhooks") {
  TEST_CASE("a job whose process is killed twice in a row before it saves a "
            "result fails: batch.failed signed, its credits refunded") {
    dns_peer dns;
    dns.load_zone("*.stuck.test DROP\n");
    auto dir = temp_dir("webhooks-poison");
    hook_env h{poison_env(dir, dns.server())};
    auto w = h.create({{"events", {"batch.failed", "batch.completed"}}});
    auto balance = [&] {
      auto r = h.call("GET", "/v2/credits/balance");
      REQUIRE_MESSAGE(r.status == 200, r.body);
      return json::parse(r.body)["balance"].get<int>();
    };
    auto before = balance();
    const int n = 12;
    auto up = h.a->call("POST", "/v2/batch/upload?smtp=true", h.jwt,
                        stuck_csv(n), {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job_id = json::parse(up.body)["id"].get<std::string>();
    CHECK(balance() == before - n);
    // Run 1 claims it, take-over 1 runs it again; both are killed while
    // every lookup hangs. Take-over 2 gives it up.
    for (int run = 0; run < 2; ++run) {
      REQUIRE_MESSAGE(
          eventually([&] { return claimed_in(h.srv->log(), job_id); }),
          h.srv->log());
      auto job = json::parse(h.call("GET", "/v2/batch/" + job_id).body);
      CHECK(job["status"] == "processing");
      CHECK(job["processed"] == 0);
      h.srv->kill_hard();
      h.start();
    }
    auto got = h.wait_event("batch.failed", [&](const json& d) {
      return d["job"]["id"] == job_id;
    });
    REQUIRE_MESSAGE(got, h.srv->log());
    CHECK(got->header("mailassay-event") == "batch.failed");
    CHECK(signed_with(*got, w["secret"]));
    auto data = json::parse(got->body)["data"];
    CHECK(data["job"]["status"] == "failed");
    CHECK(data["job"]["error"]["code"] == "JOB_KEPT_STOPPING");
    CHECK(data["job"]["processed"] == 0);
    CHECK(data["exportUrl"] == "/v2/batch/" + job_id + "/results?format=csv");
    // The last server never ran it.
    CHECK_FALSE(claimed_in(h.srv->log(), job_id));
    auto job = json::parse(h.call("GET", "/v2/batch/" + job_id).body);
    CHECK(job["status"] == "failed");
    CHECK(job["finishedAt"].is_string());
    CHECK(job["creditsUsed"] == 0);
    REQUIRE(job["error"].is_object());
    CHECK(job["error"]["code"] == "JOB_KEPT_STOPPING");
    CHECK(job["error"]["message"].get<std::string>().find("2 times") !=
          std::string::npos);
    // The whole reservation came back, once.
    CHECK(balance() == before);
    auto ledger = json::parse(
        h.call("GET", "/v2/credits/transactions?limit=5").body)["items"];
    int refunds = 0;
    for (auto& e : ledger)
      if (e["kind"] == "batch_refund" && e["reference"] == job_id) {
        ++refunds;
        CHECK(e["delta"] == n);
      }
    CHECK(refunds == 1);
    // Ended: a cancel is refused, and the organization may upload again.
    CHECK(h.call("POST", "/v2/batch/" + job_id + "/cancel").status == 409);
    CHECK(h.a->call("POST", "/v2/batch/upload", h.jwt,
                    "email\nkim@@acme.test\n", {{"Content-Type", "text/csv"}})
              .status == 201);
  }

  TEST_CASE("a job whose process is killed once before it saves a result is "
            "resumed and completes") {
    dns_peer stuck;
    stuck.load_zone("*.stuck.test DROP\n");
    dns_peer fast;
    fast.load_zone("*.stuck.test MX 10 mx.stuck.test\n");
    auto dir = temp_dir("webhooks-resume");
    hook_env h{poison_env(dir, stuck.server())};
    auto w = h.create({{"events", {"batch.failed", "batch.completed"}}});
    const int n = 12;
    auto up = h.a->call("POST", "/v2/batch/upload", h.jwt, stuck_csv(n),
                        {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job_id = json::parse(up.body)["id"].get<std::string>();
    REQUIRE_MESSAGE(
        eventually([&] { return claimed_in(h.srv->log(), job_id); }),
        h.srv->log());
    h.srv->kill_hard();
    // Take-over 1 of at most 2: it runs, now with answering DNS.
    h.env["MAILASSAY_DNS_SERVERS"] = fast.server();
    h.start();
    auto got = h.wait_event("batch.completed", [&](const json& d) {
      return d["job"]["id"] == job_id;
    });
    REQUIRE_MESSAGE(got, h.srv->log());
    CHECK(signed_with(*got, w["secret"]));
    CHECK(claimed_in(h.srv->log(), job_id));
    auto job = json::parse(h.call("GET", "/v2/batch/" + job_id).body);
    CHECK(job["status"] == "completed");
    CHECK(job["processed"] == n);
    CHECK(job["error"].is_null());
    for (auto& r : h.peer.requests())
      CHECK(r.header("mailassay-event") != "batch.failed");
  }

  TEST_CASE("an endpoint URL follows the SMTP address policy and https") {
    // No allow-list, https required.
    server_process srv{{{"MAILASSAY_WEBHOOKS_SECRET_KEY", server_key}}};
    api a{srv};
    auto jwt =
        a.signup("P", unique_email("p"))["accessToken"].get<std::string>();
    auto create = [&](const std::string& url) {
      return a.post("/v2/webhooks",
                    {{"url", url}, {"events", {"batch.completed"}}}, jwt);
    };
    struct row {
      const char* url;
      const char* message;
    };
    const std::string hint = "; the operator may allow networks with "
                             "MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS";
    const row refused[] = {
        {"https://127.0.0.1:8443/hook",
         "url must not point at a loopback address (127.0.0.1)"},
        {"https://localhost/hook",
         "url must not point at a loopback address (localhost)"},
        {"https://[::1]/hook",
         "url must not point at a loopback address (::1)"},
        {"https://10.0.0.8/hook",
         "url must not point at a private address (10.0.0.8)"},
        {"https://169.254.169.254/latest/meta-data",
         "url must not point at a link_local address (169.254.169.254)"},
        {"https://0.0.0.0/", "url must not point at a reserved address "
                             "(0.0.0.0)"},
    };
    for (auto& r : refused) {
      auto res = create(r.url);
      CHECK_MESSAGE(res.status == 422, r.url);
      auto b = json::parse(res.body);
      CHECK(b["statusCode"] == 422);
      CHECK(b["error"] == "Unprocessable Entity");
      CHECK(b["message"] == json::array({std::string{r.message} + hint}));
    }
    auto plain = create("http://hooks.example.com/hook");
    CHECK(plain.status == 422);
    CHECK(json::parse(plain.body)["message"] ==
          json::array({"url must use https"}));
    auto bad = create("https://user:pw@hooks.example.com/");
    CHECK(json::parse(bad.body)["message"] ==
          json::array({"url must not contain credentials"}));
    // A DNS name is checked when it is resolved, before every delivery.
    CHECK(create("https://hooks.example.com/hook").status == 201);
    // A PATCH to a refused URL is refused the same way.
    auto list = json::parse(a.call("GET", "/v2/webhooks", jwt).body)["items"];
    REQUIRE(list.size() == 1);
    auto id = list[0]["id"].get<std::string>();
    auto patch = a.call("PATCH", "/v2/webhooks/" + id, jwt,
                        json{{"url", "https://127.0.0.1/"}}.dump());
    CHECK(patch.status == 422);
  }

  TEST_CASE("owners and admins manage endpoints, members read them, and an "
            "organization sees only its own") {
    hook_env h;
    auto created = h.create({{"description", "billing"},
                             {"events", {"key.revoked", "batch.completed"}},
                             {"creditsLowThreshold", 40}});
    auto id = created["id"].get<std::string>();
    CHECK(id.rfind("whk_", 0) == 0);
    CHECK(created["url"] == h.peer.url("/hook"));
    CHECK(created["events"] == json::array({"batch.completed", "key.revoked"}));
    CHECK(created["status"] == "active");
    CHECK(created["description"] == "billing");
    CHECK(created["creditsLowThreshold"] == 40);
    CHECK(created["createdAt"].is_string());
    auto secret = created["secret"].get<std::string>();
    CHECK(secret.rfind("whsec_", 0) == 0);

    // The secret is shown only at creation (and rotation).
    auto got = h.call("GET", "/v2/webhooks/" + id);
    REQUIRE(got.status == 200);
    CHECK_FALSE(json::parse(got.body).contains("secret"));
    CHECK(got.body.find(secret) == std::string::npos);
    auto list = h.call("GET", "/v2/webhooks");
    REQUIRE(list.status == 200);
    CHECK(json::parse(list.body)["items"].size() == 1);
    CHECK(list.body.find(secret) == std::string::npos);

    auto patched = h.call("PATCH", "/v2/webhooks/" + id,
                          {{"status", "disabled"},
                           {"events", {"credits.low"}},
                           {"description", nullptr}});
    REQUIRE_MESSAGE(patched.status == 200, patched.body);
    auto p = json::parse(patched.body);
    CHECK(p["status"] == "disabled");
    CHECK(p["events"] == json::array({"credits.low"}));
    CHECK(p["description"] == "");
    CHECK(p["url"] == h.peer.url("/hook"));

    // Precise 422s.
    auto bad = h.call("POST", "/v2/webhooks",
                      {{"events", {"batch.done", "key.revoked", "key.revoked"}},
                       {"creditsLowThreshold", -1},
                       {"colour", "red"}});
    REQUIRE(bad.status == 422);
    CHECK(json::parse(bad.body)["message"] ==
          json::array(
              {"property colour should not exist", "url should not be empty",
               "events has an unknown event \"batch.done\" (known: "
               "batch.completed, batch.failed, batch.cancelled, credits.low, "
               "key.revoked)",
               "events lists \"key.revoked\" more than once",
               "creditsLowThreshold must be between 0 and 1099511627776"}));
    auto bad_status =
        h.call("PATCH", "/v2/webhooks/" + id, {{"status", "paused"}});
    CHECK(json::parse(bad_status.body)["message"] ==
          json::array({"status must be one of the following values: active, "
                       "disabled"}));
    auto not_json =
        h.a->call("POST", "/v2/webhooks", h.jwt, "url=x",
                  {{"Content-Type", "application/x-www-form-urlencoded"}});
    CHECK(not_json.status == 400);
    CHECK(h.call("GET", "/v2/webhooks/" + id + "/deliveries?limit=0").status ==
          422);

    // A member reads but does not manage.
    auto member_email = unique_email("m");
    REQUIRE(h.call("POST", "/v2/organization/members",
                   {{"email", member_email},
                    {"password", "correct horse battery"},
                    {"role", "member"}})
                .status == 201);
    auto member =
        h.a->post("/v2/auth/login", {{"email", member_email},
                                     {"password", "correct horse battery"}})
            .body;
    auto mjwt = json::parse(member)["accessToken"].get<std::string>();
    CHECK(h.a->call("GET", "/v2/webhooks", mjwt).status == 200);
    CHECK(h.a->call("GET", "/v2/webhooks/" + id + "/deliveries", mjwt).status ==
          200);
    auto forbidden =
        h.a->post("/v2/webhooks",
                  {{"url", h.peer.url()}, {"events", {"key.revoked"}}}, mjwt);
    CHECK(forbidden.status == 403);
    CHECK(json::parse(forbidden.body)["message"] ==
          "Only owners and admins can manage webhooks");
    CHECK(h.a->call("POST", "/v2/webhooks/" + id + "/test", mjwt).status ==
          403);
    CHECK(h.a->call("POST", "/v2/webhooks/" + id + "/rotate-secret", mjwt)
              .status == 403);
    CHECK(h.a->call("DELETE", "/v2/webhooks/" + id, mjwt).status == 403);

    // API keys do not manage webhooks.
    auto key = h.a->create_key(h.jwt)["key"].get<std::string>();
    CHECK(h.a->call("GET", "/v2/webhooks", key).status == 403);

    // Another organization sees none of it.
    auto other =
        h.a->signup("X", unique_email("x"))["accessToken"].get<std::string>();
    CHECK(json::parse(h.a->call("GET", "/v2/webhooks", other).body)["items"]
              .empty());
    CHECK(h.a->call("GET", "/v2/webhooks/" + id, other).status == 404);
    CHECK(h.a->call("DELETE", "/v2/webhooks/" + id, other).status == 404);
    CHECK(h.a->call("POST", "/v2/webhooks/" + id + "/test", other).status ==
          404);

    CHECK(h.call("DELETE", "/v2/webhooks/" + id).status == 204);
    CHECK(h.call("GET", "/v2/webhooks/" + id).status == 404);
  }

  TEST_CASE("a batch job that ends sends batch.completed with a valid "
            "signature") {
    hook_env h;
    auto w = h.create();
    auto secret = w["secret"].get<std::string>();
    auto up = h.a->call("POST", "/v2/batch/upload", h.jwt,
                        "email\nkim@@acme.test\nlena.acme.test\n",
                        {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job_id = json::parse(up.body)["id"].get<std::string>();
    auto got = h.wait_event("batch.completed", [&](const json& d) {
      return d["job"]["id"] == job_id;
    });
    REQUIRE_MESSAGE(got, h.srv->log());
    auto& r = *got;
    CHECK(r.method == "POST");
    CHECK(r.target == "/hook");
    CHECK(r.header("content-type") == "application/json");
    CHECK(r.header("mailassay-event") == "batch.completed");
    CHECK(signed_with(r, secret));
    CHECK_FALSE(signed_with(r, secret + "x"));
    auto body = json::parse(r.body);
    CHECK(body["id"] == r.header("mailassay-delivery"));
    CHECK(body["organizationId"] == w["organizationId"]);
    CHECK(body["data"]["job"]["status"] == "completed");
    CHECK(body["data"]["job"]["invalidRows"] == 2);
    CHECK(body["data"]["exportUrl"] ==
          "/v2/batch/" + job_id + "/results?format=csv");
    auto t = std::stoll(r.header("mailassay-signature").substr(2));
    auto now = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
    CHECK(std::llabs(now - t) < 120);
    // The delivery log says so.
    CHECK(eventually([&] {
      for (auto& d : h.deliveries(w["id"]))
        if (d["id"] == body["id"])
          return d["status"] == "delivered" && d["attemptCount"] == 1 &&
                 d["attempts"][0]["statusCode"] == 200;
      return false;
    }));
  }

  TEST_CASE("the receiver answering 500 twice: the third attempt succeeds, "
            "with the same Mailassay-Delivery") {
    hook_env h;
    auto w = h.create();
    auto id = w["id"].get<std::string>();
    h.peer.script({{500}, {500}});
    auto test = h.call("POST", "/v2/webhooks/" + id + "/test");
    REQUIRE_MESSAGE(test.status == 202, test.body);
    auto queued = json::parse(test.body);
    CHECK(queued["event"] == "ping");
    CHECK(queued["status"] == "pending");
    auto delivery = queued["id"].get<std::string>();
    REQUIRE_MESSAGE(
        eventually([&] { return h.received(delivery).size() >= 3; }),
        h.srv->log());
    auto got = h.received(delivery);
    CHECK(got[0].answered == 500);
    CHECK(got[1].answered == 500);
    for (auto& r : got) {
      CHECK(r.header("mailassay-event") == "ping");
      CHECK(signed_with(r, w["secret"]));
      CHECK(r.body == got[0].body);
    }
    json d;
    REQUIRE(eventually([&] {
      d = h.deliveries(id)[0];
      return d["status"] == "delivered";
    }));
    CHECK(d["id"] == delivery);
    CHECK(d["attemptCount"] == 3);
    CHECK(d["lastStatusCode"] == 200);
    CHECK(d["nextAttemptAt"].is_null());
    CHECK(d["deliveredAt"].is_string());
    REQUIRE(d["attempts"].size() == 3);
    CHECK(d["attempts"][0]["statusCode"] == 500);
    CHECK(d["attempts"][1]["statusCode"] == 500);
    CHECK(d["attempts"][2]["statusCode"] == 200);
    CHECK(d["attempts"][2]["number"] == 3);
    CHECK(h.received(delivery).size() == 3);
  }

  TEST_CASE("killed with kill -9 while a delivery waits for its retry: "
            "delivered after the restart, exactly one success recorded") {
    auto dir = temp_dir("webhooks-crash");
    auto extra = durable_db(dir);
    extra["MAILASSAY_WEBHOOKS_RETRY_FIRST_MS"] = "4000";
    hook_env h{extra};
    auto w = h.create();
    auto id = w["id"].get<std::string>();
    h.peer.script({{503}});
    auto test = h.call("POST", "/v2/webhooks/" + id + "/test");
    REQUIRE(test.status == 202);
    auto delivery = json::parse(test.body)["id"].get<std::string>();
    // The first attempt failed and is recorded; the retry waits 4 s.
    REQUIRE(eventually([&] {
      auto d = h.deliveries(id);
      return !d.empty() && d[0]["attemptCount"] == 1;
    }));
    auto before = h.deliveries(id)[0];
    CHECK(before["status"] == "pending");
    CHECK(before["nextAttemptAt"].is_string());
    h.srv->kill_hard();
    h.start();
    REQUIRE_MESSAGE(
        eventually([&] { return h.received(delivery).size() >= 2; }),
        h.srv->log());
    json d;
    REQUIRE(eventually([&] {
      d = h.deliveries(id)[0];
      return d["status"] == "delivered";
    }));
    CHECK(d["attemptCount"] == 2);
    int successes = 0;
    for (auto& a : d["attempts"])
      successes += a["statusCode"] == 200;
    CHECK(successes == 1);
    auto got = h.received(delivery);
    REQUIRE(got.size() == 2);
    CHECK(got[0].answered == 503);
    CHECK(got[1].answered == 200);
    CHECK(got[0].header("mailassay-delivery") ==
          got[1].header("mailassay-delivery"));
    CHECK(signed_with(got[1], w["secret"]));
  }

  TEST_CASE("key.revoked and credits.low carry what happened") {
    hook_env h;
    auto w = h.create({{"creditsLowThreshold", 99}});
    auto secret = w["secret"].get<std::string>();
    auto key = h.a->create_key(h.jwt, {{"name", "old"}});
    auto key_id = key["id"].get<std::string>();
    REQUIRE(h.call("POST", "/v2/api-keys/" + key_id + "/revoke").status == 200);
    auto revoked = h.wait_event(
        "key.revoked", [&](const json& d) { return d["key"]["id"] == key_id; });
    REQUIRE_MESSAGE(revoked, h.srv->log());
    CHECK(signed_with(*revoked, secret));
    auto rb = json::parse(revoked->body)["data"];
    CHECK(rb["key"]["name"] == "old");
    CHECK(rb["key"]["prefix"] == key["prefix"]);
    CHECK(rb["revokedAt"].is_string());
    CHECK(rb["key"].find("key") == rb["key"].end()); // never the secret

    // An SMTP batch reserves a credit per address at upload: 100 -> 98.
    auto up = h.a->call("POST", "/v2/batch/upload?smtp=true", h.jwt,
                        "email\na@example.com\nb@example.com\n",
                        {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto low = h.wait_event("credits.low", [](const json&) { return true; });
    REQUIRE_MESSAGE(low, h.srv->log());
    CHECK(signed_with(*low, secret));
    auto lb = json::parse(low->body)["data"];
    CHECK(lb["balance"] == 98);
    CHECK(lb["threshold"] == 99);
  }

  TEST_CASE("a rotated secret signs beside the old one; a disabled endpoint "
            "gets nothing until enabled") {
    hook_env h;
    auto w = h.create();
    auto id = w["id"].get<std::string>();
    auto old_secret = w["secret"].get<std::string>();
    auto rotated = h.call("POST", "/v2/webhooks/" + id + "/rotate-secret");
    REQUIRE(rotated.status == 200);
    CHECK(rotated.header("cache-control") == "no-store");
    auto new_secret = json::parse(rotated.body)["secret"].get<std::string>();
    CHECK(new_secret != old_secret);
    auto ping =
        json::parse(h.call("POST", "/v2/webhooks/" + id + "/test").body);
    auto ping_id = ping["id"].get<std::string>();
    REQUIRE(eventually([&] { return !h.received(ping_id).empty(); }));
    auto r = h.received(ping_id)[0];
    CHECK(signed_with(r, new_secret));
    CHECK(signed_with(r, old_secret));
    auto header = r.header("mailassay-signature");
    CHECK(std::count(header.begin(), header.end(), ',') == 2);
    // After their answers, the secrets appear nowhere: not in the log, the
    // records or the delivery log.
    auto listed = h.call("GET", "/v2/webhooks").body +
                  h.call("GET", "/v2/webhooks/" + id).body +
                  h.call("GET", "/v2/webhooks/" + id + "/deliveries").body;
    for (auto& s : {old_secret, new_secret}) {
      CHECK(listed.find(s) == std::string::npos);
      CHECK(h.srv->log().find(s) == std::string::npos);
      // Nor any part long enough to matter (the random tail).
      CHECK(h.srv->log().find(s.substr(6, 16)) == std::string::npos);
    }

    // Disabled: its ping waits, while another endpoint's is sent.
    REQUIRE(h.call("PATCH", "/v2/webhooks/" + id, {{"status", "disabled"}})
                .status == 200);
    auto held =
        json::parse(h.call("POST", "/v2/webhooks/" + id + "/test").body)["id"]
            .get<std::string>();
    auto other = h.create()["id"].get<std::string>();
    auto sent =
        json::parse(
            h.call("POST", "/v2/webhooks/" + other + "/test").body)["id"]
            .get<std::string>();
    REQUIRE(eventually([&] { return !h.received(sent).empty(); }));
    CHECK(h.received(held).empty());
    REQUIRE(
        h.call("PATCH", "/v2/webhooks/" + id, {{"status", "active"}}).status ==
        200);
    CHECK(eventually([&] { return !h.received(held).empty(); }));
  }

  TEST_CASE("a time-out and a connection closed without an answer are "
            "failures retried under the same Mailassay-Delivery") {
    hook_env h{{{"MAILASSAY_WEBHOOKS_TIMEOUT_MS", "1000"}}};
    auto w = h.create();
    auto id = w["id"].get<std::string>();
    // Held past the 1 s time-out, then closed, then answered.
    h.peer.script({{200, 4000ms}, {0, 0ms, true}});
    auto test = h.call("POST", "/v2/webhooks/" + id + "/test");
    REQUIRE(test.status == 202);
    auto delivery = json::parse(test.body)["id"].get<std::string>();
    json d;
    REQUIRE_MESSAGE(eventually([&] {
                      d = h.deliveries(id)[0];
                      return d["status"] == "delivered";
                    }),
                    h.srv->log());
    CHECK(d["id"] == delivery);
    REQUIRE(d["attempts"].size() == 3);
    CHECK(d["attempts"][0]["statusCode"].is_null());
    CHECK(d["attempts"][0]["error"] == "timeout");
    CHECK(d["attempts"][1]["statusCode"].is_null());
    CHECK(d["attempts"][1]["error"] == "bad_response");
    CHECK(d["attempts"][2]["statusCode"] == 200);
    auto got = h.received(delivery);
    REQUIRE(got.size() == 3);
    for (auto& r : got)
      CHECK(signed_with(r, w["secret"]));
  }

  TEST_CASE("a receiver that is down: connection errors are retried until "
            "it listens") {
    // A port nobody listens on: the receiver is created, its port kept, and
    // closed; the endpoint points at it.
    std::uint16_t port = 0;
    {
      http_peer gone;
      port = gone.port();
    }
    hook_env h;
    auto w = h.create(
        {{"url", "http://127.0.0.1:" + std::to_string(port) + "/hook"}});
    auto id = w["id"].get<std::string>();
    auto test = h.call("POST", "/v2/webhooks/" + id + "/test");
    REQUIRE(test.status == 202);
    json d;
    REQUIRE_MESSAGE(eventually([&] {
                      d = h.deliveries(id)[0];
                      return d["attemptCount"].get<int>() >= 2;
                    }),
                    h.srv->log());
    CHECK(d["status"] == "pending");
    CHECK(d["nextAttemptAt"].is_string());
    // The class, not the addresses tried; the log keeps the detail.
    CHECK(d["attempts"][0]["error"] == "connect_failed");
    CHECK(d["lastError"] == "connect_failed");
    CHECK(d["lastStatusCode"].is_null());
    CHECK(h.srv->log().find("\"detail\":\"connect") != std::string::npos);
  }

  TEST_CASE("a host name is resolved before every attempt and a loopback "
            "answer is refused without the allow-list") {
    dns_peer dns;
    dns.add_a("hooks.example.com", "127.0.0.1");
    http_peer peer;
    auto url =
        "http://hooks.example.com:" + std::to_string(peer.port()) + "/hook";
    std::map<std::string, std::string> base{
        {"MAILASSAY_WEBHOOKS_SECRET_KEY", server_key},
        {"MAILASSAY_WEBHOOKS_ALLOW_HTTP", "true"},
        {"MAILASSAY_WEBHOOKS_ALLOWED_PORTS", std::to_string(peer.port())},
        {"MAILASSAY_WEBHOOKS_POLL_MS", "100"},
        {"MAILASSAY_WEBHOOKS_RETRY_FIRST_MS", "300"},
        {"MAILASSAY_DNS_SERVERS", dns.server()},
        {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
        {"MAILASSAY_DNS_TRIES", "1"}};
    auto schema = own_schema(base, "mailassay_wh");
    {
      server_process srv{base};
      api a{srv};
      auto jwt =
          a.signup("D", unique_email("d"))["accessToken"].get<std::string>();
      auto made = a.post("/v2/webhooks",
                         {{"url", url}, {"events", {"key.revoked"}}}, jwt);
      REQUIRE_MESSAGE(made.status == 201, made.body);
      auto id = json::parse(made.body)["id"].get<std::string>();
      REQUIRE(a.call("POST", "/v2/webhooks/" + id + "/test", jwt).status ==
              202);
      json d;
      REQUIRE_MESSAGE(eventually([&] {
                        auto r = a.call(
                            "GET", "/v2/webhooks/" + id + "/deliveries", jwt);
                        d = json::parse(r.body)["items"][0];
                        return d["attemptCount"].get<int>() >= 1;
                      }),
                      srv.log());
      CHECK(d["status"] == "pending");
      // A class only: what the name resolved to stays in the log (no
      // internal DNS oracle for tenants).
      CHECK(d["attempts"][0]["error"] == "refused_address");
      CHECK(d["lastError"] == "refused_address");
      auto listed = a.call("GET", "/v2/webhooks/" + id + "/deliveries", jwt);
      CHECK(listed.body.find("127.0.0.1") == std::string::npos);
      CHECK(srv.log().find("127.0.0.1") != std::string::npos);
      CHECK(peer.connections() == 0);
    }
    // With 127.0.0.0/8 allowed, the same name is delivered to.
    base["MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS"] = "127.0.0.0/8";
    server_process srv{base};
    api a{srv};
    auto jwt =
        a.signup("E", unique_email("e"))["accessToken"].get<std::string>();
    auto made = a.post("/v2/webhooks",
                       {{"url", url}, {"events", {"key.revoked"}}}, jwt);
    REQUIRE_MESSAGE(made.status == 201, made.body);
    auto id = json::parse(made.body)["id"].get<std::string>();
    REQUIRE(a.call("POST", "/v2/webhooks/" + id + "/test", jwt).status == 202);
    CHECK_MESSAGE(peer.wait_for(1, 30s), srv.log());
    CHECK(peer.requests().at(0).header("mailassay-event") == "ping");
  }

  TEST_CASE("validations answer while every delivery attempt hangs") {
    hook_env h{{{"MAILASSAY_WEBHOOKS_CONCURRENCY", "2"},
                {"MAILASSAY_WEBHOOKS_TIMEOUT_MS", "60000"}}};
    h.peer.set_fallback({200, 120000ms});
    auto id = h.create()["id"].get<std::string>();
    for (int i = 0; i < 4; ++i)
      REQUIRE(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
    // Both attempt slots are taken by a receiver that does not answer.
    REQUIRE_MESSAGE(eventually([&] {
                      return h.a->metric("mailassay_webhook_in_flight") == 2;
                    }),
                    h.srv->log());
    auto key = h.a->create_key(h.jwt)["key"].get<std::string>();
    for (int i = 0; i < 20; ++i) {
      auto r =
          h.a->post("/v2/email/validate",
                    {{"email", "user" + std::to_string(i) + "@@x.test"}}, key);
      REQUIRE_MESSAGE(r.status == 200, r.body);
    }
    CHECK(h.a->metric("mailassay_webhook_in_flight") == 2);
  }

  TEST_CASE("a cancelled batch job sends batch.cancelled") {
    // Every lookup of the job's domains waits, so the job is still running
    // when it is cancelled.
    dns_peer dns;
    dns.load_zone("*.slow.test MX 10 mx.slow.test\n*.slow.test DELAY 500\n");
    hook_env h{{{"MAILASSAY_DNS_SERVERS", dns.server()},
                {"MAILASSAY_DNS_TIMEOUT_MS", "2000"},
                {"MAILASSAY_DNS_TRIES", "1"},
                {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}}};
    auto w = h.create({{"events", {"batch.cancelled"}}});
    std::string csv = "email\n";
    for (int i = 0; i < 200; ++i)
      csv +=
          "p" + std::to_string(i) + "@d" + std::to_string(i) + ".slow.test\n";
    auto up = h.a->call("POST", "/v2/batch/upload", h.jwt, csv,
                        {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job_id = json::parse(up.body)["id"].get<std::string>();
    auto cancel = h.call("POST", "/v2/batch/" + job_id + "/cancel");
    REQUIRE_MESSAGE(cancel.status == 200, cancel.body);
    auto got = h.wait_event("batch.cancelled", [&](const json& d) {
      return d["job"]["id"] == job_id;
    });
    REQUIRE_MESSAGE(got, h.srv->log());
    CHECK(got->header("mailassay-event") == "batch.cancelled");
    CHECK(signed_with(*got, w["secret"]));
    auto data = json::parse(got->body)["data"];
    CHECK(data["job"]["status"] == "cancelled");
    CHECK(data["exportUrl"] == "/v2/batch/" + job_id + "/results?format=csv");
    // Subscribed to batch.cancelled only: exactly one request.
    CHECK(h.peer.requests().size() == 1);
  }

  TEST_CASE("the server key is generated once into its file, kept across "
            "restarts, and a file holding something else stops the start") {
    auto dir = temp_dir("webhooks-key");
    auto file = dir + "/keys/webhooks.key";
    auto read = [&] {
      std::ifstream in{file};
      std::string line;
      std::getline(in, line);
      return line;
    };
    std::map<std::string, std::string> env{
        {"MAILASSAY_WEBHOOKS_SECRET_KEY_FILE", file},
        {"MAILASSAY_WEBHOOKS_SECRET_KEY", unset_variable},
        {"MAILASSAY_DATABASE_URL", "sqlite://" + dir + "/k.db"}};
    std::string first;
    {
      server_process srv{env};
      first = read();
      CHECK(first.size() == 64);
      CHECK(first.find_first_not_of("0123456789abcdef") == std::string::npos);
      struct stat st {};
      REQUIRE(::stat(file.c_str(), &st) == 0);
      CHECK((st.st_mode & 0777) == 0600);
      CHECK(srv.log().find(first) == std::string::npos);
    }
    {
      server_process srv{env};
      CHECK(read() == first);
    }
    {
      std::ofstream out{file, std::ios::trunc};
      out << "not a key\n";
    }
    std::string out;
    CHECK(run_binary({"serve"}, env, out) == 2);
    CHECK(out.find("does not hold a webhook key") != std::string::npos);
    CHECK(read() == "not a key");
  }

  // -- issue #28: limits, fairness, what tenants see ----------------------

  TEST_CASE("/test is limited per endpoint and per organization: 429 with "
            "Retry-After and the error body; other organizations are not") {
    hook_env h{{{"MAILASSAY_WEBHOOKS_TEST_PER_ENDPOINT", "2"},
                {"MAILASSAY_WEBHOOKS_TEST_PER_ORGANIZATION", "3"}}};
    auto one = h.create()["id"].get<std::string>();
    auto two = h.create()["id"].get<std::string>();
    auto test = [&](const std::string& id) {
      return h.call("POST", "/v2/webhooks/" + id + "/test");
    };
    auto check_429 = [](const http_response& r, const std::string& message) {
      CHECK(r.status == 429);
      auto wait = std::stoi(r.header("retry-after"));
      CHECK(wait >= 1);
      CHECK(wait <= 60);
      auto b = json::parse(r.body);
      CHECK(b["statusCode"] == 429);
      CHECK(b["code"] == "TOO_MANY_REQUESTS");
      CHECK(b["message"] == message);
    };
    REQUIRE(test(one).status == 202);
    REQUIRE(test(one).status == 202);
    check_429(test(one), "Too many test deliveries for this webhook: at most "
                         "2 per 60 s");
    REQUIRE(test(two).status == 202);
    check_429(test(two), "Too many test deliveries for this organization: at "
                         "most 3 per 60 s");
    // Another organization has its own windows.
    auto other =
        h.a->signup("O", unique_email("o"))["accessToken"].get<std::string>();
    auto made = h.a->post(
        "/v2/webhooks",
        {{"url", h.peer.url("/other")}, {"events", {"key.revoked"}}}, other);
    REQUIRE(made.status == 201);
    auto oid = json::parse(made.body)["id"].get<std::string>();
    CHECK(h.a->call("POST", "/v2/webhooks/" + oid + "/test", other).status ==
          202);
    // Refused calls queued nothing: three pings went out.
    CHECK(h.deliveries(one).size() == 2);
    CHECK(h.deliveries(two).size() == 1);
  }

  TEST_CASE("at the organization's cap of pending deliveries /test answers "
            "429") {
    hook_env h{{{"MAILASSAY_WEBHOOKS_MAX_PENDING_PER_ORGANIZATION", "2"}}};
    auto id = h.create()["id"].get<std::string>();
    // A disabled endpoint keeps its pings pending.
    REQUIRE(h.call("PATCH", "/v2/webhooks/" + id, {{"status", "disabled"}})
                .status == 200);
    REQUIRE(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
    REQUIRE(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
    auto r = h.call("POST", "/v2/webhooks/" + id + "/test");
    CHECK(r.status == 429);
    CHECK(std::stoi(r.header("retry-after")) >= 1);
    CHECK(json::parse(r.body)["message"] ==
          "Too many deliveries waiting for this organization: at most 2 "
          "pending");
    CHECK(h.deliveries(id).size() == 2);
    // Once they are sent, /test works again.
    REQUIRE(
        h.call("PATCH", "/v2/webhooks/" + id, {{"status", "active"}}).status ==
        200);
    REQUIRE_MESSAGE(eventually([&] {
                      for (auto& d : h.deliveries(id))
                        if (d["status"] != "delivered")
                          return false;
                      return true;
                    }),
                    h.srv->log());
    CHECK(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
  }

  TEST_CASE("an organization whose endpoints never answer holds only its "
            "share of the slots: another organization's ping is sent at "
            "once") {
    // 4 slots, at most 2 per organization; an attempt may hang 60 s.
    hook_env h{{{"MAILASSAY_WEBHOOKS_CONCURRENCY", "4"},
                {"MAILASSAY_WEBHOOKS_ORGANIZATION_CONCURRENCY", "2"},
                {"MAILASSAY_WEBHOOKS_TIMEOUT_MS", "60000"}}};
    h.peer.set_fallback({200, 120000ms});
    for (int i = 0; i < 6; ++i) {
      auto id =
          h.create({{"url", h.peer.url("/slow" + std::to_string(i))}})["id"]
              .get<std::string>();
      REQUIRE(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
    }
    REQUIRE_MESSAGE(eventually([&] {
                      return h.a->metric("mailassay_webhook_in_flight") == 2;
                    }),
                    h.srv->log());
    http_peer fast;
    auto other =
        h.a->signup("F", unique_email("f"))["accessToken"].get<std::string>();
    auto made = h.a->post(
        "/v2/webhooks",
        {{"url", fast.url("/hook")}, {"events", {"key.revoked"}}}, other);
    REQUIRE_MESSAGE(made.status == 201, made.body);
    auto id = json::parse(made.body)["id"].get<std::string>();
    auto asked = std::chrono::steady_clock::now();
    REQUIRE(h.a->call("POST", "/v2/webhooks/" + id + "/test", other).status ==
            202);
    // Without fairness the slow organization holds all 4 slots and this
    // waits for an attempt time-out (60 s); the bound leaves room for a
    // busy machine.
    REQUIRE_MESSAGE(fast.wait_for(1, 20s), h.srv->log());
    CHECK(std::chrono::steady_clock::now() - asked < 20s);
    CHECK(fast.requests().at(0).header("mailassay-event") == "ping");
    // Once the fast attempt is recorded, the slow organization still
    // holds its share, no more.
    CHECK(eventually(
        [&] { return h.a->metric("mailassay_webhook_in_flight") == 2; }));
  }

  TEST_CASE("endpoint ports are 443 and 80 unless the operator lists "
            "others") {
    http_peer listed;
    std::map<std::string, std::string> env{
        {"MAILASSAY_WEBHOOKS_SECRET_KEY", server_key},
        {"MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
        {"MAILASSAY_WEBHOOKS_ALLOW_HTTP", "true"},
        {"MAILASSAY_WEBHOOKS_ALLOWED_PORTS",
         "8443," + std::to_string(listed.port())}};
    auto schema = own_schema(env, "mailassay_wh");
    server_process srv{env};
    api a{srv};
    auto jwt =
        a.signup("P", unique_email("p"))["accessToken"].get<std::string>();
    auto create = [&](const std::string& url) {
      return a.post("/v2/webhooks", {{"url", url}, {"events", {"key.revoked"}}},
                    jwt);
    };
    auto redis = create("http://127.0.0.1:6379/hook");
    CHECK(redis.status == 422);
    CHECK(json::parse(redis.body)["message"] ==
          json::array({"url must use port 443 or 80 (got 6379); the operator "
                       "may allow others with "
                       "MAILASSAY_WEBHOOKS_ALLOWED_PORTS"}));
    CHECK(create("http://127.0.0.1/hook").status == 201);
    CHECK(create("https://127.0.0.1/hook").status == 201);
    CHECK(create("https://127.0.0.1:8443/hook").status == 201);
    auto made = create(listed.url("/hook"));
    REQUIRE_MESSAGE(made.status == 201, made.body);
    auto id = json::parse(made.body)["id"].get<std::string>();
    auto patch = a.call("PATCH", "/v2/webhooks/" + id, jwt,
                        json{{"url", "http://127.0.0.1:22/"}}.dump());
    CHECK(patch.status == 422);
    CHECK(json::parse(patch.body)["message"] ==
          json::array({"url must use port 443 or 80 (got 22); the operator "
                       "may allow others with "
                       "MAILASSAY_WEBHOOKS_ALLOWED_PORTS"}));
  }

  TEST_CASE("members read endpoint URLs with the query values hidden; "
            "owners and admins read them whole") {
    hook_env h;
    auto url = h.peer.url("/hook?token=s3cret-value&v=2");
    auto id = h.create({{"url", url}})["id"].get<std::string>();
    auto redacted = h.peer.url("/hook?token=***&v=***");
    auto login = [&](const std::string& role) {
      auto email = unique_email(role);
      REQUIRE(h.call("POST", "/v2/organization/members",
                     {{"email", email},
                      {"password", "correct horse battery"},
                      {"role", role}})
                  .status == 201);
      auto r =
          h.a->post("/v2/auth/login",
                    {{"email", email}, {"password", "correct horse battery"}});
      return json::parse(r.body)["accessToken"].get<std::string>();
    };
    auto member = login("member");
    auto admin = login("admin");
    auto one = h.a->call("GET", "/v2/webhooks/" + id, member);
    REQUIRE(one.status == 200);
    CHECK(json::parse(one.body)["url"] == redacted);
    auto list = h.a->call("GET", "/v2/webhooks", member);
    REQUIRE(list.status == 200);
    CHECK(json::parse(list.body)["items"][0]["url"] == redacted);
    CHECK(one.body.find("s3cret") == std::string::npos);
    CHECK(list.body.find("s3cret") == std::string::npos);
    for (auto* token : {&h.jwt, &admin}) {
      CHECK(json::parse(
                h.a->call("GET", "/v2/webhooks/" + id, *token).body)["url"] ==
            url);
      CHECK(json::parse(h.a->call("GET", "/v2/webhooks", *token)
                            .body)["items"][0]["url"] == url);
    }
    // The deliveries still go to the whole URL.
    REQUIRE(h.call("POST", "/v2/webhooks/" + id + "/test").status == 202);
    REQUIRE_MESSAGE(h.peer.wait_for(1, 30s), h.srv->log());
    CHECK(h.peer.requests().at(0).target == "/hook?token=s3cret-value&v=2");
  }

  TEST_CASE("a sandbox job (test key) sends no batch event; a live job "
            "does") {
    hook_env h;
    auto w = h.create();
    auto test_key =
        h.a->create_key(h.jwt, {{"name", "t"}, {"mode", "test"}})["key"]
            .get<std::string>();
    REQUIRE(test_key.rfind("svc_test_", 0) == 0);
    auto up = h.a->call("POST", "/v2/batch/upload", test_key,
                        "email\nkim@@acme.test\nlena.acme.test\n",
                        {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    REQUIRE(json::parse(up.body)["sandbox"] == true);
    auto sandbox_job = json::parse(up.body)["id"].get<std::string>();
    REQUIRE_MESSAGE(eventually([&] {
                      auto r = h.a->call("GET", "/v2/batch/" + sandbox_job,
                                         test_key);
                      return json::parse(r.body)["status"] == "completed";
                    }),
                    h.srv->log());
    // The live job ends after the sandbox one: once its event arrived,
    // the sandbox job's would have been queued before it.
    auto live =
        h.a->call("POST", "/v2/batch/upload", h.jwt, "email\nkim@@acme.test\n",
                  {{"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(live.status == 201, live.body);
    auto live_job = json::parse(live.body)["id"].get<std::string>();
    REQUIRE_MESSAGE(
        h.wait_event("batch.completed",
                     [&](const json& d) { return d["job"]["id"] == live_job; }),
        h.srv->log());
    CHECK_FALSE(h.wait_event(
        "batch.completed",
        [&](const json& d) { return d["job"]["id"] == sandbox_job; }, 0ms));
    auto listed = h.deliveries(w["id"]);
    REQUIRE(listed.size() == 1);
    CHECK(listed[0]["event"] == "batch.completed");
  }
}
