#include "core/limits/client_ip.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core::limits;

namespace {

trusted_networks trust(std::vector<std::string> entries) {
  auto parsed = trusted_networks::parse(entries);
  REQUIRE(parsed.has_value());
  return *parsed;
}

} // namespace

TEST_SUITE("core.limits.client_ip") {
  TEST_CASE("parses trusted proxies as IPs and CIDRs, rejecting bad ones") {
    struct case_t {
      std::string entry;
      bool ok;
    };
    const case_t cases[] = {
        {"10.0.0.1", true},
        {"10.0.0.0/8", true},
        {"0.0.0.0/0", true},
        {"::1", true},
        {"fd00::/8", true},
        {"2001:db8::/32", true},
        {"::ffff:10.0.0.0/104", true},
        {"10.0.0.0/33", false},
        {"fd00::/129", false},
        {"10.0.0/8", false},
        {"10.0.0.0/", false},
        {"10.0.0.0/x", false},
        {"proxy.local", false},
        {"", false},
        {"10.0.0.0/-1", false},
    };
    for (const auto& c : cases) {
      CAPTURE(c.entry);
      std::vector<std::string> one{c.entry};
      CHECK(trusted_networks::parse(one).has_value() == c.ok);
    }
  }

  TEST_CASE("matches addresses against IPs and CIDRs of the same family") {
    auto nets = trust(
        {"10.0.0.0/8", "192.168.1.7", "2001:db8:abcd::/48", "172.16.0.0/12"});
    struct case_t {
      const char* ip;
      bool inside;
    };
    const case_t cases[] = {
        {"10.1.2.3", true},
        {"11.0.0.1", false},
        {"192.168.1.7", true},
        {"192.168.1.8", false},
        {"172.31.255.255", true},
        {"172.32.0.0", false},
        {"2001:db8:abcd:12::1", true},
        {"2001:db8:abce::1", false},
        {"::ffff:10.9.9.9", true}, // IPv4-mapped: a dual-stack peer
        {"::a00:1", false},        // same bytes, other family
    };
    for (const auto& c : cases) {
      CAPTURE(c.ip);
      auto ip = parse_ip(c.ip);
      REQUIRE(ip);
      CHECK(nets.contains(*ip) == c.inside);
    }
  }

  TEST_CASE("chooses the peer or the first forwarded hop") {
    auto nets = trust({"10.0.0.0/8", "::1", "fd00::/8"});
    struct case_t {
      const char* name;
      const char* peer;
      const char* xff;
      const char* expected;
    };
    const case_t cases[] = {
        {"no header: the peer", "203.0.113.9", "", "203.0.113.9"},
        {"untrusted peer: header ignored (spoofing)", "203.0.113.9",
         "198.51.100.1", "203.0.113.9"},
        {"untrusted IPv6 peer: header ignored", "2001:db8::5", "198.51.100.1",
         "2001:db8::5"},
        {"trusted proxy: the first hop", "10.0.0.2", "198.51.100.1, 10.0.0.3",
         "198.51.100.1"},
        {"trusted proxy, spaces around the hop", "10.0.0.2",
         "  198.51.100.1  ,10.0.0.3", "198.51.100.1"},
        {"trusted IPv6 proxy: IPv6 client", "::1", "2001:DB8:0:0::7",
         "2001:db8::7"},
        {"trusted via CIDR (IPv6)", "fd12::1", "198.51.100.4", "198.51.100.4"},
        {"dual-stack mapped peer is trusted as IPv4", "::ffff:10.1.1.1",
         "198.51.100.1", "198.51.100.1"},
        {"hop with a port", "10.0.0.2", "198.51.100.1:4711", "198.51.100.1"},
        {"bracketed IPv6 hop with a port", "10.0.0.2", "[2001:db8::9]:443",
         "2001:db8::9"},
        {"bracketed IPv6 hop", "10.0.0.2", "[2001:db8::9]", "2001:db8::9"},
        {"malformed hop: the peer", "10.0.0.2", "not-an-ip", "10.0.0.2"},
        {"empty first hop: the peer", "10.0.0.2", ", 198.51.100.1", "10.0.0.2"},
        {"out-of-range octet: the peer", "10.0.0.2", "198.51.100.256",
         "10.0.0.2"},
        {"bad port: the peer", "10.0.0.2", "198.51.100.1:99999", "10.0.0.2"},
        {"unclosed bracket: the peer", "10.0.0.2", "[2001:db8::9", "10.0.0.2"},
        {"IPv4 in brackets: the peer", "10.0.0.2", "[198.51.100.1]",
         "10.0.0.2"},
        {"a name is not an address: the peer", "10.0.0.2", "unknown",
         "10.0.0.2"},
        {"peer text is canonicalized", "2001:0DB8::0001", "", "2001:db8::1"},
        {"unparsable peer is returned as given", "weird", "198.51.100.1",
         "weird"},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      CHECK(client_ip(c.peer, c.xff, nets) == c.expected);
    }
  }

  TEST_CASE("trusts nobody by default") {
    trusted_networks none;
    CHECK(client_ip("10.0.0.2", "198.51.100.1", none) == "10.0.0.2");
    CHECK(client_ip("127.0.0.1", "198.51.100.1", none) == "127.0.0.1");
  }
}
