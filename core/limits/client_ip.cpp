#include "core/limits/client_ip.hpp"

#include "core/base/ascii.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <charconv>
#include <cstring>

namespace mailassay::core::limits {

namespace {

constexpr std::array<std::uint8_t, 12> v4_mapped_prefix = {
    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

bool valid_port(std::string_view s) {
  unsigned port = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), port);
  return !s.empty() && ec == std::errc{} && end == s.data() + s.size() &&
         port <= 65535;
}

// One X-Forwarded-For hop: a bare address, or one with a port (some
// proxies append it), IPv6 then in brackets.
std::optional<ip_address> parse_hop(std::string_view hop) {
  hop = trim_blanks(hop);
  if (hop.starts_with('[')) {
    auto close = hop.find(']');
    if (close == std::string_view::npos)
      return std::nullopt;
    auto rest = hop.substr(close + 1);
    if (!rest.empty() && !(rest.front() == ':' && valid_port(rest.substr(1))))
      return std::nullopt;
    auto ip = parse_ip(hop.substr(1, close - 1));
    if (!ip || ip->v4)
      return std::nullopt;
    return ip;
  }
  if (std::count(hop.begin(), hop.end(), ':') == 1) {
    auto colon = hop.find(':');
    if (!valid_port(hop.substr(colon + 1)))
      return std::nullopt;
    auto ip = parse_ip(hop.substr(0, colon));
    if (!ip || !ip->v4)
      return std::nullopt;
    return ip;
  }
  return parse_ip(hop);
}

} // namespace

std::optional<ip_address> parse_ip(std::string_view text) {
  char buf[INET6_ADDRSTRLEN];
  if (text.empty() || text.size() >= sizeof buf ||
      text.find('\0') != std::string_view::npos)
    return std::nullopt;
  std::memcpy(buf, text.data(), text.size());
  buf[text.size()] = '\0';
  ip_address ip;
  if (text.find(':') == std::string_view::npos) {
    if (inet_pton(AF_INET, buf, ip.bytes.data()) != 1)
      return std::nullopt;
    ip.v4 = true;
    return ip;
  }
  if (inet_pton(AF_INET6, buf, ip.bytes.data()) != 1)
    return std::nullopt;
  if (std::equal(v4_mapped_prefix.begin(), v4_mapped_prefix.end(),
                 ip.bytes.begin())) {
    std::array<std::uint8_t, 16> v4{};
    std::copy_n(ip.bytes.begin() + 12, 4, v4.begin());
    ip.bytes = v4;
    ip.v4 = true;
  }
  return ip;
}

std::string to_string(const ip_address& ip) {
  char buf[INET6_ADDRSTRLEN] = {};
  inet_ntop(ip.v4 ? AF_INET : AF_INET6, ip.bytes.data(), buf, sizeof buf);
  return buf;
}

expected<trusted_networks>
trusted_networks::parse(std::span<const std::string> entries) {
  trusted_networks out;
  for (const auto& entry : entries) {
    auto text = trim_blanks(entry);
    auto bad = [&] {
      return make_error(errc::validation_failed,
                        "invalid trusted proxy: " + std::string(entry));
    };
    auto slash = text.find('/');
    auto ip = parse_ip(text.substr(0, slash));
    if (!ip)
      return bad();
    int max_prefix = ip->v4 ? 32 : 128;
    // "::ffff:10.0.0.0/104" names IPv4 space: count its prefix in IPv4 bits.
    bool mapped =
        !ip->v4 ? false
                : text.substr(0, slash).find(':') != std::string_view::npos;
    int prefix = max_prefix;
    if (slash != std::string_view::npos) {
      auto digits = text.substr(slash + 1);
      auto [end, ec] =
          std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
      if (digits.empty() || ec != std::errc{} ||
          end != digits.data() + digits.size())
        return bad();
      if (mapped)
        prefix -= 96;
      if (prefix < 0 || prefix > max_prefix)
        return bad();
    }
    out.networks_.push_back({*ip, prefix});
  }
  return out;
}

bool trusted_networks::contains(const ip_address& ip) const {
  for (const auto& net : networks_) {
    if (net.base.v4 != ip.v4)
      continue;
    int whole = net.prefix / 8;
    int bits = net.prefix % 8;
    if (!std::equal(net.base.bytes.begin(), net.base.bytes.begin() + whole,
                    ip.bytes.begin()))
      continue;
    if (bits != 0) {
      auto mask = static_cast<std::uint8_t>(0xff << (8 - bits));
      if ((net.base.bytes[whole] & mask) != (ip.bytes[whole] & mask))
        continue;
    }
    return true;
  }
  return false;
}

std::string client_ip(std::string_view peer, std::string_view x_forwarded_for,
                      const trusted_networks& trusted) {
  auto peer_ip = parse_ip(trim_blanks(peer));
  if (!peer_ip)
    return std::string(peer);
  if (trusted.empty() || !trusted.contains(*peer_ip))
    return to_string(*peer_ip);
  auto first = x_forwarded_for.substr(0, x_forwarded_for.find(','));
  if (auto hop = parse_hop(first))
    return to_string(*hop);
  return to_string(*peer_ip);
}

} // namespace mailassay::core::limits
