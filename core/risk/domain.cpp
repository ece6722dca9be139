#include "core/risk/domain.hpp"

#include "core/risk/text.hpp"

#include <libpsl.h>

#include <array>
#include <cstring>

namespace mailassay::core::risk {

namespace {

constexpr std::size_t max_domain = 255;

std::string_view parent(std::string_view d) noexcept {
  auto dot = detail::index_of(d, '.');
  return dot == d.size() ? std::string_view{} : d.substr(dot + 1);
}

bool is_public_suffix(std::string_view d) noexcept {
  std::array<char, max_domain + 1> buf{};
  std::memcpy(buf.data(), d.data(), d.size());
  return psl_is_public_suffix2(psl_builtin(), buf.data(), PSL_TYPE_ANY) != 0;
}

} // namespace

bool is_disposable(const lists& l, std::string_view d) {
  if (!d.empty() && d.back() == '.')
    d.remove_suffix(1);
  if (d.empty() || d.size() > max_domain)
    return false;
  bool hit = false;
  // Single labels (TLDs) are never looked up: they are public suffixes.
  for (auto s = d;;) {
    auto next = parent(s);
    if (next.empty())
      break;
    if (l.disposable.contains(s) &&
        (s.size() == d.size() || !is_public_suffix(s))) {
      hit = true;
      break;
    }
    s = next;
  }
  if (!hit)
    return false;
  for (auto s = d; !s.empty(); s = parent(s))
    if (l.disposable_allow.contains(s))
      return false;
  return true;
}

bool is_free_provider(const lists& l, std::string_view d) noexcept {
  if (!d.empty() && d.back() == '.')
    d.remove_suffix(1);
  return l.free_providers.contains(d);
}

bool is_known_tld(const lists& l, std::string_view label) noexcept {
  return l.tlds.contains(label);
}

} // namespace mailassay::core::risk
