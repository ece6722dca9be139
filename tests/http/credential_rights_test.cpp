// What each credential may do (docs/security.md): a publishable key only
// validates single addresses without SMTP, whatever Origin it claims.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <string>
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
}
