#include "core/webhooks/retry.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.retry") {
  TEST_CASE("only a 2xx answer delivers") {
    CHECK(accepted(200));
    CHECK(accepted(204));
    CHECK(accepted(299));
    CHECK_FALSE(accepted(0)); // no answer
    CHECK_FALSE(accepted(199));
    CHECK_FALSE(accepted(301)); // redirects are not followed
    CHECK_FALSE(accepted(410));
    CHECK_FALSE(accepted(500));
  }

  TEST_CASE("waits double from the first, up to the cap") {
    retry_schedule s; // 1 min, 1 h, 24 h
    const std::int64_t minute = 60000;
    const std::int64_t waits[] = {1, 2, 4, 8, 16, 32, 60, 60, 60};
    for (int n = 1; n <= 9; ++n)
      CHECK(next_attempt_ms(s, n, 0, 1000, 0.0) ==
            1000 + waits[n - 1] * minute);
    // A large count stays at the cap (no overflow).
    CHECK(next_attempt_ms(s, 1000, 0, 1000, 0.0) == 1000 + 60 * minute);
  }

  TEST_CASE("the spread lengthens a wait by at most 10%") {
    retry_schedule s{1000, 100000, 86400000};
    CHECK(next_attempt_ms(s, 1, 0, 0, 0.5) == 1050);
    CHECK(next_attempt_ms(s, 2, 0, 0, 0.999) == 2199);
    CHECK(next_attempt_ms(s, 2, 0, 0, 7.0) == 2199); // clamped
  }

  TEST_CASE("gives up once the next attempt would leave the window") {
    retry_schedule s{1000, 10000, 30000};
    CHECK(next_attempt_ms(s, 1, 0, 28000, 0.0) == 29000);
    CHECK(next_attempt_ms(s, 1, 0, 29000, 0.0) == 30000);
    CHECK_FALSE(next_attempt_ms(s, 1, 0, 29001, 0.0));
    CHECK_FALSE(expired(s, 0, 30000));
    CHECK(expired(s, 0, 30001));
  }

  TEST_CASE("the default schedule tries for a day, about 29 times") {
    retry_schedule s;
    std::int64_t now = 0;
    int attempts = 1;
    while (auto next = next_attempt_ms(s, attempts, 0, now, 0.0)) {
      now = *next;
      ++attempts;
    }
    CHECK(attempts == 29);
    CHECK(now <= s.window_ms);
    CHECK(now > s.window_ms - s.max_ms);
  }
}
