#include "net/dns_wire.hpp"

#include <ares.h>
#include <doctest/doctest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

using namespace mailassay;
using core::dns::rcode;
using core::dns::record_type;

namespace {

// Writes DNS messages byte by byte (RFC 1035 §4.1), so each test states the
// exact message it reads.
struct message {
  std::vector<unsigned char> bytes;

  void u16(unsigned v) {
    bytes.push_back(static_cast<unsigned char>(v >> 8));
    bytes.push_back(static_cast<unsigned char>(v));
  }
  void u32(std::uint32_t v) {
    u16(v >> 16);
    u16(v & 0xffff);
  }
  void name(std::string_view dotted) {
    while (!dotted.empty()) {
      auto dot = dotted.find('.');
      auto label = dotted.substr(0, dot);
      bytes.push_back(static_cast<unsigned char>(label.size()));
      bytes.insert(bytes.end(), label.begin(), label.end());
      dotted = dot == std::string_view::npos ? "" : dotted.substr(dot + 1);
    }
    bytes.push_back(0);
  }
  void header(unsigned qd, unsigned an, unsigned ns, unsigned rcode_bits = 0) {
    u16(0x1234);
    u16(0x8180 | rcode_bits); // response, RD, RA
    u16(qd);
    u16(an);
    u16(ns);
    u16(0);
  }
  void question(std::string_view qname, unsigned type) {
    name(qname);
    u16(type);
    u16(1);
  }
  // A record whose RDATA the caller writes after it, `rdlen` bytes.
  void record(std::string_view owner, unsigned type, std::uint32_t ttl,
              unsigned rdlen) {
    name(owner);
    u16(type);
    u16(1);
    u32(ttl);
    u16(rdlen);
  }
  void soa(std::string_view zone, std::uint32_t ttl, std::uint32_t minimum) {
    // MNAME "ns.<zone>", RNAME "h.<zone>", then five numbers.
    auto mname = "ns." + std::string{zone};
    auto rname = "h." + std::string{zone};
    record(zone, 6, ttl,
           static_cast<unsigned>(mname.size() + 2 + rname.size() + 2 + 20));
    name(mname);
    name(rname);
    for (std::uint32_t n : {1u, 3600u, 600u, 86400u})
      u32(n);
    u32(minimum);
  }
  const unsigned char* data() const { return bytes.data(); }
  int size() const { return static_cast<int>(bytes.size()); }
};

} // namespace

TEST_SUITE("net.dns_wire") {
  TEST_CASE("an A answer through a CNAME keeps the smallest TTL of the chain") {
    message m;
    m.header(1, 2, 0);
    m.question("www.example.test", 1);
    m.record("www.example.test", 5, 300, 18); // CNAME, 18 bytes:
    m.name("web.example.test");
    m.record("web.example.test", 1, 60, 4);
    for (unsigned char b : {192, 0, 2, 7})
      m.bytes.push_back(b);
    auto r = net::dns_wire::read_answer(ARES_SUCCESS, record_type::a, m.data(),
                                        m.size());
    CHECK(r.code == rcode::ok);
    CHECK(r.has_a);
    CHECK(r.addresses == std::vector<std::string>{"192.0.2.7"});
    CHECK(r.ttl == 60u);
  }

  TEST_CASE("MX records come in answer order with their preferences") {
    message m;
    m.header(1, 2, 0);
    m.question("example.test", 15);
    m.record("example.test", 15, 900, 2 + 18);
    m.u16(20);
    m.name("mx2.example.test");
    m.record("example.test", 15, 1200, 2 + 18);
    m.u16(10);
    m.name("mx1.example.test");
    auto r = net::dns_wire::read_answer(ARES_SUCCESS, record_type::mx, m.data(),
                                        m.size());
    REQUIRE(r.code == rcode::ok);
    REQUIRE(r.mx.size() == 2);
    CHECK(r.mx[0].host == "mx2.example.test");
    CHECK(r.mx[0].priority == 20);
    CHECK(r.mx[1].host == "mx1.example.test");
    CHECK(r.ttl == 900u);
  }

  TEST_CASE("NXDOMAIN is cached for min(SOA TTL, MINIMUM) (RFC 2308 §5)") {
    for (auto [ttl, minimum, expected] :
         {std::tuple{3600u, 120u, 120u}, std::tuple{30u, 900u, 30u}}) {
      message m;
      m.header(1, 0, 1, 3);
      m.question("gone.example.test", 15);
      m.soa("example.test", ttl, minimum);
      auto r = net::dns_wire::read_answer(ARES_ENOTFOUND, record_type::mx,
                                          m.data(), m.size());
      CHECK(r.code == rcode::nxdomain);
      CHECK(r.ttl == expected);
    }
  }

  TEST_CASE("an empty answer is nodata with the SOA's negative TTL") {
    message m;
    m.header(1, 0, 1);
    m.question("example.test", 28);
    m.soa("example.test", 600, 300);
    auto r = net::dns_wire::read_answer(ARES_SUCCESS, record_type::aaaa,
                                        m.data(), m.size());
    CHECK(r.code == rcode::nodata);
    CHECK(r.addresses.empty());
    CHECK(r.ttl == 300u);
  }

  TEST_CASE("a message cut anywhere is read up to the cut, never past it") {
    message m;
    m.header(1, 1, 1);
    m.question("example.test", 1);
    m.record("example.test", 1, 45, 4);
    for (unsigned char b : {192, 0, 2, 1})
      m.bytes.push_back(b);
    m.soa("example.test", 600, 300);
    // Where the A record ends: cut before it, c-ares finds no address.
    const int a_end = 12 + 14 + 4 + 14 + 10 + 4;
    for (int cut = 0; cut < m.size(); ++cut) {
      // A copy of exactly `cut` bytes: a read past it leaves the buffer
      // (an AddressSanitizer build reports it).
      std::vector<unsigned char> part(m.bytes.begin(), m.bytes.begin() + cut);
      auto t = net::dns_wire::read_ttls(part.data(), cut);
      if (t.answer)
        CHECK(*t.answer == 45u);
      CHECK_FALSE(t.negative.has_value()); // the SOA is the last record
      auto r = net::dns_wire::read_answer(ARES_SUCCESS, record_type::a,
                                          part.data(), cut);
      if (cut < a_end)
        CHECK(r.code != rcode::ok);
      else if (r.code == rcode::ok)
        CHECK(r.addresses == std::vector<std::string>{"192.0.2.1"});
    }
    auto whole = net::dns_wire::read_ttls(m.data(), m.size());
    CHECK(whole.answer == 45u);
    CHECK(whole.negative == 300u);
  }

  TEST_CASE("c-ares statuses map to result codes") {
    using net::dns_wire::rcode_of;
    CHECK(rcode_of(ARES_SUCCESS) == rcode::ok);
    CHECK(rcode_of(ARES_ENODATA) == rcode::nodata);
    CHECK(rcode_of(ARES_ENOTFOUND) == rcode::nxdomain);
    CHECK(rcode_of(ARES_ESERVFAIL) == rcode::servfail);
    CHECK(rcode_of(ARES_EREFUSED) == rcode::refused);
    for (int s : {ARES_ETIMEOUT, ARES_ECANCELLED, ARES_EDESTRUCTION})
      CHECK(rcode_of(s) == rcode::timeout);
    CHECK(rcode_of(ARES_ECONNREFUSED) == rcode::other_error);
    CHECK(net::dns_wire::type_code(record_type::mx) == 15);
    CHECK(net::dns_wire::type_code(record_type::a) == 1);
    CHECK(net::dns_wire::type_code(record_type::aaaa) == 28);
  }
}
