#pragma once

// Throttles of the account endpoints against password guessing and sign-up
// farming (docs/rate-limits.md, "Login and sign-up"):
//
// - login per client IP: every attempt takes a token;
// - login per account (the email given, lower-cased, whether or not such
//   an account exists): only failures take a token, and once the window is
//   empty every attempt is refused before the password is checked, so
//   guessing stops even when the guesses come from many addresses;
// - sign-up per client IP: every well-formed attempt takes a token.
//
// A refusal is 429 with `Retry-After` and the RateLimit headers of the
// window that refused.

#include "actors/rate_limiter.hpp"
#include "http/router.hpp"

#include <optional>
#include <string_view>

namespace mailassay::http {

/// Takes a sign-up token of the client IP; answers 429 and returns false
/// when the window is empty.
bool admit_signup(const call& c);

/// Takes a login token of the client IP and reads the account's window of
/// failures; answers 429 and returns nullopt when either refuses, else the
/// account's scope for `login_failed`.
std::optional<actors::window_scope> admit_login(const call& c,
                                                std::string_view email);

/// Counts a failed login against the account.
void login_failed(const call& c, const actors::window_scope& account);

} // namespace mailassay::http
