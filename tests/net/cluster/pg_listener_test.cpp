// The LISTEN connection against the test PostgreSQL: payloads arrive,
// a lost connection is made again and says so.
#include "net/io_thread.hpp"
#include "net/pg_listener.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <functional>
#include <libpq-fe.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using mailassay::testing::eventually;

namespace {

void notify(const std::string& url, const std::string& channel,
            const std::string& payload) {
  PGconn* c = PQconnectdb(url.c_str());
  REQUIRE(PQstatus(c) == CONNECTION_OK);
  const char* params[] = {channel.c_str(), payload.c_str()};
  PGresult* r = PQexecParams(c, "SELECT pg_notify($1, $2)", 2, nullptr, params,
                             nullptr, nullptr, 0);
  CHECK(PQresultStatus(r) == PGRES_TUPLES_OK);
  PQclear(r);
  PQfinish(c);
}

struct heard {
  std::mutex mtx;
  std::vector<std::string> payloads;
  std::vector<bool> listens; // `first` of each on_listening
  std::size_t count() {
    std::lock_guard g{mtx};
    return payloads.size();
  }
  std::size_t listened() {
    std::lock_guard g{mtx};
    return listens.size();
  }
};

} // namespace

TEST_SUITE("net.pg_listener") {
  TEST_CASE("notifications arrive; a dropped connection LISTENs again and "
            "says it is not the first time") {
    const char* url = std::getenv("MAILASSAY_TEST_PG_URL");
    if (!url || !*url) {
      const char* skip = std::getenv("MAILASSAY_TEST_SKIP_PG");
      REQUIRE_MESSAGE((skip && std::string{skip} == "1"),
                      "MAILASSAY_TEST_PG_URL is not set");
      return;
    }
    std::string channel =
        "mailassay_listener_test_" + std::to_string(::getpid());
    net::io_thread loop{"pg-test"};
    heard h;
    net::pg_listener_options o;
    o.conninfo = url;
    o.channel = channel;
    auto l = net::pg_listener::start(
        loop.context(), o,
        [&h](std::string_view p) {
          std::lock_guard g{h.mtx};
          h.payloads.emplace_back(p);
        },
        [&h](bool first) {
          std::lock_guard g{h.mtx};
          h.listens.push_back(first);
        });
    REQUIRE(eventually([&] { return l->counters().listening.load(); }));
    notify(url, channel, "k:one");
    notify(url, "some_other_channel", "k:nobody");
    notify(url, channel, "k:two");
    REQUIRE(eventually([&] { return h.count() == 2; }));
    CHECK(h.payloads == std::vector<std::string>{"k:one", "k:two"});

    l->drop_connection();
    REQUIRE(eventually([&] { return h.listened() == 2; }));
    CHECK(h.listens == std::vector<bool>{true, false});
    CHECK(l->counters().failures.load() == 1);
    notify(url, channel, "k:three");
    REQUIRE(eventually([&] { return h.count() == 3; }));
    CHECK(h.payloads.back() == "k:three");
    CHECK(l->counters().notifications.load() == 3);
    // It also sends on its own connection (the acknowledgements of
    // actors/cluster_events), in order; a listening session hears its own.
    l->notify("a:n1:k:three");
    l->notify("a:n1:k:four");
    REQUIRE(eventually([&] { return h.count() == 5; }));
    CHECK(h.payloads[3] == "a:n1:k:three");
    CHECK(h.payloads[4] == "a:n1:k:four");
    CHECK(l->counters().sent.load() == 2);
    CHECK(l->counters().failures.load() == 1);
    l->stop();
    loop.stop();
  }
}
