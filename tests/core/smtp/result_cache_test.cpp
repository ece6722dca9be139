#include "core/smtp/result_cache.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::smtp;
using mailassay::core::limits::millis;

namespace {

// A definitive answer (the mailbox exists) for `address`.
address_outcome accepted(const std::string& address) {
  address_outcome o;
  o.address = address;
  o.answered = true;
  o.rcpt.verdict = rcpt_verdict::accepted;
  o.rcpt.code = 250;
  return o;
}

} // namespace

TEST_SUITE("core.smtp.result_cache") {
  TEST_CASE("an address is forgotten once its TTL passed, not only when "
            "the cache is full (docs/privacy.md)") {
    result_cache c{millis{1000}};
    REQUIRE(c.store(accepted("a@example.org"), millis{0}));
    REQUIRE(c.store(accepted("b@example.org"), millis{500}));
    CHECK(c.size() == 2);
    CHECK(c.find("a@example.org", millis{999}).has_value());
    // a's TTL passed: a lookup of anything else drops it.
    CHECK(c.find("b@example.org", millis{1000}).has_value());
    CHECK(c.size() == 1);
    c.forget_expired(millis{1500});
    CHECK(c.size() == 0);
  }

  TEST_CASE("a newer answer for an address outlives the older one's expiry") {
    result_cache c{millis{1000}};
    REQUIRE(c.store(accepted("a@example.org"), millis{0}));
    REQUIRE(c.store(accepted("a@example.org"), millis{800}));
    c.forget_expired(millis{1000});
    CHECK(c.size() == 1);
    CHECK(c.find("a@example.org", millis{1700}).has_value());
    c.forget_expired(millis{1800});
    CHECK(c.size() == 0);
  }

  TEST_CASE("when full, stored answers still expire in time") {
    result_cache c{millis{1000}, 10};
    for (int i = 0; i < 25; ++i)
      REQUIRE(c.store(accepted("u" + std::to_string(i) + "@example.org"),
                      millis{i}));
    CHECK(c.size() <= 10);
    CHECK(c.find("u24@example.org", millis{100}).has_value());
    c.forget_expired(millis{2000});
    CHECK(c.size() == 0);
  }
}
