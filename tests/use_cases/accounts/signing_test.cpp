#include "tests/use_cases/fixture.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;

namespace {

// A token of `who` signed by `ring` at `now`.
std::string token_of(security::jwt_keyring& ring, const uc::principal& who,
                     std::int64_t now) {
  security::access_claims c;
  c.user_id = who.user_id;
  c.organization_id = who.organization_id();
  c.role = "owner";
  c.token_id = "at_test";
  c.issued_at = now;
  c.expires_at = now + 900;
  return ring.sign(c);
}

} // namespace

TEST_SUITE("use_cases.accounts.signing") {
  TEST_CASE_TEMPLATE("the first start stores a signing key; later starts "
                     "load the same one",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto first = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *first).has_value());
    CHECK_FALSE(first->current_kid().empty());
    auto second = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *second).has_value());
    CHECK(second->current_kid() == first->current_kid());
    auto rows = w.t.db().signing_keys();
    REQUIRE(rows.has_value());
    CHECK(rows->size() == 1);
    auto keys = uc::signing_keys_of(*rows);
    REQUIRE(keys.size() == 1);
    CHECK(keys[0].kid == first->current_kid());
  }

  TEST_CASE_TEMPLATE("after a rotation by another process, a token of the "
                     "new key is verified once the keys are read again; old "
                     "tokens verify until the old key is dropped",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("owner@example.com");
    auto owner = w.user(s);
    w.jwt = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt).has_value());
    auto old_token = token_of(*w.jwt, owner, w.now);
    REQUIRE(w.who(old_token).has_value());

    auto kid = uc::rotate_signing_key(w.t.db(), 3600, false);
    REQUIRE_MESSAGE(kid.has_value(), storage::testing::why(kid));
    CHECK(*kid != w.jwt->current_kid());
    // Another process signs with the new key; this one does not know it
    // yet and reads the keys when the token names it.
    auto there = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *there).has_value());
    CHECK(there->current_kid() == *kid);
    auto new_token = token_of(*there, owner, w.now);
    REQUIRE(w.jwt->names_unknown_key(new_token));
    REQUIRE(w.who(new_token).has_value());
    CHECK(w.jwt->current_kid() == *kid);
    CHECK(w.who(old_token).has_value());

    REQUIRE(uc::rotate_signing_key(w.t.db(), 3600, true).has_value());
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt).has_value());
    CHECK(code_of(w.who(old_token)) == errc::unauthorized);
    CHECK(code_of(w.who(new_token)) == errc::unauthorized);
  }
}
