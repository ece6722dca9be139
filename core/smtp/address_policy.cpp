#include "core/smtp/address_policy.hpp"

#include <array>
#include <cstdint>
#include <initializer_list>

namespace mailassay::core::smtp {

namespace {

/// One special-purpose block: the first bytes of its base, its length.
struct block {
  std::array<std::uint8_t, 16> base;
  int prefix;
  address_kind kind;
};

bool in_block(const limits::ip_address& ip, const block& b) {
  int full = b.prefix / 8;
  for (int i = 0; i < full; ++i)
    if (ip.bytes[i] != b.base[i])
      return false;
  if (int rest = b.prefix % 8; rest != 0) {
    auto mask = static_cast<std::uint8_t>(0xff << (8 - rest));
    if ((ip.bytes[full] & mask) != (b.base[full] & mask))
      return false;
  }
  return true;
}

// IANA IPv4 Special-Purpose Address Registry (RFC 6890 and updates). The
// first matching block wins, so the narrower ones come first.
const std::initializer_list<block> v4_blocks = {
    {{0}, 8, address_kind::reserved},             // RFC 791 "this"
    {{10}, 8, address_kind::private_use},         // RFC 1918
    {{100, 64}, 10, address_kind::private_use},   // RFC 6598 CGNAT
    {{127}, 8, address_kind::loopback},           // RFC 1122
    {{169, 254}, 16, address_kind::link_local},   // RFC 3927
    {{172, 16}, 12, address_kind::private_use},   // RFC 1918
    {{192, 0, 0}, 24, address_kind::reserved},    // RFC 6890 IETF
    {{192, 0, 2}, 24, address_kind::reserved},    // RFC 5737 TEST-NET-1
    {{192, 88, 99}, 24, address_kind::reserved},  // RFC 7526 6to4
    {{192, 168}, 16, address_kind::private_use},  // RFC 1918
    {{198, 18}, 15, address_kind::reserved},      // RFC 2544 bench
    {{198, 51, 100}, 24, address_kind::reserved}, // RFC 5737 TEST-NET-2
    {{203, 0, 113}, 24, address_kind::reserved},  // RFC 5737 TEST-NET-3
    {{224}, 4, address_kind::multicast},          // RFC 5771
    {{240}, 4, address_kind::reserved},           // RFC 1112, broadcast
};

// IANA IPv6 Special-Purpose Address Registry; global unicast is 2000::/3
// (RFC 4291 §2.4), everything outside it is not reachable mail.
const std::initializer_list<block> v6_blocks = {
    {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
     128,
     address_kind::loopback},                                     // ::1
    {{0x00, 0x64, 0xff, 0x9b}, 96, address_kind::reserved},       // RFC 6052
    {{0x00, 0x64, 0xff, 0x9b, 0, 1}, 48, address_kind::reserved}, // RFC 8215
    {{0x01}, 64, address_kind::reserved},                         // RFC 6666
    {{0x20, 0x01, 0x0d, 0xb8}, 32, address_kind::reserved},       // RFC 3849
    {{0x20, 0x01}, 23, address_kind::reserved},                   // RFC 2928
    {{0x20, 0x02}, 16, address_kind::reserved},                   // RFC 3056
    {{0x3f, 0xff}, 20, address_kind::reserved},                   // RFC 9637
    {{0xfc}, 7, address_kind::private_use},                       // RFC 4193
    {{0xfe, 0x80}, 10, address_kind::link_local},                 // RFC 4291
    {{0xfe, 0xc0}, 10, address_kind::reserved},                   // RFC 3879
    {{0xff}, 8, address_kind::multicast},                         // RFC 4291
    {{0x20}, 3, address_kind::public_unicast},                    // RFC 4291
};

} // namespace

std::string_view to_string(address_kind kind) {
  switch (kind) {
    case address_kind::public_unicast: return "public";
    case address_kind::loopback: return "loopback";
    case address_kind::private_use: return "private";
    case address_kind::link_local: return "link_local";
    case address_kind::multicast: return "multicast";
    case address_kind::reserved: return "reserved";
    case address_kind::invalid: return "invalid";
  }
  return "invalid";
}

address_kind classify(const limits::ip_address& ip) {
  for (const auto& b : ip.v4 ? v4_blocks : v6_blocks)
    if (in_block(ip, b))
      return b.kind;
  // IPv4 outside every block is public; IPv6 outside 2000::/3 (::, the
  // rest of ::/8, unassigned space) is not.
  return ip.v4 ? address_kind::public_unicast : address_kind::reserved;
}

address_kind classify(std::string_view text) {
  auto ip = limits::parse_ip(text);
  if (!ip)
    return address_kind::invalid;
  if (ip->v4 && text.find(':') != std::string_view::npos)
    return address_kind::reserved; // ::ffff:a.b.c.d, stored as IPv4
  return classify(*ip);
}

expected<target_policy>
target_policy::parse(std::span<const std::string> allow) {
  auto nets = limits::trusted_networks::parse(allow);
  if (!nets)
    return make_error(errc::validation_failed,
                      "smtp allow-list: " + nets.error_value().message);
  target_policy p;
  p.allow_ = std::move(*nets);
  return p;
}

target_decision target_policy::check(std::string_view address) const {
  target_decision d;
  d.kind = classify(address);
  if (d.kind == address_kind::invalid)
    return d;
  d.allowed = d.kind == address_kind::public_unicast ||
              allow_.contains(*limits::parse_ip(address));
  return d;
}

} // namespace mailassay::core::smtp
