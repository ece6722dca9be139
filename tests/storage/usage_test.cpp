#include "support.hpp"

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;

TEST_SUITE("storage.usage") {
  TEST_CASE_TEMPLATE("usage increments add up per key and day", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    REQUIRE(s.insert_api_key(make_key("k2", "o1")).has_value());
    REQUIRE(s.add_usage({{"k1", "o1", "2026-11-20", 2, 1, 1, {"a", "b"}},
                         {"k1", "o1", "2026-11-21", 1, 1, 0, {"a"}},
                         {"k2", "o1", "2026-11-20", 5, 5, 5, {"z"}}})
                .has_value());
    REQUIRE(s.add_usage({{"k1", "o1", "2026-11-20", 3, 2, 1, {"b", "c", "c"}}})
                .has_value());
    REQUIRE(s.add_usage({}).has_value());

    auto days = s.usage_between("k1", "2026-11-01", "2026-11-30");
    REQUIRE(days.has_value());
    REQUIRE(days->size() == 2);
    CHECK((*days)[0].day == "2026-11-20");
    CHECK((*days)[0].requests == 5);
    CHECK((*days)[0].successful == 3);
    CHECK((*days)[0].credits == 2);
    CHECK((*days)[1].day == "2026-11-21");
    CHECK((*days)[1].requests == 1);

    auto one = s.usage_between("k1", "2026-11-21", "2026-11-21");
    REQUIRE(one->size() == 1);
    CHECK(s.usage_between("k1", "2026-12-01", "2026-12-31")->empty());

    // a, b, c on the 20th; a again on the 21st.
    CHECK(*s.distinct_addresses("k1", "2026-11-20", "2026-11-20") == 3);
    CHECK(*s.distinct_addresses("k1", "2026-11-01", "2026-11-30") == 3);
    CHECK(*s.distinct_addresses("k1", "2026-11-21", "2026-11-30") == 1);
    CHECK(*s.distinct_addresses("k2", "2026-11-01", "2026-11-30") == 1);
    CHECK(*s.distinct_addresses("nope", "2026-11-01", "2026-11-30") == 0);
  }

  TEST_CASE_TEMPLATE("a usage batch with an unknown key writes nothing",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    auto r = s.add_usage({{"k1", "o1", "2026-11-20", 2, 1, 1, {"a", "b"}},
                          {"gone", "o1", "2026-11-20", 1, 1, 1, {"c"}}});
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == errc::not_found);
    CHECK(s.usage_between("k1", "2026-11-01", "2026-11-30")->empty());
    CHECK(*s.distinct_addresses("k1", "2026-11-01", "2026-11-30") == 0);
    // The store is still usable after the rollback.
    REQUIRE(
        s.add_usage({{"k1", "o1", "2026-11-20", 2, 1, 1, {"a"}}}).has_value());
    CHECK(s.usage_between("k1", "2026-11-01", "2026-11-30")->size() == 1);
  }

  TEST_CASE_TEMPLATE("organization usage sums the organization's keys only",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    REQUIRE(s.insert_api_key(make_key("k2", "o1")).has_value());
    REQUIRE(s.insert_api_key(make_key("k9", "o2")).has_value());
    REQUIRE(s.add_usage({{"k1", "o1", "2026-11-20", 2, 1, 1, {"a", "b"}},
                         {"k2", "o1", "2026-11-20", 5, 4, 3, {"b", "c"}},
                         {"k1", "o1", "2026-11-22", 1, 1, 0, {"a"}},
                         {"k2", "o1", "2026-10-01", 7, 7, 7, {"old"}},
                         {"k9", "o2", "2026-11-20", 50, 50, 50, {"z"}}})
                .has_value());

    auto days = s.organization_usage_between("o1", "2026-11-01", "2026-11-30");
    REQUIRE_MESSAGE(days.has_value(), why(days));
    REQUIRE(days->size() == 2);
    CHECK((*days)[0].day == "2026-11-20");
    CHECK((*days)[0].requests == 7);
    CHECK((*days)[0].successful == 5);
    CHECK((*days)[0].credits == 4);
    CHECK((*days)[1].day == "2026-11-22");
    CHECK((*days)[1].requests == 1);
    CHECK(s.organization_usage_between("o3", "2026-11-01", "2026-11-30")
              ->empty());

    auto keys = s.organization_usage_by_key("o1", "2026-11-01", "2026-11-30");
    REQUIRE_MESSAGE(keys.has_value(), why(keys));
    REQUIRE(keys->size() == 2);
    CHECK((*keys)[0].key_id == "k2"); // most requests first
    CHECK((*keys)[0].requests == 5);
    CHECK((*keys)[0].successful == 4);
    CHECK((*keys)[0].credits == 3);
    CHECK((*keys)[1].key_id == "k1");
    CHECK((*keys)[1].requests == 3);
    CHECK((*keys)[1].credits == 1);
    // The October day counts when the window reaches it.
    auto wide = s.organization_usage_by_key("o1", "2026-10-01", "2026-11-30");
    CHECK((*wide)[0].requests == 12);

    // a, b, c over both keys (b validated with both counts once).
    CHECK(*s.organization_distinct_addresses("o1", "2026-11-01",
                                             "2026-11-30") == 3);
    CHECK(*s.organization_distinct_addresses("o1", "2026-11-21",
                                             "2026-11-30") == 1);
    CHECK(*s.organization_distinct_addresses("o2", "2026-11-01",
                                             "2026-11-30") == 1);

    // A deleted key's usage goes with it.
    REQUIRE(s.delete_api_key("o1", "k2").has_value());
    auto after = s.organization_usage_between("o1", "2026-11-01", "2026-11-30");
    REQUIRE(after->size() == 2);
    CHECK((*after)[0].requests == 2);
    CHECK(*s.organization_distinct_addresses("o1", "2026-11-01",
                                             "2026-11-30") == 2);
  }
}
