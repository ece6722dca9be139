#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

using namespace mailassay::testing;

namespace {

// An organization with a JWT and helpers to validate with a key.
struct limited_org {
  server_process& srv;
  api a{srv};
  std::string jwt;

  explicit limited_org(server_process& s) : srv(s) {
    jwt =
        a.signup("Limits", unique_email("l"))["accessToken"].get<std::string>();
  }

  // Creates a key; returns {id, secret}.
  std::pair<std::string, std::string> key(json body = {{"name", "k"}}) {
    auto k = a.create_key(jwt, std::move(body));
    return {k["id"].get<std::string>(), k["key"].get<std::string>()};
  }

  http_response patch_limits(const std::string& id, const json& limits) {
    return a.call("PATCH", "/v2/api-keys/" + id, jwt,
                  json{{"rateLimits", limits}}.dump());
  }

  http_response validate(const std::string& secret) {
    return a.call("POST", "/v2/email/validate", secret,
                  R"({"email":"not-an-address"})");
  }
};

long num(const http_response& r, const std::string& header) {
  auto v = r.header(header);
  REQUIRE_MESSAGE(!v.empty(), header);
  return std::stol(v);
}

// The three RateLimit headers of a response, as numbers.
struct rate {
  long limit, remaining, reset;
};

rate rate_of(const http_response& r) {
  return {num(r, "ratelimit-limit"), num(r, "ratelimit-remaining"),
          num(r, "ratelimit-reset")};
}

} // namespace

