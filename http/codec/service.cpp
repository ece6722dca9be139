#include "http/codec/service.hpp"

#include "core/base/time_format.hpp"
#include "http/codec/egress.hpp"

namespace mailassay::http::codec {

json health(bool healthy, std::int64_t now, const smtp_health& smtp) {
  json details{{"smtp", smtp.state}};
  if (smtp.report) {
    details["failedChecks"] = smtp.report->failed();
    auto egress = egress_report(*smtp.report);
    egress["checkedAt"] = core::iso8601(smtp.checked_at);
    details["egress"] = std::move(egress);
  }
  return {{"status", healthy ? "healthy" : "unhealthy"},
          {"timestamp", core::iso8601(now)},
          {"version", "v2"},
          {"details", std::move(details)}};
}

json status(const service_status& s) {
  return {
      {"status", s.database_ok ? "operational" : "degraded"},
      {"components",
       json::array({{{"name", "api"}, {"status", "operational"}},
                    {{"name", "database"},
                     {"status", s.database_ok ? "operational" : "unavailable"},
                     {"backend", std::string{s.backend}}}})},
      {"uptimeSeconds", s.uptime_seconds},
      {"version", s.version},
      {"apiVersion", "v2"},
      {"timestamp", core::iso8601(s.now)}};
}

json auth_options(bool signup_enabled) {
  return json{{"signupEnabled", signup_enabled}};
}

} // namespace mailassay::http::codec
