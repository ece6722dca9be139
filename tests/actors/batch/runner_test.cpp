// The batch runner: claims queued jobs (or jobs whose lease ran out), runs
// one supervisor each up to `max_jobs`, passes cancels on, and hands leases
// back when it stops. Against real storage on both backends and the DNS
// peer; every wait is a poll of storage or of the gauges.
#include "tests/actors/batch/world.hpp"

using namespace mailassay;
using namespace mailassay::tests::batch;

TEST_SUITE("actors.batch.runner") {
  TEST_CASE_TEMPLATE("a queued job is claimed, validated and completed, its "
                     "results written in several checkpoints",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    auto emails = addresses(5, "ok.test");
    for (auto& e : addresses(2, "nomx.test"))
      emails.push_back(e);
    emails.push_back("no-at-sign");
    w.queue("j1", "o1", emails, 1);
    auto& r = w.start("p1");
    auto j = w.wait_for("j1", cb::job_status::completed);
    CHECK(j.processed == 9);
    CHECK(j.counts.valid + j.counts.invalid + j.counts.risky +
              j.counts.unknown ==
          9);
    CHECK(j.counts.invalid >= 4); // the invalid row, nomx x2, no-at-sign
    CHECK(j.started_at.has_value());
    CHECK(j.finished_at.has_value());
    for (const auto& it : w.items("j1")) {
      INFO("item " << it.seq << " " << it.email);
      CHECK(it.done);
      CHECK_FALSE(it.detail.empty());
      if (it.email.find("nomx.test") != std::string::npos ||
          it.email == "no-at-sign")
        CHECK(it.status == core::validation::status::invalid);
      if (it.email.find("ok.test") != std::string::npos)
        CHECK(it.status != core::validation::status::invalid);
    }
    REQUIRE(eventually([&] { return r.gauges().running_jobs.load() == 0; }));
    // 8 addresses, a checkpoint once 3 results wait: 2 writes at least.
    CHECK(r.gauges().items_done.load() == 8);
    CHECK(r.gauges().checkpoints.load() >= 2);
    CHECK(r.gauges().in_flight.load() == 0);
  }

  TEST_CASE_TEMPLATE("a job cancelled while it runs stops before its end",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    make_slow(w, 150ms);
    w.batch.concurrency = 1;
    w.batch.checkpoint_rows = 1;
    w.queue("j1", "o1", slow_addresses(60));
    auto& r = w.start("p1");
    REQUIRE(eventually([&] { return w.job("j1").processed >= 2; }));
    auto cancelled = w.t.db().cancel_batch_job("o1", "j1", std::time(nullptr));
    REQUIRE_MESSAGE(cancelled.has_value(), storage::testing::why(cancelled));
    r.cancelled("j1");
    REQUIRE(eventually([&] { return r.gauges().running_jobs.load() == 0; }));
    auto j = w.job("j1");
    CHECK(j.status == cb::job_status::cancelled);
    CHECK(j.processed < 60);
  }

  TEST_CASE_TEMPLATE("stopping hands the lease back: another runner resumes "
                     "the job at once and nothing is validated twice",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    w.batch.concurrency = 1;
    w.batch.checkpoint_rows = 2;
    auto& first = start_slow_job(w, 100ms, 40);
    REQUIRE(eventually([&] { return w.job("j1").processed >= 4; }));
    first.stop(30s);
    auto held = w.job("j1");
    CHECK(held.status == cb::job_status::processing);
    CHECK(held.processed < 40);
    CHECK(held.lease_expires_at <= std::time(nullptr));
    auto before = held.processed;

    CHECK(resume(w).processed == 40);
    auto& second = *w.runners.back();
    REQUIRE(
        eventually([&] { return second.gauges().running_jobs.load() == 0; }));
    // The second runner wrote only what the first had not.
    CHECK(second.gauges().items_done.load() == 40 - before);
  }

  TEST_CASE_TEMPLATE("a result that arrives while the lease is handed back "
                     "is not written: no checkpoint renews the lease after "
                     "the stop",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    // Every lookup takes 2 s: after the first 8 results are written, the
    // next 8 are in flight for that long.
    w.batch.concurrency = 8;
    w.batch.checkpoint_rows = 1;
    auto& first = start_slow_job(w, 2000ms, 40);
    REQUIRE(eventually([&] { return w.job("j1").processed >= 8; }));
    // Hold every storage worker, so the hand-back waits while the results
    // in flight arrive.
    auto hold = w.hold_storage();
    auto stopped = std::async(std::launch::async, [&] { first.stop(30s); });
    REQUIRE(eventually([&] { return first.gauges().in_flight.load() == 0; }));
    hold.release();
    stopped.get();
    w.wait_storage_idle();
    // What storage holds is exactly what the supervisor saw written; the
    // lease is free for the next process.
    auto j = w.job("j1");
    CHECK(j.status == cb::job_status::processing);
    CHECK(j.processed == first.gauges().items_done.load());
    REQUIRE(j.lease_expires_at <= std::time(nullptr));
    CHECK(resume(w).processed == 40);
  }

  TEST_CASE_TEMPLATE("a claim still on its way when the runner stops hands "
                     "its job back before stop returns",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    w.batch.lease_seconds = 3600;
    auto& first = w.start("p1");
    // The runner looks for work every 50 ms; with the workers held, its
    // next claim waits in the pool.
    auto hold = w.hold_storage();
    REQUIRE(eventually(
        [&] { return w.storage->gauges().queued.load() > hold.queued_holds; }));
    // A job the waiting claim will find.
    w.queue("j1", "o1", addresses(4, "ok.test"));
    auto stopped = std::async(std::launch::async, [&] { first.stop(30s); });
    // The stop cannot finish before the claim answers; a runner that did
    // not wait for it would be gone by now.
    (void)stopped.wait_for(1s);
    hold.release();
    stopped.get();
    w.wait_storage_idle();
    REQUIRE(w.job("j1").lease_expires_at <= std::time(nullptr));
    CHECK(resume(w).processed == 4);
  }

  TEST_CASE_TEMPLATE("a job whose owner's lease ran out is taken over",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    w.queue("j1", "o1", addresses(4, "ok.test"));
    auto now = static_cast<std::int64_t>(std::time(nullptr));
    // A process that claimed it long ago and died.
    auto dead = w.t.db().claim_batch_job("dead-process", 5, now - 60);
    REQUIRE(dead.has_value());
    REQUIRE(dead->has_value());
    w.start("p1");
    auto j = w.wait_for("j1", cb::job_status::completed);
    CHECK(j.processed == 4);
  }

  TEST_CASE_TEMPLATE("one process runs at most max_jobs jobs at once", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    make_slow(w, 50ms);
    w.batch.max_jobs = 1;
    w.batch.concurrency = 1;
    w.queue("j1", "o1", slow_addresses(8));
    w.queue("j2", "o2", slow_addresses(8));
    auto& r = w.start("p1");
    std::int64_t most = 0;
    REQUIRE(eventually([&] {
      most = std::max(most, r.gauges().running_jobs.load());
      return w.job("j1", "o1").status == cb::job_status::completed &&
             w.job("j2", "o2").status == cb::job_status::completed;
    }));
    CHECK(most == 1);
  }

  TEST_CASE_TEMPLATE("while real-time validations arrive a job slows to "
                     "rate_under_load; otherwise it is never held back",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    // One domain per address and one validation at a time: the pace is
    // asked before each address, and the real-time counter moves between
    // two of them.
    make_slow(w, 20ms);
    w.batch.concurrency = 1;
    SUBCASE("no real-time traffic") {
      w.batch.rate_under_load = 5;
      w.queue("j1", "o1", slow_addresses(10));
      auto& r = w.start("p1");
      w.wait_for("j1", cb::job_status::completed);
      CHECK(r.gauges().paced_waits.load() == 0);
    }
    SUBCASE("real-time traffic") {
      w.batch.rate_under_load = 5;
      w.queue("j1", "o1", slow_addresses(10));
      std::atomic<bool> done{false};
      std::thread traffic{[&] {
        while (!done) {
          ++*w.realtime;
          std::this_thread::sleep_for(5ms);
        }
      }};
      auto& r = w.start("p1");
      auto finished = eventually(
          [&] { return w.job("j1").status == cb::job_status::completed; });
      done = true;
      traffic.join();
      REQUIRE(finished);
      CHECK(r.gauges().paced_waits.load() > 0);
    }
  }
}
