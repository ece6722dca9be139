#include "core/smtp/catch_all_cache.hpp"
#include "core/smtp/host_limits.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::smtp;
using mailassay::core::limits::millis;

TEST_SUITE("core.smtp.host_limits") {
  TEST_CASE("holds at most max_sessions open per host") {
    host_limits l({2, 0});
    millis t{1000};
    CHECK(l.try_open("mx.a.test", t).granted);
    CHECK(l.try_open("mx.a.test", t).granted);
    auto third = l.try_open("mx.a.test", t);
    CHECK_FALSE(third.granted);
    CHECK_FALSE(third.retry_at.has_value());
    CHECK(third.full);
    CHECK_FALSE(third.pending); // the local limits answer at once
    CHECK(l.try_open("mx.b.test", t).granted);
    CHECK(l.open_sessions("mx.a.test") == 2);
    l.close("mx.a.test", t);
    CHECK(l.try_open("mx.a.test", t).granted);
  }

  TEST_CASE("spaces new connections by the per-second rate") {
    host_limits l({0, 2});
    millis t{5000};
    CHECK(l.try_open("mx.a.test", t).granted);
    CHECK(l.try_open("mx.a.test", t).granted);
    auto refused = l.try_open("mx.a.test", t);
    CHECK_FALSE(refused.granted);
    CHECK_FALSE(refused.full);
    REQUIRE(refused.retry_at.has_value());
    CHECK(*refused.retry_at == t + millis{500});
    CHECK(l.try_open("mx.a.test", t + millis{500}).granted);
    CHECK(l.open_sessions("mx.a.test") == 3);
  }

  TEST_CASE("a refused request takes neither a slot nor a token") {
    host_limits l({1, 1});
    millis t{0};
    CHECK(l.try_open("h", t).granted);
    CHECK_FALSE(l.try_open("h", t + millis{5000}).granted); // slot taken
    l.close("h", t + millis{5000});
    CHECK(l.try_open("h", t + millis{5000}).granted); // token still there
  }

  TEST_CASE("new limits apply to the next session; open ones stay open") {
    host_limits l({2, 0});
    millis t{1000};
    CHECK(l.try_open("h", t).granted);
    CHECK(l.try_open("h", t).granted);
    CHECK_FALSE(l.try_open("h", t).granted);
    l.reconfigure({3, 0}, t);
    CHECK(l.config().max_sessions == 3);
    CHECK(l.try_open("h", t).granted);
    CHECK_FALSE(l.try_open("h", t).granted);
    // Lowered below what is open: nobody is cut off, nobody new gets in
    // until enough have closed.
    l.reconfigure({1, 0}, t);
    CHECK(l.open_sessions("h") == 3);
    l.close("h", t);
    l.close("h", t);
    CHECK_FALSE(l.try_open("h", t).granted);
    l.close("h", t);
    CHECK(l.try_open("h", t).granted);
  }

  TEST_CASE("a new connection rate keeps the tokens a host has used") {
    host_limits l({0, 2});
    millis t{5000};
    CHECK(l.try_open("h", t).granted);
    CHECK(l.try_open("h", t).granted);
    CHECK_FALSE(l.try_open("h", t).granted);
    // Raised to 3 per second: one token left at once.
    l.reconfigure({0, 3}, t);
    CHECK(l.try_open("h", t).granted);
    CHECK_FALSE(l.try_open("h", t).granted);
    // Unlimited: no bucket at all.
    l.reconfigure({0, 0}, t);
    CHECK(l.try_open("h", t).granted);
    CHECK(l.try_open("h", t).granted);
  }

  TEST_CASE("forgets idle hosts") {
    host_limits l({4, 1});
    millis t{0};
    CHECK(l.try_open("h", t).granted);
    l.close("h", t);
    CHECK(l.hosts() == 1); // its bucket is still refilling
    l.sweep(t + millis{2000});
    CHECK(l.hosts() == 0);
    host_limits unlimited({4, 0});
    CHECK(unlimited.try_open("h", t).granted);
    unlimited.close("h", t);
    CHECK(unlimited.hosts() == 0);
  }
}

TEST_SUITE("core.smtp.catch_all_cache") {
  TEST_CASE("answers until the TTL runs out") {
    catch_all_cache c(millis{1000});
    millis t{10};
    CHECK_FALSE(c.find("d.test", t).has_value());
    c.store("d.test", true, t);
    c.store("e.test", false, t);
    CHECK(c.find("d.test", t + millis{999}) == true);
    CHECK(c.find("e.test", t + millis{999}) == false);
    CHECK_FALSE(c.find("d.test", t + millis{1000}).has_value());
  }

  TEST_CASE("keeps a fresh false against a later true") {
    catch_all_cache c(millis{1000});
    millis t{10};
    c.store("d.test", false, t);
    c.store("d.test", true, t + millis{500});
    CHECK(c.find("d.test", t + millis{600}) == false);
    // A false is never extended by the ignored true: it expires on time.
    CHECK_FALSE(c.find("d.test", t + millis{1000}).has_value());
    c.store("d.test", true, t + millis{1000});
    CHECK(c.find("d.test", t + millis{1001}) == true);
    c.store("d.test", false, t + millis{1002});
    CHECK(c.find("d.test", t + millis{1003}) == false);
  }

  TEST_CASE("stays within its bound") {
    catch_all_cache c(millis{1000}, 10);
    for (int i = 0; i < 100; ++i)
      c.store("d" + std::to_string(i) + ".test", true, millis{0});
    CHECK(c.size() <= 10);
    CHECK(c.find("d99.test", millis{1}) == true);
    catch_all_cache none(millis{1000}, 0);
    none.store("d.test", true, millis{0});
    CHECK_FALSE(none.find("d.test", millis{0}).has_value());
  }
}
