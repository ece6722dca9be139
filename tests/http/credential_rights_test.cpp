// What each credential may do (docs/security.md): a publishable key only
// validates single addresses without SMTP, whatever Origin it claims.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

using namespace mailassay::testing;

namespace {

using headers = std::vector<std::pair<std::string, std::string>>;

// The 403 body's message of a publishable key used beyond its rights.
bool says_publishable(const http_response& r) {
  auto body = json::parse(r.body);
  return body["code"] == "FORBIDDEN" &&
         body["message"].get<std::string>().find(
             "restricted to allowedDomains (publishable)") != std::string::npos;
}

// Uploads a one-address CSV with `key`; returns the job's id.
std::string upload(api& a, const std::string& key, const std::string& email) {
  auto up = a.call(
      "POST", "/v2/batch/upload", "", "email\n" + email + "\n",
      {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
  REQUIRE_MESSAGE(up.status == 201, up.body);
  return json::parse(up.body)["id"].get<std::string>();
}

// Waits until job `id` is no longer queued or processing.
void wait_finished(api& a, const std::string& token, const std::string& id) {
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  for (;;) {
    auto j = json::parse(a.call("GET", "/v2/batch/" + id, token).body);
    if (j["status"] != "queued" && j["status"] != "processing")
      return;
    REQUIRE_MESSAGE(std::chrono::steady_clock::now() < until, j.dump());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The ids of the jobs `token` lists.
std::vector<std::string> listed(api& a, const std::string& token) {
  auto r = a.call("GET", "/v2/batch", token);
  REQUIRE_MESSAGE(r.status == 200, r.body);
  std::vector<std::string> ids;
  auto body = json::parse(r.body);
  for (const auto& j : body["items"])
    ids.push_back(j["id"].get<std::string>());
  return ids;
}

} // namespace

TEST_SUITE("api.credential_rights") {
  TEST_CASE("a publishable key validates from its site and does nothing "
            "else, whatever Origin it sends") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Pub", unique_email("pub"))["accessToken"].get<std::string>();
    auto published = a.create_key(jwt, {{"name", "page"},
                                        {"allowedDomains", {"shop.example"}},
                                        {"config", {{"smtp", true}}}})["key"]
                         .get<std::string>();
    // The organization's own job, which the copied key must not reach.
    auto backend = a.create_key(jwt)["key"].get<std::string>();
    auto up = a.call(
        "POST", "/v2/batch/upload", "", "email\na@example.com\n",
        {{"Authorization", "Bearer " + backend}, {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job = json::parse(up.body)["id"].get<std::string>();

    headers origin = {{"Origin", "https://shop.example"}};
    // What it is for.
    auto w = a.call("POST", "/v2/widget/validate", published,
                    R"({"email":"jane@gmial.com"})", origin);
    CHECK_MESSAGE(w.status == 200, w.body);
    auto v = a.call("POST", "/v2/email/validate", published,
                    R"({"email":"jane@gmial.com"})", origin);
    CHECK_MESSAGE(v.status == 200, v.body);
    // No SMTP probe (it spends credits), even with config.smtp.
    auto probe = a.call("POST", "/v2/email/validate", published,
                        R"({"email":"jane@gmial.com","smtp":true})", origin);
    CHECK(probe.status == 403);
    CHECK(says_publishable(probe));

    // Everything else: 403, saying why.
    struct attempt {
      const char* method;
      std::string path;
      std::string body;
    };
    std::vector<attempt> refused = {
        {"GET", "/v2/batch", ""},
        {"GET", "/v2/batch/" + job, ""},
        {"GET", "/v2/batch/" + job + "/results", ""},
        {"POST", "/v2/batch/" + job + "/cancel", ""},
        {"POST", "/batch/" + job + "/cancel", ""},
        {"GET", "/v2/credits/balance", ""},
        {"GET", "/v2/credits/transactions", ""},
        {"GET", "/v2/organization", ""},
        {"GET", "/v2/auth/me", ""},
        {"GET", "/v2/usage", ""},
        {"GET", "/v2/api-keys", ""},
        {"GET", "/v2/webhooks", ""},
    };
    for (const auto& t : refused) {
      CAPTURE(t.path);
      auto r = a.call(t.method, t.path, published, t.body, origin);
      CHECK(r.status == 403);
    }
    for (int i = 0; i < 2; ++i) { // the second from the key cache
      auto me = a.call("GET", "/v2/auth/me", published, "", origin);
      CHECK(me.status == 403);
      CHECK(says_publishable(me));
    }
    for (const auto& t : refused) {
      if (t.path.find("/v2/batch") == std::string::npos)
        continue;
      CAPTURE(t.path);
      CHECK(says_publishable(a.call(t.method, t.path, published, "", origin)));
    }
    auto upload =
        a.call("POST", "/v2/batch/upload", "", "email\nb@example.com\n",
               {{"Authorization", "Bearer " + published},
                {"Content-Type", "text/csv"},
                {"Origin", "https://shop.example"}});
    CHECK(upload.status == 403);
    CHECK(says_publishable(upload));
    CHECK(says_publishable(
        a.call("GET", "/v2/credits/balance", published, "", origin)));

    // The job is untouched and the organization's keys still work.
    auto j = a.call("GET", "/v2/batch/" + job, backend);
    REQUIRE(j.status == 200);
    CHECK(json::parse(j.body)["status"] != "cancelled");
    CHECK(a.call("GET", "/v2/credits/balance", backend).status == 200);
  }

  TEST_CASE("a test key sees only sandbox jobs and a live key only live "
            "ones; a user sees both") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Modes", unique_email("m"))["accessToken"].get<std::string>();
    auto live = a.create_key(jwt, {{"name", "live"}})["key"].get<std::string>();
    auto test = a.create_key(jwt, {{"name", "test"}, {"mode", "test"}})["key"]
                    .get<std::string>();
    auto sandbox_job = upload(a, test, "valid@example.com");
    wait_finished(a, test, sandbox_job);
    // One active job per organization: the live one is uploaded second and
    // may still be running while the test key tries it.
    auto live_job = upload(a, live, "jane@example.com");

    for (const auto& [key, own, other] :
         {std::tuple{test, sandbox_job, live_job},
          std::tuple{live, live_job, sandbox_job}}) {
      CAPTURE(own);
      CHECK(listed(a, key) == std::vector<std::string>{own});
      CHECK(a.call("GET", "/v2/batch/" + own, key).status == 200);
      for (auto path : {"/v2/batch/" + other,
                        "/v2/batch/" + other + "/results?format=json"}) {
        auto r = a.call("GET", path, key);
        CHECK(r.status == 404);
        CHECK(json::parse(r.body)["code"] == "NOT_FOUND");
      }
      CHECK(a.call("POST", "/v2/batch/" + other + "/cancel", key).status ==
            404);
      CHECK(a.call("POST", "/batch/" + other + "/cancel", key).status == 404);
    }
    auto all = listed(a, jwt);
    CHECK(all.size() == 2);
    // The test key's cancel did not reach the live job.
    auto j = json::parse(a.call("GET", "/v2/batch/" + live_job, jwt).body);
    CHECK(j["status"] != "cancelled");
  }

  TEST_CASE("two Authorization headers are a bad request") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("Two", unique_email("two"))["accessToken"].get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    for (auto [method, path, body] : {std::tuple{"GET", "/v2/auth/me", ""},
                                      std::tuple{"GET", "/v2/batch", ""},
                                      std::tuple{"POST", "/v2/email/validate",
                                                 R"({"email":"a@b.test"})"}}) {
      CAPTURE(path);
      headers h = {{"Authorization", "Bearer " + key},
                   {"authorization", "Bearer " + jwt}};
      if (*body)
        h.emplace_back("Content-Type", "application/json");
      auto r = http_request(srv.port(), method, path, h, body);
      CHECK(r.status == 400);
      auto b = json::parse(r.body);
      CHECK(b["code"] == "BAD_REQUEST");
      CHECK(b["statusCode"] == 400);
      CHECK(b["message"] ==
            "A request may carry only one Authorization header");
    }
    // One is fine.
    CHECK(a.call("GET", "/v2/auth/me", key).status == 200);
  }

  TEST_CASE("after logout the access token works until it expires, as "
            "documented; removing the member ends it at once") {
    server_process srv;
    api a{srv};
    auto owner = a.signup("Out", unique_email("out"));
    auto owner_jwt = owner["accessToken"].get<std::string>();
    auto email = unique_email("mem");
    REQUIRE(a.post("/v2/organization/members",
                   {{"email", email},
                    {"password", "a long password"},
                    {"role", "member"}},
                   owner_jwt)
                .status == 201);
    auto login = a.post("/v2/auth/login",
                        {{"email", email}, {"password", "a long password"}});
    REQUIRE(login.status == 200);
    auto s = json::parse(login.body);
    auto access = s["accessToken"].get<std::string>();
    auto refresh = s["refreshToken"].get<std::string>();
    CHECK(a.post("/v2/auth/logout", {{"refreshToken", refresh}}).status == 204);
    // The refresh token is dead; the access token is not (docs/api.md,
    // docs/dashboard.md "Sign-out").
    CHECK(a.post("/v2/auth/refresh", {{"refreshToken", refresh}}).status ==
          401);
    CHECK(a.call("GET", "/v2/auth/me", access).status == 200);
    auto id =
        json::parse(a.call("GET", "/v2/auth/me", access).body)["user"]["id"]
            .get<std::string>();
    CHECK(
        a.call("DELETE", "/v2/organization/members/" + id, owner_jwt).status ==
        204);
    CHECK(a.call("GET", "/v2/auth/me", access).status == 401);
  }
}
