#include "support.hpp"

#include <atomic>
#include <thread>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;

TEST_SUITE("storage.credits") {
  TEST_CASE_TEMPLATE("credits are added and taken with ledger entries",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 10);
    auto added = s.add_credits("o1", 5, "grant", "admin", 2000);
    REQUIRE(added.has_value());
    CHECK(added->balance == 15);
    CHECK(added->updated_at == 2000);
    auto taken = s.take_credits("o1", 4, "commit", "job-1", true, 3000);
    REQUIRE(taken.has_value());
    CHECK(taken->balance == 11);
    CHECK(taken->consumed == 4);
    auto reserved = s.take_credits("o1", 6, "reserve", "job-2", false, 3001);
    REQUIRE(reserved.has_value());
    CHECK(reserved->balance == 5);
    CHECK(reserved->consumed == 4);

    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries.has_value());
    REQUIRE(entries->size() == 4);
    CHECK_ENTRY((*entries)[0], {"reserve", -6, "job-2", 5, 3001});
    CHECK((*entries)[1].kind == "commit");
    CHECK_ENTRY((*entries)[2], {"grant", 5});
    CHECK((*entries)[3].kind == "signup");
    CHECK((*entries)[0].organization_id == "o1");
  }

  TEST_CASE_TEMPLATE("a refund gives back a consumed credit", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 3);
    REQUIRE(s.take_credits("o1", 1, "smtp_check", "a", true, 10).has_value());
    auto back = s.refund_credits("o1", 1, "smtp_refund", "a", 11);
    REQUIRE(back.has_value());
    CHECK(back->balance == 3);
    CHECK(back->consumed == 0);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries.has_value());
    CHECK_ENTRY((*entries)[0],
                {.kind = "smtp_refund", .delta = 1, .balance_after = 3});
    CHECK(
        s.refund_credits("o1", 0, "smtp_refund", "a", 12).error_value().code ==
        errc::validation_failed);
  }

  TEST_CASE_TEMPLATE("taking more than the balance fails and changes nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 3);
    auto r = s.take_credits("o1", 4, "commit", "x", true, 2000);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::insufficient_credits);
    CHECK(s.get_balance("o1")->balance == 3);
    CHECK(s.get_balance("o1")->consumed == 0);
    CHECK(s.list_credit_entries("o1", 10, 0)->size() == 1);
    auto all = s.take_credits("o1", 3, "commit", "x", true, 2000);
    REQUIRE(all.has_value());
    CHECK(all->balance == 0);
    CHECK(
        s.take_credits("o1", 1, "commit", "x", true, 2000).error_value().code ==
        errc::insufficient_credits);

    CHECK(s.take_credits("nope", 1, "commit", "x", true, 2000)
              .error_value()
              .code == errc::not_found);
    CHECK(s.add_credits("nope", 1, "grant", "", 2000).error_value().code ==
          errc::not_found);
    CHECK(s.get_balance("nope").error_value().code == errc::not_found);
    CHECK(
        s.take_credits("o1", 0, "commit", "x", true, 2000).error_value().code ==
        errc::validation_failed);
    CHECK(s.add_credits("o1", -1, "grant", "", 2000).error_value().code ==
          errc::validation_failed);
  }

  TEST_CASE_TEMPLATE("ledger pages go newest first before an id", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com", 7);
    for (int i = 1; i <= 5; ++i)
      REQUIRE(s.add_credits("o1", i, "grant", std::to_string(i), 2000 + i)
                  .has_value());
    auto page1 = s.list_credit_entries("o1", 2, 0);
    REQUIRE(page1.has_value());
    REQUIRE(page1->size() == 2);
    CHECK((*page1)[0].delta == 5);
    CHECK((*page1)[1].delta == 4);
    auto page2 = s.list_credit_entries("o1", 2, page1->back().id);
    REQUIRE(page2->size() == 2);
    CHECK((*page2)[0].delta == 3);
    CHECK((*page2)[1].delta == 2);
    auto page3 = s.list_credit_entries("o1", 2, page2->back().id);
    REQUIRE(page3->size() == 1);
    CHECK((*page3)[0].delta == 1);
    CHECK((*page3)[0].balance_after == 1);
    CHECK(s.list_credit_entries("o1", 0, 0)->empty());
    CHECK(s.list_credit_entries("nope", 10, 0)->empty());
  }

  TEST_CASE_TEMPLATE("concurrent takers never overspend", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    create_org(t.db(), "o1", "owner@example.com", 250);
    constexpr int threads_n = 4;
    constexpr int takes = 100;
    std::vector<std::unique_ptr<store>> stores;
    for (int i = 0; i < threads_n; ++i)
      stores.push_back(t.open_another());
    std::atomic<int> ok{0}, short_{0}, other{0};
    std::vector<std::string> errors(threads_n);
    std::vector<std::thread> threads;
    for (int i = 0; i < threads_n; ++i)
      threads.emplace_back([&, i] {
        for (int n = 0; n < takes; ++n) {
          auto r = stores[i]->take_credits("o1", 1, "commit", "t", true, 3000);
          if (r)
            ++ok;
          else if (r.error_value().code == errc::insufficient_credits)
            ++short_;
          else {
            ++other;
            errors[i] = r.error_value().message;
          }
        }
      });
    for (auto& th : threads)
      th.join();
    for (auto& e : errors)
      CHECK_MESSAGE(e.empty(), e);
    CHECK(ok.load() == 250);
    CHECK(short_.load() == threads_n * takes - 250);
    CHECK(other.load() == 0);
    auto b = t.db().get_balance("o1");
    REQUIRE(b.has_value());
    CHECK(b->balance == 0);
    CHECK(b->consumed == 250);
    auto entries = t.db().list_credit_entries("o1", 1000, 0);
    REQUIRE(entries.has_value());
    REQUIRE(entries->size() == 251);
    std::int64_t sum = 0;
    for (auto& e : *entries)
      sum += e.delta;
    CHECK(sum == 0);
    // Each entry's balance_after is the running balance, newest first.
    std::int64_t expected_after = 0;
    for (auto& e : *entries) {
      CHECK(e.balance_after == expected_after);
      expected_after -= e.delta;
    }
  }
}
