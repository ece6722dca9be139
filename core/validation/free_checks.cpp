#include "core/validation/free_checks.hpp"

#include "core/risk/domain.hpp"
#include "core/risk/local_part.hpp"
#include "core/risk/typo.hpp"

namespace mailassay::core::validation {

namespace {

// RFC 6761 names reach here only when tests allow them; they are never
// typos of real domains.
bool special_use(std::string_view domain) {
  auto dot = domain.rfind('.');
  auto tld = dot == std::string_view::npos ? domain : domain.substr(dot + 1);
  for (auto s : {"test", "example", "invalid", "localhost", "local", "onion"})
    if (tld == s)
      return true;
  return false;
}

} // namespace

free_checks run_free_checks(const risk::lists& l,
                            const syntax::parsed_address& a,
                            const toggles& t) {
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
  bool disposable = risk::is_disposable(l, domain);
  if (t.disposable)
    out.disposable = disposable;
  out.free_provider = !disposable && risk::is_free_provider(l, domain);
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
  if (!out.free_provider && !special_use(domain))
    out.suggested_domain = risk::suggest_domain(l, domain);
  if (t.enrichment && !role)
    out.first_name = risk::first_name(l, a.local_part);
  return out;
}

} // namespace mailassay::core::validation
