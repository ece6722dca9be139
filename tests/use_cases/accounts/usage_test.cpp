#include "core/base/time_format.hpp"
#include "tests/use_cases/fixture.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;
namespace acc = core::account;

TEST_SUITE("use_cases.accounts.usage") {
  TEST_CASE_TEMPLATE("an organization's usage sums its keys over the window, "
                     "busiest key first",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto other = w.user(w.signup("other@example.com", "Other"));
    auto e = w.env();
    uc::new_key_input live;
    live.name = "live";
    uc::new_key_input test = live;
    test.name = "test";
    test.test = true;
    auto a = uc::create_key(e, owner, live);
    auto b = uc::create_key(e, owner, test);
    auto c = uc::create_key(e, other, live);
    REQUIRE((a && b && c));
    auto org = owner.organization_id();
    auto today = core::utc_day(w.now);
    auto yesterday = core::utc_day(w.now - 86400);
    auto long_ago = core::utc_day(w.now - 40 * 86400);
    REQUIRE(
        w.t.db()
            .add_usage({
                {a->key.id, org, today, 5, 4, 4, {"h1", "h2"}},
                {a->key.id, org, yesterday, 3, 3, 3, {"h1"}},
                {b->key.id, org, today, 10, 10, 0, {"h3"}},
                {a->key.id, org, long_ago, 100, 100, 100, {"h9"}},
                {c->key.id, other.organization_id(), today, 50, 50, 50, {"h1"}},
            })
            .has_value());

    auto u = uc::usage_of_organization(e, owner, 7);
    REQUIRE_MESSAGE(u.has_value(), storage::testing::why(u));
    CHECK(u->days == 7);
    CHECK(u->totals.total_requests == 18);
    CHECK(u->totals.top_emails == 3);
    CHECK(u->totals.credits_consumed == 7);
    CHECK(u->totals.requests_by_day.size() == 7);
    REQUIRE(u->keys.size() == 2);
    CHECK(u->keys[0].id == b->key.id);
    CHECK(u->keys[0].name == "test");
    CHECK(u->keys[0].test);
    CHECK(u->keys[0].requests == 10);
    CHECK(u->keys[1].id == a->key.id);
    CHECK_FALSE(u->keys[1].test);
    CHECK(u->keys[1].requests == 8);
    CHECK(u->keys[1].successful == 7);
    CHECK(u->keys[1].credits == 7);
  }

  TEST_CASE_TEMPLATE("a window outside 1..365 days is a validation failure",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto e = w.env();
    CHECK(code_of(uc::usage_of_organization(e, owner, 0)) ==
          errc::validation_failed);
    CHECK(code_of(uc::usage_of_organization(e, owner, 366)) ==
          errc::validation_failed);
    auto empty = uc::usage_of_organization(e, owner, 365);
    REQUIRE(empty.has_value());
    CHECK(empty->keys.empty());
    CHECK(empty->totals.total_requests == 0);
  }

  TEST_CASE_TEMPLATE("credits: the balance and the ledger of the caller's "
                     "organization only",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    w.cfg.credits.signup_grant = 40;
    auto a = w.user(w.signup("a@example.com", "A"));
    w.cfg.credits.signup_grant = 7;
    auto b = w.user(w.signup("b@example.com", "B"));
    auto e = w.env();
    auto ba = uc::balance(e, a);
    auto bb = uc::balance(e, b);
    REQUIRE((ba && bb));
    CHECK(ba->balance == 40);
    CHECK(bb->balance == 7);
    auto ledger = uc::transactions(e, a, 50, 0);
    REQUIRE(ledger.has_value());
    REQUIRE(ledger->size() == 1);
    CHECK(ledger->front().delta == 40);
    CHECK(ledger->front().organization_id == a.organization_id());
  }
}
