// Login and sign-up throttles (http/auth_throttle.hpp): 429 with
// Retry-After and the spec's error body, per IP and per account.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

namespace {

void check_429(const http_response& r, const std::string& message) {
  CHECK(r.status == 429);
  auto b = json::parse(r.body);
  CHECK(b["statusCode"] == 429);
  CHECK(b["code"] == "TOO_MANY_REQUESTS");
  CHECK(b["message"] == message);
  CHECK(std::stoi(r.header("retry-after")) >= 1);
  CHECK(r.header("ratelimit-remaining") == "0");
}

} // namespace

TEST_SUITE("api.throttle") {
  TEST_CASE("failed logins per account: after the limit, even the right "
            "password gets 429 until the window refills") {
    server_process srv{{{"MAILASSAY_LIMITS_LOGIN_ACCOUNT_PER_HOUR", "3"}}};
    api a{srv};
    auto email = unique_email("victim");
    a.post("/v2/auth/signup", {{"organizationName", "V"},
                               {"email", email},
                               {"password", "the right one"}});
    // A success does not count.
    CHECK(a.post("/v2/auth/login",
                 {{"email", email}, {"password", "the right one"}})
              .status == 200);
    for (int i = 0; i < 3; ++i)
      CHECK(a.post("/v2/auth/login",
                   {{"email", email}, {"password", "wrong guess"}})
                .status == 401);
    auto refused =
        a.post("/v2/auth/login", {{"email", email}, {"password", "x wrong"}});
    check_429(refused,
              "Too many failed logins for this account, please try again "
              "later");
    // One token comes back every 20 minutes.
    CHECK(std::stoi(refused.header("retry-after")) <= 1200);
    // The spelling of the address does not matter; the right password is
    // not even checked now.
    check_429(a.post("/v2/auth/login", {{"email", email.substr(0, 1) == "v"
                                                      ? "V" + email.substr(1)
                                                      : email},
                                        {"password", "the right one"}}),
              "Too many failed logins for this account, please try again "
              "later");
    // Another account is not affected, nor one that does not exist yet.
    auto other = unique_email("other");
    CHECK(a.post("/v2/auth/login", {{"email", other}, {"password", "guess 1"}})
              .status == 401);
  }

  TEST_CASE("login attempts per IP, right or wrong") {
    server_process srv{{{"MAILASSAY_LIMITS_LOGIN_IP_PER_MINUTE", "4"}}};
    api a{srv};
    auto email = unique_email("u");
    a.post("/v2/auth/signup", {{"organizationName", "U"},
                               {"email", email},
                               {"password", "the right one"}});
    int ok = 0;
    for (int i = 0; i < 4; ++i)
      ok += a.post("/v2/auth/login",
                   {{"email", unique_email("spray")}, {"password", "guess 1"}})
                .status == 401;
    CHECK(ok == 4);
    check_429(a.post("/v2/auth/login",
                     {{"email", email}, {"password", "the right one"}}),
              "Too many login attempts from this IP, please try again later");
    // A trusted proxy's clients are told apart by X-Forwarded-For; others'
    // X-Forwarded-For is not believed.
    auto spoofed = a.call("POST", "/v2/auth/login", "",
                          json{{"email", email}, {"password", "x"}}.dump(),
                          {{"X-Forwarded-For", "203.0.113.9"}});
    CHECK(spoofed.status == 429);
  }

  TEST_CASE("sign-ups per IP") {
    server_process srv{{{"MAILASSAY_LIMITS_SIGNUP_IP_PER_HOUR", "2"},
                        {"MAILASSAY_HTTP_TRUSTED_PROXIES", "127.0.0.1"}}};
    api a{srv};
    auto signup = [&](const std::string& ip) {
      return a.call("POST", "/v2/auth/signup", "",
                    json{{"organizationName", "S"},
                         {"email", unique_email("s")},
                         {"password", "long enough"}}
                        .dump(),
                    {{"X-Forwarded-For", ip}});
    };
    CHECK(signup("198.51.100.1").status == 201);
    CHECK(signup("198.51.100.1").status == 201);
    auto third = signup("198.51.100.1");
    check_429(third, "Too many sign-ups from this IP, please try again later");
    CHECK(std::stoi(third.header("retry-after")) <= 1800);
    // A malformed attempt costs nothing; another client is not affected.
    CHECK(signup("198.51.100.2").status == 201);
    auto bad = a.call("POST", "/v2/auth/signup", "", "{",
                      {{"X-Forwarded-For", "198.51.100.3"}});
    CHECK(bad.status == 400);
    CHECK(signup("198.51.100.3").status == 201);
  }
}
