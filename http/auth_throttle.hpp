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
// window that refused. With `redis.url` set the windows are shared by every
// process (one script takes the IP token and reads the account's window);
// the request then goes on when Redis answers.

#include "actors/rate_limiter.hpp"
#include "http/router.hpp"

#include <functional>
#include <optional>
#include <string_view>

namespace mailassay::http {

/// Takes a sign-up token of the client IP, then runs `next()`; answers 429
/// instead when the window is empty.
void admit_signup(const call& c, std::function<void()> next);

/// Takes a login token of the client IP and reads the account's window of
/// failures; answers 429 when either refuses, else runs `next(account)`
/// with the account's scope for `login_failed`.
void admit_login(const call& c, std::string_view email,
                 std::function<void(const actors::window_scope&)> next);

/// Counts a failed login against the account.
void login_failed(const call& c, const actors::window_scope& account);

} // namespace mailassay::http
