#include "core/egress/names.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using namespace mailassay::core::egress;

TEST_SUITE("core.egress.names") {
  TEST_CASE("reverse names of IPv4 and IPv6 addresses") {
    struct row {
      const char* ip;
      std::optional<std::string> want;
    };
    for (auto& r : {
             row{"192.0.2.1", "1.2.0.192.in-addr.arpa"},
             row{"127.0.0.2", "2.0.0.127.in-addr.arpa"},
             row{"2001:db8::1",
                 "1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0."
                 "0.2.ip6.arpa"},
             row{"not an ip", std::nullopt},
             row{"", std::nullopt},
         }) {
      CAPTURE(r.ip);
      CHECK(reverse_name(r.ip) == r.want);
    }
  }

  TEST_CASE("blocklist names put the reversed address before the zone") {
    CHECK(dnsbl_name("192.0.2.99", "zen.spamhaus.org") ==
          "99.2.0.192.zen.spamhaus.org");
    CHECK(dnsbl_name("127.0.0.2", "zen.test.") == "2.0.0.127.zen.test");
    CHECK(dnsbl_name("::1", "bl.test")->ends_with(".0.0.0.bl.test"));
    CHECK(dnsbl_name("192.0.2.1", "") == std::nullopt);
    CHECK(dnsbl_name("x", "zen.test") == std::nullopt);
  }

  TEST_CASE("an EHLO name is a fully qualified domain name") {
    struct row {
      const char* name;
      bool want;
    };
    for (auto& r : {row{"probe.example.io", true}, row{"a.b", true},
                    row{"mx-1.example.com.", true}, row{"localhost", false},
                    row{"", false}, row{"example..com", false},
                    row{"-bad.example.com", false}, row{"bad-.example", false},
                    row{"under_score.example.com", false},
                    row{"192.0.2.1", false}, row{"host.123", false}}) {
      CAPTURE(r.name);
      CHECK(is_fqdn(r.name) == r.want);
    }
  }
}
