#include <doctest/doctest.h>

#include "tests/http/fixtures.hpp"

using namespace mailassay::testing;

TEST_SUITE("api.widget") {
  TEST_CASE("the widget answers a restricted key from its own site, with CORS") {
    server_process srv;
    api a{srv};
    auto jwt = a.signup("W", unique_email("w"))["accessToken"]
                 .get<std::string>();
    auto key = a.create_key(jwt, {{"name", "widget"},
                                  {"allowedDomains", {"shop.example"}}})["key"]
                 .get<std::string>();
    auto r = a.call("POST", "/v2/widget/validate", key,
                    R"({"email":"jane@gmial.com"})",
                    {{"Origin", "https://www.shop.example"},
                     {"X-Device-Id", "dev-1"}});
    REQUIRE(r.status == 200);
    CHECK(r.header("access-control-allow-origin") == "https://www.shop.example");
    CHECK(r.header("vary") == "Origin");
    auto b = json::parse(r.body);
    CHECK(b["suggestions"][0] == "jane@gmail.com");
    CHECK(b["smtp"]["checked"] == false);
    // Another site, or no Origin at all, is refused.
    CHECK(a.call("POST", "/v2/widget/validate", key, R"({"email":"a@b.test"})",
                 {{"Origin", "https://evil.example"}})
            .status
          == 403);
    CHECK(a.call("POST", "/v2/widget/validate", key, R"({"email":"a@b.test"})")
            .status
          == 401);
    CHECK(a.call("POST", "/v2/widget/validate", key,
                 R"({"email":"a@b.test","smtp":true})",
                 {{"Origin", "https://shop.example"}})
            .status
          == 422);
  }

  TEST_CASE("a key without a domain restriction never works in a page") {
    server_process srv;
    api a{srv};
    auto jwt = a.signup("W", unique_email("w"))["accessToken"]
                 .get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    auto r = a.call("POST", "/v2/widget/validate", key,
                    R"({"email":"jane@example.org"})",
                    {{"Origin", "https://shop.example"}});
    CHECK(r.status == 403);
    CHECK(json::parse(r.body)["message"]
          == "The widget needs an API key restricted with allowedDomains");
    CHECK(a.call("POST", "/v2/widget/validate", jwt,
                 R"({"email":"jane@example.org"})")
            .status
          == 403);
  }

  TEST_CASE("preflight requests are answered for the browser") {
    server_process srv;
    auto r = http_request(srv.port(), "OPTIONS", "/v2/widget/validate",
                          {{"Origin", "https://shop.example"},
                           {"Access-Control-Request-Method", "POST"}});
    CHECK(r.status == 204);
    CHECK(r.header("access-control-allow-origin") == "https://shop.example");
    CHECK(r.header("access-control-allow-methods") == "POST");
    CHECK(r.header("access-control-allow-headers").find("Authorization")
          != std::string::npos);
    CHECK_FALSE(r.header("ratelimit-limit").empty());
  }

  TEST_CASE("the widget script is served") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/widget.js");
    CHECK(r.status == 200);
    CHECK(r.header("content-type").find("javascript") != std::string::npos);
    CHECK(r.body.find("/v2/widget/validate") != std::string::npos);
    CHECK(r.body.find("X-Device-Id") != std::string::npos);
  }
}
