#include "support.hpp"

using namespace mailassay::storage;
using namespace mailassay::storage::testing;
using mailassay::core::errc;

TEST_SUITE("storage.connection") {
  TEST_CASE_TEMPLATE("a store names its backend and answers ping", TestType,
                     MAILASSAY_STORAGE_BACKENDS) {
    MAILASSAY_TEST_DB(t);
    CHECK(t.db().backend_name() ==
          (TestType::kind == dialect::sqlite ? "sqlite" : "postgresql"));
    CHECK(t.db().ping().has_value());
  }

  TEST_CASE("a PostgreSQL store reconnects after its connection was killed") {
    test_db t{dialect::postgresql};
    if (t.skipped())
      return;
    auto& s = t.db();
    create_org(s, "o1", "owner@example.com", 5);
    auto schema = t.url().substr(t.url().find("schema=") + 7);
    pg_execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
               "WHERE application_name = 'mailassay:" +
               schema + "'");
    // A read retries once on a fresh connection.
    auto b = s.get_balance("o1");
    REQUIRE_MESSAGE(b.has_value(), why(b));
    CHECK(b->balance == 5);

    pg_execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
               "WHERE application_name = 'mailassay:" +
               schema + "'");
    // A write is not blindly retried; it fails unavailable at worst,
    // and the next call works again.
    auto first = s.take_credits("o1", 1, "commit", "x", true, 2000);
    MESSAGE("write right after the kill: "
            << (first ? "ok" : first.error_value().message));
    if (!first)
      CHECK(first.error_value().code == errc::unavailable);
    auto second = s.take_credits("o1", 1, "commit", "x", true, 2000);
    REQUIRE_MESSAGE(second.has_value(), why(second));
    CHECK(s.get_balance("o1")->balance == (first ? 3 : 4));
  }
}

TEST_SUITE("storage.connection") {
  TEST_CASE("a refused PostgreSQL login is unavailable, without the password") {
    auto base = pg_base_url();
    if (base.empty())
      return; // the backend cases already report the missing URL
    auto u = parse_database_url(base);
    REQUIRE(u.has_value());
    std::string url = "postgresql://" + u->user + ":wrong-secret@" + u->host +
                      ":" + u->port + "/" + u->dbname;
    auto s = open_store(url);
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error_value().code == errc::unavailable);
    CHECK(s.error_value().message.find("wrong-secret") == std::string::npos);
  }
}
