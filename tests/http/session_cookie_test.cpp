#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

namespace {

using headers = std::vector<std::pair<std::string, std::string>>;

const headers same_origin = {{"Sec-Fetch-Site", "same-origin"}};

// The refresh token of a Set-Cookie value ("" when it clears the cookie).
std::string cookie_token(const std::string& set_cookie) {
  auto eq = set_cookie.find('=');
  auto semi = set_cookie.find(';');
  REQUIRE((set_cookie.rfind("__Host-mailassay_refresh=", 0) == 0 ||
           set_cookie.rfind("mailassay_refresh=", 0) == 0));
  return set_cookie.substr(eq + 1, semi - eq - 1);
}

http_response post(server_process& srv, const std::string& path,
                   const std::string& body, headers h) {
  if (!body.empty())
    h.emplace_back("Content-Type", "application/json");
  return http_request(srv.port(), "POST", path, h, body);
}

http_response with_cookie(server_process& srv, const std::string& path,
                          const std::string& token, headers h = same_origin) {
  h.emplace_back("Cookie",
                 "other=1; __Host-mailassay_refresh=" + token + "; x=y");
  return post(srv, path, "", h);
}

json signup_body(const std::string& email) {
  return {{"organizationName", "Cookie Co"},
          {"email", email},
          {"password", "correct horse battery"}};
}

} // namespace

