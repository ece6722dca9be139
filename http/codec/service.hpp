#pragma once

// The service's own documents: GET /health, GET /status and
// GET /v2/auth/options.

#include "core/egress/report.hpp"
#include "http/codec/json_text.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http::codec {

/// What /health says about SMTP probing's egress (the service's audit).
struct smtp_health {
  /// "off" (no SMTP probing), "unchecked" (no audit ended yet, or none
  /// scheduled), "ok" or "degraded" (a check failed).
  std::string state = "off";
  /// The last audit, when one ended.
  std::optional<core::egress::report> report;
  /// When it ended, Unix seconds.
  std::int64_t checked_at = 0;
};

/// {status: healthy|unhealthy, timestamp, version, details: {smtp,
/// failedChecks?, egress?: {ok, egressAddress, checks, checkedAt}}}: the
/// spec's record, and in `details` the egress audit (a degraded SMTP egress
/// leaves the service healthy: the API still answers).
json health(bool healthy, std::int64_t now, const smtp_health& smtp = {});

/// What GET /status reports.
struct service_status {
  bool database_ok = false;
  std::string_view backend; ///< "sqlite" or "postgresql".
  std::int64_t uptime_seconds = 0;
  std::string version;
  std::int64_t now = 0; ///< Unix seconds.
};

/// {status, components: [{name, status, backend?}], uptimeSeconds,
/// version, apiVersion, timestamp}.
json status(const service_status& s);

/// {signupEnabled}.
json auth_options(bool signup_enabled);

} // namespace mailassay::http::codec
