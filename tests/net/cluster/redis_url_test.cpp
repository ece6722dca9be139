// redis:// URLs of MAILASSAY_REDIS_URL.
#include "net/redis_url.hpp"

#include <doctest/doctest.h>

using mailassay::net::describe;
using mailassay::net::parse_redis_url;

TEST_SUITE("net.redis_url") {
  TEST_CASE("host, port, credentials and database are read") {
    auto e = parse_redis_url("redis://127.0.0.1:56379/2");
    REQUIRE(e.has_value());
    CHECK(e->host == "127.0.0.1");
    CHECK(e->port == 56379);
    CHECK(e->db == 2);
    CHECK(e->password.empty());

    e = parse_redis_url("redis://app:p%40ss@cache.internal");
    REQUIRE(e.has_value());
    CHECK(e->user == "app");
    CHECK(e->password == "p@ss");
    CHECK(e->host == "cache.internal");
    CHECK(e->port == 6379);
    CHECK(e->db == 0);

    e = parse_redis_url("redis://[::1]:7000");
    REQUIRE(e.has_value());
    CHECK(e->host == "::1");
    CHECK(e->port == 7000);
  }

  TEST_CASE("the password never shows in a description") {
    auto e = parse_redis_url("redis://app:secret@cache:6380/1");
    REQUIRE(e.has_value());
    auto text = describe(*e);
    CHECK(text.find("secret") == std::string::npos);
    CHECK(text.find("cache") != std::string::npos);
  }

  TEST_CASE("malformed URLs are refused with a reason") {
    for (const char* bad :
         {"", "http://host", "redis://", "redis://host:0", "redis://host:99999",
          "redis://host:port", "redis://host/x", "redis://[::1"}) {
      CAPTURE(bad);
      auto e = parse_redis_url(bad);
      REQUIRE_FALSE(e.has_value());
      CHECK_FALSE(e.error_value().message.empty());
    }
  }
}
