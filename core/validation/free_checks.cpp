#include "core/validation/free_checks.hpp"

#include "core/risk/domain.hpp"
#include "core/risk/local_part.hpp"
#include "core/risk/typo.hpp"

#include <cstring>
#include <functional>

namespace mailassay::core::validation {

namespace {

constexpr std::size_t memo_slots = 4096;

// Special-use names (docs/syntax.md) reach here only when tests allow
// them; they are never typos of real domains.
bool special_use(std::string_view domain) {
  // The last label found forwards (memchr per dot) and judged by its
  // length first: a backwards byte loop and string comparisons cost more in
  // mispredicted branches than the rest of this function.
  while (const void* p = domain.empty()
                             ? nullptr
                             : std::memchr(domain.data(), '.', domain.size()))
    domain.remove_prefix(static_cast<const char*>(p) - domain.data() + 1);
  switch (domain.size()) {
    case 4: return domain == "test" || domain == "arpa";
    case 5: return domain == "local" || domain == "onion";
    case 7: return domain == "invalid";
    case 9: return domain == "localhost";
    default: return false;
  }
}

// Fills `f` in place: its string keeps its capacity from use to use.
void compute_facts(domain_facts& f, const risk::lists& l,
                   std::string_view domain) {
  auto kind = risk::detail::classify_domain(l, domain);
  f.disposable = kind.disposable;
  f.free_provider = kind.free_provider;
  f.suggestion.reset();
  if (!kind.free_provider && !special_use(domain))
    f.suggestion = risk::suggest_domain(l, domain);
}

free_checks run(const risk::lists& l, const syntax::parsed_address& a,
                const toggles& t, domain_memo* memo) {
  free_checks out;
  if (t.disposable)
    out.disposable = false;
  if (t.role_account)
    out.role_account = false;
  if (t.random_detection)
    out.random = risk::random_verdict{};
  if (!a.valid)
    return out;
  if (!a.ip_literal) {
    domain_facts fresh;
    const domain_facts* facts = &fresh;
    if (memo != nullptr)
      facts = &memo->facts(l, a.ascii_domain);
    else
      compute_facts(fresh, l, a.ascii_domain);
    if (t.disposable)
      out.disposable = facts->disposable;
    out.free_provider = facts->free_provider;
    out.suggested_domain = facts->suggestion;
  }
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
  // `role` is known here (enrichment asks for it): no second role lookup.
  if (t.enrichment && !role)
    out.first_name = risk::detail::first_name_of_person(l, a.local_part);
  return out;
}

} // namespace

domain_facts facts_of(const risk::lists& l, std::string_view ascii_domain) {
  domain_facts f;
  compute_facts(f, l, ascii_domain);
  return f;
}

domain_memo::domain_memo() : slots_(memo_slots) {}

const domain_facts& domain_memo::facts(const risk::lists& l,
                                       std::string_view domain) {
  auto& slot = slots_[std::hash<std::string_view>{}(domain) % memo_slots];
  if (slot.fingerprint != l.fingerprint || slot.domain != domain) {
    compute_facts(slot.facts, l, domain);
    slot.fingerprint = l.fingerprint;
    slot.domain.assign(domain);
  }
  return slot.facts;
}

free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t,
                            domain_memo& memo) {
  return run(l, a, t, &memo);
}

free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a, const toggles& t) {
  return run(l, a, t, nullptr);
}

} // namespace mailassay::core::validation
