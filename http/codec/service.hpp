#pragma once

// The service's own documents: GET /health, GET /status and
// GET /v2/auth/options.

#include "http/codec/json_text.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::http::codec {

/// {status: healthy|unhealthy, timestamp, version}.
json health(bool healthy, std::int64_t now);

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
