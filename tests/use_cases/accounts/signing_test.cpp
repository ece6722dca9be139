#include "security/random.hpp"
#include "security/secret_box.hpp"
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

// The server key of these tests (webhooks.secret_key); `w.cfg` carries it
// for the reloads `authenticate` makes.
const std::string server_key = security::new_secret_box_key_hex();

// A ring holding exactly `keys`, as another process would.
std::shared_ptr<security::jwt_keyring>
ring_of(std::vector<security::jwt_key> keys) {
  auto ring = security::jwt_keyring::shared();
  ring->replace(std::move(keys));
  return ring;
}

} // namespace

TEST_SUITE("use_cases.accounts.signing") {
  TEST_CASE_TEMPLATE("the first start stores a signing key; later starts "
                     "load the same one",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto first = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *first, server_key).has_value());
    CHECK_FALSE(first->current_kid().empty());
    auto second = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *second, server_key).has_value());
    CHECK(second->current_kid() == first->current_kid());
    auto rows = w.t.db().signing_keys();
    REQUIRE(rows.has_value());
    CHECK(rows->size() == 1);
    auto keys = uc::signing_keys_of(*rows, server_key);
    REQUIRE(keys.has_value());
    REQUIRE(keys->size() == 1);
    CHECK((*keys)[0].kid == first->current_kid());
  }

  TEST_CASE_TEMPLATE("after a rotation by another process, a token of the "
                     "new key is verified once the keys are read again; old "
                     "tokens verify until the old key is dropped",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto s = w.signup("owner@example.com");
    auto owner = w.user(s);
    w.jwt = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt, server_key).has_value());
    auto old_token = token_of(*w.jwt, owner, w.now);
    REQUIRE(w.who(old_token).has_value());

    auto kid = uc::rotate_signing_key(w.t.db(), server_key, 3600, false);
    REQUIRE_MESSAGE(kid.has_value(), storage::testing::why(kid));
    CHECK(*kid != w.jwt->current_kid());
    // Another process signs with the new key; this one does not know it
    // yet and reads the keys when the token names it.
    auto there = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *there, server_key).has_value());
    CHECK(there->current_kid() == *kid);
    auto new_token = token_of(*there, owner, w.now);
    REQUIRE(w.jwt->names_unknown_key(new_token));
    REQUIRE(w.who(new_token).has_value());
    CHECK(w.jwt->current_kid() == *kid);
    CHECK(w.who(old_token).has_value());

    REQUIRE(
        uc::rotate_signing_key(w.t.db(), server_key, 3600, true).has_value());
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt, server_key).has_value());
    CHECK(code_of(w.who(old_token)) == errc::unauthorized);
    CHECK(code_of(w.who(new_token)) == errc::unauthorized);
  }

  TEST_CASE_TEMPLATE("the database holds the signing key sealed: its column "
                     "is not the HMAC key, so a token signed with it is "
                     "refused, and it does not verify the service's tokens",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto s = w.signup("owner@example.com");
    auto owner = w.user(s);
    w.jwt = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt, server_key).has_value());
    auto good = token_of(*w.jwt, owner, w.now);
    REQUIRE(w.who(good).has_value());

    auto rows = w.t.db().signing_keys();
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == 1);
    const auto& row = rows->front();
    CHECK(row.secret.starts_with("x1."));
    // Whoever reads the database file signs with what it holds.
    auto forger = ring_of({security::jwt_key{row.kid, row.secret, 0}});
    auto forged = token_of(*forger, owner, w.now);
    CHECK(code_of(w.who(forged)) == errc::unauthorized);
    CHECK_FALSE(forger->verify(good, w.now).has_value());
    // Another server key does not open it: the start stops.
    auto other = security::jwt_keyring::shared();
    auto wrong = uc::load_signing_keys(w.t.db(), *other,
                                       security::new_secret_box_key_hex());
    CHECK(code_of(wrong) == errc::internal);
  }

  TEST_CASE_TEMPLATE("a signing key an older version stored in plain text "
                     "is sealed in place at start, and the tokens it signed "
                     "keep working",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.webhooks.secret_key = server_key;
    auto s = w.signup("owner@example.com");
    auto owner = w.user(s);
    // What the previous version stored: the base62 secret itself.
    core::account::signing_key plain{"oldkid123456",
                                     security::random_base62(64), 0, 0};
    REQUIRE(w.t.db().ensure_signing_key(plain).has_value());
    auto old_process = ring_of({security::jwt_key{plain.kid, plain.secret, 0}});
    auto old_token = token_of(*old_process, owner, w.now);

    w.jwt = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *w.jwt, server_key).has_value());
    CHECK(w.jwt->current_kid() == plain.kid);
    auto rows = w.t.db().signing_keys();
    REQUIRE(rows.has_value());
    REQUIRE(rows->size() == 1);
    CHECK(rows->front().secret.starts_with("x1."));
    CHECK(rows->front().secret.find(plain.secret) == std::string::npos);
    CHECK(w.who(old_token).has_value());
    CHECK(w.who(token_of(*w.jwt, owner, w.now)).has_value());
    // A second start (another process) opens what the first sealed.
    auto again = security::jwt_keyring::shared();
    REQUIRE(uc::load_signing_keys(w.t.db(), *again, server_key).has_value());
    CHECK(again->verify(old_token, w.now).has_value());
    auto same = w.t.db().signing_keys();
    REQUIRE(same.has_value());
    CHECK(same->front().secret == rows->front().secret);
  }
}
