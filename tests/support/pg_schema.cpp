#include "tests/support/pg_schema.hpp"

#include <atomic>
#include <chrono>
#include <libpq-fe.h>
#include <unistd.h>

namespace mailassay::testing {

namespace {

std::atomic<int> counter{0};

} // namespace

pg_schema::pg_schema(const std::string& base_url, const std::string& tag)
    : base_(base_url) {
  // The process id and a counter keep concurrent tests apart; the clock,
  // a later run whose process id repeats one left behind by a crash.
  auto now = std::chrono::system_clock::now().time_since_epoch();
  name_ = tag + std::to_string(::getpid()) + "_" + std::to_string(++counter) +
          "_" +
          std::to_string(
              std::chrono::duration_cast<std::chrono::seconds>(now).count() %
              100000);
  url_ = base_ + (base_.find('?') == std::string::npos ? "?" : "&") +
         "schema=" + name_;
}

pg_schema::~pg_schema() {
  // The base URL has no schema parameter, so libpq takes it as it is. A
  // schema left behind (the server unreachable) only costs disk space.
  PGconn* c = PQconnectdb(base_.c_str());
  if (PQstatus(c) == CONNECTION_OK)
    PQclear(PQexec(c, ("DROP SCHEMA IF EXISTS " + name_ + " CASCADE").c_str()));
  PQfinish(c);
}

} // namespace mailassay::testing
