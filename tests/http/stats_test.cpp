#include <doctest/doctest.h>

#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

TEST_SUITE("api.stats") {
  TEST_CASE("stats after a known sequence of validations are exact") {
    dns_peer dns;
    dns.load_zone("good.test MX 10 mx.good.test\nmx.good.test A 127.0.0.2\n");
    server_process srv{{{"MAILASSAY_DNS_SERVERS", dns.server()},
                        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}}};
    api a{srv};
    auto jwt = a.signup("S", unique_email("s"))["accessToken"]
                 .get<std::string>();
    auto key = a.create_key(jwt);
    auto secret = key["key"].get<std::string>();
    auto id = key["id"].get<std::string>();
    // 7 valid and 3 invalid validations: all answered 200.
    int valid = 0, invalid = 0;
    for (int i = 0; i < 10; ++i) {
      auto email = i < 7 ? "person" + std::to_string(i) + "@good.test"
                         : "broken" + std::to_string(i) + "@@x";
      auto r = a.post("/v2/email/validate", {{"email", email}}, secret);
      REQUIRE(r.status == 200);
      auto status = json::parse(r.body)["status"];
      valid += status == "valid";
      invalid += status == "invalid";
    }
    CHECK(valid == 7);
    CHECK(invalid == 3);
    auto stats = a.call("GET", "/v2/api-keys/" + id + "/stats?days=7", jwt);
    REQUIRE(stats.status == 200);
    auto s = json::parse(stats.body);
    CHECK(s["totalRequests"] == 10);
    CHECK(s["successRate"] == 1.0);
    CHECK(s["creditsConsumed"] == 0);
    CHECK(s["topEmails"] == 10);
    REQUIRE(s["requestsByDay"].size() == 7);
    auto today = s["requestsByDay"][6];
    CHECK(today["requests"] == 10);
    CHECK(today["successful"] == 10);
    CHECK(s["requestsByDay"][0]["requests"] == 0); // quiet days are zeros
    // A refused payload counts as a request that did not succeed.
    CHECK(a.post("/v2/email/validate", {{"email", 5}}, secret).status == 422);
    auto after = json::parse(
      a.call("GET", "/v2/api-keys/" + id + "/stats", jwt).body);
    CHECK(after["totalRequests"] == 11);
    CHECK(after["successRate"].get<double>()
          == doctest::Approx(10.0 / 11.0));
    CHECK(after["requestsByDay"].size() == 30);
  }

  TEST_CASE("days outside 1..365 are 422; other tenants' keys are 404") {
    server_process srv;
    api a{srv};
    auto jwt = a.signup("S", unique_email("s"))["accessToken"]
                 .get<std::string>();
    auto id = a.create_key(jwt)["id"].get<std::string>();
    for (auto bad : {"0", "366", "abc", "-1"}) {
      auto r = a.call("GET", "/v2/api-keys/" + id + "/stats?days=" + bad, jwt);
      CHECK(r.status == 422);
      CHECK(json::parse(r.body)["message"][0]
            == "days must be an integer between 1 and 365");
    }
    auto other = a.signup("T", unique_email("t"))["accessToken"]
                   .get<std::string>();
    CHECK(a.call("GET", "/v2/api-keys/" + id + "/stats", other).status == 404);
    CHECK(a.call("GET", "/v2/api-keys/" + id + "/stats").status == 401);
  }
}
