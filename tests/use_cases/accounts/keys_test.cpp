#include "tests/use_cases/fixture.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;
namespace acc = core::account;

namespace {

// Creates a key of `by`'s organization; requires success.
uc::created_key create(world& w, const uc::principal& by,
                       std::vector<std::string> domains = {}) {
  auto e = w.env();
  uc::new_key_input in;
  in.name = "server";
  in.allowed_domains = std::move(domains);
  auto k = uc::create_key(e, by, in);
  REQUIRE_MESSAGE(k.has_value(), storage::testing::why(k));
  return *k;
}

} // namespace

TEST_SUITE("use_cases.accounts.keys") {
  TEST_CASE_TEMPLATE("a new key's secret authenticates, from storage and "
                     "then from the cache, until the key is revoked",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto k = create(w, owner);
    CHECK(k.secret.rfind("svc_live_", 0) == 0);
    CHECK(k.key.organization_id == owner.organization_id());
    CHECK(k.key.status == acc::key_status::active);

    CHECK(w.keys.size() == 0);
    auto p = w.who(k.secret);
    REQUIRE_MESSAGE(p.has_value(), storage::testing::why(p));
    CHECK(p->type == uc::principal::kind::api_key);
    CHECK(p->organization_id() == owner.organization_id());
    CHECK(p->key->id == k.key.id);
    CHECK(w.keys.size() == 1);
    auto cached = uc::authenticate_cached(w.keys, {true, k.secret, {}}, w.now);
    REQUIRE(cached.has_value());
    REQUIRE(cached->has_value());
    CHECK((*cached)->key->id == k.key.id);

    auto e = w.env();
    auto revoked =
        uc::set_key_status(e, owner, k.key.id, acc::key_status::revoked);
    REQUIRE(revoked.has_value());
    CHECK(revoked->status == acc::key_status::revoked);
    // Forgotten at once: the very next request reads storage again.
    CHECK_FALSE(uc::authenticate_cached(w.keys, {true, k.secret, {}}, w.now)
                    .has_value());
    CHECK(code_of(w.who(k.secret)) == errc::unauthorized);
    REQUIRE(uc::set_key_status(e, owner, k.key.id, acc::key_status::active)
                .has_value());
    CHECK(w.who(k.secret).has_value());
    REQUIRE(uc::delete_key(e, owner, k.key.id).has_value());
    CHECK(code_of(w.who(k.secret)) == errc::unauthorized);
    CHECK(code_of(uc::get_key(e, owner, k.key.id)) == errc::not_found);
  }

  TEST_CASE_TEMPLATE("a test key's secret says so", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto e = w.env();
    uc::new_key_input in;
    in.name = "sandbox";
    in.test = true;
    auto k = uc::create_key(e, owner, in);
    REQUIRE(k.has_value());
    CHECK(k->secret.rfind("svc_test_", 0) == 0);
  }

  TEST_CASE_TEMPLATE("members read keys but neither create, change, revoke "
                     "nor delete them",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto k = create(w, owner);
    auto e = w.env();
    REQUIRE(
        uc::add_member(e, owner,
                       {"m@example.com", "member pw", "M", acc::role::member})
            .has_value());
    auto ms = uc::login(e, "m@example.com", "member pw");
    REQUIRE(ms.has_value());
    auto member = w.user(*ms);

    auto created = uc::create_key(e, member, {});
    CHECK(code_of(created) == errc::forbidden);
    CHECK(message_of(created) == "Only owners and admins can create API keys");
    CHECK(message_of(uc::update_key(e, member, k.key.id, {})) ==
          "Only owners and admins can change API keys");
    CHECK(message_of(uc::set_key_status(e, member, k.key.id,
                                        acc::key_status::revoked)) ==
          "Only owners and admins can revoke API keys");
    CHECK(message_of(uc::set_key_status(e, member, k.key.id,
                                        acc::key_status::active)) ==
          "Only owners and admins can reactivate API keys");
    CHECK(message_of(uc::delete_key(e, member, k.key.id)) ==
          "Only owners and admins can delete API keys");
    auto listed = uc::list_keys(e, member);
    REQUIRE(listed.has_value());
    REQUIRE(listed->size() == 1);
    CHECK(listed->front().status == acc::key_status::active);
    CHECK(uc::get_key(e, member, k.key.id).has_value());
  }

  TEST_CASE_TEMPLATE("another organization's key is not found", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto a = w.user(w.signup("a@example.com", "A"));
    auto b = w.user(w.signup("b@example.com", "B"));
    auto k = create(w, a);
    auto e = w.env();
    CHECK(code_of(uc::get_key(e, b, k.key.id)) == errc::not_found);
    CHECK(code_of(uc::set_key_status(
              e, b, k.key.id, acc::key_status::revoked)) == errc::not_found);
    CHECK(code_of(uc::delete_key(e, b, k.key.id)) == errc::not_found);
    auto listed = uc::list_keys(e, b);
    REQUIRE(listed.has_value());
    CHECK(listed->empty());
    CHECK(w.who(k.secret).has_value());
  }

  TEST_CASE_TEMPLATE("a patch changes only the options it names and drops "
                     "the cached key",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto k = create(w, owner);
    REQUIRE(w.who(k.secret).has_value());
    CHECK(w.keys.size() == 1);
    auto before = k.key.config;
    uc::key_patch patch;
    patch.fields.name = "renamed";
    patch.config = uc::config_patch{};
    patch.config->smtp = !before.smtp;
    auto e = w.env();
    auto got = uc::update_key(e, owner, k.key.id, patch);
    REQUIRE_MESSAGE(got.has_value(), storage::testing::why(got));
    CHECK(got->name == "renamed");
    CHECK(got->config.smtp == !before.smtp);
    CHECK(got->config.disposable == before.disposable);
    CHECK(got->config.role_account == before.role_account);
    CHECK(got->config.enrichment == before.enrichment);
    CHECK(got->config.random_detection == before.random_detection);
    CHECK(w.keys.size() == 0);
    auto p = w.who(k.secret);
    REQUIRE(p.has_value());
    CHECK(p->key->name == "renamed");
  }

  TEST_CASE_TEMPLATE("a key bound to domains is refused from another origin "
                     "(403) and without one (401)",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto k = create(w, owner, {"shop.example"});
    CHECK(w.who(k.secret, "shop.example").has_value());
    CHECK(w.who(k.secret, "www.shop.example").has_value());
    auto other = w.who(k.secret, "evil.example");
    CHECK(code_of(other) == errc::forbidden);
    CHECK(message_of(other) == "This API key may not be used from this origin");
    CHECK(code_of(w.who(k.secret, "")) == errc::unauthorized);
  }

  TEST_CASE_TEMPLATE("credentials without a header, with an empty or an "
                     "unknown bearer are refused",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto e = w.env();
    auto none = uc::authenticate(e, {false, {}, {}});
    CHECK(code_of(none) == errc::no_authorization);
    CHECK(message_of(none) == "No authorization header");
    CHECK(code_of(w.who("")) == errc::unauthorized);
    CHECK(code_of(w.who("svc_live_0123456789abcdefghijklmnopqrstuv")) ==
          errc::unauthorized);
    CHECK(code_of(w.who("not.a.jwt")) == errc::unauthorized);
    // Without storage: the header's absence is decided, a JWT is not.
    auto cached = uc::authenticate_cached(w.keys, {false, {}, {}}, w.now);
    REQUIRE(cached.has_value());
    CHECK(code_of(*cached) == errc::no_authorization);
    CHECK_FALSE(uc::authenticate_cached(w.keys, {true, "a.b.c", {}}, w.now)
                    .has_value());
  }

  TEST_CASE_TEMPLATE("JWT-only use cases refuse API keys", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("owner@example.com");
    auto k = create(w, w.user(s));
    auto e = w.env();
    auto by_key = uc::authenticate_user(e, {true, k.secret, {}});
    CHECK(code_of(by_key) == errc::forbidden);
    CHECK(uc::authenticate_user(e, {true, s.access_token, {}}).has_value());
  }

  TEST_CASE("new keys get the configured limits; 0 is unlimited") {
    config::settings cfg;
    cfg.limits.key_per_minute = 60;
    cfg.limits.key_per_hour = 0;
    cfg.limits.key_per_day = 5000;
    auto l = uc::default_key_limits(cfg);
    CHECK(l.per_minute == std::optional<std::int64_t>{60});
    CHECK_FALSE(l.per_hour.has_value());
    CHECK(l.per_day == std::optional<std::int64_t>{5000});
  }
}
