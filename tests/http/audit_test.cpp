// The audit log (docs/privacy.md, "Audit log"; docs/api.md), black-box:
// who changed what, read by owners and admins of the organization only.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

namespace {

struct audit_env {
  server_process srv{{}};
  api a{srv};
  json owner = a.signup("Audited", unique_email("o"));
  std::string jwt = owner["accessToken"].get<std::string>();
  std::string owner_id = owner["user"]["id"].get<std::string>();

  json log(const std::string& token, const std::string& query = "") {
    auto r = a.call("GET", "/v2/audit-log" + query, token);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }
};

} // namespace

TEST_SUITE("api.audit") {
  TEST_CASE("a key's creation and revocation are listed with their actor; "
            "owners and admins only, each organization its own") {
    audit_env env;
    auto created = env.a.create_key(env.jwt, {{"name", "backend"}});
    auto key_id = created["id"].get<std::string>();
    auto secret = created["key"].get<std::string>();
    REQUIRE(env.a.call("POST", "/v2/api-keys/" + key_id + "/revoke", env.jwt)
                .status == 200);
    auto admin = env.a.member_token(env.jwt, "admin");
    auto page = env.log(admin);
    auto& items = page["items"];
    // Newest first: the revoke, the creation, then the members' additions.
    REQUIRE(items.size() >= 2);
    auto find = [&](const std::string& action) {
      for (auto& e : items)
        if (e["action"] == action)
          return e;
      FAIL("no " << action << " in " << page.dump());
      return json{};
    };
    auto revoked = find("api_key.revoked");
    auto made = find("api_key.created");
    CHECK(revoked["id"].get<long long>() > made["id"].get<long long>());
    for (auto* e : {&revoked, &made}) {
      CHECK((*e)["actor"] == json{{"type", "user"}, {"id", env.owner_id}});
      CHECK((*e)["target"] == key_id);
      CHECK((*e)["ip"] == "127.0.0.1");
      CHECK((*e)["at"].is_string());
    }
    CHECK(made["details"]["name"] == "backend");
    CHECK(made["details"]["mode"] == "live");
    // Never a secret: the key appears nowhere in the log.
    CHECK(page.dump().find(secret) == std::string::npos);
    // The admin's own addition is there too, by the owner.
    CHECK(find("member.added")["details"]["role"] == "admin");

    // Members and keys may not read it; strangers are refused.
    auto member = env.a.member_token(env.jwt, "member");
    auto denied = env.a.call("GET", "/v2/audit-log", member);
    CHECK(denied.status == 403);
    CHECK(json::parse(denied.body)["code"] == "FORBIDDEN");
    auto live = env.a.create_key(env.jwt)["key"].get<std::string>();
    CHECK(env.a.call("GET", "/v2/audit-log", live).status == 403);
    CHECK(env.a.call("GET", "/v2/audit-log").status == 401);
    // Another organization sees only its own.
    auto other = env.a.signup("Other", unique_email("x"))["accessToken"]
                     .get<std::string>();
    auto theirs = env.log(other);
    CHECK(theirs["items"].empty());
    CHECK(theirs.dump().find(key_id) == std::string::npos);
  }

  TEST_CASE("filter by action and page with the cursor; a bad query is 422") {
    audit_env env;
    for (int i = 0; i < 3; ++i)
      env.a.create_key(env.jwt, {{"name", "k" + std::to_string(i)}});
    auto only = env.log(env.jwt, "?action=api_key.created");
    REQUIRE(only["items"].size() == 3);
    CHECK(only["items"][0]["details"]["name"] == "k2");
    auto first = env.log(env.jwt, "?action=api_key.created&limit=2");
    REQUIRE(first["items"].size() == 2);
    REQUIRE(first["nextBefore"].is_number());
    auto next = env.log(env.jwt, "?action=api_key.created&limit=2&before=" +
                                     first["nextBefore"].dump());
    REQUIRE(next["items"].size() == 1);
    CHECK(next["items"][0]["details"]["name"] == "k0");
    CHECK(next["nextBefore"].is_null());
    auto bad =
        env.a.call("GET", "/v2/audit-log?action=key.stolen&limit=0", env.jwt);
    CHECK(bad.status == 422);
    auto messages = json::parse(bad.body)["message"];
    CHECK(messages.size() == 2);
    CHECK(bad.body.find("action must be one of") != std::string::npos);
  }

  TEST_CASE("failed logins are one entry per account and address, counted; "
            "a key's change names the key") {
    audit_env env;
    auto email = env.a.call("GET", "/v2/auth/me", env.jwt);
    auto address = json::parse(email.body)["user"]["email"].get<std::string>();
    for (int i = 0; i < 3; ++i)
      CHECK(env.a
                .post("/v2/auth/login",
                      {{"email", address}, {"password", "not it at all"}})
                .status == 401);
    auto failed = env.log(env.jwt, "?action=auth.login_failed")["items"];
    REQUIRE(failed.size() == 1);
    CHECK(failed[0]["occurrences"] == 3);
    CHECK(failed[0]["target"] == env.owner_id);
    CHECK(failed[0]["actor"]["id"].is_null());

    auto key = env.a.create_key(env.jwt);
    auto up = env.a.call(
        "POST", "/v2/batch/upload", "", "email\nbad@@x\n",
        {{"Authorization", "Bearer " + key["key"].get<std::string>()},
         {"Content-Type", "text/csv"}});
    REQUIRE_MESSAGE(up.status == 201, up.body);
    auto job = json::parse(up.body)["id"].get<std::string>();
    REQUIRE(
        env.a.call("DELETE", "/v2/batch/" + job, key["key"].get<std::string>())
            .status == 204);
    auto deleted = env.log(env.jwt, "?action=batch.deleted")["items"];
    REQUIRE(deleted.size() == 1);
    CHECK(deleted[0]["actor"] == json{{"type", "api_key"}, {"id", key["id"]}});
    CHECK(deleted[0]["target"] == job);
  }
}
