#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

using namespace mailassay::tests::peers;

TEST_SUITE("tests.peers.dns_peer") {
  TEST_CASE("parses a zone text into entries") {
    auto zone = parse_dns_zone(R"(
# comment
example.org MX 10 mx1.example.org
example.org 60 MX 20 mx2.example.org   # TTL applies to the name
mx1.example.org A 127.0.0.2
v6.org AAAA ::1
alias.org CNAME Example.ORG.
gone.org NXDOMAIN
gone.org SOA 30 600
dead.org DROP
slow.org DELAY 250
*.bench.test MX 10 mx.bench.test
)");
    REQUIRE(zone.size() == 8);
    CHECK(zone[0].first == "example.org");
    CHECK(zone[0].second.mx.size() == 2);
    CHECK(zone[0].second.ttl == 60);
    CHECK(zone[3].second.cname == "example.org");
    CHECK(zone[4].second.behaviour == dns_behaviour::nxdomain);
    REQUIRE(zone[4].second.soa);
    CHECK(zone[4].second.soa->minimum == 30);
    CHECK(zone[4].second.soa->ttl == 600);
    CHECK(zone[5].second.behaviour == dns_behaviour::drop);
    CHECK(zone[6].second.delay.count() == 250);
    CHECK(zone[7].first == "*.bench.test");
  }

  TEST_CASE("refuses a malformed zone line and names it") {
    CHECK_THROWS_WITH_AS(parse_dns_zone("a.org MX ten mx.a.org"),
                         "zone line 1: bad number 'ten'", std::runtime_error);
    CHECK_THROWS_AS(parse_dns_zone("\na.org A 300.1.1.1"), std::runtime_error);
    CHECK_THROWS_AS(parse_dns_zone("a.org BOGUS"), std::runtime_error);
  }

  TEST_CASE("reports the ephemeral port it bound") {
    dns_peer peer;
    CHECK(peer.port() != 0);
    CHECK(peer.server() == "127.0.0.1:" + std::to_string(peer.port()));
    peer.stop();
    peer.stop();
  }
}
