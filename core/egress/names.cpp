#include "core/egress/names.hpp"

#include "core/base/ascii.hpp"
#include "core/limits/client_ip.hpp"

#include <algorithm>

namespace mailassay::core::egress {

namespace {

// The reversed octets of IPv4, or nibbles of IPv6, each followed by a dot.
std::optional<std::string> reversed_labels(std::string_view ip) {
  auto parsed = limits::parse_ip(ip);
  if (!parsed)
    return std::nullopt;
  std::string out;
  if (parsed->v4) {
    for (int i = 3; i >= 0; --i)
      out += std::to_string(parsed->bytes[static_cast<std::size_t>(i)]) + ".";
    return out;
  }
  constexpr char hex[] = "0123456789abcdef";
  for (int i = 15; i >= 0; --i) {
    auto b = parsed->bytes[static_cast<std::size_t>(i)];
    out += hex[b & 0x0f];
    out += '.';
    out += hex[b >> 4];
    out += '.';
  }
  return out;
}

} // namespace

std::optional<std::string> reverse_name(std::string_view ip) {
  auto labels = reversed_labels(ip);
  if (!labels)
    return std::nullopt;
  auto parsed = limits::parse_ip(ip);
  return *labels + (parsed->v4 ? "in-addr.arpa" : "ip6.arpa");
}

std::optional<std::string> dnsbl_name(std::string_view ip,
                                      std::string_view zone) {
  while (!zone.empty() && zone.back() == '.')
    zone.remove_suffix(1);
  auto labels = reversed_labels(ip);
  if (!labels || zone.empty())
    return std::nullopt;
  return *labels + std::string{zone};
}

bool is_fqdn(std::string_view name) {
  if (!name.empty() && name.back() == '.')
    name.remove_suffix(1);
  if (name.empty() || name.size() > 253)
    return false;
  std::size_t labels = 0;
  std::string_view last;
  while (!name.empty()) {
    auto dot = name.find('.');
    auto label = name.substr(0, dot);
    name = dot == std::string_view::npos ? std::string_view{}
                                         : name.substr(dot + 1);
    if (label.empty() || label.size() > 63 || label.front() == '-' ||
        label.back() == '-')
      return false;
    if (!std::all_of(label.begin(), label.end(),
                     [](char c) { return is_ascii_alnum(c) || c == '-'; }))
      return false;
    ++labels;
    last = label;
    if (dot != std::string_view::npos && name.empty())
      return false; // "a..b" or an inner trailing dot
  }
  return labels >= 2 && !std::all_of(last.begin(), last.end(), is_ascii_digit);
}

} // namespace mailassay::core::egress
