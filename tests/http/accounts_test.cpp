#include "security/digest.hpp"
#include "security/jwt.hpp"
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <thread>

using namespace mailassay::testing;

TEST_SUITE("api.accounts") {
  TEST_CASE("health answers healthy with the spec's record and headers") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/health");
    CHECK(r.status == 200);
    auto body = json::parse(r.body);
    CHECK(body["status"] == "healthy");
    CHECK(body["version"] == "v2");
    CHECK(body["timestamp"].get<std::string>().size() == 20);
    CHECK_FALSE(r.header("ratelimit-limit").empty());
    CHECK_FALSE(r.header("ratelimit-remaining").empty());
    CHECK_FALSE(r.header("ratelimit-reset").empty());
    CHECK_FALSE(r.header("x-request-id").empty());
  }

  TEST_CASE("sign-up, login, key lifecycle and balance work end to end") {
    server_process srv;
    api a{srv};
    auto email = unique_email("owner");
    auto s = a.signup("Acme", email);
    CHECK(s["expiresIn"] == 900);
    CHECK(s["user"]["email"] == email);
    CHECK(s["role"] == "owner");
    auto org_id = s["organization"]["id"].get<std::string>();

    auto login =
        a.post("/v2/auth/login",
               {{"email", email}, {"password", "correct horse battery"}});
    REQUIRE(login.status == 200);
    auto jwt = json::parse(login.body)["accessToken"].get<std::string>();

    auto key = a.create_key(jwt, {{"name", "backend"}});
    auto secret = key["key"].get<std::string>();
    CHECK(secret.rfind("svc_live_", 0) == 0);
    CHECK(key["status"] == "active");
    CHECK(key["prefix"] == secret.substr(0, 12) + "\u2026");
    CHECK(key["config"] == json{{"smtp", false},
                                {"disposable", true},
                                {"roleAccount", true},
                                {"enrichment", false},
                                {"randomDetection", true}});
    CHECK(key["allowedDomains"] == json::array());
    auto id = key["id"].get<std::string>();

    auto list = a.call("GET", "/v2/api-keys", jwt);
    REQUIRE(list.status == 200);
    CHECK(list.body.find(secret) == std::string::npos);
    CHECK(json::parse(list.body)["items"][0]["id"] == id);

    auto balance = a.call("GET", "/v2/credits/balance", secret);
    REQUIRE(balance.status == 200);
    auto b = json::parse(balance.body);
    CHECK(b["organizationId"] == org_id);
    CHECK(b["balance"] == 100);
    CHECK(b["consumed"] == 0);

    CHECK(a.call("POST", "/v2/api-keys/" + id + "/revoke", jwt).status == 200);
    auto revoked = a.call("GET", "/v2/credits/balance", secret);
    CHECK(revoked.status == 401);
    CHECK(json::parse(revoked.body)["message"] == "Unauthorized");
    CHECK(
        json::parse(a.call("GET", "/v2/api-keys/" + id, jwt).body)["status"] ==
        "revoked");
    CHECK(a.call("POST", "/v2/api-keys/" + id + "/reactivate", jwt).status ==
          200);
    CHECK(a.call("GET", "/v2/credits/balance", secret).status == 200);
    CHECK(a.call("DELETE", "/v2/api-keys/" + id, jwt).status == 204);
    CHECK(a.call("GET", "/v2/credits/balance", secret).status == 401);
    CHECK(a.call("GET", "/v2/api-keys/" + id, jwt).status == 404);
  }

  TEST_CASE("test keys, domains, config and limits are kept as given") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Acme", unique_email("o"))["accessToken"].get<std::string>();
    auto key = a.create_key(
        jwt, {{"name", "widget"},
              {"mode", "test"},
              {"allowedDomains", {"Example.com"}},
              {"config", {{"smtp", true}}},
              {"rateLimits", {{"perMinute", 10}, {"perDay", nullptr}}}});
    CHECK(key["key"].get<std::string>().rfind("svc_test_", 0) == 0);
    CHECK(key["allowedDomains"] == json{"example.com"});
    CHECK(key["config"]["smtp"] == true);
    CHECK(key["config"]["disposable"] == true);
    CHECK(key["rateLimits"]["perMinute"] == 10);
    CHECK(key["rateLimits"]["perDay"].is_null());
    auto id = key["id"].get<std::string>();
    auto patched = a.call("PATCH", "/v2/api-keys/" + id, jwt,
                          R"({"name":"renamed","config":{"enrichment":true}})");
    REQUIRE(patched.status == 200);
    auto p = json::parse(patched.body);
    CHECK(p["name"] == "renamed");
    CHECK(p["config"]["smtp"] == true); // untouched options keep their value
    CHECK(p["config"]["enrichment"] == true);
  }

  TEST_CASE("a domain-restricted key needs a matching Origin or Referer") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Acme", unique_email("o"))["accessToken"].get<std::string>();
    auto secret =
        a.create_key(
             jwt, {{"name", "w"}, {"allowedDomains", {"example.com"}}})["key"]
            .get<std::string>();
    // A publishable key only validates (api.credential_rights).
    const std::string body = R"({"email":"jane@gmial.com"})";
    CHECK(a.call("POST", "/v2/email/validate", secret, body).status == 401);
    CHECK(a.call("POST", "/v2/email/validate", secret, body,
                 {{"Origin", "https://shop.example.com"}})
              .status == 200);
    CHECK(a.call("POST", "/v2/email/validate", secret, body,
                 {{"Referer", "https://example.com/signup?x=1"}})
              .status == 200);
    CHECK(a.call("POST", "/v2/email/validate", secret, body,
                 {{"Origin", "https://evil-example.com"}})
              .status == 403);
  }

  TEST_CASE("GET /v2/auth/me with a key: the same answer from the caches") {
    // The key must not expire from the cache while the test counts storage
    // jobs (5 s by default: a loaded machine took longer once).
    server_process srv{{{"MAILASSAY_AUTH_KEY_CACHE_SECONDS", "3600"}}};
    api a{srv};
    auto s = a.signup("Acme \u00e9", unique_email("o"));
    auto jwt = s["accessToken"].get<std::string>();
    // A publishable key may not read `me` (api.credential_rights).
    auto key = a.create_key(
        jwt, {{"name", "backend \"one\""},
              {"rateLimits", {{"perMinute", 7}, {"perDay", nullptr}}}});
    auto secret = key["key"].get<std::string>();
    auto id = key["id"].get<std::string>();
    std::vector<std::pair<std::string, std::string>> origin = {
        {"Origin", "https://shop.example.com"}};

    // The first reads the organization from storage; the next ones are
    // answered from the key cache and the organization cache.
    auto first = a.call("GET", "/v2/auth/me", secret, "", origin);
    REQUIRE(first.status == 200);
    auto body = json::parse(first.body);
    CHECK(body["type"] == "api_key");
    CHECK(body["organization"] == s["organization"]);
    CHECK(body["apiKey"]["id"] == id);
    CHECK(body["apiKey"]["name"] == "backend \"one\"");
    CHECK(body["apiKey"]["rateLimits"] ==
          json{{"perMinute", 7}, {"perHour", nullptr}, {"perDay", nullptr}});
    CHECK(first.body.find(secret) == std::string::npos);
    auto jobs_before = a.storage_settled();
    for (int i = 0; i < 3; ++i) {
      auto again = a.call("GET", "/v2/auth/me", secret, "", origin);
      REQUIRE(again.status == 200);
      CHECK(again.body == first.body);
      CHECK_FALSE(again.header("ratelimit-limit").empty());
    }
    CHECK(a.storage_settled() == jobs_before);

    // A restricted key's own checks hold on the cached path too (the
    // first call puts it in the cache).
    auto restricted =
        a.create_key(jwt, {{"name", "page"},
                           {"allowedDomains", {"example.com"}}})["key"]
            .get<std::string>();
    CHECK(a.call("GET", "/v2/auth/me", restricted, "", origin).status == 403);
    CHECK(a.call("GET", "/v2/auth/me", restricted).status == 401);
    CHECK(a.call("GET", "/v2/auth/me", restricted, "",
                 {{"Origin", "https://evil-example.com"}})
              .status == 403);
    auto none = a.call("GET", "/v2/auth/me", "");
    CHECK(none.status == 401);
    CHECK(json::parse(none.body)["message"] == "No authorization header");

    // A change shows at once; a revoked key is refused on its next request.
    auto renamed = a.call("PATCH", "/v2/api-keys/" + id, jwt,
                          json{{"name", "renamed"}}.dump());
    REQUIRE(renamed.status == 200);
    auto after = a.call("GET", "/v2/auth/me", secret, "", origin);
    REQUIRE(after.status == 200);
    CHECK(json::parse(after.body)["apiKey"]["name"] == "renamed");
    CHECK(a.call("POST", "/v2/api-keys/" + id + "/revoke", jwt).status == 200);
    CHECK(a.call("GET", "/v2/auth/me", secret, "", origin).status == 401);
  }

  TEST_CASE("members read keys but only owners and admins create them") {
    server_process srv;
    api a{srv};
    auto owner =
        a.signup("Acme", unique_email("o"))["accessToken"].get<std::string>();
    auto member_email = unique_email("m");
    auto added = a.post("/v2/organization/members",
                        {{"email", member_email},
                         {"password", "member password"},
                         {"role", "member"}},
                        owner);
    REQUIRE(added.status == 201);
    CHECK(json::parse(added.body)["role"] == "member");
    auto member =
        json::parse(a.post("/v2/auth/login", {{"email", member_email},
                                              {"password", "member password"}})
                        .body)["accessToken"]
            .get<std::string>();
    auto denied = a.post("/v2/api-keys", {{"name", "x"}}, member);
    CHECK(denied.status == 403);
    auto body = json::parse(denied.body);
    CHECK(body["message"] == "Only owners and admins can create API keys");
    CHECK(body["statusCode"] == 403);
    CHECK(body["code"] == "FORBIDDEN");
    CHECK(a.call("GET", "/v2/api-keys", member).status == 200);
    auto members = json::parse(
        a.call("GET", "/v2/organization/members", member).body)["items"];
    CHECK(members.size() == 2);
    auto me = json::parse(a.call("GET", "/v2/auth/me", member).body);
    CHECK(me["role"] == "member");
    CHECK(me["user"]["email"] == member_email);
  }

  TEST_CASE("roles: admins never make owners, the last owner stays") {
    server_process srv;
    api a{srv};
    auto s = a.signup("Acme", unique_email("o"));
    auto owner = s["accessToken"].get<std::string>();
    auto owner_id = s["user"]["id"].get<std::string>();
    auto admin_email = unique_email("a");
    REQUIRE(a.post("/v2/organization/members",
                   {{"email", admin_email},
                    {"password", "admin password"},
                    {"role", "admin"}},
                   owner)
                .status == 201);
    auto admin =
        json::parse(a.post("/v2/auth/login", {{"email", admin_email},
                                              {"password", "admin password"}})
                        .body)["accessToken"]
            .get<std::string>();
    CHECK(a.post("/v2/organization/members",
                 {{"email", unique_email("x")},
                  {"password", "password1"},
                  {"role", "owner"}},
                 admin)
              .status == 403);
    CHECK(a.call("PATCH", "/v2/organization/members/" + owner_id, admin,
                 R"({"role":"member"})")
              .status == 403);
    auto last = a.call("PATCH", "/v2/organization/members/" + owner_id, owner,
                       R"({"role":"admin"})");
    CHECK(last.status == 409);
    CHECK(a.call("DELETE", "/v2/organization/members/" + owner_id, owner)
              .status == 409);
    CHECK(a.post("/v2/auth/signup", {{"organizationName", "Dup"},
                                     {"email", admin_email},
                                     {"password", "another password"}})
              .status == 409);
  }

  TEST_CASE("one organization never sees another's keys") {
    server_process srv;
    api a{srv};
    auto jwt_a =
        a.signup("A", unique_email("a"))["accessToken"].get<std::string>();
    auto jwt_b =
        a.signup("B", unique_email("b"))["accessToken"].get<std::string>();
    auto id = a.create_key(jwt_a)["id"].get<std::string>();
    CHECK(a.call("GET", "/v2/api-keys/" + id, jwt_b).status == 404);
    CHECK(a.call("POST", "/v2/api-keys/" + id + "/revoke", jwt_b).status ==
          404);
    CHECK(a.call("PATCH", "/v2/api-keys/" + id, jwt_b, R"({"name":"x"})")
              .status == 404);
    CHECK(a.call("DELETE", "/v2/api-keys/" + id, jwt_b).status == 404);
    CHECK(json::parse(a.call("GET", "/v2/api-keys", jwt_b).body)["items"]
              .empty());
    CHECK(a.call("GET", "/v2/api-keys/" + id, jwt_a).status == 200);
  }

  TEST_CASE("refresh rotates tokens and a reused token ends the family") {
    server_process srv;
    api a{srv};
    auto s = a.signup("Acme", unique_email("o"));
    auto first = s["refreshToken"].get<std::string>();
    auto r1 = a.post("/v2/auth/refresh", {{"refreshToken", first}});
    REQUIRE(r1.status == 200);
    auto pair = json::parse(r1.body);
    CHECK(pair["expiresIn"] == 900);
    auto second = pair["refreshToken"].get<std::string>();
    CHECK(second != first);
    CHECK(a.call("GET", "/v2/auth/me", pair["accessToken"]).status == 200);
    // Replaying the spent token revokes the whole family, second included.
    CHECK(a.post("/v2/auth/refresh", {{"refreshToken", first}}).status == 401);
    CHECK(a.post("/v2/auth/refresh", {{"refreshToken", second}}).status == 401);
    CHECK(a.post("/v2/auth/refresh", {{"refreshToken", "nonsense"}}).status ==
          401);
  }

  TEST_CASE("an access token has one spelling: other unused bits in its "
            "last base64url character are refused") {
    // Found by fuzz/access_token_fuzz.cpp: the 43rd character of the
    // signature carries 2 unused bits, and any value of them verified.
    server_process srv;
    api a{srv};
    auto token =
        a.signup("Acme", unique_email("o"))["accessToken"].get<std::string>();
    REQUIRE(a.call("GET", "/v2/auth/me", token).status == 200);
    std::string alphabet =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
        "0123456789-_";
    auto last = alphabet.find(token.back());
    REQUIRE(last != std::string::npos);
    for (std::size_t bits : {1, 2, 3}) {
      auto other = token;
      other.back() = alphabet[last ^ bits];
      CAPTURE(other);
      CHECK(a.call("GET", "/v2/auth/me", other).status == 401);
    }
  }

  TEST_CASE("logout revokes the refresh token") {
    server_process srv;
    api a{srv};
    auto token =
        a.signup("Acme", unique_email("o"))["refreshToken"].get<std::string>();
    CHECK(a.post("/v2/auth/logout", {{"refreshToken", token}}).status == 204);
    CHECK(a.post("/v2/auth/refresh", {{"refreshToken", token}}).status == 401);
  }

  TEST_CASE("wrong password and unknown email get the same 401") {
    server_process srv;
    api a{srv};
    auto email = unique_email("o");
    a.signup("Acme", email);
    auto wrong = a.post("/v2/auth/login",
                        {{"email", email}, {"password", "not the password"}});
    auto unknown = a.post("/v2/auth/login", {{"email", unique_email("x")},
                                             {"password", "not the password"}});
    CHECK(wrong.status == 401);
    CHECK(unknown.status == 401);
    CHECK(wrong.body == unknown.body);
  }

  TEST_CASE("expired, foreign-signed and alg-none tokens are refused") {
    server_process srv{{{"MAILASSAY_AUTH_ACCESS_TTL_SECONDS", "3"}}};
    api a{srv};
    auto s = a.signup("Acme", unique_email("o"));
    auto jwt = s["accessToken"].get<std::string>();
    CHECK(a.call("GET", "/v2/auth/me", jwt).status == 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(4100));
    auto expired = a.call("GET", "/v2/auth/me", jwt);
    CHECK(expired.status == 401);
    CHECK(json::parse(expired.body)["message"] == "Unauthorized");

    using namespace mailassay::security;
    access_claims claims{
        s["user"]["id"], s["organization"]["id"], "owner", "j", 0, 4102444800};
    auto foreign = sign_access_token(claims, "another secret entirely");
    CHECK(a.call("GET", "/v2/auth/me", foreign).status == 401);
    auto payload =
        json{{"sub", claims.user_id}, {"org", claims.organization_id},
             {"role", "owner"},       {"iat", 0},
             {"exp", 4102444800},     {"typ", "access"}};
    auto none = base64url_encode(R"({"alg":"none","typ":"JWT"})") + "." +
                base64url_encode(payload.dump()) + ".";
    CHECK(a.call("GET", "/v2/auth/me", none).status == 401);
  }

  TEST_CASE("signup can be switched off") {
    server_process srv{{{"MAILASSAY_AUTH_SIGNUP_ENABLED", "false"}}};
    api a{srv};
    auto r = a.post("/v2/auth/signup", {{"organizationName", "A"},
                                        {"email", unique_email("o")},
                                        {"password", "long enough"}});
    CHECK(r.status == 403);
  }

  TEST_CASE("new organizations start with the configured credits") {
    server_process srv{{{"MAILASSAY_CREDITS_SIGNUP_GRANT", "7"}}};
    api a{srv};
    auto jwt =
        a.signup("A", unique_email("o"))["accessToken"].get<std::string>();
    auto b = json::parse(a.call("GET", "/v2/credits/balance", jwt).body);
    CHECK(b["balance"] == 7);
    auto t = json::parse(a.call("GET", "/v2/credits/transactions", jwt).body);
    REQUIRE(t["items"].size() == 1);
    CHECK(t["items"][0]["delta"] == 7);
    CHECK(t["items"][0]["kind"] == "signup");
  }
}

