#include "core/risk/domain.hpp"

#include <array>
#include <cstring>

#include <libpsl.h>

namespace mailassay::core::risk {

namespace {

constexpr std::size_t max_domain = 255;

std::string_view parent(std::string_view d) noexcept {
  auto dot = d.find('.');
  return dot == std::string_view::npos ? std::string_view{} : d.substr(dot + 1);
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
  for (auto s = d; s.find('.') != std::string_view::npos; s = parent(s)) {
    if (l.disposable.contains(s) && (s.size() == d.size() ||
                                     !is_public_suffix(s))) {
      hit = true;
      break;
    }
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
