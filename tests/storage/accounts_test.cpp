#include "support.hpp"

#include "storage/migrations.hpp"

#include <algorithm>
#include <atomic>
#include <thread>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;

TEST_SUITE("storage.accounts") {
  TEST_CASE_TEMPLATE("opening an already migrated database twice is harmless",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    create_org(t.db(), "o1", "a@example.com", 5);
    auto again = t.open_another();
    auto third = t.open_another();
    CHECK(again->ping().has_value());
    CHECK(third->backend_name() == t.db().backend_name());
    auto org = third->get_organization("o1");
    REQUIRE(org.has_value());
    CHECK(org->name == "Org o1");
    const auto& all = all_migrations();
    CHECK(t.query_int("SELECT COUNT(*) FROM schema_migrations") ==
          static_cast<long long>(all.size()));
    CHECK(t.query_int("SELECT MAX(version) FROM schema_migrations") ==
          all.back().version);
  }

  TEST_CASE_TEMPLATE("stores opened at once on a fresh database all migrate",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    // Nothing migrated yet: several processes start on it at once. Eight at
    // once, on many fresh SQLite files: two that switch a new file to WAL
    // together can lose to each other, and one round rarely shows it.
    int rounds = TestType::kind == dialect::sqlite ? 30 : 2;
    for (int round = 0; round < rounds; ++round) {
      test_db fresh{TestType::kind, false};
      if (fresh.skipped())
        return;
      std::string url = fresh.url();
      std::vector<std::thread> threads;
      std::vector<int> ok(8, 0);
      std::vector<std::string> errors(8);
      for (int i = 0; i < 8; ++i)
        threads.emplace_back([&, i] {
          auto s = open_store(url);
          ok[i] = s.has_value() && (*s)->ping().has_value();
          if (!s)
            errors[i] = s.error_value().message;
        });
      for (auto& th : threads)
        th.join();
      for (int i = 0; i < 8; ++i)
        CHECK_MESSAGE(ok[i] == 1, errors[i]);
      auto again = open_store(url);
      REQUIRE(again.has_value());
      create_org(**again, "o1", "a@example.com");
    }
  }

  TEST_CASE_TEMPLATE("an organization starts with its owner and signup credits",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    auto f = create_org(s, "o1", "owner@example.com", 100);
    auto m = s.find_member_by_email("owner@example.com");
    REQUIRE(m.has_value());
    CHECK(m->person.id == f.owner.id);
    CHECK(m->person.name == f.owner.name);
    CHECK(m->person.password_hash == f.owner.password_hash);
    CHECK(m->person.created_at == 1000);
    CHECK(m->organization_id == "o1");
    CHECK(m->member_role == acc::role::owner);
    auto b = s.get_balance("o1");
    REQUIRE(b.has_value());
    CHECK(b->balance == 100);
    CHECK(b->consumed == 0);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries.has_value());
    REQUIRE(entries->size() == 1);
    CHECK_ENTRY((*entries)[0],
                {.kind = "signup", .delta = 100, .balance_after = 100});

    create_org(s, "o2", "zero@example.com", 0);
    auto none = s.list_credit_entries("o2", 10, 0);
    REQUIRE(none.has_value());
    CHECK(none->empty());
  }

  TEST_CASE_TEMPLATE("a duplicate email is a conflict and writes nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "a@example.com", 10);
    auto f = make_org("o2", "a@example.com");
    auto r = s.create_organization(f.org, f.owner, 50, 1000);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::conflict);
    // The organization row went in before the user failed: rolled back.
    CHECK(s.get_organization("o2").error_value().code == errc::not_found);
    CHECK(s.get_balance("o2").error_value().code == errc::not_found);
    CHECK(s.find_member("u-o2").error_value().code == errc::not_found);
    auto orgs = s.list_organizations();
    REQUIRE(orgs.has_value());
    CHECK(orgs->size() == 1);
    // The same organization id twice is a conflict too.
    auto g = make_org("o1", "other@example.com");
    CHECK(s.create_organization(g.org, g.owner, 0, 1000).error_value().code ==
          errc::conflict);
    CHECK(s.find_member_by_email("other@example.com").error_value().code ==
          errc::not_found);
  }

  TEST_CASE_TEMPLATE("members are added, found and listed oldest first",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    REQUIRE(s.add_member("o1", make_user("u3", "c@example.com", 3000),
                         acc::role::member)
                .has_value());
    REQUIRE(s.add_member("o1", make_user("u2", "b@example.com", 2000),
                         acc::role::admin)
                .has_value());
    auto dup =
        s.add_member("o1", make_user("u4", "b@example.com"), acc::role::member);
    CHECK(dup.error_value().code == errc::conflict);
    auto lost = s.add_member("nope", make_user("u5", "e@example.com"),
                             acc::role::member);
    CHECK(lost.error_value().code == errc::not_found);
    CHECK(s.find_member("u5").error_value().code == errc::not_found);

    auto members = s.list_members("o1");
    REQUIRE(members.has_value());
    REQUIRE(members->size() == 3);
    CHECK((*members)[0].person.id == "u-o1");
    CHECK((*members)[1].person.id == "u2");
    CHECK((*members)[1].member_role == acc::role::admin);
    CHECK((*members)[2].person.id == "u3");
    CHECK(s.list_members("nope").error_value().code == errc::not_found);

    auto m = s.find_member("u2");
    REQUIRE(m.has_value());
    CHECK(m->person.email == "b@example.com");
    CHECK(m->organization_id == "o1");
    CHECK(s.find_member_by_email("B@example.com").error_value().code ==
          errc::not_found);

    auto orgs = s.list_organizations();
    REQUIRE(orgs.has_value());
    REQUIRE(orgs->size() == 2);
    CHECK((*orgs)[0].org.id == "o1");
    CHECK((*orgs)[0].members == 3);
    CHECK((*orgs)[1].members == 1);
    CHECK(s.get_organization("nope").error_value().code == errc::not_found);
  }

  TEST_CASE_TEMPLATE("the last owner can be neither demoted nor removed",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "owner2@example.com");
    REQUIRE(
        s.add_member("o1", make_user("u2", "b@example.com"), acc::role::member)
            .has_value());

    auto demote = s.update_member_role("o1", "u-o1", acc::role::admin);
    REQUIRE_FALSE(demote.has_value());
    CHECK(demote.error_value().code == errc::conflict);
    CHECK(demote.error_value().message == "organization must keep an owner");
    auto remove = s.remove_member("o1", "u-o1");
    CHECK(remove.error_value().code == errc::conflict);
    CHECK(s.find_member("u-o1")->member_role == acc::role::owner);

    // Another organization's member is not found from here.
    CHECK(s.update_member_role("o1", "u-o2", acc::role::member)
              .error_value()
              .code == errc::not_found);
    CHECK(s.remove_member("o1", "u-o2").error_value().code == errc::not_found);
    CHECK(s.find_member("u-o2")->member_role == acc::role::owner);

    // With a second owner, the first may step down.
    REQUIRE(s.update_member_role("o1", "u2", acc::role::owner).has_value());
    REQUIRE(s.update_member_role("o1", "u-o1", acc::role::member).has_value());
    CHECK(s.find_member("u-o1")->member_role == acc::role::member);
    CHECK(s.remove_member("o1", "u2").error_value().code == errc::conflict);
    REQUIRE(s.remove_member("o1", "u-o1").has_value());
    CHECK(s.find_member("u-o1").error_value().code == errc::not_found);
    CHECK(s.list_members("o1")->size() == 1);
  }

  TEST_CASE_TEMPLATE("two owners demoting each other at once keep one owner",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    for (int round = 0; round < 5; ++round) {
      auto id = std::string{"o"}.append(std::to_string(round));
      create_org(s, id, id + "@example.com");
      REQUIRE(s.add_member(id, make_user(id + "-b", id + "b@example.com"),
                           acc::role::owner)
                  .has_value());
      auto a = t.open_another();
      auto b = t.open_another();
      std::thread ta(
          [&] { a->update_member_role(id, "u-" + id, acc::role::admin); });
      std::thread tb([&] { b->remove_member(id, id + "-b"); });
      ta.join();
      tb.join();
      auto members = s.list_members(id);
      REQUIRE(members.has_value());
      CHECK(std::count_if(members->begin(), members->end(), [](auto& m) {
              return m.member_role == acc::role::owner;
            }) == 1);
    }
  }

  TEST_CASE_TEMPLATE("removing a member removes its refresh tokens", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    REQUIRE(
        s.add_member("o1", make_user("u2", "b@example.com"), acc::role::admin)
            .has_value());
    acc::refresh_token tok{"t1", "th1", "f1",  "u2", "o1",
                           9999, false, false, 1000};
    REQUIRE(s.insert_refresh_token(tok).has_value());
    REQUIRE(s.remove_member("o1", "u2").has_value());
    CHECK(s.find_refresh_token("th1").error_value().code == errc::not_found);
    CHECK(s.find_member_by_email("b@example.com").error_value().code ==
          errc::not_found);
  }

  TEST_CASE_TEMPLATE("a refresh token is stored by hash and spent only once",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    acc::refresh_token tok{"t1", "th1", "fam", "u-o1", "o1",
                           5000, false, false, 1000};
    REQUIRE(s.insert_refresh_token(tok).has_value());
    auto dup = tok;
    dup.id = "t2";
    CHECK(s.insert_refresh_token(dup).error_value().code == errc::conflict);

    auto found = s.find_refresh_token("th1");
    REQUIRE(found.has_value());
    CHECK(found->id == "t1");
    CHECK(found->family_id == "fam");
    CHECK(found->user_id == "u-o1");
    CHECK(found->organization_id == "o1");
    CHECK(found->expires_at == 5000);
    CHECK(found->created_at == 1000);
    CHECK_FALSE(found->spent);
    CHECK_FALSE(found->revoked);

    auto first = s.spend_refresh_token("t1");
    REQUIRE(first.has_value());
    CHECK(*first);
    auto second = s.spend_refresh_token("t1");
    REQUIRE(second.has_value());
    CHECK_FALSE(*second);
    CHECK(s.find_refresh_token("th1")->spent);
    CHECK(s.spend_refresh_token("missing").error_value().code ==
          errc::not_found);
    CHECK(s.find_refresh_token("missing").error_value().code ==
          errc::not_found);
  }

  TEST_CASE_TEMPLATE("concurrent spenders of one refresh token: one wins",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    create_org(t.db(), "o1", "owner@example.com");
    for (int round = 0; round < 5; ++round) {
      auto id = std::string{"t"}.append(std::to_string(round));
      REQUIRE(t.db()
                  .insert_refresh_token({id, "h" + id, "fam", "u-o1", "o1",
                                         5000, false, false, 1000})
                  .has_value());
      std::vector<std::unique_ptr<store>> stores;
      for (int i = 0; i < 4; ++i)
        stores.push_back(t.open_another());
      std::atomic<int> wins{0}, errors{0};
      std::vector<std::thread> threads;
      for (int i = 0; i < 4; ++i)
        threads.emplace_back([&, i] {
          auto r = stores[i]->spend_refresh_token(id);
          if (!r)
            ++errors;
          else if (*r)
            ++wins;
        });
      for (auto& th : threads)
        th.join();
      CHECK(wins.load() == 1);
      CHECK(errors.load() == 0);
    }
  }

  TEST_CASE_TEMPLATE("revoking a family revokes its tokens and no others",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    for (auto [id, fam] :
         {std::pair{"t1", "f1"}, std::pair{"t2", "f1"}, std::pair{"t3", "f2"}})
      REQUIRE(s.insert_refresh_token({id, std::string{"h"} + id, fam, "u-o1",
                                      "o1", 5000, false, false, 1000})
                  .has_value());
    REQUIRE(s.revoke_token_family("f1").has_value());
    CHECK(s.find_refresh_token("ht1")->revoked);
    CHECK(s.find_refresh_token("ht2")->revoked);
    CHECK_FALSE(s.find_refresh_token("ht3")->revoked);
    // A revoked token cannot be spent.
    CHECK_FALSE(*s.spend_refresh_token("t2"));
    CHECK(*s.spend_refresh_token("t3"));
    CHECK(s.revoke_token_family("unknown").has_value());
  }
}
