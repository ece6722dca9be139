#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <set>
#include <thread>

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;
namespace batch = mailassay::core::batch;
using status = mailassay::core::validation::status;

namespace {

// `prefix` followed by `n`; appended, because GCC 12 warns falsely
// (-Wrestrict) on "literal" + std::to_string(n).
std::string numbered(std::string prefix, std::int64_t n) {
  return prefix.append(std::to_string(n));
}

// A job of `organization_id` with `emails` addresses and `invalid` invalid
// rows, as the intake builds it (processed = counts.invalid = invalid rows).
batch::job make_job(const std::string& id, const std::string& organization_id,
                    std::int64_t created_at, std::int64_t emails = 3,
                    std::int64_t invalid = 0, std::int64_t reserve = 0) {
  batch::job j;
  j.id = id;
  j.organization_id = organization_id;
  j.file_name = "list-" + id + ".csv";
  j.smtp = reserve > 0;
  j.deduplicate = true;
  j.email_column = "Email";
  j.total_rows = emails + invalid + 2;
  j.unique_emails = emails;
  j.duplicates_removed = 2;
  j.invalid_rows = invalid;
  j.processed = invalid;
  j.counts.invalid = invalid;
  j.credits_reserved = reserve;
  j.created_at = created_at;
  return j;
}

// Items of `j`: invalid rows first, then its addresses (seq 0..n-1).
std::vector<batch::item> make_items(const batch::job& j) {
  std::vector<batch::item> out;
  std::int64_t seq = 0;
  for (std::int64_t i = 0; i < j.invalid_rows; ++i) {
    batch::item it;
    it.seq = seq++;
    it.email = i == 0 ? "" : numbered("not an address ", i);
    it.done = true;
    it.status = status::invalid;
    it.reason = "invalid_syntax";
    it.detail = R"({"syntax":false})";
    out.push_back(it);
  }
  for (std::int64_t i = 0; i < j.unique_emails; ++i) {
    batch::item it;
    it.seq = seq++;
    it.email = numbered("user", i) + "@example.com";
    out.push_back(it);
  }
  return out;
}

// A result for item `seq`.
batch::item result(std::int64_t seq, status state, std::int64_t credits = 0) {
  batch::item it;
  it.seq = seq;
  it.done = true;
  it.status = state;
  it.reason = state == status::valid ? "accepted_email" : "other";
  it.score = state == status::valid ? 95 : 40;
  it.detail = R"({"smtp":{"deliverable":"yes \"really\""},"note":"a\\b"})";
  it.credits = credits;
  return it;
}

void create(store& s, const batch::job& j) {
  auto r = s.create_batch_job(j, make_items(j));
  REQUIRE_MESSAGE(r.has_value(), why(r));
}

batch::job claim(store& s, const std::string& owner, std::int64_t now,
                 std::int64_t lease = 15) {
  auto r = s.claim_batch_job(owner, lease, now);
  REQUIRE_MESSAGE(r.has_value(), why(r));
  REQUIRE(r->has_value());
  return **r;
}

std::vector<std::int64_t> seqs(const std::vector<batch::item>& items) {
  std::vector<std::int64_t> out;
  for (const auto& it : items)
    out.push_back(it.seq);
  return out;
}

} // namespace

