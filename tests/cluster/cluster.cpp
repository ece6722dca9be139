#include "tests/cluster/cluster.hpp"

#include <cstdlib>

namespace mailassay::testing {

namespace {

bool skip(const char* var) {
  const char* v = std::getenv(var);
  return v && std::string{v} == "1";
}

} // namespace

cluster::cluster(cluster_options opts) {
  const char* pg = std::getenv("MAILASSAY_TEST_PG_URL");
  if (!pg || !*pg) {
    if (skip("MAILASSAY_TEST_SKIP_PG")) {
      MESSAGE("skipped: no PostgreSQL (MAILASSAY_TEST_SKIP_PG=1)");
      skipped_ = true;
      return;
    }
    FAIL("MAILASSAY_TEST_PG_URL is not set: run `export MAILASSAY_TEST_PG_URL="
         "$(scripts/lib/test-postgres.sh | tail -n1)`");
  }
  std::string redis = opts.redis;
  if (redis.empty()) {
    if (!require_shared_redis()) {
      skipped_ = true;
      return;
    }
    redis = shared_redis_url();
  }
  schema_ = std::make_unique<pg_schema>(pg, "mailassay_c");
  // Unique across runs too (the schema's name says so): keys of an earlier
  // run may not have expired.
  prefix_ = "mailassay-test:" + schema_->name() + ":";
  auto env = opts.env;
  env.emplace("MAILASSAY_DATABASE_URL", schema_->url());
  if (redis != "none") {
    env.emplace("MAILASSAY_REDIS_URL", redis);
    env.emplace("MAILASSAY_REDIS_PREFIX", prefix_);
    // A loaded machine is not a broken Redis: at the default 250 ms a slow
    // reply made a process decide alone now and then, and the shared
    // per-host limit was exceeded in a test that expects Redis to decide.
    // A stopped Redis is still seen at once (connection refused).
    env.emplace("MAILASSAY_REDIS_TIMEOUT_MS", "2000");
  }
  for (int i = 0; i < opts.nodes; ++i)
    nodes_.push_back(std::make_unique<server_process>(env));
}

cluster::~cluster() {
  nodes_.clear(); // before their schema goes
  schema_.reset();
}

} // namespace mailassay::testing