TEST_SUITE("api.rate_limit_records") {
  TEST_CASE("rate-limit records list every key and the configured defaults") {
    server_process srv{{{"MAILASSAY_LIMITS_KEY_PER_MINUTE", "60"}}};
    api a{srv};
    auto jwt =
        a.signup("A", unique_email("o"))["accessToken"].get<std::string>();
    auto plain = a.create_key(jwt, {{"name", "plain"}});
    CHECK(plain["rateLimits"]["perMinute"] == 60);
    CHECK(plain["rateLimits"]["perDay"].is_null());
    auto own = a.create_key(
        jwt, {{"name", "own"}, {"rateLimits", {{"perHour", 1000}}}});
    auto r = a.call("GET", "/v2/api-keys/rate-limits", jwt);
    REQUIRE(r.status == 200);
    auto b = json::parse(r.body);
    CHECK(b["defaults"] ==
          json{{"perMinute", 60}, {"perHour", nullptr}, {"perDay", nullptr}});
    REQUIRE(b["keys"].size() == 2);
    // Both keys were made within one second: find ours by id.
    auto mine = b["keys"][0]["id"] == own["id"] ? b["keys"][0] : b["keys"][1];
    CHECK(mine["id"] == own["id"]);
    CHECK(mine["name"] == "own");
    CHECK(mine["perHour"] == 1000);
    CHECK(mine["perMinute"].is_null());
    auto patched =
        a.call("PATCH", "/v2/api-keys/" + own["id"].get<std::string>(), jwt,
               R"({"rateLimits":{"perMinute":5}})");
    CHECK(json::parse(patched.body)["rateLimits"]["perMinute"] == 5);
  }
}
