#include "core/webhooks/fair_share.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::webhooks;

TEST_SUITE("core.webhooks.fair_share") {
  TEST_CASE("the share is the slots divided among the active "
            "organizations, capped, at least one") {
    slot_limits l{16, 4};
    CHECK(share_of(l, 0) == 4);
    CHECK(share_of(l, 1) == 4);
    CHECK(share_of(l, 4) == 4);
    CHECK(share_of(l, 5) == 3);
    CHECK(share_of(l, 16) == 1);
    CHECK(share_of(l, 40) == 1);
    CHECK(share_of({2, 4}, 1) == 2);
  }

  TEST_CASE("an organization alone gets at most its share, even with free "
            "slots") {
    slot_limits l{16, 4};
    CHECK(allot(l, {}, {"a"}) == std::vector<allotment>{{"a", 4}});
    CHECK(allot(l, {{"a", 3}}, {"a"}) == std::vector<allotment>{{"a", 1}});
    CHECK(allot(l, {{"a", 4}}, {"a"}).empty());
  }

  TEST_CASE("a slow organization at its share leaves the free slots to "
            "another one") {
    // a's endpoints never answer: its 4 attempts hang.
    slot_limits l{8, 4};
    CHECK(allot(l, {{"a", 4}}, {"a", "b"}) == std::vector<allotment>{{"b", 4}});
    // Three organizations: the share falls to 2; a keeps what it holds
    // but gets nothing more, the others get theirs.
    CHECK(allot(l, {{"a", 4}}, {"a", "b", "c"}) ==
          std::vector<allotment>{{"b", 2}, {"c", 2}});
  }

  TEST_CASE("free slots go round-robin, fewest in flight first, then "
            "oldest due first") {
    slot_limits l{4, 4}; // share 2 with two organizations
    CHECK(allot(l, {}, {"a", "b"}) ==
          std::vector<allotment>{{"a", 2}, {"b", 2}});
    slot_limits three{3, 4}; // share 1 with three
    CHECK(allot(three, {}, {"c", "a", "b"}) ==
          std::vector<allotment>{{"c", 1}, {"a", 1}, {"b", 1}});
    // One free slot: b runs fewer than a, so b gets it.
    slot_limits l5{6, 4}; // three active: share 2
    CHECK(allot(l5, {{"a", 2}, {"b", 1}, {"x", 1}}, {"a", "b"}) ==
          std::vector<allotment>{{"b", 1}});
  }

  TEST_CASE("no free slot, nothing waiting, or duplicates in the list") {
    slot_limits l{2, 4};
    CHECK(allot(l, {{"a", 1}, {"b", 1}}, {"c"}).empty());
    CHECK(allot(l, {{"a", 1}}, {}).empty());
    CHECK(allot({8, 8}, {}, {"a", "a"}) == std::vector<allotment>{{"a", 8}});
  }
}
