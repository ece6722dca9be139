// Query strings read parameter by parameter (http/query.hpp): unencoded
// legal characters do not make a query unreadable, and no parameter is
// ignored. The batch endpoints' parameters are in batch_test.cpp.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

namespace {

// The messages of a 422 body.
json messages_of(const http_response& r) {
  auto b = json::parse(r.body);
  return b["message"];
}

} // namespace

TEST_SUITE("api.query") {
  TEST_CASE("a bad value of a known parameter is 422 naming it, never the "
            "default") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Q", unique_email("q"))["accessToken"].get<std::string>();
    auto id = a.create_key(jwt)["id"].get<std::string>();
    auto stats = "/v2/api-keys/" + id + "/stats";
    CHECK(a.call("GET", stats + "?days=7", jwt).status == 200);
    CHECK(a.call("GET", stats + "?days=7&", jwt).status == 200);
    for (auto q : {"?days=abc", "?days=7,8", "?days=", "?days=0", "?days=366",
                   "?days=7%3B"}) {
      CAPTURE(q);
      auto r = a.call("GET", stats + q, jwt);
      CHECK(r.status == 422);
      CHECK(messages_of(r) ==
            json::array({"days must be an integer between 1 and 365"}));
    }
    // The reviewer's query: an unknown parameter with a comma no longer
    // hides days=abc behind a 200 over 30 days.
    auto r = a.call("GET", stats + "?days=abc&x=a,b", jwt);
    CHECK(r.status == 422);
    CHECK(messages_of(r) ==
          json::array({"query parameter x should not exist"}));
    auto twice = a.call("GET", stats + "?days=7&days=8", jwt);
    CHECK(twice.status == 422);
    CHECK(messages_of(twice) ==
          json::array({"query parameter days must be given only once"}));
    auto tx = a.call("GET", "/v2/credits/transactions?limit=5;6", jwt);
    CHECK(tx.status == 422);
    CHECK(messages_of(tx) ==
          json::array({"limit must be an integer between 1 and 500"}));
    CHECK(a.call("GET", "/v2/credits/transactions?limit=%35", jwt).status ==
          200);
  }

  TEST_CASE("an unreadable query is 400 naming the parameter") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Q", unique_email("q"))["accessToken"].get<std::string>();
    struct row {
      const char* query;
      const char* says;
    };
    for (auto [q, says] :
         {row{"?limit=%G1", "the value of parameter 'limit'"},
          row{"?limit=%4", "the value of parameter 'limit'"},
          row{"?lim%zzit=4", "the name of parameter 'lim%zzit'"},
          row{"?limit=%00", "the value of parameter 'limit'"},
          row{"?=4", "a parameter has no name"}}) {
      CAPTURE(q);
      auto r = a.call("GET", std::string{"/v2/credits/transactions"} + q, jwt);
      CHECK(r.status == 400);
      auto b = json::parse(r.body);
      CHECK(b["code"] == "BAD_REQUEST");
      CHECK_MESSAGE(b["message"].get<std::string>().find(says) !=
                        std::string::npos,
                    r.body);
    }
  }

  TEST_CASE("an endpoint without parameters refuses any; pages and assets "
            "ignore theirs") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Q", unique_email("q"))["accessToken"].get<std::string>();
    auto r = a.call("GET", "/v2/api-keys?page=2", jwt);
    CHECK(r.status == 422);
    CHECK(messages_of(r) ==
          json::array({"query parameter page should not exist"}));
    CHECK(a.call("GET", "/v2/api-keys", jwt).status == 200);
    CHECK(a.call("GET", "/health?probe=1").status == 422);
    // Cache busters on the widget script and the documents are common.
    CHECK(a.call("GET", "/widget.js?v=3").status == 200);
    CHECK(a.call("GET", "/v2/openapi.json?v=3").status == 200);
    CHECK(a.call("GET", "/docs?a,b").status == 200);
  }
}
