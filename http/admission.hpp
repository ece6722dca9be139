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
//               validation endpoints: the chain `admit` runs,
//                 limit_endpoint ──> authenticate ──> limit_key ──> run
//                 (429)              (401/403)        (429)
//                 the endpoint's limiter scopes (per IP, or the widget's
//                 device and IP) and a cached key's windows in one check,
//                 BEFORE any storage lookup; storage authenticates after it
//                 when the key cache cannot tell, and the key's windows are
//                 checked then
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

#include <functional>
#include <memory>
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

/// A validation endpoint's 429 for its own scopes.
using refusal_fn = core::error (*)(const actors::limit_decision&);

/// What runs once a request to a validation endpoint is admitted: a plain
/// function, as `refusal_fn` (the request's state travels in `call`), so
/// the chain carries no type-erased callable per request.
using admitted_fn = void (*)(const call&,
                             const use_cases::accounts::principal&);

/// A request to a validation endpoint going through admission: what its
/// steps learnt so far. Each step continues with the next or answers.
struct admission {
  call c;
  /// The endpoint's own scopes (the validate per-IP window, or the
  /// widget's device and IP windows); the key's windows join them when the
  /// key cache knows the key.
  actors::limit_check check;
  /// The 429 of the endpoint's own scopes.
  refusal_fn refused = nullptr;
  /// What runs when admitted.
  admitted_fn run = nullptr;
  /// `limits.enabled`: off, no limiter is asked.
  bool enabled = true;
  /// What the key cache found; empty when it cannot tell (a JWT, a key
  /// not loaded yet).
  std::optional<core::expected<use_cases::accounts::principal>> cached;
  /// The endpoint's decision (first step).
  actors::limit_decision first;
};

// The chain, in order (docs/architecture.md, "The request path"). Each step
// runs on the request's home thread. A request decided on that thread (a
// cached key, limits kept in this process) goes through on the stack; a
// step that waits for storage or Redis moves it to the heap and resumes on
// the home thread before the next step.

/// Step 1: the endpoint's scopes, and a cached key's windows, in one
/// limiter check before any storage lookup; 429 or on to `authenticate`.
void limit_endpoint(admission& a);

/// Step 2: the principal, from the key cache or else a storage worker;
/// 401/403 or on to `limit_key` (or straight to `run` when the first step
/// checked the key's windows already).
void authenticate(admission& a);

/// Step 3: the windows of a key authenticated by storage (the cache did not
/// know it in step 1); 429 or on to `run`.
void limit_key(admission& a, const use_cases::accounts::principal& who);

/// Admits a request to a validation endpoint through the chain
/// `limit_endpoint` -> `authenticate` -> `limit_key`, then runs
/// `a.run(c, who)` (docs/rate-limits.md): a flood of bad credentials is
/// held by the endpoint's window and never reaches storage, and a cached
/// key needs no storage at all. The handler fills `a.c`, `a.check` (its
/// own scopes), `a.refused` and `a.run` in place, on its stack; `admit`
/// adds what the service knows (`enabled`, `cached`).
void admit(admission& a);

} // namespace mailassay::http
