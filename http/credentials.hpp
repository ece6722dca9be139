#pragma once

// The credentials a request presents: its Authorization header (a bearer
// API key or access token) and the site it comes from (Origin, else
// Referer), read into the use cases' plain struct.

#include "core/account/permissions.hpp"
#include "core/base/expected.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/types.hpp"

#include <optional>

namespace mailassay::http {

struct services;

/// Reads the credentials a request presents (Authorization, Origin/Referer).
use_cases::accounts::credentials credentials_of(const request_view& req);

/// The same from the header values themselves (absent: nullopt), as the
/// body gate reads them from an upload's head (issue #28).
use_cases::accounts::credentials
credentials_from(std::optional<std::string_view> authorization,
                 std::optional<std::string_view> origin,
                 std::optional<std::string_view> referer);

/// The request's principal from the key cache alone, on the calling thread
/// (use_cases::accounts::authenticate_cached): nothing when only storage can
/// tell (a JWT, a key not cached).
std::optional<core::expected<use_cases::accounts::principal>>
cached_principal(const services& svc, const request_view& req);

/// The 403 of an API key used for what its rights do not cover
/// (core::account::may_use_key): a publishable key anywhere but the
/// validation endpoints without SMTP. Nothing for users and allowed uses.
std::optional<core::error>
key_use_refusal(const use_cases::accounts::principal& who,
                core::account::key_use use);

} // namespace mailassay::http
