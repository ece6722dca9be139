// The decisions of the admission chain's steps that need no server: the
// 429 each step answers, the RateLimit window reported when two steps
// checked one, and the 503 of a full queue (load shedding). The steps' order
// and their hops are tested black-box (api.limits, api.load_shedding).
#include "http/admission.hpp"
#include "http/load_shedding.hpp"

#include <doctest/doctest.h>

using namespace mailassay;
using actors::limit_decision;
using actors::limit_scope;

namespace {

limit_decision window(limit_scope scope, std::int64_t limit,
                      std::int64_t remaining, core::limits::millis period) {
  limit_decision d;
  d.reported = scope;
  d.limit = limit;
  d.remaining = remaining;
  d.reset_seconds = 30;
  d.period = period;
  return d;
}

} // namespace

TEST_SUITE("http.admission") {
  TEST_CASE("limit_key reports the tighter of the endpoint's window and the "
            "key's") {
    auto ip = window(limit_scope::ip, 100, 90, core::limits::minute);
    auto key = window(limit_scope::key, 10, 2, core::limits::minute);
    CHECK(&http::tighter_of(ip, key) == &key);
    CHECK(&http::tighter_of(key, ip) == &key);
    // A step that checked no window leaves the other's figures.
    limit_decision none;
    CHECK(&http::tighter_of(none, key) == &key);
    CHECK(&http::tighter_of(ip, none) == &ip);
  }

  TEST_CASE("each step's 429 names its window and carries Retry-After") {
    auto d = window(limit_scope::key, 10, 0, core::limits::hour);
    d.allowed = false;
    d.refused_by = limit_scope::key;
    d.retry_after_seconds = 42;
    auto e = http::key_refusal(d);
    CHECK(e.code == core::errc::rate_limited);
    CHECK(e.retry_after == 42);
    CHECK(e.message.find("per-hour") != std::string::npos);
    CHECK(e.message.find("10 requests per hour") != std::string::npos);
    d.refused_by = limit_scope::ip;
    CHECK(http::ip_refusal(d).code == core::errc::rate_limited);
    CHECK(http::ip_refusal(d).message.find("IP") != std::string::npos);
    d.refused_by = limit_scope::device;
    auto w = http::widget_refusal(d);
    CHECK(w.code == core::errc::widget_rate_limited);
    CHECK(w.message.find("device") != std::string::npos);
  }

  TEST_CASE("a full queue sheds with 503 and Retry-After 1, naming it") {
    CHECK_FALSE(http::full(0, 1));
    CHECK(http::full(1, 1));
    CHECK(http::full(5, 3));
    // 0: no bound.
    CHECK_FALSE(http::full(1000000, 0));
    for (auto q : {http::queue::requests, http::queue::storage,
                   http::queue::validation}) {
      auto e = http::overloaded(q);
      CHECK(e.code == core::errc::unavailable);
      CHECK(e.retry_after == 1);
      CHECK(e.message.find(std::string{http::queue_name(q)} + " queue") !=
            std::string::npos);
    }
    http::shed_counts n;
    n.add(http::queue::storage);
    n.add(http::queue::storage);
    CHECK(n.of(http::queue::storage) == 2);
    CHECK(n.of(http::queue::requests) == 0);
  }
}
