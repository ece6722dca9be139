#include "core/syntax/code_points.hpp"

#include "core/base/ascii.hpp"
#include "core/base/utf8.hpp"

#include <algorithm>
#include <cstdint>
#include <iterator>

namespace mailassay::core::syntax {

namespace {

struct code_point_range {
  char32_t first;
  char32_t last;
};

struct case_run {
  char32_t first;
  char32_t last;
  int delta;
  int stride;
};

#include "core/syntax/unicode_tables.inc"

} // namespace

bool is_forbidden(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(forbidden_ranges), std::end(forbidden_ranges), cp,
      [](char32_t v, const code_point_range& r) { return v < r.first; });
  return it != std::begin(forbidden_ranges) && cp <= std::prev(it)->last;
}

bool is_mark(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(mark_ranges), std::end(mark_ranges), cp,
      [](char32_t v, const code_point_range& r) { return v < r.first; });
  return it != std::begin(mark_ranges) && cp <= std::prev(it)->last;
}

// The Private Use Areas (The Unicode Standard §23.5): the BMP's and planes
// 15 and 16 (their last two code points are noncharacters, refused anyway).
bool is_private_use(char32_t cp) {
  return (cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000;
}

bool is_joiner(char32_t cp) {
  return cp == 0x200C || cp == 0x200D;
}

char32_t to_lower(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(lower_runs), std::end(lower_runs), cp,
      [](char32_t v, const case_run& r) { return v < r.first; });
  if (it == std::begin(lower_runs))
    return cp;
  const auto& r = *std::prev(it);
  if (cp > r.last || (cp - r.first) % r.stride != 0)
    return cp;
  return static_cast<char32_t>(static_cast<std::int32_t>(cp) + r.delta);
}

std::string code_point_name(char32_t cp) {
  constexpr char digits[] = "0123456789ABCDEF";
  std::string hex;
  for (int shift = 20; shift >= 0; shift -= 4)
    if ((cp >> shift) != 0 || shift < 16)
      hex += digits[(cp >> shift) & 0xF];
  return "U+" + hex;
}

void lower_unicode(std::string& domain) {
  std::string lowered;
  lowered.reserve(domain.size());
  for (std::size_t i = 0; i < domain.size();) {
    auto c = static_cast<unsigned char>(domain[i]);
    if (c < 0x80) {
      lowered += static_cast<char>(
          is_ascii_upper(static_cast<char>(c)) ? c | 0x20 : c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    std::size_t len = utf8_decode(domain, i, cp);
    utf8_append(lowered, to_lower(cp));
    i += len;
  }
  domain.swap(lowered);
}

} // namespace mailassay::core::syntax
