#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

// A zone where every kind of domain the verdict depends on exists.
constexpr const char* zone = R"(
good.test MX 10 mx1.good.test
good.test MX 5 mx0.good.test
mx0.good.test A 127.0.0.2
mx1.good.test A 127.0.0.3
implicit.test A 127.0.0.4
nullmx.test MX 0 .
nomail.test SOA 60 60
gone.test NXDOMAIN
broken.test SERVFAIL
gmail.com MX 5 gmail-smtp-in.l.google.com
gmial.com MX 10 mx.gmial.com
mailinator.com MX 10 mail.mailinator.com
)";

struct validation_env {
  dns_peer dns;
  server_process srv;
  api a{srv};
  std::string key;

  validation_env()
      : srv{{{"MAILASSAY_DNS_SERVERS", (dns.load_zone(zone), dns.server())},
             {"MAILASSAY_DNS_TIMEOUT_MS", "300"},
             {"MAILASSAY_DNS_TRIES", "1"},
             {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
             {"MAILASSAY_RISK_DATA_DIR",
              std::string{std::getenv("MAILASSAY_SOURCE_DIR")} +
                  "/data/risk"}}} {
    auto jwt =
        a.signup("V", unique_email("v"))["accessToken"].get<std::string>();
    key = a.create_key(jwt)["key"].get<std::string>();
  }

  json validate(const json& body, int expect = 200) {
    auto r = a.post("/v2/email/validate", body, key);
    REQUIRE_MESSAGE(r.status == expect, r.body);
    return json::parse(r.body);
  }
};

} // namespace

