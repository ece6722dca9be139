#include "core/base/utf8.hpp"

#include <algorithm>

namespace mailassay::core {

namespace {

// Length of the well-formed sequence starting at `p[0]` (of `n` bytes
// available), or 0 when there is none (RFC 3629 §4).
std::size_t sequence_length(const unsigned char* p, std::size_t n) {
  if (p[0] < 0x80)
    return 1;
  auto rule = utf8_lead(p[0]);
  auto need = static_cast<std::size_t>(rule.need);
  if (need == 0 || n < need + 1 || p[1] < rule.low || p[1] > rule.high)
    return 0;
  for (std::size_t k = 2; k <= need; ++k)
    if (p[k] < 0x80 || p[k] > 0xBF)
      return 0;
  return need + 1;
}

} // namespace

bool utf8_valid(std::string_view s) {
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    auto len = sequence_length(p + i, s.size() - i);
    if (!len)
      return false;
    i += len;
  }
  return true;
}

std::size_t utf8_decode(std::string_view s, std::size_t i, char32_t& cp) {
  if (i >= s.size())
    return 0;
  auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  auto len = sequence_length(p, s.size() - i);
  // The lead byte's payload bits, then six bits from each continuation.
  constexpr unsigned char lead_mask[] = {0, 0x7F, 0x1F, 0x0F, 0x07};
  if (len == 0)
    return 0;
  char32_t v = p[0] & lead_mask[len];
  for (std::size_t k = 1; k < len; ++k)
    v = v << 6 | (p[k] & 0x3F);
  cp = v;
  return len;
}

void utf8_append(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string utf8_scrub(std::string_view s, std::size_t max_bytes) {
  constexpr std::string_view replacement = "\xEF\xBF\xBD";
  std::string out;
  out.reserve(std::min(s.size(), max_bytes));
  auto* p = reinterpret_cast<const unsigned char*>(s.data());
  for (std::size_t i = 0; i < s.size();) {
    auto len = sequence_length(p + i, s.size() - i);
    auto piece = len ? s.substr(i, len) : replacement;
    if (out.size() + piece.size() > max_bytes)
      break;
    out.append(piece);
    i += len ? len : 1;
  }
  return out;
}

} // namespace mailassay::core
