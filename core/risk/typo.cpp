#include "core/risk/typo.hpp"

#include "core/base/ascii.hpp"
#include "core/risk/domain.hpp"
#include "core/risk/text.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>

namespace mailassay::core::risk {

namespace {

// Mailbox providers with hundreds of millions of users, most used first (a
// tie between two candidates goes to the earlier one), with the country
// variants people really type. A suggestion must be one of these.
constexpr std::array<std::string_view, 62> majors = {
    "gmail.com",      "yahoo.com",      "hotmail.com",    "outlook.com",
    "icloud.com",     "aol.com",        "live.com",       "msn.com",
    "googlemail.com", "protonmail.com", "proton.me",      "yandex.ru",
    "yandex.com",     "mail.ru",        "gmx.com",        "gmx.de",
    "gmx.net",        "web.de",         "comcast.net",    "verizon.net",
    "att.net",        "sbcglobal.net",  "bellsouth.net",  "me.com",
    "mac.com",        "ymail.com",      "rocketmail.com", "zoho.com",
    "qq.com",         "163.com",        "naver.com",      "orange.fr",
    "free.fr",        "laposte.net",    "libero.it",      "t-online.de",
    "yahoo.co.uk",    "yahoo.fr",       "yahoo.de",       "yahoo.es",
    "yahoo.it",       "yahoo.ca",       "yahoo.co.in",    "yahoo.co.jp",
    "yahoo.com.br",   "hotmail.co.uk",  "hotmail.fr",     "hotmail.de",
    "hotmail.es",     "hotmail.it",     "hotmail.ca",     "hotmail.com.br",
    "outlook.fr",     "outlook.de",     "outlook.es",     "outlook.it",
    "live.co.uk",     "live.fr",        "live.de",        "btinternet.com",
    "wanadoo.fr",     "tutanota.com",
};

// Targets of a TLD correction, most used first.
constexpr std::array<std::string_view, 6> common_tlds = {
    "com", "net", "org", "edu", "gov", "info",
};

constexpr std::size_t max_label = 64;

constexpr std::string_view first_label(std::string_view d) noexcept {
  return d.substr(0, d.find('.'));
}

// The providers split once into first label and the rest.
struct provider {
  std::string_view domain;
  std::string_view sld;
  std::string_view rest;
};

constexpr std::array<provider, majors.size()> make_providers() {
  std::array<provider, majors.size()> out{};
  for (std::size_t i = 0; i < majors.size(); ++i) {
    auto sld = first_label(majors[i]);
    out[i] = provider{majors[i], sld, majors[i].substr(sld.size() + 1)};
  }
  return out;
}

// Sorted by first letter (stable: popularity order within a letter).
constexpr std::array<provider, majors.size()> make_providers_by_letter() {
  auto out = make_providers();
  for (std::size_t i = 1; i < out.size(); ++i)
    for (std::size_t j = i; j > 0 && out[j].sld[0] < out[j - 1].sld[0]; --j)
      std::swap(out[j], out[j - 1]);
  return out;
}

constexpr auto providers = make_providers_by_letter();

// Whether some major provider's domain is `<label>.<rest>`: a domain whose
// rest is none of these (`acme.io`, `mail.acme.com`) can only be corrected
// in its TLD. By length first, so that most domains leave after one or two
// comparisons instead of a walk over the providers.
constexpr bool is_provider_rest(std::string_view rest) noexcept {
  switch (rest.size()) {
    case 2:
      return rest == "ru" || rest == "de" || rest == "fr" || rest == "it" ||
             rest == "es" || rest == "ca" || rest == "me";
    case 3: return rest == "com" || rest == "net";
    case 5: return rest == "co.uk" || rest == "co.in" || rest == "co.jp";
    case 6: return rest == "com.br";
    default: return false;
  }
}

constexpr bool every_provider_rest_known() {
  for (const auto& p : providers)
    if (!is_provider_rest(p.rest))
      return false;
  return true;
}

static_assert(every_provider_rest_known(),
              "is_provider_rest must accept the rest of every major");

// providers[letter_begin[c]] .. providers[letter_begin[c + 1]] start with
// the letter 'a' + c.
constexpr std::array<std::uint8_t, 27> make_letter_begin() {
  std::array<std::uint8_t, 27> begin{};
  for (int c = 0; c <= 26; ++c) {
    std::size_t i = 0;
    while (i < providers.size() && providers[i].sld[0] < 'a' + c)
      ++i;
    begin[c] = static_cast<std::uint8_t>(i);
  }
  return begin;
}

constexpr auto letter_begin = make_letter_begin();

bool is_major(std::string_view d) noexcept {
  return std::find(majors.begin(), majors.end(), d) != majors.end();
}

// Forward, one memchr per dot: most domains have one or two, and a byte
// loop backwards from the end mispredicts its exit on every domain.
std::string_view last_label(std::string_view d) noexcept {
  for (auto dot = detail::index_of(d, '.'); dot != d.size();
       dot = detail::index_of(d, '.'))
    d.remove_prefix(dot + 1);
  return d;
}

// The TLD the user meant, if `tld` is not delegated and sits within one
// edit (or a transposition) of a common one.
std::string_view corrected_tld(const lists& l, std::string_view tld) {
  // The usual answer without a lookup: most domains end in one of these.
  if (tld == "com" || tld == "net" || tld == "org")
    return {};
  if (l.tlds.empty() || tld.size() < 2 || is_known_tld(l, tld))
    return {};
  for (auto t : common_tlds)
    if (edit_distance(tld, t, 1) <= 1)
      return t;
  if (tld.size() >= 4)
    for (auto t : common_tlds)
      if (t.size() >= 3 && edit_distance(tld, t, 2) <= 2)
        return t;
  return {};
}

// The provider meant by a major provider's own first label followed by a
// mistyped suffix, or nullptr:
// - a suffix one edit from `com` where the provider is at `<label>.com`
//   (`gmail.cm`, `gmail.om`, `gmail.co`, `yahoo.cam`), delegated or not:
//   the ccTLDs one key from .com (.cm Cameroon, .om Oman, .co Colombia)
//   host no mailbox of these providers;
// - a suffix whose last label is not delegated and one edit from the
//   provider's (`yahoo.co.uj` -> `yahoo.co.uk`, `gmx.dee` -> `gmx.de`); a
//   delegated one (`yahoo.co.id`, `hotmail.com.ar`, `gmx.at`) is the
//   provider's real country domain or someone else's, never corrected.
// Labels of fewer than three letters (`me`, `qq`) are left alone: too many
// real domains sit one edit from them.
const provider* suffix_typo(const lists& l, std::string_view sld,
                            std::string_view rest, std::string_view tld) {
  char first = sld[0];
  if (sld.size() < 3 || first < 'a' || first > 'z')
    return nullptr;
  auto head = rest.substr(0, rest.size() - tld.size());
  // Asked only once a provider's label matched: most domains never do.
  int tld_unknown = -1;
  for (auto i = letter_begin[first - 'a']; i < letter_begin[first - 'a' + 1];
       ++i) {
    const auto& p = providers[i];
    if (p.sld != sld || p.rest == rest)
      continue;
    if (head.empty() && p.rest == "com" && edit_distance(rest, "com", 1) <= 1)
      return &p;
    if (tld_unknown < 0)
      tld_unknown = !l.tlds.empty() && !is_known_tld(l, tld) ? 1 : 0;
    auto p_tld = last_label(p.rest);
    if (tld_unknown == 1 && p.rest.size() == head.size() + p_tld.size() &&
        p.rest.substr(0, head.size()) == head &&
        edit_distance(tld, p_tld, 1) <= 1)
      return &p;
  }
  return nullptr;
}

} // namespace

int edit_distance(std::string_view a, std::string_view b, int limit) noexcept {
  if (a.size() > max_label || b.size() > max_label)
    return limit + 1;
  auto la = static_cast<int>(a.size());
  auto lb = static_cast<int>(b.size());
  if (std::abs(la - lb) > limit)
    return limit + 1;
  std::array<int, max_label + 1> rows[3];
  int* prev2 = rows[0].data();
  int* prev = rows[1].data();
  int* cur = rows[2].data();
  for (int j = 0; j <= lb; ++j)
    prev[j] = j;
  for (int i = 1; i <= la; ++i) {
    cur[0] = i;
    int row_min = i;
    for (int j = 1; j <= lb; ++j) {
      int cost = a[i - 1] == b[j - 1] ? 0 : 1;
      int v = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        v = std::min(v, prev2[j - 2] + 1);
      cur[j] = v;
      row_min = std::min(row_min, v);
    }
    if (row_min > limit)
      return limit + 1;
    int* spare = prev2;
    prev2 = prev;
    prev = cur;
    cur = spare;
  }
  return std::min(prev[lb], limit + 1);
}

std::optional<std::string> suggest_domain(const lists& l, std::string_view d) {
  if (!d.empty() && d.back() == '.')
    d.remove_suffix(1);
  auto dot = detail::index_of(d, '.');
  if (dot == d.size() || dot == 0 || d.size() > 253)
    return std::nullopt;

  std::string_view sld = d.substr(0, dot);
  std::string_view rest = d.substr(dot + 1);
  std::string_view tld = last_label(d);
  std::string_view new_tld = corrected_tld(l, tld);
  if (new_tld.empty() && !is_provider_rest(rest)) {
    // Most domains leave here: neither their TLD nor their suffix is a
    // provider's, unless the label is a provider's and its suffix a typo.
    const provider* meant = suffix_typo(l, sld, rest, tld);
    if (meant == nullptr || is_major(d) || is_free_provider(l, d))
      return std::nullopt;
    return std::string{meant->domain};
  }
  // Only the last label changes: `x.co.ukk` keeps `co.`.
  std::string_view rest_head = rest;
  if (!new_tld.empty())
    rest_head.remove_suffix(tld.size());
  auto same_rest = [&](std::string_view r) {
    if (new_tld.empty())
      return r == rest;
    return r.size() == rest_head.size() + new_tld.size() &&
           r.substr(0, rest_head.size()) == rest_head &&
           r.substr(rest_head.size()) == new_tld;
  };

  // The first label, towards a major provider's with the same rest.
  const provider* best = nullptr;
  char first = sld[0];
  if (sld.size() >= 4 && is_ascii_lower(first)) {
    std::size_t limit = sld.size() >= 6 ? 2 : 1;
    int best_distance = static_cast<int>(limit) + 1;
    for (auto i = letter_begin[first - 'a']; i < letter_begin[first - 'a' + 1];
         ++i) {
      const auto& p = providers[i];
      // Lengths further apart than `limit` cannot be within `limit` edits:
      // the cheapest test first.
      if (p.sld.size() + limit < sld.size() ||
          sld.size() + limit < p.sld.size())
        continue;
      if (p.sld == sld || !same_rest(p.rest))
        continue;
      auto dist = edit_distance(sld, p.sld, static_cast<int>(limit));
      if (dist < best_distance) {
        best_distance = dist;
        best = &p;
      }
    }
  }
  if (best == nullptr && new_tld.empty())
    return std::nullopt;
  // Checked last because it is rarely reached: a real provider, however
  // close to a bigger one, is never corrected.
  if (is_major(d) || is_free_provider(l, d))
    return std::nullopt;
  if (best != nullptr)
    return std::string{best->domain};
  std::string result{sld};
  result.push_back('.');
  result.append(rest_head);
  result.append(new_tld);
  if (result == d)
    return std::nullopt;
  return result;
}

} // namespace mailassay::core::risk
