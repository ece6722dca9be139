#include "core/dns/cache.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mailassay::core::dns;
using namespace std::chrono_literals;

namespace {

const time_point t0{};

mail_route route(route_kind kind, std::optional<std::uint32_t> ttl) {
  mail_route r;
  r.kind = kind;
  r.ttl = ttl;
  if (kind == route_kind::mx)
    r.hosts = {{"mx.example.org", 10}};
  return r;
}

} // namespace

TEST_SUITE("core.dns.cache") {
  TEST_CASE("chooses the TTL of each outcome") {
    cache_config cfg;
    cfg.min_ttl = 10;
    cfg.max_ttl = 1000;
    cfg.negative_ttl = 300;
    cfg.error_ttl = 5;
    struct ttl_case {
      const char* name;
      mail_route route;
      std::uint32_t ttl;
    };
    const ttl_case cases[] = {
        {"a positive answer keeps its TTL", route(route_kind::mx, 60), 60},
        {"a short TTL is raised to the minimum", route(route_kind::mx, 1), 10},
        {"a long TTL is cut to the maximum", route(route_kind::mx, 86400),
         1000},
        {"a positive answer without TTL gets the minimum",
         route(route_kind::implicit_mx, std::nullopt), 10},
        {"a negative answer keeps its SOA TTL",
         route(route_kind::invalid_domain, 120), 120},
        {"a negative answer without SOA gets the default",
         route(route_kind::no_mx, std::nullopt), 300},
        {"a null MX is positive", route(route_kind::null_mx, 3600), 1000},
        {"a DNS error gets the error TTL", route(route_kind::dns_error, 600),
         5},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      CHECK(cache_ttl(cfg, c.route) == c.ttl);
    }
  }

  TEST_CASE("misses, then hits until the TTL runs out") {
    cache<int> c;
    CHECK(c.find("example.org", t0).status == cache_status::miss);
    CHECK(c.begin("example.org", 1));
    CHECK(c.complete("example.org", route(route_kind::mx, 60), t0) ==
          std::vector<int>{1});
    auto hit = c.find("EXAMPLE.org.", t0 + 59s);
    REQUIRE(hit.status == cache_status::hit);
    REQUIRE(hit.route);
    CHECK(hit.route->hosts.front().host == "mx.example.org");
    CHECK(c.find("example.org", t0 + 60s).status == cache_status::miss);
    CHECK(c.size() == 0);
    CHECK(c.stats().hits == 1);
    CHECK(c.stats().misses == 2);
    CHECK(c.stats().expirations == 1);
  }

  TEST_CASE("keeps negative answers for the SOA TTL or the default") {
    cache_config cfg;
    cfg.negative_ttl = 30;
    cache<int> c{cfg};
    c.begin("gone.org", 1);
    c.complete("gone.org", route(route_kind::invalid_domain, 10), t0);
    c.begin("nomx.org", 1);
    c.complete("nomx.org", route(route_kind::no_mx, std::nullopt), t0);
    CHECK(c.find("gone.org", t0 + 9s).status == cache_status::hit);
    CHECK(c.find("gone.org", t0 + 10s).status == cache_status::miss);
    CHECK(c.find("nomx.org", t0 + 29s).status == cache_status::hit);
    CHECK(c.find("nomx.org", t0 + 30s).status == cache_status::miss);
  }

  TEST_CASE("lets one caller resolve while the others wait") {
    cache<int> c;
    CHECK(c.find("example.org", t0).status == cache_status::miss);
    CHECK(c.begin("example.org", 1));
    for (int i = 2; i <= 50; ++i) {
      CHECK(c.find("example.org", t0).status == cache_status::in_flight);
      CHECK_FALSE(c.join("example.org", i));
    }
    CHECK(c.in_flight() == 1);
    CHECK(c.stats().joins == 49);
    auto waiters = c.complete("example.org", route(route_kind::mx, 60), t0);
    REQUIRE(waiters.size() == 50);
    CHECK(waiters.front() == 1);
    CHECK(waiters.back() == 50);
    CHECK(c.in_flight() == 0);
    CHECK(c.find("example.org", t0).status == cache_status::hit);
  }

  TEST_CASE("abandoning a resolution hands back its waiters uncached") {
    cache<int> c;
    c.begin("example.org", 1);
    c.join("example.org", 2);
    CHECK(c.abandon("example.org") == std::vector<int>{1, 2});
    CHECK(c.find("example.org", t0).status == cache_status::miss);
  }

  TEST_CASE("evicts the least recently used entry beyond its capacity") {
    cache_config cfg;
    cfg.capacity = 2;
    cache<int> c{cfg};
    for (auto name : {"a.org", "b.org"}) {
      c.begin(name, 0);
      c.complete(name, route(route_kind::mx, 60), t0);
    }
    CHECK(c.find("a.org", t0).status == cache_status::hit); // b is now LRU
    c.begin("c.org", 0);
    c.complete("c.org", route(route_kind::mx, 60), t0);
    CHECK(c.size() == 2);
    CHECK(c.stats().evictions == 1);
    CHECK(c.find("b.org", t0).status == cache_status::miss);
    CHECK(c.find("a.org", t0).status == cache_status::hit);
    CHECK(c.find("c.org", t0).status == cache_status::hit);
  }

  TEST_CASE("a cache of capacity zero still deduplicates lookups") {
    cache_config cfg;
    cfg.capacity = 0;
    cache<int> c{cfg};
    CHECK(c.begin("example.org", 1));
    CHECK_FALSE(c.join("example.org", 2));
    CHECK(c.complete("example.org", route(route_kind::mx, 60), t0).size() == 2);
    CHECK(c.find("example.org", t0).status == cache_status::miss);
  }

  TEST_CASE("a DNS error is retried after the error TTL") {
    cache_config cfg;
    cfg.error_ttl = 0;
    cache<int> c{cfg};
    c.begin("broken.org", 1);
    c.complete("broken.org", route(route_kind::dns_error, std::nullopt), t0);
    CHECK(c.find("broken.org", t0).status == cache_status::miss);
  }

  TEST_CASE("a completed resolution replaces a stale entry") {
    cache<int> c;
    c.begin("example.org", 1);
    c.complete("example.org", route(route_kind::mx, 10), t0);
    c.begin("example.org", 2);
    c.complete("example.org", route(route_kind::no_mx, 100), t0 + 5s);
    auto hit = c.find("example.org", t0 + 50s);
    REQUIRE(hit.status == cache_status::hit);
    CHECK(hit.route->kind == route_kind::no_mx);
    CHECK(c.size() == 1);
  }
}
