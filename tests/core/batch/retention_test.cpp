#include "core/batch/retention.hpp"

#include <doctest/doctest.h>

using namespace mailassay::core::batch;

TEST_SUITE("core.batch.retention") {
  TEST_CASE("the shorter of the server's and the organization's retention "
            "applies; 0 on the server means forever") {
    struct row {
      std::int64_t server;
      std::optional<std::int64_t> organization;
      std::optional<std::int64_t> effective;
    };
    for (auto r : {
             row{2592000, std::nullopt, 2592000}, // the default
             row{2592000, 86400, 86400},          // the owner's shorter one
             row{86400, 2592000, 86400},         // the server was lowered since
             row{0, std::nullopt, std::nullopt}, // forever
             row{0, 3600, 3600},                 // forever, but not here
             row{1, std::nullopt, 1},
             row{2592000, 0, 2592000}, // no valid choice: the server's
         })
      CHECK_MESSAGE(effective_retention(r.server, r.organization) ==
                        r.effective,
                    r.server, " / ", r.organization.value_or(-1));
  }

  TEST_CASE("a job is due once it finished at or before now - retention") {
    CHECK(retention_cutoff(1000000, 3600, std::nullopt) == 1000000 - 3600);
    CHECK(retention_cutoff(1000000, 3600, 60) == 1000000 - 60);
    CHECK(retention_cutoff(1000000, 0, std::nullopt) == std::nullopt);
    CHECK(retention_cutoff(1000000, 0, 10) == 1000000 - 10);
    // A job finished exactly `retention` seconds ago is due; one second
    // later it is not yet.
    auto cutoff = *retention_cutoff(500, 100, std::nullopt);
    CHECK(400 <= cutoff);
    CHECK_FALSE(401 <= cutoff);
  }

  TEST_CASE("an owner's retention is 0 < value <= the server's") {
    CHECK(organization_retention_refusal(1, 2592000) == std::nullopt);
    CHECK(organization_retention_refusal(2592000, 2592000) == std::nullopt);
    auto longer = organization_retention_refusal(2592001, 2592000);
    REQUIRE(longer);
    CHECK(longer->find("batchRetentionSeconds must not be longer than the "
                       "server's retention, 2592000 seconds") !=
          std::string::npos);
    for (std::int64_t bad : {0LL, -1LL}) {
      auto r = organization_retention_refusal(bad, 2592000);
      REQUIRE(r);
      CHECK(r->find("greater than 0") != std::string::npos);
    }
    // A server that keeps forever admits up to ten years.
    CHECK(organization_retention_refusal(max_retention_seconds, 0) ==
          std::nullopt);
    auto decade = organization_retention_refusal(max_retention_seconds + 1, 0);
    REQUIRE(decade);
    CHECK(decade->find("ten years") != std::string::npos);
  }
}
