// The retention sweep's storage side (docs/privacy.md, "Retention"): which
// jobs are due, what an erase keeps, the claim that lets one process of
// several erase each job, and an organization's own retention.
#include "support.hpp"

#include <atomic>
#include <thread>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;
namespace batch = mailassay::core::batch;
using status = mailassay::core::validation::status;

namespace {

// A job of `org` with `n` addresses (none done), created at `at`.
void create_job(store& s, const std::string& id, const std::string& org,
                std::int64_t at, std::int64_t n = 3) {
  batch::job j;
  j.id = id;
  j.organization_id = org;
  j.file_name = id + ".csv";
  j.total_rows = n;
  j.unique_emails = n;
  j.created_at = at;
  std::vector<batch::item> items;
  for (std::int64_t i = 0; i < n; ++i) {
    batch::item it;
    it.seq = i;
    it.email = id + "-user" + std::to_string(i) + "@example.com";
    items.push_back(it);
  }
  auto r = s.create_batch_job(j, items);
  REQUIRE_MESSAGE(r.has_value(), why(r));
}

// Creates, claims and completes job `id` of `org` at `finished` with every
// row validated.
void finished_job(store& s, const std::string& id, const std::string& org,
                  std::int64_t finished, std::int64_t n = 3) {
  create_job(s, id, org, finished - 10, n);
  auto claimed = s.claim_batch_job("w", 60, finished - 5);
  REQUIRE_MESSAGE(claimed.has_value(), why(claimed));
  REQUIRE(claimed->has_value());
  REQUIRE((*claimed)->id == id);
  std::vector<batch::item> done;
  for (std::int64_t i = 0; i < n; ++i) {
    batch::item it;
    it.seq = i;
    it.done = true;
    it.status = status::valid;
    it.reason = "accepted_email";
    done.push_back(it);
  }
  REQUIRE(s.save_batch_results(id, "w", done, 60, finished - 1).has_value());
  REQUIRE(s.finish_batch_job(id, "w", batch::job_status::completed, finished)
              .has_value());
}

long long items_of(const test_db& t, const std::string& id) {
  return t.query_int("SELECT COUNT(*) FROM batch_items WHERE job_id = '" + id +
                     "'");
}

} // namespace

TEST_SUITE("storage.retention") {
  TEST_CASE_TEMPLATE("finished jobs at or before the cutoff lose their rows "
                     "and keep their record; active ones, later ones and "
                     "other organizations' stay",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    finished_job(s, "old", "o1", 1000);
    finished_job(s, "edge", "o1", 2000);
    finished_job(s, "new", "o1", 3000);
    finished_job(s, "theirs", "o2", 1000);
    create_job(s, "cancelled", "o1", 900);
    REQUIRE(s.cancel_batch_job("o1", "cancelled", 1500).has_value());
    create_job(s, "queued", "o1", 500); // active: never erased

    auto erased = s.erase_expired_batch_results("o1", 2000, 5000, 100);
    REQUIRE_MESSAGE(erased.has_value(), why(erased));
    CHECK(*erased == 3);
    for (auto id : {"old", "edge", "cancelled"}) {
      CAPTURE(id);
      CHECK(items_of(t, id) == 0);
      auto j = s.get_batch_job("o1", id);
      REQUIRE(j.has_value());
      CHECK(j->results_erased_at == 5000);
    }
    auto old = s.get_batch_job("o1", "old");
    CHECK(old->status == batch::job_status::completed);
    CHECK(old->processed == 3);
    CHECK(old->counts.valid == 3);
    CHECK(old->finished_at == 1000);
    CHECK(items_of(t, "new") == 3);
    CHECK_FALSE(s.get_batch_job("o1", "new")->results_erased_at.has_value());
    CHECK(items_of(t, "queued") == 3);
    CHECK(items_of(t, "theirs") == 3);
    CHECK(s.list_batch_jobs("o1", 10, std::nullopt)->size() == 5);
    // Done once: a second sweep erases nothing and keeps the first time.
    CHECK(*s.erase_expired_batch_results("o1", 2000, 6000, 100) == 0);
    CHECK(s.get_batch_job("o1", "old")->results_erased_at == 5000);
    // An erased job can still be deleted.
    CHECK(s.delete_batch_job("o1", "old", 7000).has_value());
  }

  TEST_CASE_TEMPLATE("a sweep erases at most `limit` jobs, oldest first",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    finished_job(s, "b", "o1", 200);
    finished_job(s, "a", "o1", 100);
    CHECK(*s.erase_expired_batch_results("o1", 1000, 2000, 1) == 1);
    CHECK(items_of(t, "a") == 0);
    CHECK(items_of(t, "b") == 3);
    CHECK(*s.erase_expired_batch_results("o1", 1000, 2000, 1) == 1);
    CHECK(items_of(t, "b") == 0);
  }

  TEST_CASE_TEMPLATE("processes sweeping at once erase each job exactly once",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    create_org(t.db(), "o1", "owner@example.com");
    constexpr int jobs = 12;
    for (int i = 0; i < jobs; ++i)
      finished_job(t.db(), std::string{"j"}.append(std::to_string(i)), "o1",
                   100 + i, 50);
    auto a = t.open_another();
    auto b = t.open_another();
    std::atomic<int> ready{0};
    std::int64_t counts[2] = {0, 0};
    std::string errors[2];
    auto sweep = [&](int i, store& s) {
      ++ready;
      while (ready.load() < 2)
        std::this_thread::yield();
      // Small calls, so the two interleave.
      for (;;) {
        auto n = s.erase_expired_batch_results("o1", 1000, 2000, 2);
        if (!n) {
          errors[i] = n.error_value().message;
          break;
        }
        if (*n == 0)
          break;
        counts[i] += *n;
      }
    };
    std::thread t1{sweep, 0, std::ref(*a)};
    std::thread t2{sweep, 1, std::ref(*b)};
    t1.join();
    t2.join();
    CHECK_MESSAGE(errors[0].empty(), errors[0]);
    CHECK_MESSAGE(errors[1].empty(), errors[1]);
    CHECK(counts[0] + counts[1] == jobs);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items") == 0);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs WHERE "
                      "results_erased_at IS NULL") == 0);
  }

  TEST_CASE_TEMPLATE("an organization's own retention is stored, listed and "
                     "cleared",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    CHECK_FALSE(s.get_organization("o1")->batch_retention_seconds.has_value());
    auto set = s.set_batch_retention("o1", 3600);
    REQUIRE_MESSAGE(set.has_value(), why(set));
    CHECK(set->batch_retention_seconds == 3600);
    CHECK(s.get_organization("o1")->batch_retention_seconds == 3600);
    auto policies = s.list_retention_policies();
    REQUIRE_MESSAGE(policies.has_value(), why(policies));
    REQUIRE(policies->size() == 2);
    for (const auto& p : *policies)
      CHECK(p.batch_retention_seconds ==
            (p.organization_id == "o1" ? std::optional<std::int64_t>{3600}
                                       : std::nullopt));
    REQUIRE(s.set_batch_retention("o1", std::nullopt).has_value());
    CHECK_FALSE(s.get_organization("o1")->batch_retention_seconds.has_value());
    CHECK(s.set_batch_retention("nobody", 60).error_value().code ==
          errc::not_found);
  }
}
