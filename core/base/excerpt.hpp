#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mailassay::core {

/// At most `most` bytes of a stranger's `text` for an error message, with
/// "..." when cut: a message quotes what it refuses, never all of it.
/// Header-only: the request gate's fuzz target compiles its parser alone.
inline std::string excerpt(std::string_view text, std::size_t most = 64) {
  std::string out{text.substr(0, most)};
  if (text.size() > most)
    out += "...";
  return out;
}

} // namespace mailassay::core
