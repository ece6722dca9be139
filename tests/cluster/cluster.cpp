#include "tests/cluster/cluster.hpp"

#include <atomic>
#include <cstdlib>
#include <libpq-fe.h>
#include <thread>
#include <unistd.h>

namespace mailassay::testing {

namespace {

std::atomic<int> counter{0};

bool skip(const char* var) {
  const char* v = std::getenv(var);
  return v && std::string{v} == "1";
}

void pg_exec(const std::string& url, const std::string& sql) {
  PGconn* c = PQconnectdb(url.c_str());
  if (PQstatus(c) == CONNECTION_OK)
    PQclear(PQexec(c, sql.c_str()));
  PQfinish(c);
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
  auto n = std::to_string(::getpid()) + "_" + std::to_string(++counter);
  schema_ = "mailassay_c" + n;
  std::string base = pg;
  db_url_ = base + (base.find('?') == std::string::npos ? "?" : "&") +
            "schema=" + schema_;
  // Unique across runs too: keys of an earlier run may not have expired.
  prefix_ = "mailassay-test:" + n + "_" +
            std::to_string(
                std::chrono::system_clock::now().time_since_epoch().count()) +
            ":";
  auto env = opts.env;
  env.emplace("MAILASSAY_DATABASE_URL", db_url_);
  if (redis != "none") {
    env.emplace("MAILASSAY_REDIS_URL", redis);
    env.emplace("MAILASSAY_REDIS_PREFIX", prefix_);
  }
  for (int i = 0; i < opts.nodes; ++i)
    nodes_.push_back(std::make_unique<server_process>(env));
}

cluster::~cluster() {
  nodes_.clear();
  if (!schema_.empty())
    pg_exec(std::getenv("MAILASSAY_TEST_PG_URL"),
            "DROP SCHEMA IF EXISTS " + schema_ + " CASCADE");
}

bool eventually(const std::function<bool()>& ok,
                std::chrono::milliseconds limit) {
  auto until = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (ok())
      return true;
    if (std::chrono::steady_clock::now() >= until)
      return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

} // namespace mailassay::testing
