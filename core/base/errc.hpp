#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core {

/// Every failure a use case can report; `http/` maps each to one status.
enum class errc {
  bad_request,           ///< Body not parseable (bad JSON, wrong content type).
  validation_failed,     ///< Parseable, but fields fail validation (422).
  unauthorized,          ///< Credential missing, invalid, expired or revoked.
  no_authorization,      ///< No `Authorization` header at all.
  insufficient_credits,  ///< SMTP requested without enough credits (402).
  forbidden,             ///< Authenticated, but the role does not allow it.
  not_found,             ///< Resource does not exist for this organization.
  conflict,              ///< Unique constraint, e.g. email already registered.
  active_job_exists,     ///< A batch job is already queued or processing.
  results_erased,        ///< A job's results passed their retention (410).
  payload_too_large,     ///< Body over the configured limit (413).
  rate_limited,          ///< A rate-limit bucket is empty (429).
  widget_rate_limited,   ///< The widget's anti-abuse buckets refused (429).
  method_not_allowed,    ///< Route exists, method does not (405).
  request_timeout,       ///< The request did not arrive in time (408).
  uri_too_long,          ///< The request line is over the head limit (414).
  header_too_large,      ///< The head's fields are over their limits (431).
  not_implemented,       ///< A method or transfer coding no route uses (501).
  version_not_supported, ///< Not HTTP/1.0 or HTTP/1.1 (505).
  unavailable,           ///< A dependency (storage) is down (503).
  internal,              ///< Anything unexpected (500).
};

/// A failure: its kind plus the human-readable message(s) for the client.
struct error {
  errc code = errc::internal;
  std::string message;
  /// Per-field messages for `errc::validation_failed`.
  std::vector<std::string> details;
  /// Seconds to wait, for `errc::rate_limited`.
  long retry_after = 0;
};

/// Returns a stable lower-case name of `code` for logs and metrics.
std::string_view to_string(errc code);

/// Builds an error of kind `code` with `message`.
inline error make_error(errc code, std::string message) {
  return error{code, std::move(message), {}, 0};
}

/// The refusal of a credential that is bad, expired, revoked or of the
/// wrong kind: one message whatever the reason, so that a caller learns
/// nothing about which.
inline error unauthorized() {
  return make_error(errc::unauthorized, "Unauthorized");
}

} // namespace mailassay::core
