#include "core/account/credentials.hpp"
#include "core/account/permissions.hpp"
#include "core/account/records.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::account;

TEST_SUITE("core.account") {
  TEST_CASE("svc_live_ and svc_test_ bearers are API keys, the rest JWTs") {
    CHECK(classify_bearer("svc_live_abc") == credential_kind::api_key);
    CHECK(classify_bearer("svc_test_abc") == credential_kind::api_key);
    CHECK(classify_bearer("svc_prod_abc") == credential_kind::jwt);
    CHECK(classify_bearer("eyJhbGciOi.x.y") == credential_kind::jwt);
    CHECK(classify_bearer("SVC_LIVE_abc") == credential_kind::jwt);
  }
  TEST_CASE("a key's mode is told by the prefix it was minted with") {
    api_key k;
    k.prefix = "svc_test_aB3\u2026";
    CHECK(mode_of(k) == key_mode::test);
    CHECK(to_string(mode_of(k)) == "test");
    k.prefix = "svc_live_aB3\u2026";
    CHECK(mode_of(k) == key_mode::live);
    CHECK(to_string(mode_of(k)) == "live");
    k.prefix = "svc_tes";
    CHECK(mode_of(k) == key_mode::live);
  }
  TEST_CASE("extracts the bearer credential from an Authorization value") {
    CHECK(bearer_of("Bearer abc") == "abc");
    CHECK(bearer_of("bearer   abc  ") == "abc");
    CHECK(bearer_of("Basic abc").empty());
    CHECK(bearer_of("Bearer").empty());
    CHECK(bearer_of("Bearerabc").empty());
    CHECK(bearer_of("").empty());
  }
  TEST_CASE("display prefix is 12 characters and an ellipsis") {
    CHECK(display_prefix("svc_live_0123456789") == "svc_live_012\u2026");
  }
  TEST_CASE("an allowed domain admits itself and its subdomains only") {
    CHECK(host_matches_domain("example.com", "example.com"));
    CHECK(host_matches_domain("app.Example.com", "example.com"));
    CHECK_FALSE(host_matches_domain("badexample.com", "example.com"));
    CHECK_FALSE(host_matches_domain("example.com.evil.org", "example.com"));
    CHECK_FALSE(host_matches_domain("", "example.com"));
  }
  TEST_CASE("members never manage keys or members; admins never touch owners") {
    CHECK(may_manage_keys(role::owner));
    CHECK(may_manage_keys(role::admin));
    CHECK_FALSE(may_manage_keys(role::member));
    CHECK(may_assign_role(role::owner, role::member, role::owner));
    CHECK(may_assign_role(role::admin, role::member, role::admin));
    CHECK_FALSE(may_assign_role(role::admin, role::member, role::owner));
    CHECK_FALSE(may_assign_role(role::admin, role::owner, role::member));
    CHECK_FALSE(may_assign_role(role::member, role::member, role::member));
  }
  TEST_CASE("a publishable key only validates single addresses without SMTP") {
    api_key open_key;
    api_key published;
    published.allowed_domains = {"shop.example"};
    CHECK_FALSE(publishable(open_key));
    CHECK(publishable(published));
    for (auto use : {key_use::widget_validation, key_use::validation,
                     key_use::smtp_validation, key_use::account})
      CHECK(may_use_key(open_key, use));
    CHECK(may_use_key(published, key_use::widget_validation));
    CHECK(may_use_key(published, key_use::validation));
    CHECK_FALSE(may_use_key(published, key_use::smtp_validation));
    CHECK_FALSE(may_use_key(published, key_use::account));
  }
  TEST_CASE("a test key sees sandbox jobs, a live key live ones, a user all") {
    api_key live;
    live.prefix = "svc_live_abc";
    api_key test;
    test.prefix = "svc_test_abc";
    CHECK(job_scope_of(nullptr) == job_scope::all);
    CHECK(job_scope_of(&live) == job_scope::live_only);
    CHECK(job_scope_of(&test) == job_scope::sandbox_only);
    CHECK(in_job_scope(job_scope::all, true));
    CHECK(in_job_scope(job_scope::all, false));
    CHECK(in_job_scope(job_scope::live_only, false));
    CHECK_FALSE(in_job_scope(job_scope::live_only, true));
    CHECK(in_job_scope(job_scope::sandbox_only, true));
    CHECK_FALSE(in_job_scope(job_scope::sandbox_only, false));
  }
  TEST_CASE("role names round-trip") {
    for (auto r : {role::owner, role::admin, role::member})
      CHECK(parse_role(to_string(r)) == r);
    CHECK_FALSE(parse_role("root").has_value());
  }
}
