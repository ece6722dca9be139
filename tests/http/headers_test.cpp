// Headers every response gets, and those of particular answers: nosniff,
// no-store on secrets, WWW-Authenticate on 401, CORS only on the widget
// route, HEAD where GET exists, a strict X-Request-Id.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

TEST_SUITE("api.headers") {
  TEST_CASE("X-Content-Type-Options: nosniff on every answer, success or "
            "error") {
    server_process srv;
    api a{srv};
    for (auto r : {a.call("GET", "/health"), a.call("GET", "/v2/nope"),
                   a.call("PUT", "/health"), a.call("GET", "/widget.js"),
                   a.call("GET", "/docs"), a.call("GET", "/metrics"),
                   a.call("GET", "/v2/credits/balance"),
                   a.call("POST", "/v2/auth/login", "", "{")}) {
      CAPTURE(r.status);
      CHECK(r.header("x-content-type-options") == "nosniff");
    }
  }

  TEST_CASE("Cache-Control: no-store on every answer carrying a token or a "
            "key secret") {
    server_process srv;
    api a{srv};
    auto email = unique_email("c");
    auto signup = a.post("/v2/auth/signup", {{"organizationName", "C"},
                                             {"email", email},
                                             {"password", "a long secret"}});
    REQUIRE(signup.status == 201);
    CHECK(signup.header("cache-control") == "no-store");
    auto session = json::parse(signup.body);
    auto login = a.post("/v2/auth/login",
                        {{"email", email}, {"password", "a long secret"}});
    REQUIRE(login.status == 200);
    CHECK(login.header("cache-control") == "no-store");
    auto refresh =
        a.post("/v2/auth/refresh", {{"refreshToken", session["refreshToken"]}});
    REQUIRE(refresh.status == 200);
    CHECK(refresh.header("cache-control") == "no-store");
    auto jwt = session["accessToken"].get<std::string>();
    auto key = a.post("/v2/api-keys", {{"name", "k"}}, jwt);
    REQUIRE(key.status == 201);
    CHECK(key.header("cache-control") == "no-store");
    // A wrong password is as private as a right one.
    auto wrong =
        a.post("/v2/auth/login", {{"email", email}, {"password", "nope nope"}});
    CHECK(wrong.status == 401);
    CHECK(wrong.header("cache-control") == "no-store");
  }

  TEST_CASE("every 401 carries WWW-Authenticate: Bearer") {
    server_process srv;
    api a{srv};
    for (auto r : {a.call("GET", "/v2/credits/balance"),
                   a.call("GET", "/v2/credits/balance", "svc_live_nope"),
                   a.call("GET", "/v2/auth/me", "not.a.jwt"),
                   a.post("/v2/auth/login", {{"email", "n@example.com"},
                                             {"password", "whatever1"}})}) {
      CHECK(r.status == 401);
      CHECK(r.header("www-authenticate") == "Bearer realm=\"mailassay\"");
    }
    CHECK(a.call("GET", "/health").header("www-authenticate").empty());
  }

  TEST_CASE("CORS preflight is answered on the widget route only") {
    server_process srv;
    std::vector<std::pair<std::string, std::string>> pre{
        {"Origin", "https://shop.example"},
        {"Access-Control-Request-Method", "POST"},
        {"Access-Control-Request-Headers", "authorization,content-type"}};
    auto widget =
        http_request(srv.port(), "OPTIONS", "/v2/widget/validate", pre);
    CHECK(widget.status == 204);
    CHECK(widget.header("access-control-allow-origin") ==
          "https://shop.example");
    CHECK(widget.header("access-control-allow-headers").find("Authorization") !=
          std::string::npos);
    for (auto path : {"/v2/email/validate", "/v2/api-keys", "/v2/auth/login",
                      "/v2/batch/upload"}) {
      CAPTURE(path);
      auto r = http_request(srv.port(), "OPTIONS", path, pre);
      CHECK(r.status == 204);
      CHECK_FALSE(r.header("allow").empty());
      CHECK(r.header("access-control-allow-origin").empty());
      CHECK(r.header("access-control-allow-methods").empty());
    }
  }

  TEST_CASE("HEAD is answered wherever GET is, with GET's headers and no "
            "body") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("H", unique_email("h"))["accessToken"].get<std::string>();
    for (auto path : {"/health", "/widget.js", "/v2/openapi.json",
                      "/v2/api-keys", "/docs"}) {
      CAPTURE(path);
      auto get = a.call("GET", path, jwt);
      // The raw bytes: a HEAD answer must end with its head.
      auto raw =
          raw_exchange(srv.port(), std::string{"HEAD "} + path +
                                       " HTTP/1.1\r\nHost: x\r\nAuthorization: "
                                       "Bearer " +
                                       jwt + "\r\nConnection: close\r\n\r\n");
      CHECK(raw.rfind("HTTP/1.1 200 OK\r\n", 0) == 0);
      auto end = raw.find("\r\n\r\n");
      REQUIRE(end != std::string::npos);
      CHECK(end + 4 == raw.size());
      CHECK(raw.find("Content-Length: " + std::to_string(get.body.size()) +
                     "\r\n") != std::string::npos);
      CHECK(raw.find("Content-Type: " + get.header("content-type")) !=
            std::string::npos);
    }
    auto bad = raw_exchange(srv.port(), "HEAD /v2/nope HTTP/1.1\r\nHost: x\r\n"
                                        "Connection: close\r\n\r\n");
    CHECK(bad.rfind("HTTP/1.1 404", 0) == 0);
    CHECK(bad.find("\r\n\r\n") + 4 == bad.size());
    auto allow = a.call("DELETE", "/health");
    CHECK(allow.status == 405);
    CHECK(allow.header("allow") == "GET, HEAD");
  }

  TEST_CASE("X-Request-Id is echoed only when it keeps to a strict "
            "character set") {
    server_process srv;
    auto id_of = [&](const std::string& id) {
      return http_request(srv.port(), "GET", "/health", {{"X-Request-Id", id}})
          .header("x-request-id");
    };
    for (auto good : {"abc-123", "550e8400-e29b-41d4-a716-446655440000",
                      "req_01H:x.y+z/w=@q"})
      CHECK(id_of(good) == good);
    for (auto bad :
         {"<script>", "a\"b", "a'b", "x>y", "a b", "a;b", "a\\b", "{}"}) {
      CAPTURE(bad);
      auto echoed = id_of(bad);
      CHECK_FALSE(echoed.empty());
      CHECK(echoed != bad);
      CHECK(echoed.find_first_of("<>\"'; \\{}") == std::string::npos);
    }
    CHECK(id_of(std::string(65, 'a')) != std::string(65, 'a'));
  }
}
