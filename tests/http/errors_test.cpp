#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

TEST_SUITE("api.errors") {
  TEST_CASE("no Authorization header, or X-API-Key alone, is refused") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("A", unique_email("o"))["accessToken"].get<std::string>();
    auto secret = a.create_key(jwt)["key"].get<std::string>();
    for (auto headers : {std::vector<std::pair<std::string, std::string>>{},
                         std::vector<std::pair<std::string, std::string>>{
                             {"X-API-Key", secret}}}) {
      auto r = http_request(srv.port(), "GET", "/v2/credits/balance", headers);
      CHECK(r.status == 401);
      auto body = json::parse(r.body);
      CHECK(body["message"] == "No authorization header");
      CHECK(body["statusCode"] == 401);
      CHECK(body["code"] == "UNAUTHORIZED");
    }
    CHECK(
        a.call("GET", "/v2/credits/balance", "svc_live_doesnotexist").status ==
        401);
  }

  TEST_CASE("malformed JSON is 400 in the spec's body format") {
    server_process srv;
    api a{srv};
    for (auto body : {"{\"email\":", "not json", "[1,2]", "\"text\""}) {
      CAPTURE(body);
      auto r = a.call("POST", "/v2/auth/signup", "", body);
      CHECK(r.status == 400);
      auto b = json::parse(r.body);
      CHECK(b["statusCode"] == 400);
      CHECK(b["code"] == "BAD_REQUEST");
      CHECK(b["message"].is_string());
    }
    auto r = http_request(srv.port(), "POST", "/v2/auth/login",
                          {{"Content-Type", "text/plain"}}, "{}");
    CHECK(r.status == 400);
    CHECK(json::parse(r.body)["message"] ==
          "Content-Type must be application/json");
  }

  TEST_CASE("wrong types and unknown fields are 422 naming each field") {
    server_process srv;
    api a{srv};
    auto r = a.post("/v2/auth/signup", {{"organizationName", 5},
                                        {"email", "not-an-email"},
                                        {"password", "short"},
                                        {"admin", true}});
    REQUIRE(r.status == 422);
    auto b = json::parse(r.body);
    CHECK(b["statusCode"] == 422);
    CHECK(b["error"] == "Unprocessable Entity");
    REQUIRE(b["message"].is_array());
    auto all = b["message"].dump();
    CHECK(all.find("property admin should not exist") != std::string::npos);
    CHECK(all.find("organizationName must be a string") != std::string::npos);
    CHECK(all.find("email must be an email") != std::string::npos);
    CHECK(all.find("password must be longer than or equal to 8") !=
          std::string::npos);

    auto jwt =
        a.signup("A", unique_email("o"))["accessToken"].get<std::string>();
    auto k = a.post("/v2/api-keys",
                    {{"name", "k"},
                     {"allowedDomains", "example.com"},
                     {"config", {{"smtp", "yes"}, {"colour", true}}}},
                    jwt);
    REQUIRE(k.status == 422);
    auto msgs = json::parse(k.body)["message"].dump();
    CHECK(msgs.find("allowedDomains must be an array") != std::string::npos);
    CHECK(msgs.find("config.smtp must be a boolean value") !=
          std::string::npos);
    CHECK(msgs.find("property config.colour should not exist") !=
          std::string::npos);
    auto missing = a.post("/v2/api-keys", json::object(), jwt);
    CHECK(missing.status == 422);
    CHECK(json::parse(missing.body)["message"][0] ==
          "name should not be empty");
  }

  TEST_CASE("authentication is checked before the body") {
    server_process srv;
    api a{srv};
    CHECK(a.call("POST", "/v2/api-keys", "", "{broken").status == 401);
  }

  TEST_CASE("bodies over the limit get 413 with the error body") {
    server_process srv{{{"MAILASSAY_HTTP_MAX_BODY_BYTES", "2048"}}};
    api a{srv};
    std::string big = R"({"email":")" + std::string(5000, 'a') + R"("})";
    auto r = a.call("POST", "/v2/auth/login", "", big);
    CHECK(r.status == 413);
    auto b = json::parse(r.body);
    CHECK(b["statusCode"] == 413);
    CHECK(b["code"] == "PAYLOAD_TOO_LARGE");
    CHECK_FALSE(r.header("ratelimit-limit").empty());
  }

  TEST_CASE("unknown routes are 404 JSON; wrong methods are 405 with Allow") {
    server_process srv;
    auto nf = http_request(srv.port(), "GET", "/v2/nothing-here");
    CHECK(nf.status == 404);
    CHECK(json::parse(nf.body)["code"] == "NOT_FOUND");
    CHECK_FALSE(nf.header("ratelimit-reset").empty());
    auto na = http_request(srv.port(), "DELETE", "/health");
    CHECK(na.status == 405);
    CHECK(na.header("allow") == "GET, HEAD");
    CHECK(json::parse(na.body)["statusCode"] == 405);
  }

  TEST_CASE("a path that is not UTF-8 still gets its 404 and 405") {
    // The error message quotes the path; the body stays JSON (U+FFFD for
    // the bad bytes) instead of becoming a 500.
    server_process srv;
    auto nf = http_request(srv.port(), "GET", "/v2/\xFF\xFEnothing");
    CHECK(nf.status == 404);
    auto b = json::parse(nf.body);
    CHECK(b["code"] == "NOT_FOUND");
    CHECK(b["message"] == "Cannot GET /v2/\xEF\xBF\xBD\xEF\xBF\xBDnothing");
    auto ok = http_request(srv.port(), "GET", "/health");
    CHECK(ok.status == 200);
  }

  TEST_CASE("every error carries the RateLimit headers and a request id") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/v2/api-keys");
    CHECK(r.status == 401);
    CHECK(std::stoi(r.header("ratelimit-limit")) == 100);
    CHECK(std::stoi(r.header("ratelimit-reset")) <= 60);
    auto echoed = http_request(srv.port(), "GET", "/health",
                               {{"X-Request-Id", "trace-123"}});
    CHECK(echoed.header("x-request-id") == "trace-123");
    // Anything but 1-64 visible ASCII characters gets an id of ours.
    for (std::string bad : {std::string{"trace\xFF"}, std::string{"two words"},
                            std::string(65, 'x'), std::string{"quo\"te"}}) {
      CAPTURE(bad);
      auto fresh =
          http_request(srv.port(), "GET", "/health", {{"X-Request-Id", bad}});
      CHECK(fresh.status == 200);
      CHECK_FALSE(fresh.header("x-request-id").empty());
      CHECK(fresh.header("x-request-id") != bad);
    }
  }
}
