#include "http/credentials.hpp"

#include "core/account/credentials.hpp"
#include "core/base/ascii.hpp"
#include "http/services.hpp"
#include "use_cases/accounts/use_cases.hpp"

namespace mailassay::http {

namespace {

// Host of an Origin or Referer value: "https://app.example.com:8443/x" ->
// "app.example.com".
std::string host_of(std::string_view url) {
  auto scheme = url.find("://");
  if (scheme == std::string_view::npos)
    return {};
  auto rest = url.substr(scheme + 3);
  auto end = rest.find_first_of(":/?#");
  return core::ascii_lower(rest.substr(0, end));
}

} // namespace

use_cases::accounts::credentials
credentials_from(std::optional<std::string_view> authorization,
                 std::optional<std::string_view> origin,
                 std::optional<std::string_view> referer) {
  use_cases::accounts::credentials c;
  if (authorization) {
    c.has_authorization = true;
    c.bearer = core::account::bearer_of(*authorization);
  }
  if (origin && *origin != "null")
    c.origin_host = host_of(*origin);
  else if (referer)
    c.origin_host = host_of(*referer);
  return c;
}

use_cases::accounts::credentials credentials_of(const request_view& req) {
  return credentials_from(req.header("Authorization"), req.header("Origin"),
                          req.header("Referer"));
}

std::optional<core::expected<use_cases::accounts::principal>>
cached_principal(const services& svc, const request_view& req) {
  return use_cases::accounts::authenticate_cached(svc.keys, credentials_of(req),
                                                  svc.now());
}

std::optional<core::error>
key_use_refusal(const use_cases::accounts::principal& who,
                core::account::key_use use) {
  if (!who.key || core::account::may_use_key(*who.key, use))
    return std::nullopt;
  if (use == core::account::key_use::smtp_validation)
    return core::make_error(
        core::errc::forbidden,
        "This key is restricted to allowedDomains (publishable): it may only "
        "be used for browser validation without SMTP verification");
  return core::make_error(
      core::errc::forbidden,
      "This key is restricted to allowedDomains (publishable): it may only be "
      "used for browser validation (POST /v2/widget/validate, POST "
      "/v2/email/validate without smtp)");
}

} // namespace mailassay::http
