#include "core/syntax/nfc.hpp"

#include "core/base/utf8.hpp"

#include <algorithm>
#include <iterator>
#include <tuple>

namespace mailassay::core::syntax {

namespace {

struct class_run {
  char32_t first;
  char32_t last;
  std::uint8_t value;
};

struct nfc_range {
  char32_t first;
  char32_t last;
};

struct decomposition {
  char32_t code_point;
  std::uint16_t offset;
  std::uint8_t length;
};

struct composition {
  char32_t first;
  char32_t second;
  char32_t composite;
};

#include "core/syntax/nfc_tables.inc"

// Hangul syllables decompose and compose by arithmetic (UAX #15 §3.12,
// The Unicode Standard §3.12).
constexpr char32_t s_base = 0xAC00, l_base = 0x1100, v_base = 0x1161,
                   t_base = 0x11A7;
constexpr char32_t l_count = 19, v_count = 21, t_count = 28,
                   n_count = v_count * t_count, s_count = l_count * n_count;

// The run of `table` (sorted, disjoint) holding `cp`, or nullptr.
template <typename Run, std::size_t N>
const Run* find_run(const Run (&table)[N], char32_t cp) {
  auto it =
      std::upper_bound(std::begin(table), std::end(table), cp,
                       [](char32_t v, const Run& r) { return v < r.first; });
  if (it == std::begin(table) || cp > std::prev(it)->last)
    return nullptr;
  return &*std::prev(it);
}

std::uint8_t quick_check(char32_t cp) {
  const auto* r = find_run(quick_checks, cp);
  return r ? r->value : 0;
}

void decompose(char32_t cp, std::u32string& out) {
  if (cp >= s_base && cp < s_base + s_count) {
    auto index = cp - s_base;
    out += l_base + index / n_count;
    out += v_base + index % n_count / t_count;
    if (index % t_count != 0)
      out += t_base + index % t_count;
    return;
  }
  // Nothing below U+00C0 decomposes.
  if (cp >= 0xC0) {
    auto it = std::lower_bound(
        std::begin(decompositions), std::end(decompositions), cp,
        [](const decomposition& d, char32_t v) { return d.code_point < v; });
    if (it != std::end(decompositions) && it->code_point == cp) {
      out.append(decomposition_pool + it->offset, it->length);
      return;
    }
  }
  out += cp;
}

// The primary composite of `first` and `second`, or 0 when there is none.
char32_t compose(char32_t first, char32_t second) {
  if (first >= l_base && first < l_base + l_count && second >= v_base &&
      second < v_base + v_count)
    return s_base + ((first - l_base) * v_count + (second - v_base)) * t_count;
  if (first >= s_base && first < s_base + s_count &&
      (first - s_base) % t_count == 0 && second > t_base &&
      second < t_base + t_count)
    return first + (second - t_base);
  auto key = std::tie(first, second);
  auto it = std::lower_bound(std::begin(compositions), std::end(compositions),
                             key, [](const composition& c, const auto& k) {
                               return std::tie(c.first, c.second) < k;
                             });
  if (it != std::end(compositions) && it->first == first &&
      it->second == second)
    return it->composite;
  return 0;
}

} // namespace

std::string_view unicode_version() {
  return nfc_unicode_version;
}

std::uint8_t combining_class(char32_t cp) {
  if (cp < 0x300)
    return 0;
  const auto* r = find_run(combining_classes, cp);
  return r ? r->value : 0;
}

bool nfc_never(char32_t cp) {
  return quick_check(cp) == 2;
}

bool nfc_quick_yes(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    char32_t cp = 0;
    auto len = utf8_decode(s, i, cp);
    if (len == 0 || find_run(nfc_unsafe, cp))
      return false;
    i += len;
  }
  return true;
}

bool to_nfc(std::string_view s, std::string& out) {
  std::u32string text;
  text.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    auto len = utf8_decode(s, i, cp);
    if (len == 0)
      return false;
    decompose(cp, text);
    i += len;
  }
  // Canonical ordering (UAX #15 §3.11 D109): a stable sort of each run of
  // non-starters by combining class; a starter never moves.
  for (std::size_t i = 1; i < text.size(); ++i) {
    auto cc = combining_class(text[i]);
    if (cc == 0)
      continue;
    for (auto j = i; j > 0 && combining_class(text[j - 1]) > cc; --j)
      std::swap(text[j - 1], text[j]);
  }
  // Canonical composition (D117): each character joins the last starter
  // unless something between them blocks it (a starter, or a non-starter of
  // the same or a higher class).
  constexpr auto none = std::u32string::npos;
  std::size_t starter = none;
  std::uint8_t last_class = 0;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto cp = text[i];
    auto cc = combining_class(cp);
    if (starter != none && (kept == starter + 1 || last_class < cc)) {
      if (auto joined = compose(text[starter], cp)) {
        text[starter] = joined;
        continue;
      }
    }
    if (cc == 0)
      starter = kept;
    last_class = cc;
    text[kept++] = cp;
  }
  text.resize(kept);
  out.clear();
  out.reserve(s.size() + 8);
  for (auto cp : text)
    utf8_append(out, cp);
  return true;
}

} // namespace mailassay::core::syntax
