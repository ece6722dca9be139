#include "core/limits/multi_window.hpp"
#include "core/limits/token_bucket.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace mailassay::core::limits;
using namespace std::chrono_literals;

namespace {

const millis t0{1'000'000};
const window_spec per_minute_100{100, 60s};

} // namespace

TEST_SUITE("core.limits.token_bucket") {
  TEST_CASE("allows 100 requests then refuses the 101st with retry-after") {
    token_bucket b(per_minute_100, t0);
    for (int i = 1; i <= 100; ++i) {
      auto d = b.take(t0);
      CHECK(d.allowed);
      CHECK(d.limit == 100);
      CHECK(d.remaining == 100 - i);
      CHECK(d.retry_after_seconds == 0);
    }
    auto refused = b.take(t0);
    CHECK_FALSE(refused.allowed);
    CHECK(refused.remaining == 0);
    CHECK(refused.reset_seconds == 60);
    // One token every 600 ms, rounded up to whole seconds.
    CHECK(refused.retry_after_seconds == 1);
  }

  TEST_CASE("refills continuously as time passes, never above capacity") {
    struct step {
      millis at;
      std::int64_t take;
      bool allowed;
      std::int64_t remaining;
      std::int64_t reset;
      std::int64_t retry_after;
    };
    // 10 per 60 s: one token every 6 s.
    const step steps[] = {
        {t0, 10, true, 0, 60, 0},
        {t0, 1, false, 0, 60, 6},
        {t0 + 5999ms, 1, false, 0, 55, 1},
        {t0 + 6000ms, 1, true, 0, 60, 0},
        {t0 + 6000ms + 30s, 1, true, 4, 36, 0},
        {t0 + 1h, 0, true, 10, 0, 0},
        {t0 + 2h, 11, false, 10, 0, 1},
        {t0 + 2h, 10, true, 0, 60, 0},
    };
    token_bucket b({10, 60s}, t0);
    for (const auto& s : steps) {
      CAPTURE((s.at - t0).count());
      auto d = b.take(s.at, s.take);
      CHECK(d.allowed == s.allowed);
      CHECK(d.remaining == s.remaining);
      CHECK(d.reset_seconds == s.reset);
      CHECK(d.retry_after_seconds == s.retry_after);
    }
  }

  TEST_CASE("waiting the retry-after lets the next request pass") {
    token_bucket b({3, 3600s}, t0);
    b.take(t0, 3);
    auto refused = b.take(t0);
    REQUIRE_FALSE(refused.allowed);
    CHECK(refused.retry_after_seconds == 1200);
    CHECK_FALSE(b.take(t0 + millis{1200'000 - 1}).allowed);
    CHECK(b.take(t0 + 1200s).allowed);
  }

  TEST_CASE("a refused take consumes nothing") {
    token_bucket b({2, 60s}, t0);
    b.take(t0, 2);
    for (int i = 0; i < 50; ++i)
      CHECK_FALSE(b.take(t0 + 1s).allowed);
    CHECK(b.take(t0 + 30s).allowed);
  }

  TEST_CASE("peek answers like take without changing the bucket") {
    token_bucket b({5, 60s}, t0);
    b.take(t0, 4);
    auto seen = b.peek(t0 + 1s);
    auto taken = b.take(t0 + 1s);
    CHECK(seen == taken);
    CHECK(b.available(t0 + 1s) == 0);
  }

  TEST_CASE("knows when it is full again, so owners can drop it") {
    token_bucket b({100, 60s}, t0);
    CHECK(b.is_full(t0));
    b.take(t0);
    CHECK_FALSE(b.is_full(t0));
    CHECK(b.full_at(t0) == t0 + 600ms);
    CHECK_FALSE(b.is_full(t0 + 599ms));
    CHECK(b.is_full(t0 + 600ms));
    CHECK(b.idle_since() == t0);
  }

  TEST_CASE("time going backwards counts as no time passing") {
    token_bucket b({1, 60s}, t0);
    CHECK(b.take(t0).allowed);
    CHECK_FALSE(b.take(t0 - 1h).allowed);
    CHECK_FALSE(b.take(t0 + 59s).allowed);
    CHECK(b.take(t0 + 60s).allowed);
  }

  TEST_CASE("reshaping keeps the tokens already consumed") {
    struct reshape_case {
      const char* name;
      window_spec to;
      std::int64_t available;
    };
    const reshape_case cases[] = {
        {"raised limit adds the difference", {10, 60s}, 7},
        {"lowered limit below use leaves none", {2, 60s}, 0},
        {"lowered limit above use keeps the rest", {4, 60s}, 1},
        {"another period starts full", {5, 3600s}, 5},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      token_bucket b({5, 60s}, t0);
      b.take(t0, 3);
      b.reshape(c.to, t0);
      CHECK(b.spec() == c.to);
      CHECK(b.available(t0) == c.available);
    }
  }

  TEST_CASE("a bucket rebuilt at a reported level decides like the one "
            "that reported it") {
    token_bucket b({5, 60s}, t0);
    b.take(t0, 2);
    auto copy = token_bucket::at_level({5, 60s}, b.level(t0 + 7s), t0 + 7s);
    CHECK(copy.level(t0 + 7s) == b.level(t0 + 7s));
    for (auto t : {t0 + 7s, t0 + 8s, t0 + 20s, t0 + 90s})
      CHECK(copy.peek(t, 3) == b.peek(t, 3));
    CHECK(copy.take(t0 + 8s, 3) == b.take(t0 + 8s, 3));
    // Out of range levels are clamped to the bucket.
    CHECK(token_bucket::at_level({5, 60s}, -7, t0).available(t0) == 0);
    CHECK(token_bucket::at_level({5, 60s}, 1 << 30, t0).available(t0) == 5);
  }

  TEST_CASE("huge limits do not overflow") {
    token_bucket b({INT64_MAX, 86400s}, t0);
    auto d = b.take(t0 + 1000h, 1'000'000);
    CHECK(d.allowed);
    CHECK(d.remaining > 1'000'000);
    CHECK(d.reset_seconds >= 0);
  }
}

TEST_SUITE("core.limits.multi_window") {
  TEST_CASE("key limits become one window per present positive value") {
    struct case_t {
      std::optional<std::int64_t> m, h, d;
      std::vector<window_spec> expected;
    };
    const case_t cases[] = {
        {std::nullopt, std::nullopt, std::nullopt, {}},
        {10, std::nullopt, std::nullopt, {{10, minute}}},
        {10, 100, 1000, {{10, minute}, {100, hour}, {1000, day}}},
        {0, std::nullopt, 5, {{5, day}}},
        {-1, 7, std::nullopt, {{7, hour}}},
    };
    for (const auto& c : cases)
      CHECK(key_windows(c.m, c.h, c.d) == c.expected);
  }

  TEST_CASE("a request refused by one window consumes from none") {
    // 5 per minute and 7 per hour.
    multi_window w(key_windows(5, 7, std::nullopt), t0);
    for (int i = 0; i < 5; ++i)
      CHECK(w.take(t0).allowed);
    auto refused = w.take(t0);
    CHECK_FALSE(refused.allowed);
    // The hour window was not charged for the refused request.
    CHECK(w.buckets()[1].available(t0) == 2);
    // A minute later the minute window is full again; the hour has 2.
    CHECK(w.take(t0 + 60s).allowed);
    CHECK(w.take(t0 + 60s).allowed);
    auto hour_refused = w.take(t0 + 60s);
    CHECK_FALSE(hour_refused.allowed);
    CHECK(hour_refused.limit == 7);
    CHECK(w.buckets()[0].available(t0 + 60s) == 3);
  }

  TEST_CASE("reports the tightest window: smallest remaining, then shortest "
            "reset") {
    struct case_t {
      const char* name;
      std::vector<window_spec> specs;
      std::int64_t taken_before;
      std::int64_t limit;
      std::int64_t remaining;
      std::int64_t reset;
    };
    const case_t cases[] = {
        {"the minute window has fewer left",
         {{10, minute}, {1000, day}},
         0,
         10,
         9,
         6},
        {"the day window has fewer left",
         {{10, minute}, {3, day}},
         0,
         3,
         2,
         28800},
        {"tie on remaining: the shorter reset wins",
         {{5, minute}, {5, hour}},
         0,
         5,
         4,
         12},
        {"tie on remaining, other order",
         {{5, hour}, {5, minute}},
         0,
         5,
         4,
         12},
        {"no window: unlimited, all zero", {}, 0, 0, 0, 0},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      multi_window w(c.specs, t0);
      auto d = w.take(t0);
      CHECK(d.allowed);
      CHECK(d.limit == c.limit);
      CHECK(d.remaining == c.remaining);
      CHECK(d.reset_seconds == c.reset);
    }
  }

  TEST_CASE("when refused, reports the window that blocks longest") {
    multi_window w({{2, minute}, {2, day}}, t0);
    w.take(t0, 2);
    auto d = w.take(t0);
    CHECK_FALSE(d.allowed);
    CHECK(d.limit == 2);
    // Both are empty; the day window needs 12 h for one token.
    CHECK(d.retry_after_seconds == 43200);
    CHECK(d.reset_seconds == 86400);
  }

  TEST_CASE("reshape keeps consumption of kept periods and adds new ones") {
    multi_window w(key_windows(5, std::nullopt, std::nullopt), t0);
    w.take(t0, 5);
    CHECK_FALSE(w.take(t0).allowed);
    w.reshape(key_windows(10, 100, std::nullopt), t0);
    CHECK(w.specs().size() == 2);
    auto d = w.take(t0);
    CHECK(d.allowed);
    CHECK(d.remaining == 4);
    w.reshape(key_windows(3, std::nullopt, std::nullopt), t0);
    CHECK_FALSE(w.take(t0).allowed);
    w.reshape(key_windows(std::nullopt, std::nullopt, std::nullopt), t0);
    CHECK(w.take(t0).allowed);
  }

  TEST_CASE("is full only when every window is") {
    multi_window w(key_windows(10, 100, std::nullopt), t0);
    w.take(t0);
    CHECK_FALSE(w.is_full(t0 + 6s));
    CHECK(w.full_at(t0) == t0 + 36s);
    CHECK(w.is_full(t0 + 36s));
  }

  TEST_CASE("peek_all reports the tightest window as it stands, taking "
            "nothing") {
    struct case_t {
      const char* name;
      std::int64_t used_minute; // of 10 per minute
      std::int64_t used_day;    // of 50 per day
      millis at;                // after t0
      std::size_t index;
      std::int64_t limit;
      std::int64_t remaining;
      std::int64_t reset;
    };
    const case_t cases[] = {
        {"both full: tie on remaining? no, 10 < 50", 0, 0, 0s, 0, 10, 10, 0},
        {"minute window has fewer left", 4, 4, 0s, 0, 10, 6, 24},
        {"day window has fewer left", 1, 45, 0s, 1, 50, 5, 77760},
        {"the minute window refilled meanwhile", 10, 1, 60s, 0, 10, 10, 0},
        {"tie on remaining: the sooner reset", 5, 45, 0s, 0, 10, 5, 30},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      token_bucket minute_b({10, minute}, t0);
      token_bucket day_b({50, day}, t0);
      minute_b.take(t0, c.used_minute);
      day_b.take(t0, c.used_day);
      const token_bucket* both[] = {&minute_b, &day_b};
      auto d = peek_all(both, t0 + c.at);
      CHECK(d.result.allowed);
      CHECK(d.index == c.index);
      CHECK(d.result.limit == c.limit);
      CHECK(d.result.remaining == c.remaining);
      CHECK(d.result.reset_seconds == c.reset);
      CHECK(d.result.retry_after_seconds == 0);
      CHECK(minute_b.available(t0) == 10 - c.used_minute);
    }
    const token_bucket* none[] = {nullptr};
    auto empty = peek_all(none, t0);
    CHECK(empty.result.allowed);
    CHECK(empty.result.limit == 0);
  }
}
