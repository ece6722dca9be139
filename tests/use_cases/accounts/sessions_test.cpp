#include "tests/use_cases/fixture.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;
namespace acc = core::account;

TEST_SUITE("use_cases.accounts.sessions") {
  TEST_CASE_TEMPLATE("a sign-up creates the organization, its owner, the "
                     "grant and a session whose token authenticates",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.credits.signup_grant = 250;
    auto s = w.signup("Ann@Example.COM");
    CHECK(s.person.email == "ann@example.com");
    CHECK(s.org.name == "Acme");
    CHECK(s.role == acc::role::owner);
    CHECK(s.expires_in == w.cfg.auth.access_ttl_seconds);
    CHECK_FALSE(s.refresh_token.empty());

    auto who = w.user(s);
    CHECK(who.type == uc::principal::kind::user);
    CHECK(who.user_id == s.person.id);
    CHECK(who.organization_id() == s.org.id);
    CHECK(who.role == acc::role::owner);
    auto e = w.env();
    auto balance = uc::balance(e, who);
    REQUIRE(balance.has_value());
    CHECK(balance->balance == 250);
    auto me = uc::me(e, who);
    REQUIRE(me.has_value());
    REQUIRE(me->person.has_value());
    CHECK(me->person->email == "ann@example.com");
    CHECK(me->org.id == s.org.id);
  }

  TEST_CASE_TEMPLATE("a second sign-up with the same email in any case is a "
                     "conflict",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.signup("ann@example.com");
    auto e = w.env();
    auto again =
        uc::signup(e, {"Other", "ANN@example.com", "another one", "Ann"});
    CHECK(code_of(again) == errc::conflict);
    CHECK(message_of(again) == "An account with this email already exists");
  }

  TEST_CASE_TEMPLATE("a sign-up is refused while sign-ups are disabled",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.auth.signup_enabled = false;
    auto e = w.env();
    auto s = uc::signup(e, {"Acme", "ann@example.com", "correct horse", "A"});
    CHECK(code_of(s) == errc::forbidden);
    CHECK(message_of(s) == "Sign-up is disabled on this server");
  }

  TEST_CASE_TEMPLATE("a login with the right password opens a session; a "
                     "wrong password and an unknown email get the same 401",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto first = w.signup("ann@example.com");
    auto e = w.env();
    auto ok = uc::login(e, "ANN@example.com", "correct horse");
    REQUIRE_MESSAGE(ok.has_value(), storage::testing::why(ok));
    CHECK(ok->person.id == first.person.id);
    CHECK(ok->refresh_token != first.refresh_token);
    auto wrong = uc::login(e, "ann@example.com", "wrong horse");
    auto unknown = uc::login(e, "bob@example.com", "correct horse");
    CHECK(code_of(wrong) == errc::unauthorized);
    CHECK(code_of(unknown) == errc::unauthorized);
    CHECK(message_of(wrong) == message_of(unknown));
  }

  TEST_CASE_TEMPLATE("a refresh token spent twice ends its whole login",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s1 = w.signup("ann@example.com");
    auto e = w.env();
    auto s2 = uc::refresh(e, s1.refresh_token);
    REQUIRE_MESSAGE(s2.has_value(), storage::testing::why(s2));
    CHECK(s2->person.id == s1.person.id);
    CHECK(s2->refresh_token != s1.refresh_token);
    // The first token again: a replay, so the family is revoked and the
    // token just issued dies with it.
    CHECK(code_of(uc::refresh(e, s1.refresh_token)) == errc::unauthorized);
    CHECK(code_of(uc::refresh(e, s2->refresh_token)) == errc::unauthorized);
    // Another login is another family.
    auto other = uc::login(e, "ann@example.com", "correct horse");
    REQUIRE(other.has_value());
    CHECK(uc::refresh(e, other->refresh_token).has_value());
  }

  TEST_CASE_TEMPLATE("a refresh token past its lifetime is refused", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("ann@example.com");
    w.now += w.cfg.auth.refresh_ttl_seconds;
    auto e = w.env();
    CHECK(code_of(uc::refresh(e, s.refresh_token)) == errc::unauthorized);
    CHECK(code_of(uc::refresh(e, "not-a-token")) == errc::unauthorized);
  }

  TEST_CASE_TEMPLATE("a logout revokes the login's refresh tokens; logging "
                     "out twice or with an unknown token is no error",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("ann@example.com");
    auto e = w.env();
    CHECK(uc::logout(e, s.refresh_token).has_value());
    CHECK(code_of(uc::refresh(e, s.refresh_token)) == errc::unauthorized);
    CHECK(uc::logout(e, s.refresh_token).has_value());
    CHECK(uc::logout(e, "never-issued").has_value());
  }

  TEST_CASE_TEMPLATE("an access token expires after its lifetime", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("ann@example.com");
    w.now += w.cfg.auth.access_ttl_seconds + 1;
    CHECK(code_of(w.who(s.access_token)) == errc::unauthorized);
  }
}
