#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace mailassay::core {

/// Returns `s` with ASCII letters lower-cased (other bytes unchanged).
std::string ascii_lower(std::string_view s);

/// Compares two strings ignoring ASCII case.
bool ascii_iequals(std::string_view a, std::string_view b);

/// Returns `s` without the spaces and tabs at either end (HTTP's OWS, RFC
/// 9110 §5.6.3; the blanks around a CSV cell or a multipart header value).
/// Defined here so the request parsers on the hot path inline it.
constexpr std::string_view trim_blanks(std::string_view s) noexcept {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

/// Whether every byte of `s` is ASCII (below 0x80). Eight bytes at a time
/// and defined here, so that the address parser's hot path, which asks it of
/// every address, inlines it.
inline bool all_ascii(std::string_view s) noexcept {
  constexpr std::uint64_t high_bits = 0x8080808080808080u;
  std::uint64_t seen = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, s.data() + i, 8);
    seen |= word;
  }
  for (; i < s.size(); ++i)
    seen |= static_cast<unsigned char>(s[i]);
  return (seen & high_bits) == 0;
}

} // namespace mailassay::core
