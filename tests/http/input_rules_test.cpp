// What the service refuses in request bodies and paths beyond types:
// strict JSON, blank or control-character labels, public-suffix
// allowedDomains, and answers that must not tell tenants apart.
#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

using namespace mailassay::testing;

namespace {

json messages_of(const http_response& r) {
  return json::parse(r.body)["message"];
}

} // namespace

TEST_SUITE("api.input_rules") {
  TEST_CASE("JSON: a NUL and garbage after the body is malformed; a repeated "
            "name and an out-of-range number are 422 naming the field") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("J", unique_email("j"))["accessToken"].get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    auto validate = [&](const std::string& body) {
      return a.call("POST", "/v2/email/validate", key, body);
    };
    REQUIRE(validate(R"({"email":"jane@example.com"})").status == 200);
    auto nul = validate(std::string{R"({"email":"jane@example.com"})"} +
                        std::string(1, '\0') + "garbage");
    CHECK(nul.status == 400);
    CHECK(json::parse(nul.body)["message"] == "Malformed JSON in request body");
    auto nul_inside = validate(std::string{"{\"email\":\"jane@example.com\""} +
                               std::string(1, '\0') + "}");
    CHECK(nul_inside.status == 400);

    auto twice = validate(R"({"email":"a@example.com","email":"b@x.io"})");
    CHECK(twice.status == 422);
    CHECK(messages_of(twice) ==
          json::array({"property email must be given only once"}));
    auto nested =
        a.post("/v2/api-keys", json::parse(R"({"name":"k"})"), jwt); // control
    CHECK(nested.status == 201);
    auto nested_twice =
        a.call("POST", "/v2/api-keys", jwt,
               R"({"name":"k","config":{"smtp":true,"smtp":false}})");
    CHECK(nested_twice.status == 422);
    CHECK(messages_of(nested_twice) ==
          json::array({"property config.smtp must be given only once"}));

    auto huge = validate(R"({"email":"jane@example.com","timeout":1e400})");
    CHECK(huge.status == 422);
    CHECK(messages_of(huge) ==
          json::array({"timeout must be a finite number"}));
    auto in_array = a.call("POST", "/v2/api-keys", jwt,
                           R"({"name":"k","allowedDomains":["a.io",-1e999]})");
    CHECK(in_array.status == 422);
    CHECK(messages_of(in_array) ==
          json::array({"allowedDomains.1 must be a finite number"}));
    // Still an integer rule for large finite numbers.
    auto big = validate(R"({"email":"jane@example.com","timeout":1e30})");
    CHECK(big.status == 422);
    CHECK(messages_of(big) ==
          json::array({"timeout must be an integer number"}));
    std::string deep =
        "{\"email\":\"j@example.com\",\"x\":" + std::string(100, '[') +
        std::string(100, ']') + "}";
    auto too_deep = validate(deep);
    CHECK(too_deep.status == 400);
  }

  TEST_CASE("the 254 limit of an address is counted and named in octets") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("J", unique_email("j"))["accessToken"].get<std::string>();
    auto key = a.create_key(jwt)["key"].get<std::string>();
    // 127 two-octet characters: 254 octets would pass, these are 254 + 10.
    std::string local;
    for (int i = 0; i < 127; ++i)
      local += "\xC3\xA9";
    auto r = a.call("POST", "/v2/email/validate", key,
                    json{{"email", local + "@x.example"}}.dump());
    CHECK(r.status == 422);
    CHECK(messages_of(r) ==
          json::array({"email must be shorter than or equal to 254 octets"}));
  }

  TEST_CASE("a password of blanks and names of blanks or with control "
            "characters are refused") {
    server_process srv;
    api a{srv};
    auto blank_password =
        a.post("/v2/auth/signup", {{"organizationName", "Org"},
                                   {"email", unique_email("p")},
                                   {"password", "        "}});
    CHECK(blank_password.status == 422);
    CHECK(messages_of(blank_password) ==
          json::array({"password must not be blank"}));
    auto blank_org = a.post("/v2/auth/signup", {{"organizationName", "   "},
                                                {"email", unique_email("p")},
                                                {"password", "a good one!"}});
    CHECK(blank_org.status == 422);
    CHECK(messages_of(blank_org) ==
          json::array({"organizationName must not be blank"}));
    auto jwt =
        a.signup("J", unique_email("j"))["accessToken"].get<std::string>();
    auto key_named = [&](const std::string& name) {
      return a.call("POST", "/v2/api-keys", jwt, json{{"name", name}}.dump());
    };
    auto blanks = key_named("    ");
    CHECK(blanks.status == 422);
    CHECK(messages_of(blanks) == json::array({"name must not be blank"}));
    auto nul = key_named(std::string{"ke"} + std::string(1, '\0') + "y");
    CHECK(nul.status == 422);
    CHECK(messages_of(nul) ==
          json::array({"name must not contain control characters"}));
    CHECK(key_named("tab\there").status == 422);
    // C1 controls and the line/paragraph separators are control characters
    // too; the letters around them are not.
    for (auto bad : {"a\xC2\x80"
                     "b",
                     "a\xC2\x85"
                     "b",
                     "a\xC2\x9F"
                     "b",
                     "a\xE2\x80\xA8"
                     "b",
                     "a\xE2\x80\xA9"
                     "b"}) {
      CAPTURE(bad);
      auto r = key_named(bad);
      CHECK(r.status == 422);
      CHECK(messages_of(r) ==
            json::array({"name must not contain control characters"}));
    }
    CHECK(key_named("a\xC2\xA0"
                    "b")
              .status == 201); // no-break space
    CHECK(key_named("a\xE2\x80\xA6"
                    "b")
              .status == 201); // ellipsis
    auto c1_org = a.post("/v2/auth/signup", {{"organizationName", "Org\xC2\x9B"
                                                                  "x"},
                                             {"email", unique_email("p")},
                                             {"password", "a good one!"}});
    CHECK(c1_org.status == 422);
    auto c1_user = a.post("/v2/auth/signup", {{"organizationName", "Org"},
                                              {"name", "Ann\xE2\x80\xA8"},
                                              {"email", unique_email("p")},
                                              {"password", "a good one!"}});
    CHECK(c1_user.status == 422);
    // Counted in characters, not octets: 100 accented letters pass.
    std::string accented;
    for (int i = 0; i < 100; ++i)
      accented += "\xC3\xA9";
    CHECK(key_named(accented).status == 201);
    auto id = json::parse(key_named("fine").body)["id"].get<std::string>();
    auto renamed =
        a.call("PATCH", "/v2/api-keys/" + id, jwt, R"({"name":"  "})");
    CHECK(renamed.status == 422);
    auto member = a.post("/v2/organization/members",
                         {{"email", unique_email("m")},
                          {"password", "         "},
                          {"role", "member"}},
                         jwt);
    CHECK(member.status == 422);
    CHECK(messages_of(member) == json::array({"password must not be blank"}));
  }

  TEST_CASE("allowedDomains refuses public suffixes and single labels") {
    server_process srv;
    api a{srv};
    auto jwt =
        a.signup("D", unique_email("d"))["accessToken"].get<std::string>();
    auto create = [&](json domains) {
      return a.post("/v2/api-keys",
                    {{"name", "w"}, {"allowedDomains", domains}}, jwt);
    };
    struct row {
      const char* domain;
      const char* says;
    };
    for (auto [d, says] :
         {row{"com", "single-label"}, row{"localhost", "single-label"},
          row{"co.uk", "public suffix"}, row{"github.io", "public suffix"},
          row{"COM", "single-label"}}) {
      CAPTURE(d);
      auto r = create({"example.com", d});
      CHECK(r.status == 422);
      CHECK_MESSAGE(messages_of(r).dump().find(says) != std::string::npos,
                    r.body);
    }
    CHECK(
        create({"example.com", "shop.example.co.uk", "me.github.io"}).status ==
        201);
    auto id =
        json::parse(create({"example.com"}).body)["id"].get<std::string>();
    auto patched = a.call("PATCH", "/v2/api-keys/" + id, jwt,
                          R"({"allowedDomains":["com"]})");
    CHECK(patched.status == 422);
  }

  TEST_CASE("removing a member: an unknown id and another organization's "
            "user get the same answer") {
    server_process srv;
    api a{srv};
    auto mine =
        a.signup("Mine", unique_email("m"))["accessToken"].get<std::string>();
    auto theirs = a.signup("Theirs", unique_email("t"));
    auto their_user = theirs["user"]["id"].get<std::string>();
    auto other =
        a.call("DELETE", "/v2/organization/members/" + their_user, mine);
    auto unknown =
        a.call("DELETE", "/v2/organization/members/usr_doesnotexist", mine);
    CHECK(other.status == 404);
    CHECK(unknown.status == 404);
    CHECK(other.body == unknown.body);
    auto patch_other = a.call("PATCH", "/v2/organization/members/" + their_user,
                              mine, R"({"role":"admin"})");
    auto patch_unknown =
        a.call("PATCH", "/v2/organization/members/usr_doesnotexist", mine,
               R"({"role":"admin"})");
    CHECK(patch_other.status == 404);
    CHECK(patch_other.body == patch_unknown.body);
    // Theirs still has its owner.
    auto me =
        a.call("GET", "/v2/auth/me", theirs["accessToken"].get<std::string>());
    CHECK(me.status == 200);
  }
}
