#include "core/smtp/host_series.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::smtp;
using mailassay::core::limits::millis;

TEST_SUITE("core.smtp.host_series") {
  TEST_CASE("a host is kept while a session is open and for the idle window "
            "after its last one ended, then dropped") {
    host_series s{millis{60000}, 10};
    s.opened("mx.a.test", millis{1000});
    s.opened("mx.a.test", millis{1500});
    auto a = s.in_use(millis{2000}).at("mx.a.test");
    CHECK(a.open == 2);
    CHECK(a.opened == 2);
    CHECK(a.peak == 2);
    s.closed("mx.a.test", millis{3000});
    // One still open: kept however long it lasts.
    CHECK(s.in_use(millis{500000}).count("mx.a.test") == 1);
    s.closed("mx.a.test", millis{500000});
    CHECK(s.in_use(millis{560000}).at("mx.a.test").opened == 2);
    CHECK(s.in_use(millis{560001}).count("mx.a.test") == 0);
    // Used again: its counts start again.
    s.opened("mx.a.test", millis{600000});
    CHECK(s.in_use(millis{600000}).at("mx.a.test").opened == 1);
  }

  TEST_CASE("at most max_hosts are kept: idle past the window first, then "
            "the one idle the longest; never one with a session open") {
    host_series s{millis{60000}, 2};
    s.opened("mx.a.test", millis{0});
    s.closed("mx.a.test", millis{10});
    s.opened("mx.b.test", millis{20});
    s.closed("mx.b.test", millis{30});
    // Both in their window: a goes (idle the longest).
    s.opened("mx.c.test", millis{40});
    auto kept = s.in_use(millis{40});
    CHECK(kept.size() == 2);
    CHECK(kept.count("mx.a.test") == 0);
    CHECK(kept.count("mx.b.test") == 1);
    CHECK(kept.count("mx.c.test") == 1);
    // b and c both open: d is not counted.
    s.opened("mx.b.test", millis{50});
    s.opened("mx.d.test", millis{60});
    kept = s.in_use(millis{60});
    CHECK(kept.size() == 2);
    CHECK(kept.count("mx.d.test") == 0);
    CHECK(s.untracked() == 1);
    s.closed("mx.d.test", millis{70}); // not counted: no effect
    CHECK(s.in_use(millis{70}).size() == 2);
    // Long after: b and c idle past the window make room.
    s.closed("mx.b.test", millis{100});
    s.closed("mx.c.test", millis{100});
    s.opened("mx.e.test", millis{100000});
    kept = s.in_use(millis{100000});
    CHECK(kept.size() == 1);
    CHECK(kept.count("mx.e.test") == 1);
  }

  TEST_CASE("1100 hosts met one after another leave at most the cap") {
    host_series s{millis{300000}, 1000};
    for (int i = 0; i < 1100; ++i) {
      auto host = "mx" + std::to_string(i) + ".test";
      s.opened(host, millis{i});
      s.closed(host, millis{i});
      CHECK(s.in_use(millis{i}).size() <= 1000);
    }
    // The newest stay.
    CHECK(s.in_use(millis{1100}).count("mx1099.test") == 1);
    CHECK(s.in_use(millis{1100}).count("mx0.test") == 0);
  }
}
