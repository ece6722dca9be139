// Test keys are a sandbox (docs/api.md "Test keys"): through validate, the
// widget and batch jobs, the local part picks the answer; no DNS query, no
// SMTP connection, no credit. The server's DNS points at a closed port (the
// test default) and its SMTP port at a closed one, so anything that left
// the process would come back as dns_error, never as the table's answer.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay::testing;

namespace {

// One row of the sandbox table.
struct row {
  const char* email;
  const char* status;
  const char* reason;
};

// Every row of the table, with a tag and ASCII case that change nothing.
const std::vector<row> table = {
    {"valid@example.com", "valid", "accepted_email"},
    {"invalid@example.com", "invalid", "rejected_email"},
    {"catchall@example.com", "risky", "catch_all"},
    {"full@example.com", "risky", "mailbox_full"},
    {"disabled@example.com", "invalid", "mailbox_disabled"},
    {"greylisted@example.com", "valid", "accepted_email"},
    {"timeout@example.com", "unknown", "timeout"},
    {"nomx@example.com", "invalid", "no_mx"},
    {"jane.doe@example.org", "valid", "accepted_email"},
    {"valid+123@example.com", "valid", "accepted_email"},
    {"Invalid+x@example.net", "invalid", "rejected_email"},
};

// The facts each row's answer carries beyond status and reason.
void check_facts(const std::string& email, const json& b) {
  CAPTURE(email);
  CHECK(b["sandbox"] == true);
  CHECK(b["creditsUsed"] == 0);
  auto local = email.substr(0, email.find_first_of("+@"));
  for (auto& c : local)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto& smtp = b["smtp"];
  if (local == "nomx") {
    CHECK(b["dns"]["hasMx"] == false);
    CHECK(b["dns"]["result"] == "no_mx");
    CHECK(smtp["checked"] == false);
    return;
  }
  CHECK(b["dns"]["hasMx"] == true);
  CHECK(b["dns"]["mx"][0]["host"] == "mx.sandbox.invalid");
  if (local == "invalid") {
    CHECK(smtp["code"] == 550);
    CHECK(smtp["enhancedCode"] == "5.1.1");
    CHECK(smtp["deliverable"] == false);
  } else if (local == "catchall") {
    CHECK(smtp["catchAll"] == true);
    CHECK(smtp["code"] == 250);
  } else if (local == "full") {
    CHECK(smtp["code"] == 552);
    CHECK(smtp["enhancedCode"] == "5.2.2");
    CHECK(smtp["fullInbox"] == true);
  } else if (local == "disabled") {
    CHECK(smtp["code"] == 550);
    CHECK(smtp["enhancedCode"] == "5.2.1");
    CHECK(smtp["disabled"] == true);
  } else if (local == "greylisted") {
    CHECK(smtp["greylisted"] == true);
    CHECK(smtp["attempts"] == 2);
    CHECK(smtp["code"] == 250);
  } else if (local == "timeout") {
    CHECK(smtp["timedOut"] == true);
    CHECK(smtp["failure"] == "timeout");
    CHECK(smtp["checked"] == false);
    CHECK(smtp["code"].is_null());
  } else {
    CHECK(smtp["checked"] == true);
    CHECK(smtp["failure"].is_null());
    CHECK(smtp["deliverable"] == true);
    CHECK(smtp["catchAll"] == false);
    CHECK(smtp["code"] == 250);
    CHECK(smtp["greylisted"] == false);
  }
}

struct sandbox_env {
  std::map<std::string, std::string> env;
  server_process srv;
  api a{srv};
  std::string jwt;

  explicit sandbox_env(std::map<std::string, std::string> extra = {})
      : env{with(std::move(extra))}, srv{env} {
    jwt = a.signup("S", unique_email("sb"))["accessToken"].get<std::string>();
  }

