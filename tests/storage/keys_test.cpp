#include "support.hpp"

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;

TEST_SUITE("storage.keys") {
  TEST_CASE_TEMPLATE("a key round-trips every field, null limits included",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    auto k = make_key("k1", "o1");
    k.allowed_domains = {"a.example", "quote\"and\\back", "line\nbreak", ""};
    k.limits = {std::nullopt, 3600, std::nullopt};
    k.config = {true, false, true, false, true};
    k.status = acc::key_status::revoked;
    REQUIRE(s.insert_api_key(k).has_value());

    for (auto got :
         {s.get_api_key("o1", "k1"), s.find_api_key_by_hash("hash-k1")}) {
      REQUIRE(got.has_value());
      CHECK(got->id == "k1");
      CHECK(got->organization_id == "o1");
      CHECK(got->name == k.name);
      CHECK(got->key_hash == k.key_hash);
      CHECK(got->prefix == k.prefix);
      CHECK(got->allowed_domains == k.allowed_domains);
      CHECK(got->config.smtp);
      CHECK_FALSE(got->config.disposable);
      CHECK(got->config.role_account);
      CHECK_FALSE(got->config.enrichment);
      CHECK(got->config.random_detection);
      CHECK_FALSE(got->limits.per_minute.has_value());
      CHECK(got->limits.per_hour == std::optional<std::int64_t>{3600});
      CHECK_FALSE(got->limits.per_day.has_value());
      CHECK(got->status == acc::key_status::revoked);
      CHECK(got->created_at == 2000);
      CHECK(got->updated_at == 2000);
    }
    CHECK(s.find_api_key_by_hash("nope").error_value().code == errc::not_found);
  }

  TEST_CASE_TEMPLATE("a duplicate key hash is a conflict", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    auto k = make_key("k2", "o2");
    k.key_hash = "hash-k1";
    CHECK(s.insert_api_key(k).error_value().code == errc::conflict);
    CHECK(s.insert_api_key(make_key("k1", "o2")).error_value().code ==
          errc::conflict);
    CHECK(s.list_api_keys("o2")->empty());
    CHECK(s.insert_api_key(make_key("k3", "nope")).error_value().code ==
          errc::not_found);
  }

  TEST_CASE_TEMPLATE("keys are listed per organization, oldest first", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    create_org(s, "o2", "other@example.com");
    REQUIRE(s.insert_api_key(make_key("late", "o1", 3000)).has_value());
    REQUIRE(s.insert_api_key(make_key("early", "o1", 1000)).has_value());
    REQUIRE(s.insert_api_key(make_key("theirs", "o2", 500)).has_value());
    auto keys = s.list_api_keys("o1");
    REQUIRE(keys.has_value());
    REQUIRE(keys->size() == 2);
    CHECK((*keys)[0].id == "early");
    CHECK((*keys)[1].id == "late");
    CHECK(s.list_api_keys("nobody")->empty());
  }

  TEST_CASE_TEMPLATE("another organization cannot get, update or delete a key",
                     TestType, MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "a", "a@example.com");
    create_org(s, "b", "b@example.com");
    REQUIRE(s.insert_api_key(make_key("ka", "a")).has_value());
    CHECK(s.get_api_key("b", "ka").error_value().code == errc::not_found);
    api_key_update u;
    u.name = "stolen";
    u.status = acc::key_status::revoked;
    CHECK(s.update_api_key("b", "ka", u, 5000).error_value().code ==
          errc::not_found);
    CHECK(s.delete_api_key("b", "ka").error_value().code == errc::not_found);
    auto still = s.get_api_key("a", "ka");
    REQUIRE(still.has_value());
    CHECK(still->name == "key ka");
    CHECK(still->status == acc::key_status::active);
    CHECK(s.get_api_key("a", "missing").error_value().code == errc::not_found);
  }

  TEST_CASE_TEMPLATE("an update changes only the fields it sets", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    auto k = make_key("k1", "o1");
    REQUIRE(s.insert_api_key(k).has_value());

    api_key_update rename;
    rename.name = "renamed";
    auto r1 = s.update_api_key("o1", "k1", rename, 3000);
    REQUIRE(r1.has_value());
    CHECK(r1->name == "renamed");
    CHECK(r1->allowed_domains == k.allowed_domains);
    CHECK(r1->limits.per_minute == std::optional<std::int64_t>{60});
    CHECK(r1->config.smtp);
    CHECK(r1->updated_at == 3000);
    CHECK(r1->created_at == 2000);

    api_key_update rest;
    rest.allowed_domains = std::vector<std::string>{};
    rest.config = acc::key_config{false, false, false, true, false};
    rest.limits = acc::rate_limits{std::nullopt, std::nullopt, 10};
    rest.status = acc::key_status::revoked;
    REQUIRE(s.update_api_key("o1", "k1", rest, 4000).has_value());
    auto got = s.get_api_key("o1", "k1");
    REQUIRE(got.has_value());
    CHECK(got->name == "renamed");
    CHECK(got->allowed_domains.empty());
    CHECK_FALSE(got->config.smtp);
    CHECK(got->config.enrichment);
    CHECK_FALSE(got->limits.per_minute.has_value());
    CHECK(got->limits.per_day == std::optional<std::int64_t>{10});
    CHECK(got->status == acc::key_status::revoked);
    CHECK(got->updated_at == 4000);
  }

  TEST_CASE_TEMPLATE("deleting a key deletes its usage", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_STORE(t, s);
    create_org(s, "o1", "owner@example.com");
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    REQUIRE(s.add_usage({{"k1", "o1", "2026-11-20", 3, 2, 1, {"h1", "h2"}}})
                .has_value());
    REQUIRE(s.delete_api_key("o1", "k1").has_value());
    CHECK(s.get_api_key("o1", "k1").error_value().code == errc::not_found);
    CHECK(s.delete_api_key("o1", "k1").error_value().code == errc::not_found);
    CHECK(s.usage_between("k1", "2026-01-01", "2026-12-31")->empty());
    CHECK(*s.distinct_addresses("k1", "2026-01-01", "2026-12-31") == 0);
    // The same key id and hash can be used again: nothing was left behind.
    REQUIRE(s.insert_api_key(make_key("k1", "o1")).has_value());
    CHECK(s.usage_between("k1", "2026-01-01", "2026-12-31")->empty());
  }
}
