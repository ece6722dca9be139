#pragma once

#include "config/settings.hpp"
#include "core/base/expected.hpp"
#include "http/exchange.hpp"
#include "use_cases/accounts/types.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http {
struct call;
} // namespace mailassay::http

// The dashboard's session cookie (docs/dashboard.md, "Sessions"): the
// refresh token travels in an HttpOnly, SameSite=Strict cookie that only
// the auth endpoints see, so page scripts never hold it; the access token
// stays in the page's memory.
namespace mailassay::http::session_cookie {

/// The cookie's name: `__Host-` makes browsers keep it only when set
/// Secure, for Path=/, without Domain, by this very host, so a sibling
/// subdomain cannot plant one (RFC 6265bis §4.1.3.2).
inline constexpr std::string_view name = "__Host-mailassay_refresh";

/// Its name when `auth.cookie_secure` is off: browsers drop a `__Host-`
/// cookie that is not Secure.
inline constexpr std::string_view insecure_name = "mailassay_refresh";

/// The name the cookie has under `auth`.
std::string_view name_of(const config::auth_settings& auth);

/// Whether a sign-up or login asked for the cookie form
/// (`?session=cookie`); another value of `session` is a 422.
core::expected<bool> requested(const request_view& req);

/// The refresh token the request's `Cookie` headers carry under `cookie`
/// (the cookie's name), if any; errc::bad_request when two cookies have
/// that name (one planted to fix a session: which one is meant is unknown).
core::expected<std::optional<std::string>> token(const request_view& req,
                                                 std::string_view cookie);

/// Whether the request comes from a page of this service, so that a
/// cookie it carries may be acted on (CSRF): `Sec-Fetch-Site: same-origin`
/// when the browser sends that header, else an `Origin` whose host and port
/// are the request's `Host`. Neither header: refused.
bool same_origin(const request_view& req);

/// The 403 of a cross-site request that carried, or asked for, the cookie.
core::error cross_site();

/// The `Set-Cookie` value that stores `refresh_token` for the refresh
/// token's lifetime.
std::string set_value(std::string_view refresh_token,
                      const config::auth_settings& auth);

/// The `Set-Cookie` value that removes the cookie.
std::string clear_value(const config::auth_settings& auth);

/// Reads `?session=cookie` of a sign-up or login: whether the cookie form
/// was asked for, checked against CSRF; nullopt once the refusal (422,
/// 403) was answered.
std::optional<bool> mode(const call& c);

/// `POST /v2/auth/refresh` without a body: spends the cookie's token from
/// this service's pages only, answers the new session in the cookie form.
void refresh(call c);

/// `POST /v2/auth/logout` without a body: ends the cookie's token family
/// (this service's pages only) and clears the cookie; 204 also without one.
void logout(call c);

/// Answers a session in the cookie form: `status` with the session document
/// (tokens, user, organization, role) without its `refreshToken`, which
/// goes into the cookie; an error clears the cookie.
void reply(const call& c, const core::expected<use_cases::accounts::session>& s,
           int status);

/// Answers 204 and clears the cookie, or the error.
void reply_cleared(const call& c, const core::expected<core::unit>& r);

} // namespace mailassay::http::session_cookie
