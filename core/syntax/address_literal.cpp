#include "core/syntax/address_literal.hpp"

#include "core/base/ascii.hpp"

#include <cstddef>

namespace mailassay::core::syntax {

namespace {

// RFC 5321 §4.1.3 Snum 3("." Snum), Snum = 1*3DIGIT in 0..255.
bool is_ipv4(std::string_view s) {
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t digits = 0;
    int value = 0;
    while (i < s.size() && is_ascii_digit(s[i])) {
      value = value * 10 + (s[i] - '0');
      ++i;
      if (++digits > 3)
        return false;
    }
    if (digits == 0 || value > 255)
      return false;
    if (++parts == 4)
      return i == s.size();
    if (i >= s.size() || s[i] != '.')
      return false;
    ++i;
  }
}

// 1*4HEXDIG *(":" 1*4HEXDIG), possibly empty; counts the groups.
bool hex_groups(std::string_view s, int& count) {
  count = 0;
  if (s.empty())
    return true;
  std::size_t i = 0;
  while (true) {
    std::size_t digits = 0;
    while (i < s.size() && is_ascii_hex(s[i])) {
      ++i;
      if (++digits > 4)
        return false;
    }
    if (digits == 0)
      return false;
    ++count;
    if (i == s.size())
      return true;
    if (s[i] != ':')
      return false;
    ++i;
  }
}

// RFC 5321 §4.1.3 IPv6-addr: full, compressed ("::" standing for at least two
// groups), and the same with a trailing IPv4 address.
bool is_ipv6(std::string_view s) {
  std::string_view groups = s;
  int wanted = 8;
  auto last_colon = s.rfind(':');
  if (last_colon == s.npos)
    return false;
  if (s.find('.', last_colon) != s.npos) {
    if (!is_ipv4(s.substr(last_colon + 1)))
      return false;
    groups = s.substr(0, last_colon + 1);
    if (groups.size() < 2 || groups.substr(groups.size() - 2) != "::")
      groups.remove_suffix(1);
    wanted = 6;
  }
  auto gap = groups.find("::");
  int left = 0;
  if (gap == groups.npos)
    return hex_groups(groups, left) && left == wanted;
  if (groups.find("::", gap + 1) != groups.npos)
    return false;
  int right = 0;
  return hex_groups(groups.substr(0, gap), left) &&
         hex_groups(groups.substr(gap + 2), right) &&
         left + right <= wanted - 2;
}

} // namespace

std::string_view literal_problem(std::string_view d,
                                 std::string_view& address) {
  if (d.size() < 2 || d.back() != ']')
    return "unterminated domain literal";
  auto body = d.substr(1, d.size() - 2);
  for (char ch : body) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 || c <= 0x20 || c == 0x7F || c == '[' || c == ']' ||
        c == '\\')
      return "invalid character in a domain literal";
  }
  if (ascii_istarts_with(body, "ipv6:")) {
    if (!is_ipv6(body.substr(5)))
      return "invalid IPv6 address literal";
    address = body.substr(5);
    return {};
  }
  if (is_ipv4(body)) {
    address = body;
    return {};
  }
  // General-address-literal tags must be IANA-registered; only IPv6 is.
  if (body.find(':') != body.npos)
    return "unknown address literal tag (only IPv6: is defined)";
  return "invalid IPv4 address literal";
}

} // namespace mailassay::core::syntax