TEST_SUITE("storage.batch") {
  TEST_CASE_TEMPLATE("a job is stored, read back and listed newest first",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    create_org(s, "o2", "other@example.com");
    auto first = make_job("j1", "o1", 5000, 4, 2, 4);
    create(s, first);

    auto got = s.get_batch_job("o1", "j1");
    REQUIRE_MESSAGE(got.has_value(), why(got));
    CHECK(got->id == "j1");
    CHECK(got->organization_id == "o1");
    CHECK(got->status == batch::job_status::queued);
    CHECK(got->file_name == "list-j1.csv");
    CHECK(got->smtp);
    CHECK(got->deduplicate);
    CHECK_FALSE(got->sandbox);
    CHECK(got->email_column == "Email");
    CHECK(got->total_rows == 8);
    CHECK(got->unique_emails == 4);
    CHECK(got->duplicates_removed == 2);
    CHECK(got->invalid_rows == 2);
    CHECK(got->processed == 2);
    CHECK(got->counts.invalid == 2);
    CHECK(got->counts.valid == 0);
    CHECK(got->credits_reserved == 4);
    CHECK(got->credits_used == 0);
    CHECK(got->created_at == 5000);
    CHECK_FALSE(got->started_at.has_value());
    CHECK_FALSE(got->finished_at.has_value());
    CHECK(got->lease_owner.empty());
    CHECK(got->lease_expires_at == 0);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items "
                      "WHERE job_id = 'j1'") == 6);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items "
                      "WHERE job_id = 'j1' AND done = 1") == 2);

    REQUIRE(s.cancel_batch_job("o1", "j1", 5001).has_value());
    create(s, make_job("j2", "o1", 6000));
    auto listed = s.list_batch_jobs("o1", 10, std::nullopt);
    REQUIRE_MESSAGE(listed.has_value(), why(listed));
    REQUIRE(listed->size() == 2);
    CHECK((*listed)[0].id == "j2");
    CHECK((*listed)[1].id == "j1");
    CHECK((*listed)[1].status == batch::job_status::cancelled);
    auto newest = s.list_batch_jobs("o1", 1, std::nullopt);
    REQUIRE(newest->size() == 1);
    CHECK(newest->front().id == "j2");
    CHECK(s.list_batch_jobs("o1", 0, std::nullopt)->empty());
    CHECK(s.list_batch_jobs("o2", 10, std::nullopt)->empty());

    CHECK(s.get_batch_job("o2", "j1").error_value().code == errc::not_found);
    CHECK(s.get_batch_job("o1", "nope").error_value().code == errc::not_found);
    CHECK(s.cancel_batch_job("o2", "j2", 7000).error_value().code ==
          errc::not_found);
    CHECK(s.get_batch_job("o1", "j2")->status == batch::job_status::queued);
  }

  TEST_CASE_TEMPLATE("a test key's job stays a sandbox job when read, "
                     "listed and claimed",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    auto j = make_job("js", "o1", 5000);
    j.sandbox = true;
    j.smtp = true;
    create(s, j);
    CHECK(s.get_batch_job("o1", "js")->sandbox);
    CHECK(s.list_batch_jobs("o1", 10, std::nullopt)->front().sandbox);
    auto claimed = claim(s, "p1", 5001);
    CHECK(claimed.id == "js");
    CHECK(claimed.sandbox);
    CHECK(claimed.smtp);
    CHECK(t.query_int("SELECT sandbox FROM batch_jobs WHERE id = 'js'") == 1);
    // Nothing was reserved: the balance is the signup grant.
    CHECK(s.get_balance("o1")->balance == 100);

    // A key lists only the jobs of its mode (a live one, once the sandbox
    // job is cancelled: one active job per organization).
    REQUIRE(s.cancel_batch_job("o1", "js", 5002));
    create(s, make_job("jl", "o1", 5003));
    auto sandbox_only = s.list_batch_jobs("o1", 10, true);
    REQUIRE(sandbox_only->size() == 1);
    CHECK(sandbox_only->front().id == "js");
    auto live_only = s.list_batch_jobs("o1", 10, false);
    REQUIRE(live_only->size() == 1);
    CHECK(live_only->front().id == "jl");
    CHECK(s.list_batch_jobs("o1", 10, std::nullopt)->size() == 2);
  }

  TEST_CASE_TEMPLATE("item text is stored verbatim", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    const std::vector<std::string> cells = {"",
                                            "NULL",
                                            "a,b@example.com",
                                            "{x}@example.com",
                                            "\"q\"@x.y",
                                            "back\\slash",
                                            "it's@example.com",
                                            "  spaced  ",
                                            "ünï@çødé.example",
                                            "tab\there",
                                            "line\nbreak",
                                            "{\"a\":[1,\"}\"]}"};
    auto j = make_job("j1", "o1", 100, 0, 0);
    std::vector<batch::item> items;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      batch::item it;
      it.seq = static_cast<std::int64_t>(i);
      it.email = cells[i];
      if (i % 2 == 0) {
        it.done = true;
        it.status = status::invalid;
        it.reason = cells[i];
        it.detail = cells[i];
        it.score = -1;
      }
      items.push_back(it);
    }
    j.unique_emails = static_cast<std::int64_t>(cells.size()) / 2;
    j.invalid_rows = static_cast<std::int64_t>(cells.size()) / 2;
    auto r = s.create_batch_job(j, items);
    REQUIRE_MESSAGE(r.has_value(), why(r));
    claim(s, "w", 1000);
    std::vector<batch::item> done;
    for (std::size_t i = 1; i < cells.size(); i += 2) {
      auto res = result(static_cast<std::int64_t>(i), status::unknown);
      res.reason = cells[i];
      res.detail = cells[i];
      done.push_back(res);
    }
    REQUIRE(s.save_batch_results("j1", "w", done, 15, 1001).has_value());

    auto back = s.batch_items("j1", -1, 100, false, {});
    REQUIRE_MESSAGE(back.has_value(), why(back));
    REQUIRE(back->size() == cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      CAPTURE(i);
      const auto& it = (*back)[i];
      CHECK(it.email == cells[i]);
      CHECK(it.reason == cells[i]);
      CHECK(it.detail == cells[i]);
      CHECK(it.done);
      CHECK(it.status == (i % 2 == 0 ? status::invalid : status::unknown));
      CHECK(it.score == (i % 2 == 0 ? -1 : 40));
    }
  }

  TEST_CASE_TEMPLATE("a second active job of an organization is refused and "
                     "writes nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    create_org(s, "o2", "other@example.com", 100);
    create_org(s, "o3", "third@example.com");
    create(s, make_job("j1", "o1", 1000, 5));
    auto items_before = t.query_int("SELECT COUNT(*) FROM batch_items");

    auto second = make_job("j2", "o1", 1001, 7, 1, 7);
    auto r = s.create_batch_job(second, make_items(second));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::active_job_exists);
    CHECK(r.error_value().message ==
          "A batch job is already running for this organization");
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items") == items_before);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs") == 1);
    CHECK(s.get_balance("o1")->balance == 100);
    CHECK(s.list_credit_entries("o1", 10, 0)->size() == 1);

    // Still refused while the first one is processing.
    auto held = claim(s, "w1", 1002);
    CHECK(held.id == "j1");
    CHECK(s.create_batch_job(second, make_items(second)).error_value().code ==
          errc::active_job_exists);

    // Another organization is not blocked; a reused id is a plain conflict.
    create(s, make_job("j3", "o2", 1003));
    auto dup = s.create_batch_job(make_job("j3", "o3", 1004), {});
    REQUIRE_FALSE(dup.has_value());
    CHECK(dup.error_value().code == errc::conflict);
    CHECK(s.create_batch_job(make_job("j9", "nope", 1004), {})
              .error_value()
              .code == errc::not_found);

    // A completed job frees the organization, and so does a cancelled one.
    REQUIRE(s.finish_batch_job("j1", "w1", batch::job_status::completed, 1005)
                .has_value());
    create(s, second);
    CHECK(s.get_balance("o1")->balance == 93);
    REQUIRE(s.cancel_batch_job("o1", "j2", 1006).has_value());
    create(s, make_job("j4", "o1", 1007));
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs "
                      "WHERE organization_id = 'o1'") == 3);
  }

  TEST_CASE_TEMPLATE("concurrent creations for one organization let exactly "
                     "one through",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    create_org(t.db(), "o1", "owner@example.com", 1000);
    auto a = t.open_another();
    auto b = t.open_another();
    constexpr int rounds = 5;
    for (int round = 0; round < rounds; ++round) {
      std::atomic<int> ready{0};
      std::vector<batch::job> jobs;
      std::vector<mailassay::core::error> errors(2);
      std::vector<bool> ok(2, false);
      for (int i = 0; i < 2; ++i)
        jobs.push_back(make_job(numbered(numbered("r", round) + "-", i), "o1",
                                1000 + round, 2000, 0, 10));
      auto worker = [&](int i, store& s) {
        auto items = make_items(jobs[i]);
        ++ready;
        while (ready.load() < 2)
          std::this_thread::yield();
        auto r = s.create_batch_job(jobs[i], items);
        ok[i] = r.has_value();
        if (!r)
          errors[i] = r.error_value();
      };
      std::thread t1{worker, 0, std::ref(*a)};
      std::thread t2{worker, 1, std::ref(*b)};
      t1.join();
      t2.join();
      REQUIRE(ok[0] != ok[1]);
      int loser = ok[0] ? 1 : 0;
      int winner = 1 - loser;
      CHECK_MESSAGE(errors[loser].code == errc::active_job_exists,
                    errors[loser].message);
      CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE job_id = '" +
                        jobs[winner].id + "'") == 2000);
      CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE job_id = '" +
                        jobs[loser].id + "'") == 0);
      REQUIRE(t.db().cancel_batch_job("o1", jobs[winner].id, 2000).has_value());
    }
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs") == rounds);
    // Every reservation went back on cancel; losers never took any.
    CHECK(t.db().get_balance("o1")->balance == 1000);
    CHECK(t.db().list_credit_entries("o1", 100, 0)->size() == 1 + 2 * rounds);
  }

  TEST_CASE_TEMPLATE("credits are reserved at creation; a short balance "
                     "writes nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 10);
    create(s, make_job("j1", "o1", 2000, 4, 0, 4));
    auto b = s.get_balance("o1");
    CHECK(b->balance == 6);
    CHECK(b->consumed == 0);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries->size() == 2);
    CHECK_ENTRY((*entries)[0], {"batch_reserve", -4, "j1", 6, 2000});
    REQUIRE(s.cancel_batch_job("o1", "j1", 2001).has_value());
    CHECK(s.get_balance("o1")->balance == 10);

    auto big = make_job("j2", "o1", 2002, 11, 1, 11);
    auto r = s.create_batch_job(big, make_items(big));
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::insufficient_credits);
    CHECK(s.get_batch_job("o1", "j2").error_value().code == errc::not_found);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items "
                      "WHERE job_id = 'j2'") == 0);
    CHECK(s.get_balance("o1")->balance == 10);
    CHECK(s.list_credit_entries("o1", 10, 0)->size() == 3);

    auto negative = make_job("j3", "o1", 2003);
    negative.credits_reserved = -1;
    CHECK(s.create_batch_job(negative, {}).error_value().code ==
          errc::validation_failed);
    // The whole balance may be reserved.
    create(s, make_job("j4", "o1", 2004, 10, 0, 10));
    CHECK(s.get_balance("o1")->balance == 0);
  }

  TEST_CASE_TEMPLATE("claims take the oldest queued job first, then nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    for (auto o : {"o1", "o2", "o3"})
      create_org(s, o, std::string{o} + "@example.com");
    create(s, make_job("late", "o1", 300));
    create(s, make_job("early", "o2", 100));
    create(s, make_job("middle", "o3", 200));
    auto none_cancelled = s.cancel_batch_job("o1", "late", 301);
    REQUIRE(none_cancelled.has_value());
    create(s, make_job("latest", "o1", 400));

    auto first = claim(s, "w1", 1000, 30);
    CHECK(first.id == "early");
    CHECK(first.status == batch::job_status::processing);
    CHECK(first.started_at == 1000);
    CHECK(first.lease_owner == "w1");
    CHECK(first.lease_expires_at == 1030);
    CHECK(claim(s, "w1", 1001).id == "middle");
    CHECK(claim(s, "w2", 1002).id == "latest");
    auto none = s.claim_batch_job("w1", 30, 1003);
    REQUIRE(none.has_value());
    CHECK_FALSE(none->has_value());
    auto stored = s.get_batch_job("o2", "early");
    CHECK(stored->status == batch::job_status::processing);
    CHECK(stored->lease_owner == "w1");
  }

  TEST_CASE_TEMPLATE("two owners never claim the same job", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    constexpr int jobs_n = 12;
    for (int i = 0; i < jobs_n; ++i) {
      auto o = numbered("o", i);
      create_org(t.db(), o, o + "@example.com");
      create(t.db(), make_job(numbered("j", i), o, 100 + i));
    }
    std::vector<std::unique_ptr<store>> stores;
    stores.push_back(t.open_another());
    stores.push_back(t.open_another());
    std::vector<std::vector<std::string>> claimed(2);
    std::vector<std::string> errors(2);
    std::atomic<int> ready{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < 2; ++i)
      threads.emplace_back([&, i] {
        ++ready;
        while (ready.load() < 2)
          std::this_thread::yield();
        for (;;) {
          auto r = stores[i]->claim_batch_job(numbered("w", i), 60, 1000);
          if (!r) {
            errors[i] = r.error_value().message;
            return;
          }
          if (!r->has_value())
            return;
          claimed[i].push_back((*r)->id);
        }
      });
    for (auto& th : threads)
      th.join();
    for (auto& e : errors)
      CHECK_MESSAGE(e.empty(), e);
    std::set<std::string> all;
    for (int i = 0; i < 2; ++i)
      for (auto& id : claimed[i])
        CHECK_MESSAGE(all.insert(id).second, id << " claimed twice");
    CHECK(all.size() == jobs_n);
    for (int i = 0; i < 2; ++i)
      for (auto& id : claimed[i])
        CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs WHERE id = '" + id +
                          "' AND lease_owner = '" + numbered("w", i) + "'") ==
              1);
  }

  TEST_CASE_TEMPLATE("an expired lease lets another owner take the job over",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create(s, make_job("j1", "o1", 100));
    auto a = claim(s, "a", 1000, 15);
    CHECK(a.lease_expires_at == 1015);
    // Until the lease runs out (expiry instant included) it stays with a.
    CHECK_FALSE(s.claim_batch_job("b", 15, 1010)->has_value());
    CHECK_FALSE(s.claim_batch_job("b", 15, 1015)->has_value());
    CHECK(s.renew_batch_lease("j1", "a", 15, 1012).value());
    CHECK(s.get_batch_job("o1", "j1")->lease_expires_at == 1027);
    CHECK_FALSE(s.claim_batch_job("b", 15, 1020)->has_value());

    auto b = claim(s, "b", 1028, 15);
    CHECK(b.id == "j1");
    CHECK(b.lease_owner == "b");
    CHECK(b.lease_expires_at == 1043);
    CHECK(b.started_at == 1000);
    CHECK(b.status == batch::job_status::processing);

    CHECK_FALSE(s.renew_batch_lease("j1", "a", 15, 1030).value());
    CHECK(s.renew_batch_lease("j1", "b", 20, 1030).value());
    CHECK(s.get_batch_job("o1", "j1")->lease_expires_at == 1050);
    CHECK_FALSE(s.renew_batch_lease("nope", "b", 20, 1030).value());
    auto stale =
        s.save_batch_results("j1", "a", {result(0, status::valid)}, 15, 1031);
    REQUIRE_FALSE(stale.has_value());
    CHECK(stale.error_value().code == errc::conflict);
    CHECK(s.finish_batch_job("j1", "a", batch::job_status::completed, 1031)
              .error_value()
              .code == errc::conflict);
    REQUIRE(s.cancel_batch_job("o1", "j1", 1032).has_value());
    CHECK_FALSE(s.renew_batch_lease("j1", "b", 20, 1033).value());
  }

  TEST_CASE_TEMPLATE("a lease renewed to zero hands the job back at once",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create(s, make_job("j1", "o1", 100));
    claim(s, "a", 1000, 15);
    // A process stopping releases its job this way (actors/batch).
    CHECK(s.renew_batch_lease("j1", "a", 0, 0).value());
    auto b = claim(s, "b", 1001, 15);
    CHECK(b.id == "j1");
    CHECK(b.lease_owner == "b");
    CHECK(b.started_at == 1000);
  }

  TEST_CASE_TEMPLATE("pending items come in pages by seq", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    auto j = make_job("j1", "o1", 100, 7, 0);
    auto items = make_items(j);
    // Invalid rows sit where the file had them: seq 2 and 5.
    j.invalid_rows = 2;
    j.processed = 2;
    j.counts.invalid = 2;
    for (auto seq : {2, 5}) {
      items[seq].done = true;
      items[seq].status = status::invalid;
      items[seq].reason = "invalid_syntax";
    }
    REQUIRE(s.create_batch_job(j, items).has_value());

    auto page1 = s.pending_batch_items("j1", -1, 3);
    REQUIRE_MESSAGE(page1.has_value(), why(page1));
    CHECK(seqs(*page1) == std::vector<std::int64_t>{0, 1, 3});
    CHECK((*page1)[0].email == "user0@example.com");
    CHECK_FALSE((*page1)[0].done);
    CHECK(batch::status_text((*page1)[0]).empty());
    // The database holds the text of a result and "" for a pending item.
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE done = 0 AND "
                      "status = ''") == 5);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE done = 1 AND "
                      "status = 'invalid' AND seq IN (2, 5)") == 2);
    auto page2 = s.pending_batch_items("j1", 3, 3);
    CHECK(seqs(*page2) == std::vector<std::int64_t>{4, 6});
    CHECK(s.pending_batch_items("j1", 6, 3)->empty());
    CHECK(s.pending_batch_items("j1", -1, 0)->empty());
    CHECK(s.pending_batch_items("nope", -1, 10)->empty());

    claim(s, "w", 1000);
    REQUIRE(
        s.save_batch_results("j1", "w", {result(1, status::valid)}, 15, 1001)
            .has_value());
    CHECK(seqs(*s.pending_batch_items("j1", -1, 10)) ==
          std::vector<std::int64_t>{0, 3, 4, 6});
  }

  TEST_CASE_TEMPLATE("saved results count once, even when a checkpoint is "
                     "replayed",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    create(s, make_job("j1", "o1", 100, 6, 1, 6)); // seq 0 invalid
    claim(s, "w", 1000, 15);

    std::vector<batch::item> first = {result(1, status::valid, 1),
                                      result(2, status::risky, 1),
                                      result(3, status::unknown, 0)};
    auto saved = s.save_batch_results("j1", "w", first, 15, 1005);
    REQUIRE_MESSAGE(saved.has_value(), why(saved));
    CHECK(saved->processed == 4);
    CHECK(saved->counts.valid == 1);
    CHECK(saved->counts.invalid == 1);
    CHECK(saved->counts.risky == 1);
    CHECK(saved->counts.unknown == 1);
    CHECK(saved->credits_used == 2);
    CHECK(saved->lease_expires_at == 1020);
    CHECK(saved->status == batch::job_status::processing);

    auto stored = s.batch_items("j1", 0, 1, true, {});
    REQUIRE(stored->size() == 1);
    const auto& it = stored->front();
    CHECK(it.seq == 1);
    CHECK(it.email == "user0@example.com");
    CHECK(it.done);
    CHECK(it.status == status::valid);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE seq = 1 AND "
                      "status = 'valid'") == 1);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE seq = 2 AND "
                      "status = 'risky'") == 1);
    CHECK(it.reason == "accepted_email");
    CHECK(it.score == 95);
    CHECK(it.detail == first[0].detail);
    CHECK(it.credits == 1);

    // A crash after the commit: the same checkpoint again changes nothing.
    auto replay = s.save_batch_results("j1", "w", first, 15, 1008);
    REQUIRE(replay.has_value());
    CHECK(replay->processed == 4);
    CHECK(replay->counts.valid == 1);
    CHECK(replay->counts.risky == 1);
    CHECK(replay->credits_used == 2);
    CHECK(replay->lease_expires_at == 1023);

    // Overlapping: only the new items count; a changed result of a done item
    // is ignored; an unknown seq is skipped.
    auto changed = result(1, status::invalid, 1);
    auto next = s.save_batch_results("j1", "w",
                                     {changed, result(4, status::valid, 1),
                                      result(5, status::invalid, 0),
                                      result(99, status::valid, 1)},
                                     15, 1010);
    REQUIRE(next.has_value());
    CHECK(next->processed == 6);
    CHECK(next->counts.valid == 2);
    CHECK(next->counts.invalid == 2);
    CHECK(next->credits_used == 3);
    CHECK(s.batch_items("j1", 0, 1, true, {})->front().status == status::valid);

    // An empty checkpoint only renews the lease.
    auto empty = s.save_batch_results("j1", "w", {}, 30, 1011);
    REQUIRE(empty.has_value());
    CHECK(empty->processed == 6);
    CHECK(empty->lease_expires_at == 1041);

    auto snapshot = t.query_int("SELECT COUNT(*) FROM batch_items "
                                "WHERE done = 1");
    auto wrong = s.save_batch_results("j1", "intruder",
                                      {result(6, status::valid)}, 15, 1012);
    REQUIRE_FALSE(wrong.has_value());
    CHECK(wrong.error_value().code == errc::conflict);
    auto unfinished = result(6, status::valid);
    unfinished.done = false;
    auto bad = s.save_batch_results("j1", "w", {unfinished}, 15, 1012);
    REQUIRE_FALSE(bad.has_value());
    CHECK(bad.error_value().code == errc::validation_failed);
    CHECK(s.save_batch_results("nope", "w", {}, 15, 1012).error_value().code ==
          errc::not_found);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE done = 1") ==
          snapshot);

    REQUIRE(s.cancel_batch_job("o1", "j1", 1013).has_value());
    auto late =
        s.save_batch_results("j1", "w", {result(6, status::valid)}, 15, 1014);
    REQUIRE_FALSE(late.has_value());
    CHECK(late.error_value().code == errc::conflict);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items WHERE done = 1") ==
          snapshot);
    CHECK(s.get_batch_job("o1", "j1")->processed == 6);
  }

  TEST_CASE_TEMPLATE("finishing ends the job and refunds the unspent "
                     "reservation",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    create(s, make_job("j1", "o1", 100, 10, 0, 10));
    CHECK(s.get_balance("o1")->balance == 90);
    claim(s, "w", 1000);
    REQUIRE(s.save_batch_results(
                 "j1", "w",
                 {result(0, status::valid, 1), result(1, status::risky, 1),
                  result(2, status::valid, 1), result(3, status::unknown, 0)},
                 15, 1001)
                .has_value());

    CHECK(s.finish_batch_job("j1", "other", batch::job_status::completed, 1002)
              .error_value()
              .code == errc::conflict);
    CHECK(s.finish_batch_job("j1", "w", batch::job_status::cancelled, 1002)
              .error_value()
              .code == errc::validation_failed);
    auto done =
        s.finish_batch_job("j1", "w", batch::job_status::completed, 1003);
    REQUIRE_MESSAGE(done.has_value(), why(done));
    CHECK(done->status == batch::job_status::completed);
    CHECK(done->finished_at == 1003);
    CHECK(done->started_at == 1000);
    CHECK(done->lease_owner.empty());
    CHECK(done->lease_expires_at == 0);
    CHECK(done->credits_used == 3);

    auto b = s.get_balance("o1");
    CHECK(b->balance == 97);
    CHECK(b->consumed == 3);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries->size() == 3);
    CHECK_ENTRY((*entries)[0], {"batch_refund", 7, "j1", 97, 1003});
    CHECK((*entries)[1].kind == "batch_reserve");

    CHECK(s.finish_batch_job("j1", "w", batch::job_status::failed, 1004)
              .error_value()
              .code == errc::conflict);
    CHECK(s.cancel_batch_job("o1", "j1", 1004).error_value().code ==
          errc::conflict);
    CHECK(s.finish_batch_job("nope", "w", batch::job_status::failed, 1004)
              .error_value()
              .code == errc::not_found);
    CHECK(s.get_balance("o1")->balance == 97);

    // A failed job without a reservation writes no ledger entry.
    create(s, make_job("j2", "o1", 200));
    claim(s, "w", 2000);
    auto failed =
        s.finish_batch_job("j2", "w", batch::job_status::failed, 2001);
    REQUIRE(failed.has_value());
    CHECK(failed->status == batch::job_status::failed);
    CHECK(s.list_credit_entries("o1", 10, 0)->size() == 3);
  }

  TEST_CASE_TEMPLATE("cancelling refunds the unspent reservation", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 50);

    // Queued: the whole reservation goes back.
    create(s, make_job("j1", "o1", 100, 20, 0, 20));
    CHECK(s.get_balance("o1")->balance == 30);
    auto cancelled = s.cancel_batch_job("o1", "j1", 150);
    REQUIRE_MESSAGE(cancelled.has_value(), why(cancelled));
    CHECK(cancelled->status == batch::job_status::cancelled);
    CHECK(cancelled->finished_at == 150);
    CHECK_FALSE(cancelled->started_at.has_value());
    CHECK(s.get_balance("o1")->balance == 50);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries->size() == 3);
    CHECK_ENTRY((*entries)[0], {"batch_refund", 20, "j1", 50});
    CHECK_ENTRY((*entries)[1], {"batch_reserve", -20});
    CHECK((*entries)[2].kind == "signup");
    CHECK(s.cancel_batch_job("o1", "j1", 151).error_value().code ==
          errc::conflict);

    // Processing: what was used stays spent; the lease is cleared.
    create(s, make_job("j2", "o1", 200, 5, 0, 5));
    claim(s, "w", 1000);
    REQUIRE(s.save_batch_results(
                 "j2", "w",
                 {result(0, status::valid, 1), result(1, status::valid, 1)}, 15,
                 1001)
                .has_value());
    auto stopped = s.cancel_batch_job("o1", "j2", 1002);
    REQUIRE(stopped.has_value());
    CHECK(stopped->status == batch::job_status::cancelled);
    CHECK(stopped->lease_owner.empty());
    CHECK(stopped->lease_expires_at == 0);
    CHECK(stopped->credits_used == 2);
    CHECK(stopped->processed == 2);
    auto b = s.get_balance("o1");
    CHECK(b->balance == 48);
    CHECK(b->consumed == 2);
    auto last = s.list_credit_entries("o1", 1, 0)->front();
    CHECK_ENTRY(last, {"batch_refund", 3, "j2"});
    CHECK(s.finish_batch_job("j2", "w", batch::job_status::completed, 1003)
              .error_value()
              .code == errc::conflict);
    CHECK_FALSE(s.claim_batch_job("w", 15, 5000)->has_value());

    // No reservation: no ledger entry.
    create(s, make_job("j3", "o1", 300));
    REQUIRE(s.cancel_batch_job("o1", "j3", 301).has_value());
    CHECK(s.list_credit_entries("o1", 100, 0)->size() == 5);
  }

  TEST_CASE_TEMPLATE("deleting a job cancels it as a cancel does, then "
                     "erases its rows and record",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 50);
    create_org(s, "o2", "other@example.com");

    // Processing with 2 of 5 reserved credits used: 3 come back, exactly
    // the cancel's refund, and the ledger keeps it.
    create(s, make_job("j1", "o1", 200, 5, 1, 5));
    claim(s, "w", 1000);
    REQUIRE(s.save_batch_results(
                 "j1", "w",
                 {result(1, status::valid, 1), result(2, status::valid, 1)}, 15,
                 1001)
                .has_value());
    // Another organization's job is not found, and stays.
    CHECK(s.delete_batch_job("o2", "j1", 1002).error_value().code ==
          errc::not_found);
    auto erased = s.delete_batch_job("o1", "j1", 1002);
    REQUIRE_MESSAGE(erased.has_value(), why(erased));
    CHECK(erased->status == batch::job_status::cancelled);
    CHECK(erased->credits_used == 2);
    auto b = s.get_balance("o1");
    CHECK(b->balance == 48);
    CHECK(b->consumed == 2);
    CHECK_ENTRY(s.list_credit_entries("o1", 1, 0)->front(),
                {"batch_refund", 3, "j1"});
    CHECK(s.get_batch_job("o1", "j1").error_value().code == errc::not_found);
    CHECK(s.list_batch_jobs("o1", 10, std::nullopt)->empty());
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items") == 0);
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_jobs") == 0);
    // The job no longer runs: its holder's checkpoint is refused.
    CHECK_FALSE(
        s.save_batch_results("j1", "w", {result(3, status::valid)}, 15, 1003)
            .has_value());
    CHECK(s.delete_batch_job("o1", "j1", 1004).error_value().code ==
          errc::not_found);

    // A finished job: no ledger entry, and the slot of the active job is
    // free again after deleting a queued one.
    create(s, make_job("j2", "o1", 300));
    REQUIRE(s.cancel_batch_job("o1", "j2", 301).has_value());
    auto entries = s.list_credit_entries("o1", 100, 0)->size();
    REQUIRE(s.delete_batch_job("o1", "j2", 302).has_value());
    CHECK(s.list_credit_entries("o1", 100, 0)->size() == entries);
    create(s, make_job("j3", "o1", 400));
    REQUIRE(s.delete_batch_job("o1", "j3", 401).has_value());
    create(s, make_job("j4", "o1", 500));
    CHECK(s.list_batch_jobs("o1", 10, std::nullopt)->size() == 1);
  }

  TEST_CASE_TEMPLATE("batch items filter by status and page by seq", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create(s, make_job("j1", "o1", 100, 8, 2)); // seq 0-1 invalid rows
    claim(s, "w", 1000);
    REQUIRE(s.save_batch_results(
                 "j1", "w",
                 {result(2, status::valid), result(3, status::risky),
                  result(4, status::valid), result(6, status::unknown),
                  result(7, status::invalid), result(9, status::valid)},
                 15, 1001)
                .has_value());

    auto all = s.batch_items("j1", -1, 100, false, {});
    REQUIRE_MESSAGE(all.has_value(), why(all));
    CHECK(all->size() == 10);
    CHECK(seqs(*s.batch_items("j1", -1, 100, true, {})) ==
          std::vector<std::int64_t>{0, 1, 2, 3, 4, 6, 7, 9});
    CHECK(seqs(*s.batch_items("j1", -1, 100, false, {status::valid})) ==
          std::vector<std::int64_t>{2, 4, 9});
    CHECK(seqs(*s.batch_items("j1", -1, 100, true,
                              {status::valid, status::risky})) ==
          std::vector<std::int64_t>{2, 3, 4, 9});
    CHECK(seqs(*s.batch_items("j1", -1, 100, true, {status::invalid})) ==
          std::vector<std::int64_t>{0, 1, 7});

    // Paging: after the last seq of a page, `limit` at a time.
    auto p1 = s.batch_items("j1", -1, 3, false, {});
    CHECK(seqs(*p1) == std::vector<std::int64_t>{0, 1, 2});
    auto p2 = s.batch_items("j1", p1->back().seq, 3, false, {});
    CHECK(seqs(*p2) == std::vector<std::int64_t>{3, 4, 5});
    CHECK_FALSE((*p2)[2].done);
    auto p3 = s.batch_items("j1", 4, 2, true, {status::valid, status::unknown});
    CHECK(seqs(*p3) == std::vector<std::int64_t>{6, 9});
    CHECK(s.batch_items("j1", 9, 10, false, {})->empty());
    CHECK(s.batch_items("j1", -1, 0, false, {})->empty());
    CHECK(s.batch_items("nope", -1, 10, false, {})->empty());
  }

  TEST_CASE_TEMPLATE("pages skip long runs of other items", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create(s, make_job("j1", "o1", 100, 23000));
    claim(s, "w", 1000);
    // Everything before seq 21000 done; two risky items far apart.
    std::vector<batch::item> done;
    for (std::int64_t seq = 0; seq < 21000; ++seq)
      done.push_back(result(seq, seq == 3 ? status::risky : status::valid));
    done.push_back(result(22999, status::risky));
    auto saved = s.save_batch_results("j1", "w", done, 15, 1001);
    REQUIRE_MESSAGE(saved.has_value(), why(saved));
    CHECK(saved->processed == 21001);
    CHECK(saved->counts.risky == 2);

    auto pending = s.pending_batch_items("j1", -1, 100);
    REQUIRE(pending.has_value());
    REQUIRE(pending->size() == 100);
    CHECK(pending->front().seq == 21000);
    CHECK(pending->back().seq == 21099);
    auto rest = s.pending_batch_items("j1", 21099, 5000);
    REQUIRE(rest->size() == 1899);
    CHECK(rest->back().seq == 22998);
    CHECK(seqs(*s.batch_items("j1", -1, 10, true, {status::risky})) ==
          std::vector<std::int64_t>{3, 22999});
    CHECK(seqs(*s.batch_items("j1", 3, 10, true, {status::risky})) ==
          std::vector<std::int64_t>{22999});
    auto tail = s.batch_items("j1", 20995, 10, true, {});
    CHECK(seqs(*tail) ==
          std::vector<std::int64_t>{20996, 20997, 20998, 20999, 22999});
    CHECK(s.batch_items("j1", -1000000, 1, false, {})->front().seq == 0);
  }

  TEST_CASE_TEMPLATE("a job of 200000 items is stored in one go", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 300000);
    auto j = make_job("big", "o1", 100, 199000, 1000, 199000);
    auto items = make_items(j);
    REQUIRE(items.size() == 200000);
    std::string backend =
        TestType::kind == dialect::sqlite ? "sqlite" : "postgresql";

    auto start = std::chrono::steady_clock::now();
    auto r = s.create_batch_job(j, items);
    auto created = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(r.has_value(), why(r));
    MESSAGE(backend << ": create_batch_job with 200000 items took "
                    << std::chrono::duration<double>(created - start).count()
                    << " s");
    CHECK(t.query_int("SELECT COUNT(*) FROM batch_items "
                      "WHERE job_id = 'big'") == 200000);
    CHECK(s.get_balance("o1")->balance == 101000);

    claim(s, "w", 1000);
    auto pending = s.pending_batch_items("big", -1, 1000);
    REQUIRE(pending.has_value());
    REQUIRE(pending->size() == 1000);
    CHECK(pending->front().seq == 1000);
    std::vector<batch::item> done;
    for (const auto& it : *pending)
      done.push_back(
          result(it.seq, it.seq % 2 == 0 ? status::valid : status::risky, 1));
    start = std::chrono::steady_clock::now();
    auto saved = s.save_batch_results("big", "w", done, 15, 1001);
    auto end = std::chrono::steady_clock::now();
    REQUIRE_MESSAGE(saved.has_value(), why(saved));
    MESSAGE(backend << ": save_batch_results with 1000 items took "
                    << std::chrono::duration<double>(end - start).count()
                    << " s");
    CHECK(saved->processed == 2000);
    CHECK(saved->counts.valid == 500);
    CHECK(saved->counts.risky == 500);
    CHECK(saved->credits_used == 1000);
    CHECK(s.pending_batch_items("big", -1, 1)->front().seq == 2000);
  }

  TEST_CASE_TEMPLATE("a job whose owners keep dying without progress fails at "
                     "max_restarts take-overs, refunded, with its error",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com", 100);
    create_org(s, "o2", "other@example.com");
    create(s, make_job("j1", "o1", 100, 3, 0, 3));
    create(s, make_job("j2", "o2", 200));
    REQUIRE(s.get_balance("o1")->balance == 97);
    auto claim_max = [&](const std::string& owner, std::int64_t now) {
      auto r = s.claim_batch_job(owner, 15, now, 3);
      REQUIRE_MESSAGE(r.has_value(), why(r));
      REQUIRE(r->has_value());
      return **r;
    };

    auto a = claim_max("a", 1000);
    CHECK(a.id == "j1");
    CHECK(a.restarts == 0);
    CHECK_FALSE(a.error.has_value());
    // a died: its lease ran out while held.
    auto b = claim_max("b", 1016);
    CHECK(b.id == "j1");
    CHECK(b.restarts == 1);
    // A clean stop hands the job back with no owner: not a restart.
    REQUIRE(s.renew_batch_lease("j1", "b", 0, 1020).value());
    CHECK(s.get_batch_job("o1", "j1")->lease_owner.empty());
    auto c = claim_max("c", 1021);
    CHECK(c.id == "j1");
    CHECK(c.lease_owner == "c");
    CHECK(c.restarts == 1);
    // A checkpoint that replays nothing new is no progress ...
    REQUIRE(s.save_batch_results("j1", "c", {}, 15, 1022).has_value());
    CHECK(s.get_batch_job("o1", "j1")->restarts == 1);
    // ... one that finishes a row is, and resets the count.
    auto saved = s.save_batch_results("j1", "c", {result(0, status::valid, 1)},
                                      15, 1023);
    REQUIRE_MESSAGE(saved.has_value(), why(saved));
    CHECK(saved->restarts == 0);
    auto replay = s.save_batch_results("j1", "c", {result(0, status::valid, 1)},
                                       15, 1024);
    REQUIRE(replay.has_value());
    CHECK(replay->processed == 1);

    CHECK(claim_max("d", 1040).restarts == 1);
    CHECK(claim_max("e", 1056).restarts == 2);
    // The third take-over in a row ends the job instead of starting it.
    auto failed = claim_max("f", 1072);
    CHECK(failed.id == "j1");
    CHECK(failed.status == batch::job_status::failed);
    CHECK(failed.restarts == 3);
    REQUIRE(failed.error.has_value());
    CHECK(failed.error->code == "JOB_KEPT_STOPPING");
    CHECK(failed.error->message.find("3 times") != std::string::npos);
    CHECK(failed.finished_at == 1072);
    CHECK(failed.lease_owner.empty());
    CHECK(failed.lease_expires_at == 0);
    CHECK(failed.processed == 1);
    CHECK(failed.credits_used == 1);
    auto stored = s.get_batch_job("o1", "j1");
    REQUIRE(stored.has_value());
    CHECK(stored->status == batch::job_status::failed);
    REQUIRE(stored->error.has_value());
    CHECK(stored->error->code == "JOB_KEPT_STOPPING");
    CHECK(stored->error->message == failed.error->message);
    // The unused part of the reservation came back, as on completion.
    auto balance = s.get_balance("o1");
    CHECK(balance->balance == 99);
    CHECK(balance->consumed == 1);
    auto entries = s.list_credit_entries("o1", 10, 0);
    REQUIRE(entries->size() == 3);
    CHECK_ENTRY((*entries)[0], {.kind = "batch_refund",
                                .delta = 2,
                                .reference = "j1",
                                .created_at = 1072});
    // The dead owner's late checkpoint and a cancel find it ended.
    CHECK(
        s.save_batch_results("j1", "e", {result(1, status::valid, 1)}, 15, 1073)
            .error_value()
            .code == errc::conflict);
    CHECK(s.cancel_batch_job("o1", "j1", 1073).error_value().code ==
          errc::conflict);
    CHECK(s.get_balance("o1")->balance == 99);
    // The next claim goes on with the next job; the organization may
    // upload again.
    auto next = claim_max("f", 1074);
    CHECK(next.id == "j2");
    CHECK(next.restarts == 0);
    create(s, make_job("j3", "o1", 300));
  }

  TEST_CASE_TEMPLATE("max_restarts 0 never fails a job", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create(s, make_job("j1", "o1", 100));
    for (std::int64_t i = 0; i < 6; ++i) {
      auto r = s.claim_batch_job(numbered("w", i), 15, 1000 + 20 * i, 0);
      REQUIRE_MESSAGE(r.has_value(), why(r));
      REQUIRE(r->has_value());
      CHECK((*r)->status == batch::job_status::processing);
      CHECK((*r)->restarts == i);
    }
    CHECK_FALSE(s.get_batch_job("o1", "j1")->error.has_value());
  }
}