TEST_SUITE("api.validate") {
  TEST_CASE("each kind of address gets its status and reason") {
    validation_env env;
    struct row {
      const char* email;
      const char* status;
      const char* reason;
    };
    for (auto r : {row{"jane.doe@good.test", "valid", "accepted_email"},
                   row{"jane@implicit.test", "valid", "accepted_email"},
                   row{"jane@nullmx.test", "invalid", "null_mx"},
                   row{"jane@nomail.test", "invalid", "no_mx"},
                   row{"jane@gone.test", "invalid", "invalid_domain"},
                   row{"jane@broken.test", "unknown", "dns_error"},
                   row{"not an address", "invalid", "invalid_syntax"},
                   row{"jane@[192.0.2.1]", "risky", "ip_literal"},
                   row{"info@good.test", "risky", "role_account"},
                   row{"x@mailinator.com", "risky", "disposable"},
                   row{"jane@gmial.com", "risky", "typo"}}) {
      std::string email = r.email;
      CAPTURE(email);
      auto b = env.validate({{"email", r.email}});
      CHECK(b["status"] == r.status);
      CHECK(b["reason"] == r.reason);
      CHECK(b["score"].is_number());
      CHECK(b["disposable"]["isDisposable"].is_boolean());
      CHECK(b["smtp"]["checked"] == false);
      CHECK(b["creditsUsed"] == 0);
    }
  }

  TEST_CASE("the address is checked and answered in NFC (issue #34)") {
    validation_env env;
    // UAX #15: o U+0308 composes to U+00F6; `email` stays as given.
    auto b = env.validate({{"email", "jo\xcc\x88rg@good.test"}});
    CHECK(b["status"] == "valid");
    CHECK(b["email"] == "jo\xcc\x88rg@good.test");
    CHECK(b["normalized"] == "j\xc3\xb6rg@good.test");
    // U+037E GREEK QUESTION MARK is canonically ';', refused in NFC.
    for (const char* bad : {"me.\xcd\xbe@good.test", "x@yahoo.mu-seum",
                            "\xcc\x81"
                            "abc@good.test",
                            "a\xee\x80\x80@good.test"}) {
      CAPTURE(bad);
      auto r = env.validate({{"email", bad}});
      CHECK(r["status"] == "invalid");
      CHECK(r["reason"] == "invalid_syntax");
      CHECK(r["normalized"].is_null());
    }
  }

  TEST_CASE("the result shows MX order, typo suggestions and signals") {
    validation_env env;
    auto b = env.validate({{"email", "Jane.Doe@Good.test"}});
    CHECK(b["dns"]["hasMx"] == true);
    CHECK(b["dns"]["mx"][0]["host"] == "mx0.good.test");
    CHECK(b["dns"]["mx"][1]["priority"] == 10);
    CHECK(b["syntax"]["domain"] == "good.test");
    auto implicit = env.validate({{"email", "a@implicit.test"}});
    CHECK(implicit["dns"]["implicitMx"] == true);
    auto typo = env.validate({{"email", "jane@gmial.com"}});
    CHECK(typo["typo"]["suggestion"] == "gmail.com");
    CHECK(typo["suggestions"][0] == "jane@gmail.com");
    CHECK(typo["signals"].dump().find("typo") != std::string::npos);
  }

  TEST_CASE("the answer names the provider of the first MX host, or null "
            "(issue #30)") {
    validation_env env;
    auto gmail = env.validate({{"email", "jane.doe@gmail.com"}});
    CHECK(gmail["provider"] == json{{"name", "google"}, {"kind", "mailbox"}});
    // No match, an implicit MX, no MX, a DNS failure, bad syntax: null.
    for (const char* email :
         {"jane@good.test", "jane@implicit.test", "jane@nullmx.test",
          "jane@nomail.test", "jane@broken.test", "not an address"}) {
      CAPTURE(email);
      auto b = env.validate({{"email", email}});
      REQUIRE(b.contains("provider"));
      CHECK(b["provider"].is_null());
    }
    // The widget's answer too.
    auto jwt =
        env.a.signup("P", unique_email("p"))["accessToken"].get<std::string>();
    auto key = env.a.create_key(jwt, {{"name", "widget"},
                                      {"allowedDomains", {"shop.example"}}})
                   ["key"]
                       .get<std::string>();
    auto w = env.a.call("POST", "/v2/widget/validate", key,
                        R"({"email":"jane@gmail.com"})",
                        {{"Origin", "https://shop.example"}});
    REQUIRE_MESSAGE(w.status == 200, w.body);
    CHECK(json::parse(w.body)["provider"]
          == json{{"name", "google"}, {"kind", "mailbox"}});
  }

  TEST_CASE("checks a key switches off are null, never false") {
    validation_env env;
    auto jwt =
        env.a.signup("W", unique_email("w"))["accessToken"].get<std::string>();
    auto key = env.a.create_key(jwt, {{"name", "k"},
                                      {"config",
                                       {{"disposable", false},
                                        {"roleAccount", false},
                                        {"randomDetection", false},
                                        {"enrichment", true}}}})["key"];
    auto r = env.a.post("/v2/email/validate",
                        {{"email", "maria.garcia@mailinator.com"}}, key);
    REQUIRE(r.status == 200);
    auto b = json::parse(r.body);
    CHECK(b["disposable"]["isDisposable"].is_null());
    CHECK(b["roleAccount"]["isRoleAccount"].is_null());
    CHECK(b["random"]["isRandom"].is_null());
    CHECK(b["enrichment"]["firstName"] == "Maria");
    CHECK(b["status"] == "valid");
  }

  TEST_CASE("bad payloads get 422 per field") {
    validation_env env;
    struct row {
      json body;
      const char* fragment;
    };
    for (auto& r : {row{json::object(), "email should not be empty"},
                    row{{{"email", 5}}, "email must be a string"},
                    row{{{"email", std::string(255, 'a')}},
                        "shorter than or equal to 254"},
                    row{{{"email", "a@b.test"}, {"smtp", "yes"}},
                        "smtp must be a boolean value"},
                    row{{{"email", "a@b.test"}, {"timeout", 999}},
                        "timeout must be between"},
                    row{{{"email", "a@b.test"}, {"timeout", 30001}},
                        "timeout must be between"},
                    row{{{"email", "a@b.test"}, {"extra", 1}},
                        "property extra should not exist"}}) {
      CAPTURE(r.body.dump());
      auto b = env.validate(r.body, 422);
      CHECK(b["error"] == "Unprocessable Entity");
      CHECK(b["message"].dump().find(r.fragment) != std::string::npos);
    }
  }

  TEST_CASE("smtp needs a key that allows it; a JWT may ask") {
    validation_env env;
    auto denied =
        env.a.post("/v2/email/validate",
                   {{"email", "a@good.test"}, {"smtp", true}}, env.key);
    CHECK(denied.status == 403);
    auto jwt =
        env.a.signup("J", unique_email("j"))["accessToken"].get<std::string>();
    auto ok = env.a.post("/v2/email/validate",
                         {{"email", "a@good.test"}, {"smtp", true}}, jwt);
    CHECK(ok.status == 200);
    CHECK(json::parse(ok.body)["smtp"]["checked"] == false);
    CHECK(env.a.post("/v2/email/validate", {{"email", "a@good.test"}}).status ==
          401);
  }

  TEST_CASE("a domain is looked up once while its answer is cached") {
    validation_env env;
    for (int i = 0; i < 5; ++i)
      env.validate({{"email", "user" + std::to_string(i) + "@good.test"}});
    CHECK(env.dns.queries("good.test", mailassay::tests::peers::dns_type::mx) ==
          1);
  }

  TEST_CASE("mailassay check agrees with the endpoint") {
    validation_env env;
    std::vector<std::string> emails{"jane.doe@good.test", "jane@gone.test",
                                    "info@good.test",     "x@mailinator.com",
                                    "jane@gmial.com",     "bad@@x"};
    std::vector<std::string> args{"check"};
    args.insert(args.end(), emails.begin(), emails.end());
    std::string out;
    REQUIRE(run_binary(args,
                       {{"MAILASSAY_DNS_SERVERS", env.dns.server()},
                        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
                        {"MAILASSAY_RISK_DATA_DIR",
                         std::string{std::getenv("MAILASSAY_SOURCE_DIR")} +
                             "/data/risk"}},
                       out) == 0);
    std::istringstream lines{out};
    for (auto& e : emails) {
      std::string line;
      REQUIRE(std::getline(lines, line));
      auto cli = json::parse(line);
      auto api = env.validate({{"email", e}});
      CAPTURE(e);
      CHECK(cli["status"] == api["status"]);
      CHECK(cli["reason"] == api["reason"]);
      CHECK(cli["score"] == api["score"]);
      CHECK(cli["suggestions"] == api["suggestions"]);
    }
  }
}

