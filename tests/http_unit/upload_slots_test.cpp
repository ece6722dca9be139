// http/upload_slots.hpp: slots per key, given back when their holder goes.
#include "http/upload_slots.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

using mailassay::http::upload_slots;

TEST_SUITE("http.upload_slots") {
  TEST_CASE("a key holds at most its slots; a slot comes back when the last "
            "holder lets go") {
    auto slots = std::make_shared<upload_slots>(2);
    auto a = slots->take("org1");
    auto b = slots->take("org1");
    REQUIRE(a);
    REQUIRE(b);
    CHECK_FALSE(slots->take("org1"));
    CHECK(slots->take("org2")); // another key, its own slots (let go at once)
    CHECK(slots->held("org1") == 2);
    CHECK(slots->total() == 2);
    auto copy = a;
    a.reset();
    CHECK(slots->held("org1") == 2); // still held by the copy
    copy.reset();
    CHECK(slots->held("org1") == 1);
    CHECK(slots->take("org1"));
    b.reset();
    CHECK(slots->total() == 0);
  }

  TEST_CASE("threads taking and giving back never pass the bound") {
    auto slots = std::make_shared<upload_slots>(3);
    std::atomic<int> over{0};
    std::vector<std::thread> ts;
    for (int t = 0; t < 8; ++t)
      ts.emplace_back([&] {
        for (int i = 0; i < 2000; ++i)
          if (auto s = slots->take("k"))
            if (slots->held("k") > 3)
              ++over;
      });
    for (auto& t : ts)
      t.join();
    CHECK(over == 0);
    CHECK(slots->total() == 0);
  }
}
