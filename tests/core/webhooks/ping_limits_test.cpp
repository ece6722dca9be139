#include "core/webhooks/ping_limits.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.ping_limits") {
  const ping_limits limits{5, 20, 60000, 100};

  TEST_CASE("below every limit a ping passes") {
    CHECK(admit_ping({4, 1000, 19, 1000, 99}, limits, 2000).allowed);
    CHECK(admit_ping({1000, 1, 1000, 1, 1000}, ping_limits{0, 0, 60000, 0},
                     2000)
              .allowed); // zero: no limit
  }

  TEST_CASE("a full endpoint window refuses until its oldest ping leaves") {
    auto d = admit_ping({5, 10000, 5, 10000, 5}, limits, 30000);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after_seconds == 40);
    CHECK(d.reason ==
          "Too many test deliveries for this webhook: at most 5 per 60 s");
    // Never less than one second.
    CHECK(admit_ping({5, 10000, 5, 10000, 5}, limits, 70000)
              .retry_after_seconds == 1);
    CHECK(admit_ping({5, 10000, 5, 10000, 5}, limits, 69500)
              .retry_after_seconds == 1);
  }

  TEST_CASE("a full organization window refuses across its endpoints") {
    auto d = admit_ping({0, 0, 20, 1000, 20}, limits, 1500);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after_seconds == 60);
    CHECK(d.reason == "Too many test deliveries for this organization: at "
                      "most 20 per 60 s");
  }

  TEST_CASE("a full queue of pending deliveries refuses for one window") {
    auto d = admit_ping({0, 0, 0, 0, 100}, limits, 1500);
    CHECK_FALSE(d.allowed);
    CHECK(d.retry_after_seconds == 60);
    CHECK(d.reason ==
          "Too many deliveries waiting for this organization: at most 100 "
          "pending");
  }
}
