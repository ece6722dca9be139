// The retention sweeper as `serve` wires it, on real storage of both
// backends: it erases a finished job once the retention (read at each tick:
// a reload changes it) has passed on its clock, never an active one, and
// runs its tick hook (the SMTP result cache's expiry) every tick. Its clock
// is the test's: a fixed "now" a day after the job finished.
#include "actors/batch/retention_sweeper.hpp"
#include "tests/actors/batch/world.hpp"

using namespace mailassay;
using namespace mailassay::tests::batch;

TEST_SUITE("actors.batch.retention_sweeper") {
  TEST_CASE_TEMPLATE("a finished job is erased once the retention read at "
                     "the tick has passed; an active one stays",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    w.queue("done", "o1", {"a@ok.test", "b@ok.test"});
    auto& db = w.t.db();
    REQUIRE(db.cancel_batch_job("o1", "done", 1000).has_value());
    w.queue("active", "o1", {"c@ok.test"});
    // Forever at first: ticks pass and nothing is erased.
    config::live_int retention = 0;
    auto ticks = std::make_shared<std::atomic<int>>(0);
    actors::retention_sweeper_env env;
    env.storage = w.storage.get();
    env.retention_seconds = &retention;
    env.interval = std::chrono::seconds(1);
    env.now = [] { return std::int64_t{1000 + 86400}; };
    env.on_tick = [ticks] { ++*ticks; };
    actors::retention_sweeper sweeper{*w.sys, env};
    REQUIRE(eventually([&] { return sweeper.gauges().sweeps.load() >= 2; }));
    CHECK(*ticks >= 2);
    CHECK_FALSE(w.job("done").results_erased_at.has_value());
    CHECK(w.items("done").size() == 2);
    // Longer than a day: still nothing.
    retention = 86401;
    auto seen = sweeper.gauges().sweeps.load();
    REQUIRE(
        eventually([&] { return sweeper.gauges().sweeps.load() >= seen + 2; }));
    CHECK_FALSE(w.job("done").results_erased_at.has_value());
    // A day, as a reload would set it: the next sweep erases.
    retention = 86400;
    REQUIRE(eventually(
        [&] { return w.job("done").results_erased_at.has_value(); }));
    CHECK(*w.job("done").results_erased_at == 1000 + 86400);
    CHECK(w.items("done").empty());
    // Counted when the sweep's answer is back, a moment after its commit.
    CHECK(eventually([&] { return sweeper.gauges().jobs_erased.load() == 1; }));
    CHECK(w.items("active").size() == 1);
    CHECK_FALSE(w.job("active").results_erased_at.has_value());
    CHECK(sweeper.gauges().failures.load() == 0);
    sweeper.stop();
  }

  TEST_CASE_TEMPLATE("an organization's shorter retention applies to it "
                     "alone",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_BATCH_WORLD(w);
    auto& db = w.t.db();
    w.queue("mine", "o1", {"a@ok.test"});
    REQUIRE(db.cancel_batch_job("o1", "mine", 1000).has_value());
    w.queue("theirs", "o2", {"b@ok.test"});
    REQUIRE(db.cancel_batch_job("o2", "theirs", 1000).has_value());
    REQUIRE(db.set_batch_retention("o1", 60).has_value());
    config::live_int retention = 2592000;
    actors::retention_sweeper_env env;
    env.storage = w.storage.get();
    env.retention_seconds = &retention;
    env.interval = std::chrono::seconds(1);
    env.now = [] { return std::int64_t{1000 + 3600}; };
    actors::retention_sweeper sweeper{*w.sys, env};
    REQUIRE(eventually(
        [&] { return w.job("mine").results_erased_at.has_value(); }));
    REQUIRE(eventually([&] { return sweeper.gauges().sweeps.load() >= 2; }));
    CHECK_FALSE(w.job("theirs", "o2").results_erased_at.has_value());
    CHECK(w.items("theirs").size() == 1);
    sweeper.stop();
  }
}
