// Each provider's RCPT answers, spoken by the project's SMTP peer behind
// MX hosts that the provider table names (issue #30; docs/smtp.md, "What
// each provider answers"): the status, the reason, the SMTP facts and the
// provider of every answer.
#include "tests/http/smtp_service.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

using namespace mailassay::testing;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_peer_options;
using mailassay::tests::peers::smtp_rcpt_behaviour;
using mailassay::tests::peers::smtp_rcpt_rule;

namespace {

// Each provider's MX host is the peer on 127.0.0.1, but consumer Outlook's,
// which is a peer of its own on 127.0.0.46 (same port) taking one RCPT per
// transaction; plain.test's MX matches no provider.
constexpr const char* zone = R"(
mx.peer.test A 127.0.0.1
contoso-test.mail.m365.test A 127.0.0.1
contoso.test MX 10 contoso-test.mail.m365.test
open365.test MX 10 contoso-test.mail.m365.test
hotmail-test.olc.m365.test A 127.0.0.46
hotmail.test MX 10 hotmail-test.olc.m365.test
mta5.am0.yahoodns.test A 127.0.0.1
ymail.test MX 10 mta5.am0.yahoodns.test
mx0a-001.pphosted.test A 127.0.0.1
gated.test MX 10 mx0a-001.pphosted.test
eu-smtp-inbound-1.mimecast.test A 127.0.0.1
mimed.test MX 10 eu-smtp-inbound-1.mimecast.test
aspmx.l.google.test A 127.0.0.1
gcorp.test MX 10 aspmx.l.google.test
plain.test MX 10 mx.peer.test
)";

// The provider table of the test: the shipped names, test suffixes.
constexpr const char* providers = R"(m365.test microsoft365 mailbox
olc.m365.test outlook mailbox
yahoodns.test yahoo mailbox
pphosted.test proofpoint gateway
mimecast.test mimecast gateway
google.test google mailbox
)";

smtp_rcpt_rule reply(const char* pattern, const char* text) {
  return smtp_rcpt_rule{pattern, smtp_rcpt_behaviour::custom,
                        std::chrono::milliseconds(0), text};
}

struct provider_env : smtp_service {
  std::filesystem::path table =
      std::filesystem::temp_directory_path() /
      ("mailassay-provider-answers-" + unique_email("t") + ".txt");

  provider_env() {
    std::ofstream(table) << providers;
    // Microsoft 365 with directory-based edge blocking: unknown recipients
    // (the random probe too) get 550 5.4.1 ... Access denied.
    mx.add_rule("ann@contoso.test", smtp_rcpt_behaviour::accept);
    mx.add_rule(reply("*@contoso.test",
                      "550 5.4.1 Recipient address rejected: Access denied. "
                      "[AM4PEPF00025F9B.EURPRD83.prod.outlook.com "
                      "2026-11-29T00:00:00.000Z 08DD0000000000] "
                      "AS(201806281)"));
    // A Microsoft 365 tenant without it accepts every recipient.
    mx.add_rule("*@open365.test", smtp_rcpt_behaviour::accept);
    // Yahoo: 250 to every address.
    mx.add_rule(reply("*@ymail.test", "250 recipient <x@ymail.test> ok"));
    // A Proofpoint gateway that accepts every RCPT.
    mx.add_rule("*@gated.test", smtp_rcpt_behaviour::accept);
    // Mimecast: unknown recipients refused without an enhanced code.
    mx.add_rule("ann@mimed.test", smtp_rcpt_behaviour::accept);
    mx.add_rule(reply("*@mimed.test",
                      "550 Invalid Recipient - "
                      "https://community.mimecast.com/docs/DOC-1369#550"));
    // Policy refusals of our client.
    mx.add_rule(reply("blocked@gcorp.test",
                      "554 5.7.1 Service unavailable; Client host "
                      "[127.0.0.1] blocked using zen.spamhaus.org"));
    mx.add_rule(reply("banned@gcorp.test",
                      "550 5.7.606 Access denied, banned sending IP "
                      "[127.0.0.1]. To request removal from this list "
                      "please visit https://sender.office.com/"));
    mx.add_rule(reply("rate@gcorp.test",
                      "421 4.7.28 Gmail has detected an unusual rate of "
                      "unsolicited mail originating from your IP address."));
    mx.add_rule("*@gcorp.test", smtp_rcpt_behaviour::no_such_user);
    // No provider: the same Yahoo-like answer is read as before.
    mx.add_rule(reply("*@plain.test", "250 recipient <x@plain.test> ok"));
    start(zone,
          {{"MAILASSAY_SMTP_RETRY_DELAYS_MS", "600,1200"},
           {"MAILASSAY_SMTP_CONNECTIONS_PER_SECOND_PER_HOST", "0"},
           {"MAILASSAY_SMTP_MAX_SESSIONS_PER_HOST", "0"},
           {"MAILASSAY_SMTP_TLS", "never"},
           {"MAILASSAY_RISK_PROVIDERS_FILE", table.string()}},
          {}, "P");
  }

