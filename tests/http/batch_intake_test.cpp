// Batch uploads of issue #19, black-box against the real binary
// (docs/batch-csv.md): a file of invalid rows becomes a job whose export
// says why per row; only a column with no '@' at all is refused; duplicates
// are one mailbox by the provider's rules, so an SMTP batch reserves one
// credit per mailbox.

#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

struct intake_env {
  dns_peer dns;
  server_process srv;
  api a{srv};
  std::string jwt;
  std::string key;

  intake_env()
      : srv{{{"MAILASSAY_DNS_SERVERS",
              (dns.load_zone("acme.test MX 10 mx.acme.test\n"), dns.server())},
             {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
             {"MAILASSAY_DNS_TRIES", "1"},
             {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
             {"MAILASSAY_BATCH_POLL_MS", "100"},
             {"MAILASSAY_RISK_DATA_DIR",
              std::string{std::getenv("MAILASSAY_SOURCE_DIR")} +
                  "/data/risk"}}} {
    jwt = a.signup("I", unique_email("i"))["accessToken"].get<std::string>();
    key = a.create_key(jwt)["key"].get<std::string>();
  }

  http_response upload(const std::string& csv, const std::string& query = "",
                       const std::string& with_key = "") {
    return a.call(
        "POST", "/v2/batch/upload" + query, "", csv,
        {{"Authorization", "Bearer " + (with_key.empty() ? key : with_key)},
         {"Content-Type", "text/csv"}});
  }

  // Uploads `csv` (as `upload`), requires 201 and returns the new job.
  json created(const std::string& csv, const std::string& query = "",
               const std::string& with_key = "") {
    auto r = upload(csv, query, with_key);
    REQUIRE_MESSAGE(r.status == 201, r.body);
    return json::parse(r.body);
  }

  json get(const std::string& path) {
    auto r = a.call("GET", path, key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }

  // Polls until the job leaves the active states.
  json wait_done(const std::string& id) {
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
      auto j = get("/v2/batch/" + id);
      auto s = j["status"].get<std::string>();
      if (s != "queued" && s != "processing")
        return j;
      REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  json export_json(const std::string& id) {
    auto r = a.call("GET", "/v2/batch/" + id + "/results?format=json", key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }
};

} // namespace

TEST_SUITE("api.batch.intake") {
  TEST_CASE("a file whose rows are all invalid is a job that says why") {
    intake_env env;
    auto j = env.created("email,name\n"
                         "kim@@acme.test,Kim\n"
                         "lena.acme.test,Lena\n"
                         "\"tom@\",Tom\n"
                         "ops@qa--team.com,Ops\n"
                         ",Empty\n"
                         "abuse@1.2.0.192.in-addr.arpa,Dev\n");
    CHECK(j["totalRows"] == 6);
    CHECK(j["uniqueEmails"] == 0);
    CHECK(j["invalidRows"] == 6);
    CHECK(j["creditsReserved"] == 0);
    auto done = env.wait_done(j["id"]);
    CHECK(done["status"] == "completed");
    CHECK(done["progress"] == 100);
    CHECK(done["counts"]["invalid"] == 6);
    auto results = env.export_json(j["id"])["results"];
    REQUIRE(results.size() == 6);
    std::vector<std::string> reasons;
    for (const auto& row : results) {
      CHECK(row["status"] == "invalid");
      reasons.push_back(row["reason"]);
    }
    CHECK(reasons == std::vector<std::string>{
                         "invalid_syntax", "invalid_syntax", "invalid_syntax",
                         "invalid_syntax", "invalid_syntax", "invalid_syntax"});
    CHECK(results[0]["email"] == "kim@@acme.test");
  }

  TEST_CASE("a column with no @ at all is refused and the message says so") {
    intake_env env;
    auto r = env.upload("name,contact\nKim Berg,kim@acme.test\n"
                        "Lena Ruiz,lena@acme.test\n");
    CHECK(r.status == 400);
    auto body = json::parse(r.body);
    CHECK(body["statusCode"] == 400);
    CHECK(body["message"] ==
          "column 'name' holds nothing that looks like an email address (no "
          "cell has an @; 2 data rows read): choose the column of addresses "
          "with emailColumn");
    CHECK(env.get("/v2/batch")["items"].empty());
    // The right column is read.
    auto ok = env.upload("name,contact\nKim Berg,kim@acme.test\n",
                         "?emailColumn=contact");
    CHECK(ok.status == 201);
  }

  TEST_CASE("duplicates are one mailbox: domain case always, the local part "
            "as the provider folds it") {
    intake_env env;
    auto j = env.created("email\n"
                         "d@gmail.com\n"
                         "D@GMAIL.COM\n"
                         "d+news@googlemail.com\n"
                         "kim@Acme.TEST\n"
                         "kim@acme.test\n"
                         "Kim@acme.test\n");
    CHECK(j["totalRows"] == 6);
    // d@gmail.com (three spellings), kim@acme.test (two), Kim@acme.test:
    // acme.test's rules are unknown, so its local part keeps its case.
    CHECK(j["uniqueEmails"] == 3);
    CHECK(j["duplicatesRemoved"] == 3);
    CHECK(env.wait_done(j["id"])["status"] == "completed");
    auto results = env.export_json(j["id"])["results"];
    std::vector<std::string> emails;
    for (const auto& row : results)
      emails.push_back(row["email"]);
    CHECK(emails == std::vector<std::string>{"d@gmail.com", "kim@Acme.TEST",
                                             "Kim@acme.test"});
  }

  TEST_CASE("an SMTP batch reserves one credit per mailbox") {
    intake_env env;
    auto smtp_key =
        env.a
            .create_key(env.jwt,
                        {{"name", "smtp"}, {"config", {{"smtp", true}}}})["key"]
            .get<std::string>();
    auto j = env.created("email\n"
                         "d@gmail.com\n"
                         "D@GMAIL.COM\n"
                         "D.@gmail.com\n"
                         "kim@ACME.test\n"
                         "kim@acme.test\n",
                         "?smtp=true", smtp_key);
    CHECK(j["uniqueEmails"] == 2);
    CHECK(j["invalidRows"] == 1);
    CHECK(j["creditsReserved"] == 2);
    env.wait_done(j["id"]);
  }
}
