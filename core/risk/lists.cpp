#include "core/risk/lists.hpp"

#include "core/base/ascii.hpp"

#include <libpsl.h>

#include <cstring>
#include <string>

namespace mailassay::core::risk {

namespace {

// A 64-bit multiply-xor hash over 8-byte words (one pass over ~2 MB at
// load), each text's length mixed in so that moving a line from one list
// to the next changes it.
std::uint64_t fingerprint_of(const list_texts& t) {
  constexpr std::uint64_t k = 0x9e3779b97f4a7c15ull;
  std::uint64_t h = k;
  auto mix = [&](std::uint64_t w) {
    h = (h ^ w) * k;
    h ^= h >> 31;
  };
  for (auto text :
       {t.disposable, t.disposable_allow, t.free_providers, t.roles, t.tlds,
        t.first_names, t.last_names, t.common_words, t.extra_disposable,
        t.extra_free_providers, t.extra_roles}) {
    mix(text.size());
    std::size_t i = 0;
    for (; i + 8 <= text.size(); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, text.data() + i, 8);
      mix(w);
    }
    std::uint64_t tail = 0;
    if (i < text.size())
      std::memcpy(&tail, text.data() + i, text.size() - i);
    mix(tail);
  }
  return h == 0 ? 1 : h;
}

} // namespace

lists lists_from_texts(const list_texts& texts) {
  lists result;
  result.fingerprint = fingerprint_of(texts);
  result.disposable =
      domain_set::from_texts({texts.disposable, texts.extra_disposable});
  // Asked here, once per entry, rather than per address: libpsl costs
  // thousands of instructions a call.
  std::string suffixes;
  result.disposable.for_each([&](std::string_view d) {
    std::string name{d};
    if (psl_is_public_suffix2(psl_builtin(), name.c_str(), PSL_TYPE_ANY)) {
      suffixes.append(d);
      suffixes.push_back('\n');
    }
  });
  result.disposable_suffixes = domain_set::from_text(suffixes);
  result.disposable_allow = domain_set::from_text(texts.disposable_allow);
  auto free = domain_set::from_texts(
      {texts.free_providers, texts.extra_free_providers});
  std::string kept;
  free.for_each([&](std::string_view d) {
    if (!result.disposable.contains(d)) {
      kept.append(d);
      kept.push_back('\n');
    }
  });
  result.free_providers = domain_set::from_text(kept);
  result.roles = role_set::from_texts({texts.roles, texts.extra_roles});
  std::string heads;
  result.roles.for_each([&](std::string_view r) {
    auto end = r.find_first_of("._-");
    auto head = r.substr(0, end);
    heads.append(head);
    heads.push_back('\n');
    while (!head.empty() && is_ascii_digit(head.back()))
      head.remove_suffix(1);
    heads.append(head);
    heads.push_back('\n');
  });
  result.role_heads = role_set::from_text(heads);
  result.tlds = domain_set::from_text(texts.tlds);
  result.first_names = name_set::from_text(texts.first_names);
  result.known_words =
      name_set::from_texts({texts.last_names, texts.common_words});
  result.model = trigram_model::train(
      {texts.first_names, texts.last_names, texts.common_words});
  return result;
}

} // namespace mailassay::core::risk
