#pragma once

#include <string>
#include <string_view>

namespace mailassay::core::account {

/// What a bearer value is, decided by its form alone (spec: Authentication).
enum class credential_kind { api_key, jwt };

/// `svc_live_`/`svc_test_` values are API keys, everything else is a JWT.
credential_kind classify_bearer(std::string_view bearer);

/// Extracts the credential from an `Authorization` header value
/// ("Bearer <credential>", scheme case-insensitive); empty when the value is
/// not a bearer credential.
std::string_view bearer_of(std::string_view authorization);

/// Returns the display prefix of a key: its first 12 characters + "…".
std::string display_prefix(std::string_view key);

/// Returns whether `host` is `domain` or one of its subdomains
/// (case-insensitive); the rule for a key's `allowedDomains`.
bool host_matches_domain(std::string_view host, std::string_view domain);

} // namespace mailassay::core::account
