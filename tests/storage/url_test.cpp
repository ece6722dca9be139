#include "support.hpp"

#include "storage/store.hpp"
#include "storage/url.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

using namespace mailassay::storage;
using mailassay::core::errc;
using mailassay::storage::testing::why;

TEST_SUITE("storage.url") {
  TEST_CASE("SQLite URLs give absolute or relative paths") {
    struct row {
      const char* url;
      const char* path;
    };
    for (auto [url, path] : {
             row{"sqlite:///var/lib/mailassay/db.sqlite",
                 "/var/lib/mailassay/db.sqlite"},
             row{"sqlite://data/mailassay.db", "data/mailassay.db"},
             row{"sqlite://./x.db", "./x.db"},
             row{"sqlite:///tmp/with%20space.db", "/tmp/with space.db"},
         }) {
      CAPTURE(url);
      auto u = parse_database_url(url);
      REQUIRE(u.has_value());
      CHECK(u->kind == dialect::sqlite);
      CHECK(u->path == path);
    }
  }

  TEST_CASE("PostgreSQL URLs are split and percent-decoded") {
    auto u = parse_database_url(
        "postgresql://app%40x:p%3Ass%2Fw@db.local:6543/main%5Fdb?schema=s1");
    REQUIRE(u.has_value());
    CHECK(u->kind == dialect::postgresql);
    CHECK(u->user == "app@x");
    CHECK(u->password == "p:ss/w");
    CHECK(u->host == "db.local");
    CHECK(u->port == "6543");
    CHECK(u->dbname == "main_db");
    CHECK(u->schema == "s1");

    auto bare = parse_database_url("postgres://localhost/db");
    REQUIRE(bare.has_value());
    CHECK(bare->user.empty());
    CHECK(bare->password.empty());
    CHECK(bare->port.empty());
    CHECK(bare->host == "localhost");

    auto user_only = parse_database_url("postgresql://bob@[::1]:5432/db");
    REQUIRE(user_only.has_value());
    CHECK(user_only->user == "bob");
    CHECK(user_only->host == "::1");
    CHECK(user_only->port == "5432");
  }

  TEST_CASE("the connection string quotes values and never drops a field") {
    auto u = parse_database_url("postgresql://u:it's%5Cx@h:1/d");
    REQUIRE(u.has_value());
    auto info = postgres_conninfo(*u);
    CHECK(info.find("password='it\\'s\\\\x'") != std::string::npos);
    CHECK(info.find("host='h'") != std::string::npos);
    CHECK(info.find("port='1'") != std::string::npos);
    CHECK(describe(*u).find("it's") == std::string::npos);
  }

  TEST_CASE("malformed URLs are refused with bad_request") {
    for (auto url : {
             "",
             "mysql://u@h/db",
             "sqlite://",
             "sqlite:///",
             "sqlite:///dir/",
             "sqlite:///bad%zzname",
             "postgresql://host",
             "postgresql://host/",
             "postgresql://host:port/db",
             "postgresql://host:99999/db",
             "postgresql://host:/db",
             "postgresql://:5432/db",
             "postgresql://u@h/db?sslmode=disable",
             "postgresql://u@h/db?schema=Bad-Name",
             "postgresql://u%zz@h/db",
             "postgresql://[::1/db",
         }) {
      CAPTURE(url);
      auto u = parse_database_url(url);
      REQUIRE_FALSE(u.has_value());
      CHECK(u.error_value().code == errc::bad_request);
      CHECK(u.error_value().message.find("invalid database URL") == 0);
      auto s = open_store(url);
      REQUIRE_FALSE(s.has_value());
      CHECK(s.error_value().code == errc::bad_request);
    }
  }

  TEST_CASE("an unreachable PostgreSQL server is unavailable") {
    // Port 1 on loopback: nothing listens there.
    auto s = open_store("postgresql://u:p@127.0.0.1:1/db");
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error_value().code == errc::unavailable);
    CHECK(s.error_value().message.find("127.0.0.1:1") != std::string::npos);
    CHECK(s.error_value().message.find(":p@") == std::string::npos);
  }

  TEST_CASE("a SQLite store creates its missing directory, also relative") {
    namespace fs = std::filesystem;
    auto base = fs::temp_directory_path() /
                ("mailassay-url-" + std::to_string(::getpid()));
    fs::remove_all(base);
    auto path = base / "a b" / "c" / "db.sqlite";
    {
      auto s = open_store("sqlite://" + path.string());
      REQUIRE_MESSAGE(s.has_value(), why(s));
      CHECK((*s)->backend_name() == "sqlite");
      CHECK((*s)->ping().has_value());
    }
    CHECK(fs::exists(path));
    auto old = fs::current_path();
    fs::current_path(base);
    {
      auto s = open_store("sqlite://rel/dir/db.sqlite");
      REQUIRE(s.has_value());
    }
    CHECK(fs::exists(base / "rel" / "dir" / "db.sqlite"));
    fs::current_path(old);
    fs::remove_all(base);
  }

  TEST_CASE("a SQLite path that cannot be created is unavailable") {
    auto s = open_store("sqlite:///proc/no-such-dir/db.sqlite");
    REQUIRE_FALSE(s.has_value());
    CHECK(s.error_value().code == errc::unavailable);
  }
}