  ~provider_env() {
    std::error_code ignored;
    std::filesystem::remove(table, ignored);
  }

  json validate(const std::string& email, int timeout_ms = 10000) {
    auto r = a->post(
        "/v2/email/validate",
        {{"email", email}, {"smtp", true}, {"timeout", timeout_ms}}, key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }
};

// RCPT command lines the peer received for addresses at `domain`.
std::size_t rcpts_at(const smtp_peer& peer, const std::string& domain) {
  auto lines = peer.received();
  return static_cast<std::size_t>(
      std::count_if(lines.begin(), lines.end(), [&](const std::string& l) {
        return l.rfind("RCPT", 0) == 0 &&
               l.find("@" + domain + ">") != std::string::npos;
      }));
}

} // namespace

TEST_SUITE("api.smtp.providers") {
  TEST_CASE("each provider's answer yields its status and names its "
            "provider") {
    provider_env env;
    smtp_peer_options o;
    o.address = "127.0.0.46";
    o.port = env.mx.port();
    o.hostname = "hotmail-test.olc.m365.test";
    o.max_rcpts_per_transaction = 1;
    smtp_peer outlook{o};
    outlook.add_rule("ann@hotmail.test", smtp_rcpt_behaviour::accept);
    outlook.add_rule(reply("*@hotmail.test",
                           "550 5.5.0 Requested action not taken: mailbox "
                           "unavailable (S2017062302)"));

    struct row {
      const char* email;
      const char* status;
      const char* reason;
      json catch_all;
      const char* failure; ///< nullptr: none
      const char* provider;
      const char* kind;
      int timeout_ms = 10000;
    };
    // A mailbox refused as unknown also shows the domain is no catch-all.
    const row rows[] = {
        {"ghost@contoso.test", "invalid", "rejected_email", false, nullptr,
         "microsoft365", "mailbox"},
        {"ann@contoso.test", "valid", "accepted_email", false, nullptr,
         "microsoft365", "mailbox"},
        {"ann@open365.test", "risky", "catch_all", true, nullptr,
         "microsoft365", "mailbox"},
        // The 452 to the probe's second RCPT is asked again alone: the
        // address is answered, and so is the probe (refused: no catch-all).
        {"ann@hotmail.test", "valid", "accepted_email", false, nullptr,
         "outlook", "mailbox"},
        {"ghost@hotmail.test", "invalid", "rejected_email", false, nullptr,
         "outlook", "mailbox"},
        {"ann@ymail.test", "risky", "catch_all", true, nullptr, "yahoo",
         "mailbox"},
        {"ann@gated.test", "risky", "catch_all", true, nullptr, "proofpoint",
         "gateway"},
        {"ghost@mimed.test", "invalid", "rejected_email", false, nullptr,
         "mimecast", "gateway"},
        {"ann@mimed.test", "valid", "accepted_email", false, nullptr,
         "mimecast", "gateway"},
        {"blocked@gcorp.test", "unknown", "smtp_error", nullptr,
         "policy_refused", "google", "mailbox"},
        {"banned@gcorp.test", "unknown", "smtp_error", nullptr,
         "policy_refused", "google", "mailbox"},
        // Deferred through its retries (600, 1200 ms) until the deadline;
        // room for a slow first session on a busy machine.
        {"rate@gcorp.test", "unknown", "smtp_error", nullptr, "rate_limited",
         "google", "mailbox", 3000},
        // No provider: the same answer as Yahoo's, read by the catch-all
        // probe (accepted too).
        {"ann@plain.test", "risky", "catch_all", true, nullptr, nullptr,
         nullptr},
    };
    for (const auto& r : rows) {
      std::string email = r.email;
      CAPTURE(email);
      auto b = env.validate(r.email, r.timeout_ms);
      CAPTURE(b.dump());
      CHECK(b["status"] == r.status);
      CHECK(b["reason"] == r.reason);
      CHECK(b["smtp"]["catchAll"] == r.catch_all);
      if (r.failure)
        CHECK(b["smtp"]["failure"] == r.failure);
      else
        CHECK(b["smtp"]["failure"].is_null());
      if (r.provider)
        CHECK(b["provider"] == json{{"name", r.provider}, {"kind", r.kind}});
      else
        CHECK(b["provider"].is_null());
    }
    // Outlook took the address and the probe in transactions of their own.
    CHECK(outlook.commands("RCPT") == 4);
  }

  TEST_CASE("no catch-all probe is spent on a provider that accepts every "
            "address") {
    provider_env env;
    for (const char* email :
         {"ann@ymail.test", "bob@ymail.test", "ann@plain.test"}) {
      CAPTURE(email);
      auto b = env.validate(email);
      CHECK(b["smtp"]["checked"] == true);
    }
    // Yahoo: one RCPT per address, no random probe.
    CHECK(rcpts_at(env.mx, "ymail.test") == 2);
    // A host of no provider is probed as before: the address and the probe.
    CHECK(rcpts_at(env.mx, "plain.test") == 2);
  }

  TEST_CASE("/metrics counts sessions open per provider, one series per "
            "name of the table and none") {
    provider_env env;
    CHECK(env.validate("ann@contoso.test")["status"] == "valid");
    auto text = env.a->call("GET", "/metrics").body;
    const std::string family = "mailassay_smtp_provider_sessions_open{";
    std::vector<std::string> labels;
    for (auto at = text.find("\n" + family); at != std::string::npos;
         at = text.find("\n" + family, at + 1)) {
      auto start = at + 1 + family.size();
      labels.push_back(text.substr(start, text.find('}', start) - start));
    }
    std::sort(labels.begin(), labels.end());
    // Answers by provider and class: the address counted under its route's
    // provider, nothing under none.
    const std::string answers = "mailassay_smtp_provider_answers{provider=";
    CHECK(env.a->metric(answers + "\"microsoft365\",class=\"accepted\"}") == 1);
    CHECK(env.a->metric(answers + "\"none\",class=\"accepted\"}") == 0);
    CHECK(env.a->metric(answers + "\"yahoo\",class=\"accepted\"}") == 0);
    CHECK(labels == std::vector<std::string>{
                        "provider=\"google\"", "provider=\"microsoft365\"",
                        "provider=\"mimecast\"", "provider=\"none\"",
                        "provider=\"outlook\"", "provider=\"proofpoint\"",
                        "provider=\"yahoo\""});
    // Its session lingers for more work, then ends: the budget is free.
    CHECK(eventually(
        [&] {
          return env.a->metric(family + "provider=\"microsoft365\"}") == 0;
        },
        std::chrono::milliseconds(10000)));
  }
}