TEST_SUITE("api.session_cookie") {
  TEST_CASE("sign-up in the cookie form sets an HttpOnly cookie instead of "
            "returning the refresh token") {
    server_process srv;
    auto r = post(srv, "/v2/auth/signup?session=cookie",
                  signup_body(unique_email("c")).dump(), same_origin);
    REQUIRE(r.status == 201);
    auto body = json::parse(r.body);
    CHECK(body.contains("accessToken"));
    CHECK(body["expiresIn"] == 900);
    CHECK(body["role"] == "owner");
    CHECK(body["user"].contains("email"));
    CHECK_FALSE(body.contains("refreshToken"));
    auto set = r.header("set-cookie");
    CHECK(cookie_token(set).size() >= 32);
    // The __Host- prefix: Secure, Path=/, no Domain.
    CHECK(set.rfind("__Host-mailassay_refresh=", 0) == 0);
    CHECK(set.find("; Path=/;") != std::string::npos);
    CHECK(set.find("Domain") == std::string::npos);
    CHECK(set.find("; HttpOnly") != std::string::npos);
    CHECK(set.find("; SameSite=Strict") != std::string::npos);
    CHECK(set.find("; Secure") != std::string::npos);
    CHECK(set.find("; Max-Age=2592000") != std::string::npos);
    // Without the parameter, the body form as before: no cookie.
    auto plain =
        post(srv, "/v2/auth/signup", signup_body(unique_email("c")).dump(), {});
    REQUIRE(plain.status == 201);
    CHECK(json::parse(plain.body).contains("refreshToken"));
    CHECK(plain.header("set-cookie").empty());
  }

  TEST_CASE("refresh with the cookie rotates it; replaying the old one ends "
            "the family and clears the cookie") {
    server_process srv;
    auto email = unique_email("c");
    auto first = post(srv, "/v2/auth/signup?session=cookie",
                      signup_body(email).dump(), same_origin);
    auto t1 = cookie_token(first.header("set-cookie"));
    auto r = with_cookie(srv, "/v2/auth/refresh", t1);
    REQUIRE(r.status == 200);
    auto body = json::parse(r.body);
    CHECK(body.contains("accessToken"));
    CHECK_FALSE(body.contains("refreshToken"));
    CHECK(body["user"]["email"] == email); // a reload gets the session back
    auto t2 = cookie_token(r.header("set-cookie"));
    CHECK(t2 != t1);
    CHECK(!t2.empty());
    // The new access token works.
    auto me =
        http_request(srv.port(), "GET", "/v2/auth/me",
                     {{"Authorization",
                       "Bearer " + body["accessToken"].get<std::string>()}});
    CHECK(me.status == 200);
    // t1 again: stolen or replayed; the whole family goes, t2 included.
    auto replay = with_cookie(srv, "/v2/auth/refresh", t1);
    CHECK(replay.status == 401);
    CHECK(replay.header("set-cookie").find("__Host-mailassay_refresh=;") == 0);
    CHECK(replay.header("set-cookie").find("Max-Age=0") != std::string::npos);
    CHECK(with_cookie(srv, "/v2/auth/refresh", t2).status == 401);
  }

  TEST_CASE("logout with the cookie ends the family and clears the cookie") {
    server_process srv;
    // Unique: the PostgreSQL run shares one database across runs.
    auto email = unique_email("owner");
    auto login = [&] {
      auto r = post(
          srv, "/v2/auth/login?session=cookie",
          json{{"email", email}, {"password", "correct horse battery"}}.dump(),
          {{"Origin", "http://127.0.0.1"}});
      REQUIRE(r.status == 200);
      CHECK_FALSE(json::parse(r.body).contains("refreshToken"));
      return cookie_token(r.header("set-cookie"));
    };
    REQUIRE(
        post(srv, "/v2/auth/signup", signup_body(email).dump(), {}).status ==
        201);
    auto t1 = login();
    auto t2 = cookie_token(
        with_cookie(srv, "/v2/auth/refresh", t1).header("set-cookie"));
    auto out = with_cookie(srv, "/v2/auth/logout", t2);
    CHECK(out.status == 204);
    CHECK(out.header("set-cookie").find("__Host-mailassay_refresh=;") == 0);
    CHECK(with_cookie(srv, "/v2/auth/refresh", t2).status == 401);
    // The body form sees the same: the family is gone.
    CHECK(post(srv, "/v2/auth/refresh", json{{"refreshToken", t2}}.dump(), {})
              .status == 401);
    // Logging out without a cookie is not an error, and clears it anyway.
    auto again = post(srv, "/v2/auth/logout", "", same_origin);
    CHECK(again.status == 204);
    CHECK(again.header("set-cookie").find("Max-Age=0") != std::string::npos);
    // Another login is a new family.
    CHECK(with_cookie(srv, "/v2/auth/refresh", login()).status == 200);
  }

  TEST_CASE("the cookie is refused from other sites (CSRF)") {
    server_process srv;
    auto first = post(srv, "/v2/auth/signup?session=cookie",
                      signup_body(unique_email("c")).dump(), same_origin);
    auto token = cookie_token(first.header("set-cookie"));
    for (auto h : std::vector<headers>{
             {{"Sec-Fetch-Site", "cross-site"}},
             {{"Sec-Fetch-Site", "same-site"}},
             {{"Sec-Fetch-Site", "none"}},
             // Sec-Fetch-Site decides when present, whatever Origin says.
             {{"Sec-Fetch-Site", "cross-site"}, {"Origin", "http://127.0.0.1"}},
             {{"Origin", "http://evil.example"}},
             {{"Origin", "http://127.0.0.1:1"}},
             // The same host and port under another scheme.
             {{"Origin", "https://127.0.0.1"}},
             {{"Origin", "null"}},
             {}}) {
      for (auto* path : {"/v2/auth/refresh", "/v2/auth/logout"}) {
        auto r = with_cookie(srv, path, token, h);
        CHECK_MESSAGE(r.status == 403, path);
        CHECK(json::parse(r.body)["code"] == "FORBIDDEN");
      }
      auto login = post(
          srv, "/v2/auth/login?session=cookie",
          json{{"email", "x@example.com"}, {"password", "whatever1"}}.dump(),
          h);
      CHECK(login.status == 403);
    }
    // The token survived all of that.
    CHECK(with_cookie(srv, "/v2/auth/refresh", token,
                      {{"Origin", "http://127.0.0.1"}})
              .status == 200);
  }

  TEST_CASE("two cookies with the session cookie's name are refused; the "
            "old unprefixed name is ignored") {
    server_process srv;
    auto first = post(srv, "/v2/auth/signup?session=cookie",
                      signup_body(unique_email("c")).dump(), same_origin);
    REQUIRE(first.status == 201);
    auto token = cookie_token(first.header("set-cookie"));
    for (auto* path : {"/v2/auth/refresh", "/v2/auth/logout"}) {
      CAPTURE(path);
      // In one header (a sibling subdomain's cookie comes first) ...
      headers one = same_origin;
      one.emplace_back("Cookie", "__Host-mailassay_refresh=planted; "
                                 "__Host-mailassay_refresh=" +
                                     token);
      auto r = post(srv, path, "", one);
      CHECK(r.status == 400);
      CHECK(json::parse(r.body)["code"] == "BAD_REQUEST");
      // ... or in two.
      headers two = same_origin;
      two.emplace_back("Cookie", "__Host-mailassay_refresh=" + token);
      two.emplace_back("Cookie", "__Host-mailassay_refresh=planted");
      CHECK(post(srv, path, "", two).status == 400);
    }
    headers old = same_origin;
    old.emplace_back("Cookie", "mailassay_refresh=" + token);
    CHECK(post(srv, "/v2/auth/refresh", "", old).status == 401);
    // The token survived all of that.
    CHECK(with_cookie(srv, "/v2/auth/refresh", token).status == 200);
  }

  TEST_CASE("behind a trusted TLS proxy the Origin must be https") {
    server_process srv{{{"MAILASSAY_HTTP_TRUSTED_PROXIES", "127.0.0.1"}}};
    auto first = post(srv, "/v2/auth/signup?session=cookie",
                      signup_body(unique_email("c")).dump(), same_origin);
    REQUIRE(first.status == 201);
    auto token = cookie_token(first.header("set-cookie"));
    const headers proxied = {{"X-Forwarded-Proto", "https"},
                             {"X-Forwarded-For", "203.0.113.9"}};
    auto with = [&](headers h, const std::string& origin) {
      h.emplace_back("Origin", origin);
      return h;
    };
    CHECK(with_cookie(srv, "/v2/auth/refresh", token,
                      with(proxied, "http://127.0.0.1"))
              .status == 403);
    auto ok = with_cookie(srv, "/v2/auth/refresh", token,
                          with(proxied, "https://127.0.0.1"));
    CHECK(ok.status == 200);
    // Without the proxy's word the service is plain HTTP.
    token = cookie_token(ok.header("set-cookie"));
    CHECK(with_cookie(srv, "/v2/auth/refresh", token,
                      {{"Origin", "https://127.0.0.1"}})
              .status == 403);
  }

  TEST_CASE("no cookie is 401; a bad session parameter is 422; Secure can "
            "be turned off") {
    server_process srv;
    auto none = post(srv, "/v2/auth/refresh", "", same_origin);
    CHECK(none.status == 401);
    CHECK(with_cookie(srv, "/v2/auth/refresh", "not-a-token").status == 401);
    auto bad = post(srv, "/v2/auth/signup?session=jar",
                    signup_body(unique_email("c")).dump(), same_origin);
    CHECK(bad.status == 422);

    server_process plain{{{"MAILASSAY_AUTH_COOKIE_SECURE", "false"}}};
    auto r = post(plain, "/v2/auth/signup?session=cookie",
                  signup_body(unique_email("c")).dump(), same_origin);
    REQUIRE(r.status == 201);
    CHECK(r.header("set-cookie").find("Secure") == std::string::npos);
    CHECK(r.header("set-cookie").find("HttpOnly") != std::string::npos);
    // Browsers drop a __Host- cookie that is not Secure: the plain name.
    CHECK(r.header("set-cookie").rfind("mailassay_refresh=", 0) == 0);
    headers h = same_origin;
    h.emplace_back("Cookie",
                   "mailassay_refresh=" + cookie_token(r.header("set-cookie")));
    CHECK(post(plain, "/v2/auth/refresh", "", h).status == 200);
  }
}