TEST_SUITE("api.limits") {
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
    CHECK(body["message"] ==
          "Too many requests from this IP, please try again later");
    CHECK(std::stoi(refused.header("retry-after")) >= 1);
    CHECK(refused.header("ratelimit-remaining") == "0");
    // Another client behind the same trusted proxy is still served.
    CHECK(from("192.0.2.8").status == 401);
  }

  TEST_CASE("X-Forwarded-For from an untrusted peer is ignored") {
    server_process srv{{{"MAILASSAY_LIMITS_IP_PER_MINUTE", "3"}}};
    for (int i = 0; i < 3; ++i)
      http_request(srv.port(), "POST", "/v2/email/validate",
                   {{"X-Forwarded-For", "192.0.2." + std::to_string(i)}}, "{}");
    auto r = http_request(srv.port(), "POST", "/v2/email/validate",
                          {{"X-Forwarded-For", "192.0.2.99"}}, "{}");
    CHECK(r.status == 429);
  }

  TEST_CASE("an API key's per-minute limit refuses the 4th request, spares "
            "other keys, and a PATCH to null lifts it at once") {
    server_process srv;
    limited_org org{srv};
    auto [id, secret] = org.key();
    auto other = org.key().second;
    REQUIRE(org.patch_limits(id, {{"perMinute", 3}}).status == 200);
    for (int i = 0; i < 3; ++i) {
      auto r = org.validate(secret);
      REQUIRE_MESSAGE(r.status == 200, r.body);
      CHECK(rate_of(r).limit == 3);
      CHECK(rate_of(r).remaining == 2 - i);
    }
    auto refused = org.validate(secret);
    REQUIRE(refused.status == 429);
    auto body = json::parse(refused.body);
    CHECK(body["statusCode"] == 429);
    CHECK(body["code"] == "TOO_MANY_REQUESTS");
    CHECK(body["message"] == "API key per-minute rate limit exceeded (3 "
                             "requests per minute), please try again later");
    // One token every 20 s; at most 20 s to wait.
    auto retry = num(refused, "retry-after");
    CHECK(retry >= 1);
    CHECK(retry <= 20);
    CHECK(rate_of(refused).limit == 3);
    CHECK(rate_of(refused).remaining == 0);
    // Another key of the same organization, from the same IP, is served.
    CHECK(org.validate(other).status == 200);
    // Raising the limit applies to the very next request.
    REQUIRE(org.patch_limits(id, {{"perMinute", 5}}).status == 200);
    auto raised = org.validate(secret);
    CHECK(raised.status == 200);
    CHECK(rate_of(raised).limit == 5);
    CHECK(rate_of(raised).remaining == 1);
    REQUIRE(org.patch_limits(id, nullptr).status == 200);
    for (int i = 0; i < 5; ++i) {
      auto r = org.validate(secret);
      REQUIRE(r.status == 200);
      // Unlimited key: the per-IP window of the client is reported.
      CHECK(rate_of(r).limit == 100);
    }
  }

  TEST_CASE("the hour or day window is reported when it is the tightest, "
            "and refuses with its own message") {
    server_process srv;
    limited_org org{srv};
    auto [id, secret] = org.key();
    REQUIRE(org.patch_limits(id, {{"perMinute", 50}, {"perHour", 5}}).status ==
            200);
    auto hourly = org.validate(secret);
    REQUIRE(hourly.status == 200);
    CHECK(rate_of(hourly).limit == 5);
    CHECK(rate_of(hourly).remaining == 4);
    CHECK(rate_of(hourly).reset == 720); // 1 token back in 12 minutes
    REQUIRE(org.patch_limits(id, {{"perMinute", 50}, {"perDay", 2}}).status ==
            200);
    auto daily = org.validate(secret);
    REQUIRE(daily.status == 200);
    CHECK(rate_of(daily).limit == 2);
    CHECK(rate_of(daily).remaining == 1);
    CHECK(rate_of(daily).reset == 43200);
    CHECK(org.validate(secret).status == 200);
    auto refused = org.validate(secret);
    REQUIRE(refused.status == 429);
    CHECK(json::parse(refused.body)["message"] ==
          "API key per-day rate limit exceeded (2 requests per day), "
          "please try again later");
    CHECK(num(refused, "retry-after") > 40000);
  }

  TEST_CASE("other endpoints report the key's window without taking from "
            "it, else the client's validate window") {
    server_process srv;
    limited_org org{srv};
    auto [id, secret] = org.key();
    REQUIRE(org.patch_limits(id, {{"perMinute", 5}, {"perDay", 1000}}).status ==
            200);
    REQUIRE(org.validate(secret).status == 200);
    for (int i = 0; i < 3; ++i) {
      auto balance = org.a.call("GET", "/v2/credits/balance", secret);
      REQUIRE(balance.status == 200);
      CHECK(rate_of(balance).limit == 5);
      CHECK(rate_of(balance).remaining == 4);
      CHECK(rate_of(balance).reset <= 12);
      CHECK(rate_of(balance).reset >= 10);
    }
    // Validation still has its 4 tokens: nothing was taken above.
    CHECK(rate_of(org.validate(secret)).remaining == 3);
    // A request that authenticates with the key: its window, even on 404.
    auto missing = org.a.call("GET", "/v2/no-such-thing", secret);
    CHECK(missing.status == 404);
    CHECK(rate_of(missing).limit == 5);
    // With a JWT, or no credential: the per-IP validate window.
    auto with_jwt = org.a.call("GET", "/v2/credits/balance", org.jwt);
    CHECK(with_jwt.status == 200);
    CHECK(rate_of(with_jwt).limit == 100);
    CHECK(rate_of(http_request(srv.port(), "GET", "/health")).limit == 100);
  }

  TEST_CASE("every response carries the RateLimit headers") {
    // A DNS server that never answers, so a validation outlives the request
    // deadline and gets the 503 of the timer. The deadline leaves the
    // sign-up (argon2id) time enough on a loaded machine: at 1 s it did not.
    int dns = ::socket(AF_INET, SOCK_DGRAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(::bind(dns, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0);
    socklen_t len = sizeof addr;
    ::getsockname(dns, reinterpret_cast<sockaddr*>(&addr), &len);
    server_process srv{{{"MAILASSAY_LIMITS_IP_PER_MINUTE", "8"},
                        {"MAILASSAY_HTTP_REQUEST_TIMEOUT_MS", "5000"},
                        {"MAILASSAY_DNS_SERVERS",
                         "127.0.0.1:" + std::to_string(ntohs(addr.sin_port))}}};
    limited_org org{srv};
    auto secret = org.key().second;
    auto check = [](const http_response& r, int status) {
      CAPTURE(status);
      CHECK(r.status == status);
      CHECK(rate_of(r).limit == 8);
      CHECK(rate_of(r).remaining >= 0);
      CHECK(rate_of(r).remaining <= 8);
      CHECK(rate_of(r).reset >= 0);
      CHECK(rate_of(r).reset <= 60);
    };
    auto health = http_request(srv.port(), "GET", "/health");
    check(health, 200);
    // Nothing was taken by the sign-up and key creation above.
    CHECK(rate_of(health).remaining == 8);
    CHECK(rate_of(health).reset == 0);
    check(org.a.call("GET", "/v2/no-such-thing"), 404);
    check(org.a.call("PUT", "/health"), 405);
    check(http_request(srv.port(), "OPTIONS", "/v2/email/validate",
                       {{"Origin", "https://a.example"}}),
          204);
    check(org.a.call("POST", "/v2/email/validate", "", R"({"email":"x"})"),
          401);
    auto invalid =
        org.a.call("POST", "/v2/email/validate", secret, R"({"smtp":1})");
    check(invalid, 422);
    CHECK(rate_of(invalid).remaining == 6); // two validations so far
    check(org.a.call("POST", "/v2/email/validate", secret,
                     R"({"email":"jane@slow-dns-domain.com"})"),
          503);
    check(org.a.call("GET", "/v2/credits/balance", "svc_live_nope"), 401);
    // Five tokens are left; one comes back every 7.5 s.
    auto refused = org.validate(secret);
    for (int i = 0; i < 20 && refused.status != 429; ++i)
      refused = org.validate(secret);
    check(refused, 429);
    CHECK(rate_of(refused).remaining == 0);
    CHECK(rate_of(refused).reset > 0);
    ::close(dns);
  }

  TEST_CASE("the widget refuses a device over its limit with the widget "
            "body, and serves another device") {
    server_process srv{{{"MAILASSAY_LIMITS_WIDGET_DEVICE_PER_MINUTE", "3"},
                        {"MAILASSAY_LIMITS_WIDGET_IP_PER_MINUTE", "20"}}};
    limited_org org{srv};
    auto secret =
        org.key({{"name", "widget"}, {"allowedDomains", {"shop.example"}}})
            .second;
    auto from = [&](std::vector<std::pair<std::string, std::string>> h) {
      h.emplace_back("Origin", "https://shop.example");
      return org.a.call("POST", "/v2/widget/validate", secret,
                        R"({"email":"jane@gmial.com"})", h);
    };
    for (int i = 0; i < 3; ++i) {
      auto r = from({{"X-Device-Id", "device-1"}});
      REQUIRE_MESSAGE(r.status == 200, r.body);
      CHECK(rate_of(r).limit == 3);
      CHECK(rate_of(r).remaining == 2 - i);
    }
    auto refused = from({{"X-Device-Id", "device-1"}});
    REQUIRE(refused.status == 429);
    auto body = json::parse(refused.body);
    CHECK(body.size() == 4);
    CHECK(body["statusCode"] == 429);
    CHECK(body["reason"] == "WIDGET_RATE_LIMIT");
    CHECK(body["message"] == "Too many validation requests from this device, "
                             "please try again later");
    REQUIRE(body["retryAfterSeconds"].is_number_integer());
    auto wait = body["retryAfterSeconds"].get<long>();
    CHECK(wait >= 1);
    CHECK(wait <= 20);
    CHECK(num(refused, "retry-after") == wait);
    CHECK(from({{"X-Device-Id", "device-2"}}).status == 200);
    // Without the header, the cookie the widget sets names the device.
    for (int i = 0; i < 3; ++i)
      REQUIRE(from({{"Cookie", "a=b; mailassay_device=device-3"}}).status ==
              200);
    auto by_cookie = from({{"Cookie", "mailassay_device=device-3"}});
    CHECK(by_cookie.status == 429);
    CHECK(json::parse(by_cookie.body)["reason"] == "WIDGET_RATE_LIMIT");
  }

  TEST_CASE("the widget refuses an IP sending from many devices") {
    server_process srv{{{"MAILASSAY_LIMITS_WIDGET_DEVICE_PER_MINUTE", "10"},
                        {"MAILASSAY_LIMITS_WIDGET_IP_PER_MINUTE", "5"},
                        {"MAILASSAY_HTTP_TRUSTED_PROXIES", "127.0.0.1"}}};
    limited_org org{srv};
    auto secret =
        org.key({{"name", "widget"}, {"allowedDomains", {"shop.example"}}})
            .second;
    auto from = [&](const std::string& ip, const std::string& device) {
      return org.a.call("POST", "/v2/widget/validate", secret,
                        R"({"email":"jane@example.org"})",
                        {{"Origin", "https://shop.example"},
                         {"X-Forwarded-For", ip},
                         {"X-Device-Id", device}});
    };
    for (int i = 0; i < 5; ++i) {
      auto r = from("198.51.100.4", "d" + std::to_string(i));
      REQUIRE_MESSAGE(r.status == 200, r.body);
      CHECK(rate_of(r).limit == 5);
      CHECK(rate_of(r).remaining == 4 - i);
    }
    auto refused = from("198.51.100.4", "d-new");
    REQUIRE(refused.status == 429);
    auto body = json::parse(refused.body);
    CHECK(body["reason"] == "WIDGET_RATE_LIMIT");
    CHECK(body["message"] ==
          "Too many validation requests from this IP, please try again "
          "later");
    CHECK(body["retryAfterSeconds"].get<long>() >= 1);
    CHECK(from("198.51.100.5", "d-new").status == 200);
  }

  TEST_CASE("a key limit also holds on the widget endpoint") {
    server_process srv;
    limited_org org{srv};
    auto [id, secret] =
        org.key({{"name", "widget"}, {"allowedDomains", {"shop.example"}}});
    REQUIRE(org.patch_limits(id, {{"perMinute", 2}}).status == 200);
    auto from = [&](const std::string& device) {
      return org.a.call(
          "POST", "/v2/widget/validate", secret,
          R"({"email":"jane@example.org"})",
          {{"Origin", "https://shop.example"}, {"X-Device-Id", device}});
    };
    CHECK(from("a").status == 200);
    auto second = from("b");
    CHECK(second.status == 200);
    CHECK(rate_of(second).limit == 2);
    CHECK(rate_of(second).remaining == 0);
    auto refused = from("c");
    CHECK(refused.status == 429);
    CHECK(json::parse(refused.body)["code"] == "TOO_MANY_REQUESTS");
    CHECK(num(refused, "retry-after") >= 1);
  }

  TEST_CASE("with limits turned off nothing is refused and the headers "
            "still come") {
    server_process srv{{{"MAILASSAY_LIMITS_ENABLED", "false"},
                        {"MAILASSAY_LIMITS_IP_PER_MINUTE", "2"}}};
    for (int i = 0; i < 4; ++i) {
      auto r = http_request(srv.port(), "POST", "/v2/email/validate",
                            {{"Content-Type", "application/json"}},
                            R"({"email":"a@b.test"})");
      CHECK(r.status == 401);
      CHECK(rate_of(r).limit == 2);
      CHECK(rate_of(r).remaining == 2);
    }
  }
}
