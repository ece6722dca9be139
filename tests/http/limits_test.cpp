#include <doctest/doctest.h>

#include "tests/http/fixtures.hpp"

using namespace mailassay::testing;

TEST_SUITE("http.limits") {
  TEST_CASE("the 101st validation in a minute from one IP gets 429") {
    server_process srv{{{"MAILASSAY_HTTP_TRUSTED_PROXIES", "127.0.0.1"}}};
    auto from = [&](const std::string& ip) {
      return http_request(srv.port(), "POST", "/v2/email/validate",
                          {{"Content-Type", "application/json"},
                           {"X-Forwarded-For", ip + ", 10.9.9.9"}},
                          R"({"email":"a@b.test"})");
    };
    for (int i = 0; i < 100; ++i) {
      auto r = from("192.0.2.7");
      REQUIRE(r.status == 401); // counted although unauthenticated
      CHECK(std::stoi(r.header("ratelimit-remaining")) == 99 - i);
    }
    auto refused = from("192.0.2.7");
    CHECK(refused.status == 429);
    auto body = json::parse(refused.body);
    CHECK(body["statusCode"] == 429);
    CHECK(body["message"]
          == "Too many requests from this IP, please try again later");
    CHECK(std::stoi(refused.header("retry-after")) >= 1);
    CHECK(refused.header("ratelimit-remaining") == "0");
    // Another client behind the same trusted proxy is still served.
    CHECK(from("192.0.2.8").status == 401);
  }

  TEST_CASE("X-Forwarded-For from an untrusted peer is ignored") {
    server_process srv{{{"MAILASSAY_LIMITS_IP_PER_MINUTE", "3"}}};
    for (int i = 0; i < 3; ++i)
      http_request(srv.port(), "POST", "/v2/email/validate",
                   {{"X-Forwarded-For", "192.0.2." + std::to_string(i)}},
                   "{}");
    auto r = http_request(srv.port(), "POST", "/v2/email/validate",
                          {{"X-Forwarded-For", "192.0.2.99"}}, "{}");
    CHECK(r.status == 429);
  }
}
