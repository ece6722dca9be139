#pragma once

#include "actors/rate_limiter.hpp"
#include "core/account/records.hpp"
#include "core/limits/multi_window.hpp"
#include "core/limits/token_bucket.hpp"
#include "http/exchange.hpp"
#include "http/services.hpp"

#include <optional>
#include <string>

namespace mailassay::http {

struct services;

/// Returns the monotonic clock in milliseconds: the time every limiter check
/// carries.
core::limits::millis steady_millis();

/// Admits `c` (`rate_limiter::check`) and runs `then(decision)`: at once on
/// this thread when the limits are kept in this process; when they are
/// shared through Redis, on the Redis loop's thread once the script
/// answered (or at once, decided locally, when Redis is down). Never waits.
/// For a decision no request waits for (a failed login counted).
template <class Then>
void decide(const services& svc, const actors::limit_check& c, Then&& then) {
  if (!svc.shared_limits)
    return then(svc.limiter.check(c));
  svc.shared_limits->check(c, std::forward<Then>(then));
}

/// As `decide`, for the request of `ex`: `then` runs on its home thread
/// (exchange::resume), so it may touch the request as the handler does.
template <class Then>
void decide_at_home(const exchange_ptr& ex, const services& svc,
                    const actors::limit_check& c, Then then) {
  if (!svc.shared_limits)
    return then(svc.limiter.check(c));
  svc.shared_limits->check(
      c, [ex, then = std::move(then)](const actors::limit_decision& d) {
        ex->resume([then, d] { then(d); });
      });
}

/// Returns the `RateLimit-*` values of a limiter decision.
rate_headers headers_of(const actors::limit_decision& d);

/// Returns whether a key's limits name at least one window.
bool has_windows(const core::account::rate_limits& l);

/// Returns the limiter scope of an API key (its id and current limits).
actors::key_scope key_scope_of(const core::account::api_key& key);

/// Returns the widget's device id: the `X-Device-Id` header, else the
/// `mailassay_device` cookie the widget script sets; nullopt when neither
/// holds 1 to 128 visible ASCII characters.
std::optional<std::string> device_id_of(const request_view& req);

/// Returns the `RateLimit-*` values of a response whose handler took no
/// token (every endpoint but the two validation endpoints, and answers
/// given before a handler ran: 404, 405, 413, 503): the tightest window of
/// the request's API key when the key cache authenticates it and the key has
/// limits, else the validate per-IP window of the client IP; read without
/// taking a token (docs/rate-limits.md). With `limits.enabled` false, the
/// configured per-IP window as if unused. `key`, when the handler already
/// authenticated the request with it, spares a second key-cache lookup.
rate_headers unmetered_rate(const services& svc, const request_view& req,
                            const core::account::api_key* key = nullptr);

} // namespace mailassay::http
