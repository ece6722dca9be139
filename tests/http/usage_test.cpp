#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

TEST_SUITE("api.usage") {
  TEST_CASE("organization usage sums every key of the organization") {
    dns_peer dns;
    dns.load_zone("good.test MX 10 mx.good.test\nmx.good.test A 127.0.0.2\n");
    server_process srv{{{"MAILASSAY_DNS_SERVERS", dns.server()},
                        {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"}}};
    api a{srv};
    auto jwt =
        a.signup("U", unique_email("u"))["accessToken"].get<std::string>();
    auto k1 = a.create_key(jwt, {{"name", "one"}});
    auto k2 = a.create_key(jwt, {{"name", "two"}, {"mode", "test"}});
    // Another organization's traffic stays out.
    auto other_jwt =
        a.signup("V", unique_email("v"))["accessToken"].get<std::string>();
    auto other = a.create_key(other_jwt)["key"].get<std::string>();

    auto validate = [&](const std::string& key, const std::string& email) {
      REQUIRE(a.post("/v2/email/validate", {{"email", email}}, key).status ==
              200);
    };
    for (int i = 0; i < 3; ++i)
      validate(k1["key"], "person" + std::to_string(i) + "@good.test");
    validate(k2["key"], "valid@example.com"); // sandbox
    validate(k2["key"], "person0@good.test"); // counted once in topEmails
    validate(other, "x@good.test");
    CHECK(a.post("/v2/email/validate", {{"email", 5}}, k1["key"]).status ==
          422);

    auto r = a.call("GET", "/v2/usage?days=7", jwt);
    REQUIRE(r.status == 200);
    auto u = json::parse(r.body);
    CHECK(u["days"] == 7);
    CHECK(u["totalRequests"] == 6);
    CHECK(u["successRate"].get<double>() == doctest::Approx(5.0 / 6.0));
    CHECK(u["creditsConsumed"] == 0);
    CHECK(u["topEmails"] == 4);
    REQUIRE(u["requestsByDay"].size() == 7);
    CHECK(u["requestsByDay"][6]["requests"] == 6);
    CHECK(u["requestsByDay"][6]["successful"] == 5);
    CHECK(u["requestsByDay"][0]["requests"] == 0);
    REQUIRE(u["keys"].size() == 2);
    CHECK(u["keys"][0]["id"] == k1["id"]);
    CHECK(u["keys"][0]["name"] == "one");
    CHECK(u["keys"][0]["mode"] == "live");
    CHECK(u["keys"][0]["requests"] == 4);
    CHECK(u["keys"][0]["successful"] == 3);
    CHECK(u["keys"][1]["name"] == "two");
    CHECK(u["keys"][1]["mode"] == "test");
    CHECK(u["keys"][1]["requests"] == 2);
    // The default window is 30 days.
    auto d = json::parse(a.call("GET", "/v2/usage", jwt).body);
    CHECK(d["requestsByDay"].size() == 30);
    CHECK(d["totalRequests"] == 6);
  }

  TEST_CASE("usage needs a user; days outside 1..365 are 422") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("U", unique_email("u"))["accessToken"].get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    CHECK(a.call("GET", "/v2/usage").status == 401);
    CHECK(a.call("GET", "/v2/usage", key).status == 403);
    // Credentials first: a stranger learns nothing from a bad query.
    CHECK(a.call("GET", "/v2/usage?days=0").status == 401);
    for (auto* q : {"0", "366", "x", "7d", "-1"}) {
      auto r = a.call("GET", std::string{"/v2/usage?days="} + q, jwt);
      CHECK_MESSAGE(r.status == 422, q);
    }
    CHECK(a.call("GET", "/v2/usage?days=365", jwt).status == 200);
    CHECK(a.call("GET", "/v2/usage?days=1", jwt).status == 200);
  }
}
