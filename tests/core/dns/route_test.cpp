#include "core/dns/route.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mailassay::core::dns;

namespace {

lookup_result mx_answer(std::vector<mx_record> mx, std::uint32_t ttl = 300) {
  lookup_result r;
  r.code = rcode::ok;
  r.mx = std::move(mx);
  r.ttl = ttl;
  return r;
}

lookup_result code_only(rcode code,
                        std::optional<std::uint32_t> ttl = std::nullopt) {
  lookup_result r;
  r.code = code;
  r.ttl = ttl;
  return r;
}

lookup_result addresses(std::vector<std::string> addrs, bool v6,
                        std::uint32_t ttl = 120) {
  lookup_result r;
  r.code = rcode::ok;
  r.has_a = !v6;
  r.has_aaaa = v6;
  r.addresses = std::move(addrs);
  r.ttl = ttl;
  return r;
}

struct route_case {
  const char* name;
  lookup_result mx;
  std::optional<lookup_result> address;
  route_kind kind;
  std::vector<mx_record> hosts;
  rcode cause;
  std::optional<std::uint32_t> ttl;
};

} // namespace

TEST_SUITE("core.dns.route") {
  TEST_CASE("decides the mail route from MX and address answers") {
    const auto v4 = addresses({"192.0.2.1"}, false, 120);
    const auto v6 = addresses({"2001:db8::1"}, true, 90);
    const route_case cases[] = {
        {"MX hosts come out by priority",
         mx_answer({{"mx2.example.org", 20}, {"mx1.example.org", 10}}),
         std::nullopt,
         route_kind::mx,
         {{"mx1.example.org", 10}, {"mx2.example.org", 20}},
         rcode::ok,
         300},
        {"equal priorities keep answer order",
         mx_answer({{"b.example.org", 10},
                    {"a.example.org", 10},
                    {"c.example.org", 5}}),
         std::nullopt,
         route_kind::mx,
         {{"c.example.org", 5}, {"b.example.org", 10}, {"a.example.org", 10}},
         rcode::ok,
         300},
        {"hosts are lower-cased, trailing dots and duplicates dropped",
         mx_answer({{"MX.Example.ORG.", 20}, {"mx.example.org", 10}}),
         std::nullopt,
         route_kind::mx,
         {{"mx.example.org", 10}},
         rcode::ok,
         300},
        {"a lone MX \".\" at priority 0 is a null MX",
         mx_answer({{".", 0}}, 600),
         std::nullopt,
         route_kind::null_mx,
         {},
         rcode::ok,
         600},
        {"c-ares spells the root as an empty host",
         mx_answer({{"", 0}}),
         std::nullopt,
         route_kind::null_mx,
         {},
         rcode::ok,
         300},
        {"a lone MX \".\" at another priority still routes nowhere",
         mx_answer({{".", 10}}),
         std::nullopt,
         route_kind::null_mx,
         {},
         rcode::ok,
         300},
        {"\".\" beside real hosts is ignored",
         mx_answer({{".", 0}, {"mx.example.org", 10}}),
         std::nullopt,
         route_kind::mx,
         {{"mx.example.org", 10}},
         rcode::ok,
         300},
        {"a null MX is final even when addresses exist",
         mx_answer({{".", 0}}),
         v4,
         route_kind::null_mx,
         {},
         rcode::ok,
         300},
        {"NXDOMAIN is an invalid domain",
         code_only(rcode::nxdomain, 900),
         std::nullopt,
         route_kind::invalid_domain,
         {},
         rcode::nxdomain,
         900},
        {"SERVFAIL is a DNS error",
         code_only(rcode::servfail),
         std::nullopt,
         route_kind::dns_error,
         {},
         rcode::servfail,
         std::nullopt},
        {"a time-out is a DNS error",
         code_only(rcode::timeout),
         std::nullopt,
         route_kind::dns_error,
         {},
         rcode::timeout,
         std::nullopt},
        {"REFUSED is a DNS error",
         code_only(rcode::refused),
         std::nullopt,
         route_kind::dns_error,
         {},
         rcode::refused,
         std::nullopt},
        {"a bad answer is a DNS error",
         code_only(rcode::other_error),
         std::nullopt,
         route_kind::dns_error,
         {},
         rcode::other_error,
         std::nullopt},
        {"no MX with an A record is an implicit MX",
         code_only(rcode::nodata, 60),
         v4,
         route_kind::implicit_mx,
         {{"example.org", 0}},
         rcode::ok,
         60},
        {"no MX with an AAAA record is an implicit MX",
         code_only(rcode::nodata, 3600),
         v6,
         route_kind::implicit_mx,
         {{"example.org", 0}},
         rcode::ok,
         90},
        {"an empty MX answer (CNAME only) falls back to addresses",
         mx_answer({}, 30),
         v4,
         route_kind::implicit_mx,
         {{"example.org", 0}},
         rcode::ok,
         30},
        {"no MX and no address is no_mx",
         code_only(rcode::nodata, 60),
         code_only(rcode::nodata, 40),
         route_kind::no_mx,
         {},
         rcode::nodata,
         40},
        {"no MX and no address without SOA has no TTL",
         code_only(rcode::nodata),
         code_only(rcode::nodata),
         route_kind::no_mx,
         {},
         rcode::nodata,
         std::nullopt},
        {"no MX and a failed address lookup is a DNS error",
         code_only(rcode::nodata, 60),
         code_only(rcode::servfail),
         route_kind::dns_error,
         {},
         rcode::servfail,
         std::nullopt},
        {"no MX and no address answer at all is a DNS error",
         code_only(rcode::nodata, 60),
         std::nullopt,
         route_kind::dns_error,
         {},
         rcode::other_error,
         std::nullopt},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      auto route = interpret("Example.ORG", c.mx, c.address);
      CHECK(route.kind == c.kind);
      CHECK(route.hosts == c.hosts);
      CHECK(route.cause == c.cause);
      CHECK(route.ttl == c.ttl);
    }
  }

  TEST_CASE("an implicit MX carries the domain's addresses") {
    auto route = interpret("example.org", code_only(rcode::nodata),
                           addresses({"192.0.2.7", "192.0.2.8"}, false));
    CHECK(route.addresses ==
          std::vector<std::string>{"192.0.2.7", "192.0.2.8"});
  }

  TEST_CASE("asks for addresses only when the MX answer leaves it open") {
    CHECK(needs_address_lookup(code_only(rcode::nodata)));
    CHECK(needs_address_lookup(mx_answer({})));
    CHECK_FALSE(needs_address_lookup(mx_answer({{".", 0}})));
    CHECK_FALSE(needs_address_lookup(mx_answer({{"mx.example.org", 1}})));
    CHECK_FALSE(needs_address_lookup(code_only(rcode::nxdomain)));
    CHECK_FALSE(needs_address_lookup(code_only(rcode::servfail)));
    CHECK_FALSE(needs_address_lookup(code_only(rcode::timeout)));
  }

  TEST_CASE("merges the A and AAAA answers of one name") {
    struct merge_case {
      const char* name;
      lookup_result a, aaaa;
      rcode code;
      std::vector<std::string> addrs;
      bool has_a, has_aaaa;
      std::optional<std::uint32_t> ttl;
    };
    const merge_case cases[] = {
        {"both families",
         addresses({"192.0.2.1"}, false, 50),
         addresses({"::1"}, true, 70),
         rcode::ok,
         {"192.0.2.1", "::1"},
         true,
         true,
         50},
        {"A only",
         addresses({"192.0.2.1"}, false, 50),
         code_only(rcode::nodata, 10),
         rcode::ok,
         {"192.0.2.1"},
         true,
         false,
         50},
        {"AAAA only despite an A failure",
         code_only(rcode::timeout),
         addresses({"::1"}, true, 70),
         rcode::ok,
         {"::1"},
         false,
         true,
         70},
        {"a failure without addresses wins over nodata",
         code_only(rcode::nodata, 10),
         code_only(rcode::servfail),
         rcode::servfail,
         {},
         false,
         false,
         std::nullopt},
        {"both NXDOMAIN",
         code_only(rcode::nxdomain, 30),
         code_only(rcode::nxdomain, 20),
         rcode::nxdomain,
         {},
         false,
         false,
         20},
        {"NXDOMAIN and nodata is nodata",
         code_only(rcode::nxdomain, 30),
         code_only(rcode::nodata),
         rcode::nodata,
         {},
         false,
         false,
         30},
    };
    for (const auto& c : cases) {
      CAPTURE(c.name);
      auto merged = merge_address_answers(c.a, c.aaaa);
      CHECK(merged.code == c.code);
      CHECK(merged.addresses == c.addrs);
      CHECK(merged.has_a == c.has_a);
      CHECK(merged.has_aaaa == c.has_aaaa);
      CHECK(merged.ttl == c.ttl);
    }
  }

  TEST_CASE("names every route kind and rcode") {
    CHECK(to_string(route_kind::implicit_mx) == "implicit_mx");
    CHECK(to_string(route_kind::null_mx) == "null_mx");
    CHECK(to_string(route_kind::invalid_domain) == "invalid_domain");
    CHECK(to_string(route_kind::dns_error) == "dns_error");
    CHECK(to_string(rcode::servfail) == "servfail");
    CHECK(to_string(rcode::nodata) == "nodata");
  }

  TEST_CASE("normalizes names") {
    CHECK(normalize_name("Example.ORG.") == "example.org");
    CHECK(normalize_name(".") == ".");
    CHECK(normalize_name("") == "");
  }
}
