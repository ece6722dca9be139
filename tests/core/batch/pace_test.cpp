#include "core/batch/pace.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::batch;
using ms = std::chrono::milliseconds;

namespace {

// Runs a job for `span` of simulated time, 1 ms a step, with real-time
// traffic (the counter moving every `traffic_every`, 0: none); each step
// starts groups of `group` addresses while the pace allows. Returns the
// addresses started.
std::int64_t run(pace& p, ms start, ms span, ms traffic_every,
                 std::int64_t group = 1) {
  std::int64_t started = 0, counter = 0;
  for (auto t = start; t < start + span; t += ms{1}) {
    if (traffic_every.count() > 0 && (t - start) % traffic_every == ms{0})
      ++counter;
    p.observe(counter, t);
    while (p.allows(t)) {
      p.take(t, group);
      started += group;
      if (started > 1000000)
        break; // unpaced: the caller's concurrency limit would stop it
    }
  }
  return started;
}

} // namespace

TEST_SUITE("core.batch.pace") {
  TEST_CASE("a quiet machine never slows a job, also from its first reading") {
    pace p{{400, ms{200}, ms{10}}};
    p.observe(12345, ms{1000}); // the baseline, not an arrival
    CHECK_FALSE(p.under_load(ms{1000}));
    for (int i = 0; i < 100; ++i) {
      CHECK(p.allows(ms{1000}));
      p.take(ms{1000}, 64);
    }
  }

  TEST_CASE("while real-time validations arrive, at most the rate plus one "
            "burst") {
    struct row {
      std::int64_t rate;
      std::int64_t group;
      std::int64_t least, most; // addresses started in one second
    };
    // Burst: 10 ms worth plus one; a group may overdraw by group - 1.
    for (auto r : {row{400, 1, 400, 405}, row{400, 20, 400, 425},
                   row{10000, 64, 10000, 10164}, row{1, 1, 1, 2}}) {
      CAPTURE(r.rate);
      CAPTURE(r.group);
      pace p{{r.rate, ms{200}, ms{10}}};
      p.observe(0, ms{0});
      auto n = run(p, ms{1}, ms{1000}, ms{50}, r.group);
      CHECK(n >= r.least);
      CHECK(n <= r.most);
    }
  }

  TEST_CASE("the pace lifts quiet_after the last arrival") {
    pace p{{400, ms{200}, ms{10}}};
    p.observe(0, ms{0});
    p.observe(1, ms{100});
    CHECK(p.under_load(ms{100}));
    CHECK(p.under_load(ms{299}));
    CHECK_FALSE(p.under_load(ms{300}));
    // Drain the bucket under load; once quiet, everything may go at once.
    while (p.allows(ms{150}))
      p.take(ms{150}, 1);
    CHECK_FALSE(p.allows(ms{150}));
    CHECK(p.allows(ms{300}));
  }

  TEST_CASE("next_try is when one address is back, at most one burst away") {
    pace p{{400, ms{200}, ms{10}}}; // 2.5 ms per address
    p.observe(0, ms{0});
    p.observe(1, ms{1});
    while (p.allows(ms{1}))
      p.take(ms{1}, 1);
    CHECK(p.next_try(ms{1}) == ms{4});  // 1000 units at 400/ms: 3 ms rounded up
    p.take(ms{1}, 100);                 // a big group: long debt
    CHECK(p.next_try(ms{1}) == ms{11}); // capped at the burst
    CHECK_FALSE(p.allows(ms{11}));
  }

  TEST_CASE("a rate of 0 never slows a job") {
    pace p{{0, ms{200}, ms{10}}};
    p.observe(0, ms{0});
    p.observe(5, ms{1});
    CHECK_FALSE(p.under_load(ms{1}));
    CHECK(p.allows(ms{1}));
  }

  TEST_CASE("time going backwards counts as none passing") {
    pace p{{400, ms{200}, ms{10}}};
    p.observe(0, ms{0});
    p.observe(1, ms{100});
    while (p.allows(ms{100}))
      p.take(ms{100}, 1);
    CHECK_FALSE(p.allows(ms{50}));
    CHECK_FALSE(p.allows(ms{100}));
  }

  TEST_CASE("a new rate (a reload) applies from then on") {
    pace p{{400, ms{200}, ms{10}}};
    p.observe(0, ms{0});
    // Under load at 400/s for a second, then at 100/s for another.
    auto first = run(p, ms{1}, ms{1000}, ms{5});
    CHECK(p.rate() == 400);
    p.set_rate(100, ms{1001});
    CHECK(p.rate() == 100);
    auto second = run(p, ms{1001}, ms{1000}, ms{5});
    CHECK(first >= 400);
    CHECK(first <= 405);
    CHECK(second >= 95);
    CHECK(second <= 102);
    // 0: never slowed.
    p.set_rate(0, ms{2001});
    CHECK(run(p, ms{2001}, ms{10}, ms{5}) > 1000);
  }
}