TEST_SUITE("app.check") {
  TEST_CASE("mailassay check answers input that is not UTF-8, line by line") {
    std::string out;
    REQUIRE(run_binary({"check", "a\xFF@good.test", "jane@good.test"},
                       {{"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
                        {"MAILASSAY_DNS_SERVERS", "127.0.0.1:9"},
                        {"MAILASSAY_DNS_TIMEOUT_MS", "200"},
                        {"MAILASSAY_DNS_TRIES", "1"}},
                       out) == 0);
    std::istringstream lines{out};
    std::string line;
    REQUIRE(std::getline(lines, line));
    auto first = json::parse(line);
    CHECK(first["email"] == "a\xEF\xBF\xBD@good.test");
    CHECK(first["status"] == "invalid");
    CHECK(first["reason"] == "invalid_syntax");
    REQUIRE(std::getline(lines, line));
    CHECK(json::parse(line)["email"] == "jane@good.test");
  }
}

TEST_SUITE("api.validate.operator_lists") {
  TEST_CASE("operators add their own disposable domains and roles") {
    dns_peer dns;
    dns.load_zone(zone);
    dns.load_zone("burner.test MX 10 mx1.good.test\n");
    auto dir = temp_dir("lists");
    std::ofstream(dir + "/disposable.txt") << "# ours\nburner.test\n";
    std::ofstream(dir + "/roles.txt") << "frontdesk\n";
    server_process srv{
        {{"MAILASSAY_DNS_SERVERS", dns.server()},
         {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
         {"MAILASSAY_RISK_EXTRA_DISPOSABLE_FILE", dir + "/disposable.txt"},
         {"MAILASSAY_RISK_EXTRA_ROLES_FILE", dir + "/roles.txt"}}};
    api a{srv};
    auto jwt =
        a.signup("O", unique_email("o"))["accessToken"].get<std::string>();
    auto burner = json::parse(
        a.post("/v2/email/validate", {{"email", "jane@burner.test"}}, jwt)
            .body);
    CHECK(burner["status"] == "risky");
    CHECK(burner["reason"] == "disposable");
    auto role = json::parse(
        a.post("/v2/email/validate", {{"email", "frontdesk@good.test"}}, jwt)
            .body);
    CHECK(role["reason"] == "role_account");
    CHECK(role["roleAccount"]["role"] == "frontdesk");
  }

  TEST_CASE("an unreadable operator list stops the start with exit code 2") {
    std::string out;
    CHECK(run_binary({"serve"},
                     {{"MAILASSAY_RISK_EXTRA_DISPOSABLE_FILE",
                       "/nonexistent/list.txt"}},
                     out) == 2);
    CHECK(out.find("/nonexistent/list.txt") != std::string::npos);
  }
}
