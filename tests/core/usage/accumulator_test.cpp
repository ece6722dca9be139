#include "core/usage/accumulator.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::usage;

namespace {

// 2026-11-21T00:00:00Z.
constexpr std::int64_t nov21 = 1795219200;

} // namespace

TEST_SUITE("core.usage") {
  TEST_CASE("records of one key and day add up into one increment") {
    accumulator acc;
    acc.record("k1", "o1", nov21 + 10, true, 1, "h1");
    acc.record("k1", "o1", nov21 + 20, true, 1, "h2");
    acc.record("k1", "o1", nov21 + 30, false, 0, "h1");
    auto batch = acc.drain();
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].key_id == "k1");
    CHECK(batch[0].organization_id == "o1");
    CHECK(batch[0].day == "2026-11-21");
    CHECK(batch[0].requests == 3);
    CHECK(batch[0].successful == 2);
    CHECK(batch[0].credits == 2);
    CHECK(batch[0].address_hashes == std::vector<std::string>{"h1", "h2"});
  }

  TEST_CASE("keys and UTC days are kept apart, ordered by key then day") {
    accumulator acc;
    acc.record("k2", "o1", nov21, true, 1, "a");
    acc.record("k1", "o1", nov21 + 86399, true, 1, "a"); // last second
    acc.record("k1", "o1", nov21 + 86400, true, 1, "a"); // next day
    acc.record("k1", "o1", nov21 - 1, true, 1, "a");     // previous day
    auto batch = acc.drain();
    REQUIRE(batch.size() == 4);
    CHECK(batch[0].key_id == "k1");
    CHECK(batch[0].day == "2026-11-20");
    CHECK(batch[1].key_id == "k1");
    CHECK(batch[1].day == "2026-11-21");
    CHECK(batch[2].key_id == "k1");
    CHECK(batch[2].day == "2026-11-22");
    CHECK(batch[3].key_id == "k2");
    CHECK(batch[3].day == "2026-11-21");
    for (const auto& inc : batch)
      CHECK(inc.requests == 1);
  }

  TEST_CASE("drain empties the accumulator") {
    accumulator acc;
    CHECK(acc.empty());
    CHECK(acc.drain().empty());
    acc.record("k1", "o1", nov21, true, 1, "h");
    CHECK_FALSE(acc.empty());
    CHECK(acc.drain().size() == 1);
    CHECK(acc.empty());
    CHECK(acc.pending() == 0);
    CHECK(acc.drain().empty());
  }

  TEST_CASE("pending counts entries plus distinct address hashes") {
    accumulator acc;
    acc.record("k1", "o1", nov21, true, 1, "a");
    CHECK(acc.pending() == 2);
    acc.record("k1", "o1", nov21, true, 1, "a");
    CHECK(acc.pending() == 2);
    acc.record("k1", "o1", nov21, true, 1, "b");
    CHECK(acc.pending() == 3);
    acc.record("k2", "o1", nov21, true, 1, "a");
    CHECK(acc.pending() == 5);
    acc.record("k2", "o1", nov21, false, 0, "");
    CHECK(acc.pending() == 5);
  }

  TEST_CASE("a request without an address counts but adds no hash") {
    accumulator acc;
    acc.record("k1", "o1", nov21, false, 0, "");
    auto batch = acc.drain();
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].requests == 1);
    CHECK(batch[0].successful == 0);
    CHECK(batch[0].address_hashes.empty());
  }

  TEST_CASE("a batch merged back after a failed write adds to new records") {
    accumulator acc;
    acc.record("k1", "o1", nov21, true, 2, "a");
    acc.record("k1", "o1", nov21, false, 0, "b");
    auto failed = acc.drain();
    acc.record("k1", "o1", nov21, true, 1, "b");
    acc.record("k1", "o1", nov21, true, 1, "c");
    acc.merge(failed);
    auto batch = acc.drain();
    REQUIRE(batch.size() == 1);
    CHECK(batch[0].requests == 4);
    CHECK(batch[0].successful == 3);
    CHECK(batch[0].credits == 4);
    CHECK(batch[0].address_hashes == std::vector<std::string>{"a", "b", "c"});
  }

  TEST_CASE("address hashes beyond the bound are dropped, counters are not") {
    accumulator acc{2};
    acc.record("k1", "o1", nov21, true, 1, "a");
    acc.record("k1", "o1", nov21, true, 1, "b");
    acc.record("k1", "o1", nov21, true, 1, "c"); // dropped
    acc.record("k1", "o1", nov21, true, 1, "a"); // already held
    acc.record("k2", "o1", nov21, true, 1, "d"); // dropped
    CHECK(acc.pending() == 4);
    CHECK(acc.dropped_addresses() == 2);
    auto batch = acc.drain();
    REQUIRE(batch.size() == 2);
    CHECK(batch[0].requests == 4);
    CHECK(batch[0].address_hashes == std::vector<std::string>{"a", "b"});
    CHECK(batch[1].requests == 1);
    CHECK(batch[1].address_hashes.empty());
    // Draining frees room again.
    acc.record("k1", "o1", nov21, true, 1, "e");
    CHECK(acc.drain()[0].address_hashes == std::vector<std::string>{"e"});
    CHECK(acc.dropped_addresses() == 2);
  }
}
