#include "tests/use_cases/fixture.hpp"

using namespace mailassay;
using namespace mailassay::use_cases::testing;
using core::errc;
namespace acc = core::account;

namespace {

// Adds `email` with `r` to the organization of `by`; requires success.
acc::member add(world& w, const uc::principal& by, const std::string& email,
                acc::role r) {
  auto e = w.env();
  auto m = uc::add_member(e, by, {email, "member password", "Mem", r});
  REQUIRE_MESSAGE(m.has_value(), storage::testing::why(m));
  return *m;
}

// The principal of `email` after a login with the member password.
uc::principal login(world& w, const std::string& email) {
  auto e = w.env();
  auto s = uc::login(e, email, "member password");
  REQUIRE_MESSAGE(s.has_value(), storage::testing::why(s));
  return w.user(*s);
}

} // namespace

TEST_SUITE("use_cases.accounts.members") {
  TEST_CASE_TEMPLATE("owners and admins add members; only owners add owners; "
                     "members add nobody",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto m = add(w, owner, "Admin@Example.com", acc::role::admin);
    CHECK(m.person.email == "admin@example.com");
    CHECK(m.organization_id == owner.organization_id());
    CHECK(m.member_role == acc::role::admin);
    auto admin = login(w, "admin@example.com");
    CHECK(admin.role == acc::role::admin);

    auto e = w.env();
    auto as_owner = uc::add_member(
        e, admin, {"o2@example.com", "pw", "O", acc::role::owner});
    CHECK(code_of(as_owner) == errc::forbidden);
    CHECK(message_of(as_owner) == "Only owners can add owners");
    add(w, admin, "member@example.com", acc::role::member);
    auto member = login(w, "member@example.com");
    auto by_member = uc::add_member(
        e, member, {"x@example.com", "pw", "X", acc::role::member});
    CHECK(code_of(by_member) == errc::forbidden);
    CHECK(message_of(by_member) == "Only owners and admins can manage members");
    auto dup = uc::add_member(
        e, owner, {"MEMBER@example.com", "pw", "M", acc::role::member});
    CHECK(code_of(dup) == errc::conflict);

    auto all = uc::list_members(e, member);
    REQUIRE(all.has_value());
    CHECK(all->size() == 3);
    auto org = uc::organization(e, member);
    REQUIRE(org.has_value());
    CHECK(org->members == 3);
    CHECK(org->balance.balance == w.cfg.credits.signup_grant);
  }

  TEST_CASE_TEMPLATE("a role changes at once: the next request of a demoted "
                     "admin is a member's",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto owner = w.user(w.signup("owner@example.com"));
    auto m = add(w, owner, "admin@example.com", acc::role::admin);
    auto e = w.env();
    auto s = uc::login(e, "admin@example.com", "member password");
    REQUIRE(s.has_value());
    auto changed =
        uc::change_member_role(e, owner, m.person.id, acc::role::member);
    REQUIRE(changed.has_value());
    CHECK(changed->member_role == acc::role::member);
    // The same access token, read again: the role comes from storage.
    CHECK(w.user(*s).role == acc::role::member);
    auto admin = w.user(*s);
    auto promote =
        uc::change_member_role(e, admin, owner.user_id, acc::role::member);
    CHECK(code_of(promote) == errc::forbidden);
  }

  TEST_CASE_TEMPLATE("another organization's member is not found, exactly "
                     "like an unknown id",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto a = w.user(w.signup("a@example.com", "A"));
    auto b = w.user(w.signup("b@example.com", "B"));
    auto e = w.env();
    auto other = uc::change_member_role(e, a, b.user_id, acc::role::member);
    auto unknown = uc::change_member_role(e, a, "usr_nope", acc::role::member);
    CHECK(code_of(other) == errc::not_found);
    CHECK(message_of(other) == "Member not found");
    CHECK(message_of(unknown) == message_of(other));
    CHECK(code_of(uc::remove_member(e, a, b.user_id)) == errc::not_found);
    // B is untouched.
    auto still = uc::list_members(e, b);
    REQUIRE(still.has_value());
    REQUIRE(still->size() == 1);
    CHECK(still->front().member_role == acc::role::owner);
  }

  TEST_CASE_TEMPLATE("a removed member's token stops authenticating; the "
                     "last owner stays",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_USE_CASE_WORLD(w);
    auto s = w.signup("owner@example.com");
    auto owner = w.user(s);
    auto m = add(w, owner, "member@example.com", acc::role::member);
    auto e = w.env();
    auto ms = uc::login(e, "member@example.com", "member password");
    REQUIRE(ms.has_value());
    auto member = w.user(*ms);
    CHECK(code_of(uc::remove_member(e, member, owner.user_id)) ==
          errc::forbidden);
    REQUIRE(uc::remove_member(e, owner, m.person.id).has_value());
    CHECK(code_of(w.who(ms->access_token)) == errc::unauthorized);
    CHECK_FALSE(uc::remove_member(e, owner, owner.user_id).has_value());
    CHECK(w.user(s).role == acc::role::owner);
  }
}
