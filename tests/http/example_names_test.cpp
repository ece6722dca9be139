// Example names are ordinary names (RFC 6761 §6.5, issue #19), black-box
// against the real binary with production syntax settings (special-use
// domains refused): `example.com/.net/.org` parse as valid, DNS decides, and
// the role, random and enrichment checks run on them like on any address.

#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;

namespace {

// The real example.com and example.net publish a null MX (RFC 7505).
constexpr const char* zone = R"(
example.com MX 0 .
example.net MX 0 .
example.org MX 10 mail.example.org
mail.example.org A 127.0.0.9
)";

struct example_env {
  dns_peer dns;
  server_process srv;
  api a{srv};
  std::string jwt;
  std::string key;

  example_env()
      : srv{{{"MAILASSAY_DNS_SERVERS", (dns.load_zone(zone), dns.server())},
             {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
             {"MAILASSAY_DNS_TRIES", "1"},
             {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "false"},
             {"MAILASSAY_RISK_DATA_DIR",
              std::string{std::getenv("MAILASSAY_SOURCE_DIR")} +
                  "/data/risk"}}} {
    jwt = a.signup("E", unique_email("e"))["accessToken"].get<std::string>();
    key = a.create_key(jwt)["key"].get<std::string>();
  }

  json validate(const std::string& email, const std::string& with_key = "") {
    auto r = a.post("/v2/email/validate", {{"email", email}},
                    with_key.empty() ? key : with_key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    return json::parse(r.body);
  }
};

} // namespace

TEST_SUITE("api.validate.example_names") {
  TEST_CASE("an example name has valid syntax and DNS decides") {
    example_env env;
    auto b = env.validate("kim.berger@example.com");
    CHECK(b["syntax"]["valid"] == true);
    CHECK(b["syntax"]["domain"] == "example.com");
    CHECK(b["dns"]["nullMx"] == true);
    CHECK(b["status"] == "invalid");
    CHECK(b["reason"] == "null_mx");
    auto net = env.validate("ops@EXAMPLE.NET");
    CHECK(net["syntax"]["valid"] == true);
    CHECK(net["reason"] == "null_mx");
    auto org = env.validate("lena.ruiz@example.org");
    CHECK(org["syntax"]["valid"] == true);
    CHECK(org["dns"]["hasMx"] == true);
    CHECK(org["status"] == "valid");
    CHECK(org["reason"] == "accepted_email");
  }

  TEST_CASE("role and random checks run on example names") {
    example_env env;
    auto role = env.validate("info@example.org");
    CHECK(role["roleAccount"]["isRoleAccount"] == true);
    CHECK(role["roleAccount"]["role"] == "info");
    CHECK(role["status"] == "risky");
    CHECK(role["reason"] == "role_account");
    // Undeliverable (null MX) and still a role: the facts are all there.
    auto both = env.validate("postmaster@example.com");
    CHECK(both["roleAccount"]["isRoleAccount"] == true);
    CHECK(both["reason"] == "null_mx");
    auto random = env.validate("qwerasdf@example.org");
    CHECK(random["random"]["isRandom"] == true);
    CHECK(random["reason"] == "random");
  }

  TEST_CASE("enrichment runs on example names") {
    example_env env;
    auto enriched =
        env.a
            .create_key(env.jwt, {{"name", "e"},
                                  {"config", {{"enrichment", true}}}})["key"]
            .get<std::string>();
    auto b = env.validate("maria.lopez@example.org", enriched);
    CHECK(b["enrichment"]["firstName"] == "Maria");
  }

  TEST_CASE("special-use and broken addresses are still refused") {
    example_env env;
    struct row {
      const char* email;
      const char* reason;
    };
    for (auto r : {row{"@example.org", "invalid_syntax"},
                   row{"dev@build.test", "invalid_domain"},
                   row{"nas@diskstation.local", "invalid_domain"},
                   row{"abuse@1.2.0.192.in-addr.arpa", "invalid_syntax"},
                   row{"ops@qa--team.example.com", "invalid_syntax"},
                   row{"lena@example.c", "invalid_syntax"}}) {
      CAPTURE(r.email);
      auto b = env.validate(r.email);
      CHECK(b["syntax"]["valid"] == false);
      CHECK(b["status"] == "invalid");
      CHECK(b["reason"] == r.reason);
    }
    // RFC 5321 quoted strings with a space are addresses.
    auto quoted = env.validate("\"kim berger\"@example.org");
    CHECK(quoted["syntax"]["valid"] == true);
  }
}
