#include "core/smtp/address_policy.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::smtp;

TEST_SUITE("core.smtp.address_policy") {
  TEST_CASE("classifies addresses after the special-purpose registries") {
    struct row {
      const char* address;
      address_kind kind;
    };
    const row rows[] = {
        {"8.8.8.8", address_kind::public_unicast},
        {"93.184.216.34", address_kind::public_unicast},
        {"1.1.1.1", address_kind::public_unicast},
        {"0.0.0.0", address_kind::reserved},
        {"0.1.2.3", address_kind::reserved},
        {"10.0.0.1", address_kind::private_use},
        {"10.255.255.255", address_kind::private_use},
        {"11.0.0.1", address_kind::public_unicast},
        {"100.64.0.1", address_kind::private_use},
        {"100.127.255.255", address_kind::private_use},
        {"100.128.0.1", address_kind::public_unicast},
        {"100.63.255.255", address_kind::public_unicast},
        {"127.0.0.1", address_kind::loopback},
        {"127.1.2.3", address_kind::loopback},
        {"169.254.169.254", address_kind::link_local},
        {"172.15.255.255", address_kind::public_unicast},
        {"172.16.0.1", address_kind::private_use},
        {"172.31.255.255", address_kind::private_use},
        {"172.32.0.1", address_kind::public_unicast},
        {"192.0.0.8", address_kind::reserved},
        {"192.0.2.1", address_kind::reserved},
        {"192.88.99.1", address_kind::reserved},
        {"192.167.255.255", address_kind::public_unicast},
        {"192.168.1.1", address_kind::private_use},
        {"198.18.0.1", address_kind::reserved},
        {"198.19.255.255", address_kind::reserved},
        {"198.20.0.1", address_kind::public_unicast},
        {"198.51.100.7", address_kind::reserved},
        {"203.0.113.9", address_kind::reserved},
        {"224.0.0.1", address_kind::multicast},
        {"239.255.255.250", address_kind::multicast},
        {"240.0.0.1", address_kind::reserved},
        {"255.255.255.255", address_kind::reserved},
        {"2001:4860:4860::8888", address_kind::public_unicast},
        {"2a00:1450:4001::1a", address_kind::public_unicast},
        {"::1", address_kind::loopback},
        {"::", address_kind::reserved},
        {"::ffff:10.0.0.1", address_kind::reserved},
        {"::ffff:8.8.8.8", address_kind::reserved},
        {"64:ff9b::a00:1", address_kind::reserved},
        {"100::1", address_kind::reserved},
        {"2001::1", address_kind::reserved},
        {"2001:db8::25", address_kind::reserved},
        {"2002:a00:1::1", address_kind::reserved},
        {"3fff::1", address_kind::reserved},
        {"fc00::1", address_kind::private_use},
        {"fd12:3456::1", address_kind::private_use},
        {"fe80::1", address_kind::link_local},
        {"febf::1", address_kind::link_local},
        {"fec0::1", address_kind::reserved},
        {"ff02::1", address_kind::multicast},
        {"4000::1", address_kind::reserved},
        {"mx.example.org", address_kind::invalid},
        {"", address_kind::invalid},
        {"10.0.0.1/8", address_kind::invalid},
        {"fe80::1%eth0", address_kind::invalid},
    };
    for (const auto& r : rows) {
      CAPTURE(r.address);
      CHECK(classify(std::string_view{r.address}) == r.kind);
    }
  }

  TEST_CASE("names each kind") {
    CHECK(to_string(address_kind::public_unicast) == "public");
    CHECK(to_string(address_kind::private_use) == "private");
    CHECK(to_string(address_kind::link_local) == "link_local");
  }

  TEST_CASE("allows only public addresses with an empty allow-list") {
    target_policy p;
    CHECK(p.public_only());
    CHECK(p.check("8.8.8.8").allowed);
    CHECK(p.check("2001:4860:4860::8888").allowed);
    for (auto a : {"127.0.0.1", "10.1.2.3", "172.16.5.5", "192.168.0.10",
                   "169.254.169.254", "100.64.1.1", "::1", "fe80::1", "fd00::1",
                   "224.0.0.5", "0.0.0.0", "255.255.255.255",
                   "::ffff:127.0.0.1", "198.18.1.1", "not-an-ip"}) {
      CAPTURE(a);
      CHECK_FALSE(p.check(a).allowed);
    }
  }

  TEST_CASE("allows loopback only when 127.0.0.0/8 is listed") {
    std::vector<std::string> allow{"127.0.0.0/8"};
    auto p = target_policy::parse(allow);
    REQUIRE(p.has_value());
    auto d = p->check("127.0.0.1");
    CHECK(d.allowed);
    CHECK(d.kind == address_kind::loopback);
    CHECK(p->check("127.0.0.53").allowed);
    CHECK(p->check("8.8.8.8").allowed);
    CHECK_FALSE(p->check("10.0.0.1").allowed);
    CHECK_FALSE(p->check("::1").allowed);
    CHECK_FALSE(p->check("169.254.0.1").allowed);
  }

  TEST_CASE("allows listed private networks and single addresses") {
    std::vector<std::string> allow{"10.20.0.0/16", "fd00::/8", "192.168.1.25"};
    auto p = target_policy::parse(allow);
    REQUIRE(p.has_value());
    CHECK(p->check("10.20.3.4").allowed);
    CHECK_FALSE(p->check("10.21.3.4").allowed);
    CHECK(p->check("fd00::25").allowed);
    CHECK_FALSE(p->check("fc00::25").allowed);
    CHECK(p->check("192.168.1.25").allowed);
    CHECK_FALSE(p->check("192.168.1.26").allowed);
  }

  TEST_CASE("refuses an unparsable allow-list entry by name") {
    std::vector<std::string> allow{"127.0.0.0/8", "10.0.0.0/33"};
    auto p = target_policy::parse(allow);
    REQUIRE_FALSE(p.has_value());
    CHECK(p.error_value().message.find("10.0.0.0/33") != std::string::npos);
  }
}
