#include "core/base/ascii.hpp"

namespace mailassay::core {

std::string ascii_lower(std::string_view s) {
  std::string out{s};
  for (auto& c : out)
    c = ascii_lower(c);
  return out;
}

bool ascii_iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size())
    return false;
  // Most texts compared arrive spelled as expected: one memcmp.
  if (a == b)
    return true;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i] && ascii_lower(a[i]) != ascii_lower(b[i]))
      return false;
  return true;
}

} // namespace mailassay::core
