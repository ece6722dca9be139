#include "core/risk/risk.hpp"

namespace mailassay::core::risk {

report assess(const lists& l, std::string_view local_part,
              std::string_view ascii_domain, bool with_first_name) {
  report r;
  auto kind = detail::classify_domain(l, ascii_domain);
  r.disposable = kind.disposable;
  r.free_provider = kind.free_provider;
  r.role = role_of(l, local_part);
  r.random = random_local_part(l, local_part);
  if (!r.free_provider)
    r.suggestion = suggest_domain(l, ascii_domain);
  if (with_first_name && !r.role)
    r.first_name = detail::first_name_of_person(l, local_part);
  return r;
}

} // namespace mailassay::core::risk
