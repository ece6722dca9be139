#pragma once

// Admission: what a request must pass before its use case runs, and in
// which order (docs/rate-limits.md, docs/api.md).
//
//   bytes ──> body gate (gated_socket.hpp, body_gate.hpp): heads and body
//             framing over the limits refused before RESTinio parses them
//             (400/408/413/414/431/501/505)
//         ──> server dispatch (server.cpp): draining 503, a body the gate
//             cut short 413 (`body_refusal`), route 404/405, the route's
//             body limit 413, the query 400/422
//         ──> the handler's admission:
//               validation endpoints: `admit` — the endpoint's limiter
//                 scopes (per IP, or the widget's device and IP) and a
//                 cached key's windows in one check, BEFORE any storage
//                 lookup; storage authenticates after it when the key
//                 cache cannot tell, and the key's windows are checked then
//               login and sign-up: the throttles of auth_throttle.hpp
//               every other endpoint: authentication on a storage worker
//                 (handler_support.hpp, `with_principal`)
//
// So a flood of bad credentials is held by the per-IP window and never
// reaches storage, and a cached key needs no storage at all.

#include "actors/rate_limiter.hpp"
#include "http/credentials.hpp"
#include "http/handler_support.hpp"
#include "http/rate_limit.hpp"
#include "http/router.hpp"
#include "use_cases/accounts/types.hpp"

#include <optional>
#include <string>

namespace mailassay::http {

/// What a batch upload's body may hold beyond `batch.max_file_bytes`: the
/// multipart envelope (boundaries, part headers, the option fields). The
/// body gate refuses bodies over the file limit plus this; the file is
/// measured exactly once the body is parsed.
inline constexpr std::int64_t multipart_allowance = 64 * 1024;

/// The largest body of any route but the batch upload; the gate refuses
/// larger ones while they stream in (413). Below it, dispatch answers 413
/// per route after the body was read.
inline constexpr std::uint64_t hard_body_limit = 32ull << 20;

/// The 413 of a batch upload over `batch.max_file_bytes`; from the handler,
/// or from the server when the body gate refused the body while it arrived.
core::error file_too_large(const services& svc);

/// The 413 of a body the gate refused while it arrived, for route `r`
/// (null when no route matched): the file's limit for an upload.
core::error body_refusal(const services& svc, const route* r);

/// The 403 of a credential the widget may not use: only an API key that
/// works from its own sites (allowedDomains) may sit in a page.
std::optional<core::error>
widget_key_refusal(const use_cases::accounts::principal& who);

/// Lets the page read the answer when a domain-restricted key admitted the
/// request's origin.
void allow_admitted_origin(const call& c,
                           const use_cases::accounts::principal& who);

/// Counts the request in the usage of the principal's API key, whatever its
/// answer; `successful` means answered 200 (docs/usage-stats.md).
void count_usage(const call& c, const use_cases::accounts::principal& who,
                 std::string email);

/// The 429 of a key's window.
core::error key_refusal(const actors::limit_decision& d);

/// The 429 of the validate endpoint's per-IP window.
core::error ip_refusal(const actors::limit_decision& d);

/// The widget's 429 (device or IP window), in the widget's error format.
core::error widget_refusal(const actors::limit_decision& d);

/// The tighter of two allowed decisions (docs/rate-limits.md).
const actors::limit_decision& tighter_of(const actors::limit_decision& a,
                                         const actors::limit_decision& b);

namespace detail {

/// The principal the key cache found for a request, if it could decide.
using cached_t = std::optional<core::expected<use_cases::accounts::principal>>;

/// The rest of `admit`, once the endpoint's scopes were decided (`first`):
/// the refusal, or authentication and then `next(c, who)`.
template <class Refusal, class Next>
void admitted(const call& c, const cached_t& cached, bool enabled,
              const actors::limit_decision& first, Refusal refused, Next next) {
  namespace uc = use_cases::accounts;
  if (enabled) {
    c.ex->set_rate(headers_of(first));
    if (!first.allowed) {
      if (first.refused_by != actors::limit_scope::key)
        return c.ex->fail(refused(first));
      count_usage(c, **cached, {});
      return c.ex->fail(key_refusal(first));
    }
  }
  if (cached) {
    if (!*cached)
      return c.ex->fail(cached->error_value());
    return next(c, **cached);
  }
  with_caller(
      c, callers::validation,
      [c, enabled, first, next](uc::account_env&, const uc::principal& who) {
        allow_admitted_origin(c, who);
        if (!enabled || !who.key || !has_windows(who.key->limits))
          return next(c, who);
        actors::limit_check k;
        k.key = key_scope_of(*who.key);
        k.now = steady_millis();
        decide(*c.svc, k,
               [c, first, who, next](const actors::limit_decision& d) {
                 if (!d.allowed) {
                   c.ex->set_rate(headers_of(d));
                   count_usage(c, who, {});
                   return c.ex->fail(key_refusal(d));
                 }
                 c.ex->set_rate(headers_of(tighter_of(first, d)));
                 next(c, who);
               });
      });
}

} // namespace detail

/// Admits a request to a validation endpoint, then runs `next(c, who)`.
///
/// One limiter check covers the endpoint's own scopes (`check`: the validate
/// per-IP window, or the widget's device and IP windows) and the API key's
/// windows when the key cache authenticates the request. It comes before
/// any storage lookup, so a flood of bad credentials is held by the per-IP
/// window and a cached key needs none. When the cache cannot decide (a JWT,
/// or a key not loaded yet), storage authenticates after the endpoint's
/// scopes were taken, and the key's windows are checked then
/// (docs/rate-limits.md). Limits kept in this process are checked on this
/// thread; shared ones (Redis) continue when Redis answers. `refused(d)`
/// makes the 429 of the endpoint's own scopes.
template <class Refusal, class Next>
void admit(const call& c, actors::limit_check check, Refusal refused,
           Next next) {
  auto cached = cached_principal(*c.svc, c.req());
  const bool enabled = c.svc->cfg.limits.enabled;
  const use_cases::accounts::principal* who =
      cached && *cached ? &**cached : nullptr;
  // A page reads its 429 too, when its key admitted the origin.
  if (who)
    allow_admitted_origin(c, *who);
  if (!enabled)
    return detail::admitted(c, cached, false, {}, refused, next);
  if (who && who->key && has_windows(who->key->limits))
    check.key = key_scope_of(*who->key);
  if (!c.svc->shared_limits)
    return detail::admitted(c, cached, true, c.svc->limiter.check(check),
                            refused, next);
  // The continuation holds the principal (and its key) until Redis answers.
  c.svc->shared_limits->check(
      check, [c, cached, refused, next](const actors::limit_decision& d) {
        detail::admitted(c, cached, true, d, refused, next);
      });
}

} // namespace mailassay::http
