// Retention across a cluster (docs/privacy.md, "Retention"): every process
// sweeps, and each job's results are erased by exactly one of them.
#include "tests/cluster/cluster.hpp"
#include "tests/peers/dns_peer.hpp"

#include <chrono>
#include <string>
#include <vector>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using namespace std::chrono_literals;

TEST_SUITE("cluster") {
  TEST_CASE("three processes sweeping every second erase each job's results "
            "once; any process then answers 410") {
    dns_peer dns;
    dns.load_zone("good.test MX 10 mx.good.test\n");
    MAILASSAY_CLUSTER(
        c, cluster_options{3,
                           "",
                           {{"MAILASSAY_DNS_SERVERS", dns.server()},
                            {"MAILASSAY_DNS_TIMEOUT_MS", "1000"},
                            {"MAILASSAY_DNS_TRIES", "1"},
                            {"MAILASSAY_BATCH_POLL_MS", "100"},
                            {"MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS", "true"},
                            {"MAILASSAY_BATCH_RETENTION_SECONDS", "1"},
                            {"MAILASSAY_BATCH_RETENTION_SWEEP_SECONDS", "1"}}});
    auto jwt = c.at(0)
                   .signup("Retention", unique_email("ret"))["accessToken"]
                   .get<std::string>();
    auto key = c.at(0).create_key(jwt)["key"].get<std::string>();
    constexpr int jobs = 4;
    std::vector<std::string> ids;
    for (int n = 0; n < jobs; ++n) {
      std::string csv = "email\n";
      for (int i = 0; i < 10; ++i)
        csv += "u" + std::to_string(i) + "@good.test\n";
      auto up = c.at(n % 3).call(
          "POST", "/v2/batch/upload", "", csv,
          {{"Authorization", "Bearer " + key}, {"Content-Type", "text/csv"}});
      REQUIRE_MESSAGE(up.status == 201, up.body);
      ids.push_back(json::parse(up.body)["id"].get<std::string>());
      // One active job per organization: the next waits for this one.
      REQUIRE(eventually(
          [&] {
            auto j = json::parse(
                c.at(0).call("GET", "/v2/batch/" + ids.back(), key).body);
            return j["status"] != "queued" && j["status"] != "processing";
          },
          60s, 50ms));
    }
    for (const auto& id : ids) {
      CAPTURE(id);
      REQUIRE(eventually(
          [&] {
            auto j =
                json::parse(c.at(1).call("GET", "/v2/batch/" + id, key).body);
            return !j["resultsErasedAt"].is_null();
          },
          60s, 50ms));
      for (int i = 0; i < 3; ++i) {
        auto r = c.at(i).call("GET", "/v2/batch/" + id + "/results", key);
        CHECK(r.status == 410);
        CHECK(json::parse(r.body)["code"] == "RESULTS_ERASED");
      }
    }
    // Each erase counted by the one process that did it (the count follows
    // the commit by a moment).
    auto erased = [&] {
      double sum = 0;
      for (int i = 0; i < 3; ++i)
        sum += c.at(i).metric("mailassay_batch_results_erased");
      return sum;
    };
    CHECK(eventually([&] { return erased() >= jobs; }, 30s, 50ms));
    CHECK(erased() == jobs);
  }
}
