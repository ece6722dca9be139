#pragma once

#include "core/base/word_bytes.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::core {

// One set of ASCII character helpers for the whole core: they never consult
// the C locale (unlike <cctype>), and bytes above 0x7F are never letters,
// digits or blanks.

/// Whether `c` is an ASCII digit, 0-9.
constexpr bool is_ascii_digit(char c) noexcept {
  return c >= '0' && c <= '9';
}

/// Whether `c` is an ASCII upper-case letter, A-Z.
constexpr bool is_ascii_upper(char c) noexcept {
  return c >= 'A' && c <= 'Z';
}

/// Whether `c` is an ASCII lower-case letter, a-z.
constexpr bool is_ascii_lower(char c) noexcept {
  return c >= 'a' && c <= 'z';
}

/// Whether `c` is an ASCII letter.
constexpr bool is_ascii_alpha(char c) noexcept {
  return is_ascii_lower(c) || is_ascii_upper(c);
}

/// Whether `c` is an ASCII letter or digit.
constexpr bool is_ascii_alnum(char c) noexcept {
  return is_ascii_alpha(c) || is_ascii_digit(c);
}

/// Whether `c` is a hexadecimal digit, 0-9, a-f or A-F.
constexpr bool is_ascii_hex(char c) noexcept {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/// Returns `c` lower-cased if it is an ASCII letter, else `c`.
constexpr char ascii_lower(char c) noexcept {
  return is_ascii_upper(c) ? static_cast<char>(c - 'A' + 'a') : c;
}

/// Returns `c` upper-cased if it is an ASCII letter, else `c`.
constexpr char ascii_upper(char c) noexcept {
  return is_ascii_lower(c) ? static_cast<char>(c - 'a' + 'A') : c;
}

/// Returns `s` with ASCII letters lower-cased (other bytes unchanged).
std::string ascii_lower(std::string_view s);

/// Compares two strings ignoring ASCII case.
bool ascii_iequals(std::string_view a, std::string_view b);

/// Whether `s` starts with `prefix`, ignoring ASCII case.
inline bool ascii_istarts_with(std::string_view s,
                               std::string_view prefix) noexcept {
  return s.size() >= prefix.size() &&
         ascii_iequals(s.substr(0, prefix.size()), prefix);
}

/// Returns `s` without the bytes of `set` at either end.
constexpr std::string_view trim_any(std::string_view s,
                                    std::string_view set) noexcept {
  while (!s.empty() && set.find(s.front()) != std::string_view::npos)
    s.remove_prefix(1);
  while (!s.empty() && set.find(s.back()) != std::string_view::npos)
    s.remove_suffix(1);
  return s;
}

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
  std::uint64_t seen = 0;
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8)
    seen |= load_word(s.data() + i);
  for (; i < s.size(); ++i)
    seen |= static_cast<unsigned char>(s[i]);
  return !has_high_byte(seen);
}

} // namespace mailassay::core