  // DNS stays at the test default (a closed port); an SMTP identity and a
  // closed SMTP port, so that live keys would try to probe.
  static std::map<std::string, std::string>
  with(std::map<std::string, std::string> extra) {
    std::map<std::string, std::string> e{
        {"MAILASSAY_RISK_DATA_DIR",
         std::string{std::getenv("MAILASSAY_SOURCE_DIR")} + "/data/risk"},
        {"MAILASSAY_DNS_TIMEOUT_MS", "300"},
        {"MAILASSAY_DNS_TRIES", "1"},
        {"MAILASSAY_SMTP_HELO", "probe.example.io"},
        {"MAILASSAY_SMTP_MAIL_FROM", "verify@example.io"},
        {"MAILASSAY_SMTP_PORT", std::to_string(free_port())},
        {"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
        {"MAILASSAY_BATCH_POLL_MS", "100"},
        {"MAILASSAY_LIMITS_IP_PER_MINUTE", "100000"},
        {"MAILASSAY_LIMITS_WIDGET_DEVICE_PER_MINUTE", "100000"},
        {"MAILASSAY_LIMITS_WIDGET_IP_PER_MINUTE", "100000"}};
    for (auto& [k, v] : extra)
      e[k] = v;
    return e;
  }

  json key(json body) {
    body["mode"] = "test";
    auto k = a.create_key(jwt, body);
    REQUIRE(k["key"].get<std::string>().rfind("svc_test_", 0) == 0);
    REQUIRE(k["mode"] == "test");
    return k;
  }

  json get(const std::string& path, const std::string& token) {
    auto r = a.call("GET", path, token);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }

  // The balance and the number of ledger entries of the organization.
  std::pair<std::int64_t, std::size_t> ledger() {
    auto balance =
        get("/v2/credits/balance", jwt)["balance"].get<std::int64_t>();
    auto entries =
        get("/v2/credits/transactions?limit=100", jwt)["items"].size();
    return {balance, entries};
  }

  // Nothing left the process: no DNS query sent, no SMTP probe or session,
  // no credit reserved.
  void check_nothing_left() {
    CHECK(a.metric("mailassay_dns_queries_sent") == 0);
    CHECK(a.metric("mailassay_smtp_probes") == 0);
    CHECK(a.metric("mailassay_smtp_sessions") == 0);
    CHECK(a.metric("mailassay_smtp_credits{outcome=\"reserved\"}") == 0);
  }
};

} // namespace

TEST_SUITE("api.sandbox") {
  TEST_CASE("a test key's validations give the table's answers, with or "
            "without smtp, and touch no DNS, SMTP or credit") {
    sandbox_env env;
    auto key =
        env.key({{"name", "sandbox"}, {"config", {{"smtp", true}}}})["key"]
            .get<std::string>();
    auto before = env.ledger();
    CHECK(before.first == 100);
    for (bool smtp : {false, true})
      for (const auto& r : table) {
        CAPTURE(smtp);
        CAPTURE(r.email);
        auto res = env.a.post("/v2/email/validate",
                              {{"email", r.email}, {"smtp", smtp}}, key);
        REQUIRE_MESSAGE(res.status == 200, res.body);
        auto b = json::parse(res.body);
        CHECK(b["status"] == r.status);
        CHECK(b["reason"] == r.reason);
        check_facts(r.email, b);
      }
    // The free checks run as usual; syntax is checked as usual.
    auto disposable =
        json::parse(env.a
                        .post("/v2/email/validate",
                              {{"email", "valid@mailinator.com"}}, key)
                        .body);
    CHECK(disposable["status"] == "risky");
    CHECK(disposable["reason"] == "disposable");
    CHECK(disposable["sandbox"] == true);
    auto bad = json::parse(
        env.a.post("/v2/email/validate", {{"email", "valid@@example.com"}}, key)
            .body);
    CHECK(bad["reason"] == "invalid_syntax");
    CHECK(bad["dns"].is_null());
    CHECK(bad["sandbox"] == true);
    CHECK(env.ledger() == before);
    env.check_nothing_left();

    // A live key of the same organization would have asked DNS, and its
    // answer says so (no sandbox flag).
    auto live =
        env.a.create_key(env.jwt, {{"name", "live"}})["key"].get<std::string>();
    auto l = json::parse(
        env.a.post("/v2/email/validate", {{"email", "valid@example.com"}}, live)
            .body);
    CHECK(l["reason"] == "dns_error");
    CHECK_FALSE(l.contains("sandbox"));
    CHECK(env.a.metric("mailassay_dns_queries_sent") > 0);
  }

  TEST_CASE("a test key keeps the key's rules: smtp needs config.smtp, and "
            "its requests count in its usage, free") {
    sandbox_env env;
    auto k = env.key({{"name", "plain"}});
    auto key = k["key"].get<std::string>();
    auto refused =
        env.a.post("/v2/email/validate",
                   {{"email", "valid@example.com"}, {"smtp", true}}, key);
    CHECK(refused.status == 403);
    for (const auto& r : table)
      REQUIRE(
          env.a.post("/v2/email/validate", {{"email", r.email}}, key).status ==
          200);
    auto stats =
        env.get("/v2/api-keys/" + k["id"].get<std::string>() + "/stats?days=1",
                env.jwt);
    CHECK(stats["totalRequests"] == table.size() + 1);
    CHECK(stats["creditsConsumed"] == 0);
  }

  TEST_CASE("the widget answers a restricted test key from the sandbox") {
    sandbox_env env;
    auto key = env.key({{"name", "widget"},
                        {"allowedDomains", {"shop.example"}}})["key"]
                   .get<std::string>();
    auto before = env.ledger();
    for (const auto& r : table) {
      CAPTURE(r.email);
      auto res = env.a.call(
          "POST", "/v2/widget/validate", key, json{{"email", r.email}}.dump(),
          {{"Origin", "https://shop.example"}, {"X-Device-Id", "dev-sandbox"}});
      REQUIRE_MESSAGE(res.status == 200, res.body);
      CHECK(res.header("access-control-allow-origin") ==
            "https://shop.example");
      auto b = json::parse(res.body);
      CHECK(b["status"] == r.status);
      CHECK(b["reason"] == r.reason);
      check_facts(r.email, b);
    }
    CHECK(env.ledger() == before);
    env.check_nothing_left();
  }

  TEST_CASE("a test key's SMTP batch reserves nothing, even beyond the "
            "balance, and exports the table's answers") {
    sandbox_env env;
    auto key = env.key({{"name", "batch"}, {"config", {{"smtp", true}}}})["key"]
                   .get<std::string>();
    auto before = env.ledger();
    // More addresses than the 100 credits: a live key would get 402.
    std::string csv = "email\n";
    std::map<std::string, const row*> want;
    for (const auto& r : table) {
      csv += std::string{r.email} + "\n";
      want[r.email] = &r;
    }
    for (int i = 0; i < 150; ++i) {
      auto e = "person" + std::to_string(i) + "@example.com";
      csv += e + "\n";
    }
    auto up = env.a.call(
        "POST", "/v2/batch/upload?smtp=true", "", csv,
        {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto j = json::parse(up.body);
    CHECK(j["sandbox"] == true);
    CHECK(j["smtp"] == true);
    CHECK(j["creditsReserved"] == 0);
    auto id = j["id"].get<std::string>();
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      j = env.get("/v2/batch/" + id, key);
      if (j["status"] != "queued" && j["status"] != "processing")
        break;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    CHECK(j["status"] == "completed");
    CHECK(j["sandbox"] == true);
    CHECK(j["creditsUsed"] == 0);
    CHECK(j["counts"]["valid"] == 150 + 4);
    CHECK(j["counts"]["invalid"] == 4);
    CHECK(j["counts"]["risky"] == 2);
    CHECK(j["counts"]["unknown"] == 1);
    auto res =
        env.a.call("GET", "/v2/batch/" + id + "/results?format=json", key);
    REQUIRE_MESSAGE(res.status == 200, res.body);
    auto items = json::parse(res.body)["results"];
    REQUIRE(items.size() == table.size() + 150);
    for (const auto& it : items) {
      auto email = it["email"].get<std::string>();
      CAPTURE(email);
      auto w = want.find(email);
      if (w == want.end()) {
        CHECK(it["status"] == "valid");
        CHECK(it["reason"] == "accepted_email");
        continue;
      }
      CHECK(it["status"] == w->second->status);
      CHECK(it["reason"] == w->second->reason);
      CHECK(it["smtpChecked"] == (std::string{w->second->reason} != "timeout" &&
                                  std::string{w->second->reason} != "no_mx"));
    }
    // The job record in the list says it too; nothing was charged.
    CHECK(env.get("/v2/batch", key)["items"][0]["sandbox"] == true);
    CHECK(env.ledger() == before);
    env.check_nothing_left();
  }
}
