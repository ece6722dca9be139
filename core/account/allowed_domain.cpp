#include "core/account/allowed_domain.hpp"

#include <libpsl.h>

#include <string>

namespace mailassay::core::account {

domain_scope scope_of_allowed_domain(std::string_view domain) {
  if (domain.find('.') == std::string_view::npos)
    return domain_scope::single_label;
  std::string name{domain};
  if (psl_is_public_suffix2(psl_builtin(), name.c_str(), PSL_TYPE_ANY))
    return domain_scope::public_suffix;
  return domain_scope::site;
}

} // namespace mailassay::core::account
