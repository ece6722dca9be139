#include "core/risk/domain.hpp"

#include "core/risk/text.hpp"

#include <cstdint>

namespace mailassay::core::risk {

namespace {

constexpr std::size_t max_domain = 255;

std::string_view parent(std::string_view d) noexcept {
  auto dot = detail::index_of(d, '.');
  return dot == d.size() ? std::string_view{} : d.substr(dot + 1);
}

// The hash of the whole domain, computed the first time a set's sketch
// lets the domain through, then shared by every set.
class domain_key {
public:
  explicit domain_key(std::string_view d) noexcept : d_(d) {}

  std::string_view view() const noexcept { return d_; }

  bool in(const string_set& set) noexcept {
    if (!set.may_contain(d_))
      return false;
    if (!hashed_) {
      hash_ = string_set::hash(d_);
      hashed_ = true;
    }
    return !set.find(d_, hash_).empty();
  }

private:
  std::string_view d_;
  std::uint32_t hash_ = 0;
  bool hashed_ = false;
};

// `is_disposable` for a domain without its trailing dot, 1-255 octets.
bool disposable(const lists& l, domain_key& key) {
  auto d = key.view();
  bool hit = false;
  // Single labels (TLDs) are never looked up: they are public suffixes.
  for (auto s = d;;) {
    auto next = parent(s);
    if (next.empty())
      break;
    if (s.size() == d.size()
            ? key.in(l.disposable)
            : l.disposable.contains(s) && !l.disposable_suffixes.contains(s)) {
      hit = true;
      break;
    }
    s = next;
  }
  if (!hit)
    return false;
  if (key.in(l.disposable_allow))
    return false;
  for (auto s = parent(d); !s.empty(); s = parent(s))
    if (l.disposable_allow.contains(s))
      return false;
  return true;
}

std::string_view without_root(std::string_view d) noexcept {
  if (!d.empty() && d.back() == '.')
    d.remove_suffix(1);
  return d;
}

} // namespace

bool is_disposable(const lists& l, std::string_view d) {
  d = without_root(d);
  if (d.empty() || d.size() > max_domain)
    return false;
  domain_key key{d};
  return disposable(l, key);
}

bool is_free_provider(const lists& l, std::string_view d) noexcept {
  return l.free_providers.contains(without_root(d));
}

detail::domain_kind detail::classify_domain(const lists& l,
                                            std::string_view d) {
  d = without_root(d);
  domain_kind kind;
  // Longer than any entry: neither list can hold it.
  if (d.empty() || d.size() > max_domain)
    return kind;
  domain_key key{d};
  kind.disposable = disposable(l, key);
  kind.free_provider = !kind.disposable && key.in(l.free_providers);
  return kind;
}

bool is_known_tld(const lists& l, std::string_view label) noexcept {
  return l.tlds.contains(label);
}

} // namespace mailassay::core::risk
