#pragma once

// Several `mailassay serve` processes sharing one PostgreSQL schema (and one
// Redis key prefix), as docs/deployment.md runs them.

#include "tests/http/fixtures.hpp"
#include "tests/support/pg_schema.hpp"
#include "tests/support/redis_process.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mailassay::testing {

/// What a cluster shares.
struct cluster_options {
  int nodes = 3;
  /// Redis URL; "" = the shared test Redis; "none" = no Redis at all.
  std::string redis = "";
  /// Extra environment of every node.
  std::map<std::string, std::string> env;
};

/// N processes on one database: a fresh PostgreSQL schema in
/// $MAILASSAY_TEST_PG_URL (dropped afterwards) and a fresh Redis prefix.
class cluster {
public:
  explicit cluster(cluster_options opts = {});
  ~cluster();
  cluster(const cluster&) = delete;
  cluster& operator=(const cluster&) = delete;

  /// Whether the test must be skipped (no PostgreSQL or Redis, with the
  /// matching MAILASSAY_TEST_SKIP_* set).
  bool skipped() const { return skipped_; }

  /// Node `i`.
  server_process& node(int i) { return *nodes_.at(i); }
  /// Shortcuts for node `i`.
  api at(int i) { return api{node(i)}; }
  /// The number of nodes.
  int size() const { return static_cast<int>(nodes_.size()); }
  /// The database URL every node uses.
  const std::string& database_url() const { return schema_->url(); }
  /// The Redis key prefix every node uses.
  const std::string& redis_prefix() const { return prefix_; }

private:
  bool skipped_ = false;
  std::unique_ptr<pg_schema> schema_;
  std::string prefix_;
  std::vector<std::unique_ptr<server_process>> nodes_;
};

} // namespace mailassay::testing

/// Builds cluster `name` with `opts`, or returns when it must be skipped.
#define MAILASSAY_CLUSTER(name, ...)                                           \
  mailassay::testing::cluster name{__VA_ARGS__};                               \
  if (name.skipped())                                                          \
  return
