#pragma once

#include <cstddef>
#include <string_view>

namespace mailassay::core::risk::detail {

/// Returns the position of the first `c` in `s`, or `s.size()`: an inline
/// loop, cheaper than a memchr call on strings this short.
inline std::size_t index_of(std::string_view s, char c) noexcept {
  std::size_t i = 0;
  while (i < s.size() && s[i] != c)
    ++i;
  return i;
}

/// Returns `s` up to (not including) the first `c`, or all of `s`.
inline std::string_view before(std::string_view s, char c) noexcept {
  return s.substr(0, index_of(s, c));
}

} // namespace mailassay::core::risk::detail
