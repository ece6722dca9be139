#include "core/account/credentials.hpp"

#include "core/base/ascii.hpp"

#include <string>

namespace mailassay::core::account {

credential_kind classify_bearer(std::string_view bearer) {
  if (bearer.starts_with("svc_live_") || bearer.starts_with("svc_test_"))
    return credential_kind::api_key;
  return credential_kind::jwt;
}

std::string_view bearer_of(std::string_view authorization) {
  constexpr std::string_view scheme = "bearer";
  while (!authorization.empty() && authorization.front() == ' ')
    authorization.remove_prefix(1);
  if (authorization.size() <= scheme.size()
      || !core::ascii_iequals(authorization.substr(0, scheme.size()), scheme)
      || authorization[scheme.size()] != ' ')
    return {};
  auto value = authorization.substr(scheme.size() + 1);
  while (!value.empty() && value.front() == ' ')
    value.remove_prefix(1);
  while (!value.empty() && value.back() == ' ')
    value.remove_suffix(1);
  return value;
}

std::string display_prefix(std::string_view key) {
  return std::string{key.substr(0, 12)} + "\u2026";
}

bool host_matches_domain(std::string_view host, std::string_view domain) {
  if (host.empty() || domain.empty())
    return false;
  if (core::ascii_iequals(host, domain))
    return true;
  // A subdomain: "<anything>.<domain>".
  return host.size() > domain.size() + 1
         && host[host.size() - domain.size() - 1] == '.'
         && core::ascii_iequals(host.substr(host.size() - domain.size()), domain);
}

} // namespace mailassay::core::account
