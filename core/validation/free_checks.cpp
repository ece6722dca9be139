#include "core/validation/free_checks.hpp"

#include "core/risk/domain.hpp"
#include "core/risk/local_part.hpp"
#include "core/risk/typo.hpp"

#include <array>
#include <cstring>
#include <functional>

namespace mailassay::core::validation {

namespace {

// RFC 6761 names reach here only when tests allow them; they are never
// typos of real domains.
bool special_use(std::string_view domain) {
  // The last label found forwards (memchr per dot) and judged by its
  // length first: a backwards byte loop and six string comparisons cost
  // more in mispredicted branches than the rest of this function.
  while (const void* p = domain.empty()
                             ? nullptr
                             : std::memchr(domain.data(), '.', domain.size()))
    domain.remove_prefix(static_cast<const char*>(p) - domain.data() + 1);
  switch (domain.size()) {
    case 4: return domain == "test";
    case 5: return domain == "local" || domain == "onion";
    case 7: return domain == "example" || domain == "invalid";
    case 9: return domain == "localhost";
    default: return false;
  }
}

// What the domain alone decides: both lists and the typo suggestion.
struct domain_facts {
  std::uint64_t generation = 0; // of the lists; 0: empty slot
  std::string domain;
  risk::detail::domain_kind kind;
  std::optional<std::string> suggestion;
};

// Fills `f` in place: its strings keep their capacity from slot to slot.
void compute_facts(domain_facts& f, const risk::lists& l,
                   std::string_view domain) {
  f.generation = l.generation;
  f.domain.assign(domain);
  f.kind = risk::detail::classify_domain(l, domain);
  f.suggestion.reset();
  if (!f.kind.free_provider && !special_use(domain))
    f.suggestion = risk::suggest_domain(l, domain);
}

// Traffic repeats domains heavily (a few providers, then each company's
// own): a small direct-mapped table per thread answers most addresses with
// one hash and one comparison instead of two set lookups and the typo
// search (~85 ns). Per thread, so no lock; a collision just recomputes.
const domain_facts& memo_facts(const risk::lists& l, std::string_view domain) {
  constexpr std::size_t slots = 4096;
  thread_local std::array<domain_facts, slots> table;
  auto& slot = table[std::hash<std::string_view>{}(domain) % slots];
  if (slot.generation != l.generation || slot.domain != domain)
    compute_facts(slot, l, domain);
  return slot;
}

} // namespace

free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t) {
  free_checks out;
  if (t.disposable)
    out.disposable = false;
  if (t.role_account)
    out.role_account = false;
  if (t.random_detection)
    out.random = risk::random_verdict{};
  if (!a.valid || a.ip_literal)
    return out;
  const auto& domain = a.ascii_domain;
  const auto& facts = memo_facts(l, domain);
  const auto& kind = facts.kind;
  if (t.disposable)
    out.disposable = kind.disposable;
  out.free_provider = kind.free_provider;
  std::optional<std::string_view> role;
  if (t.role_account || t.enrichment)
    role = risk::role_of(l, a.local_part);
  if (t.role_account) {
    out.role_account = role.has_value();
    if (role)
      out.role = std::string{*role};
  }
  if (t.random_detection)
    out.random = risk::random_local_part(l, a.local_part);
  out.suggested_domain = facts.suggestion;
  // `role` is known here (enrichment asks for it): no second role lookup.
  if (t.enrichment && !role)
    out.first_name = risk::detail::first_name_of_person(l, a.local_part);
  return out;
}

} // namespace mailassay::core::validation
