#include "core/base/errc.hpp"

namespace mailassay::core {

std::string_view to_string(errc code) {
  switch (code) {
    case errc::bad_request: return "bad_request";
    case errc::validation_failed: return "validation_failed";
    case errc::unauthorized: return "unauthorized";
    case errc::no_authorization: return "no_authorization";
    case errc::insufficient_credits: return "insufficient_credits";
    case errc::forbidden: return "forbidden";
    case errc::not_found: return "not_found";
    case errc::conflict: return "conflict";
    case errc::active_job_exists: return "active_job_exists";
    case errc::results_erased: return "results_erased";
    case errc::payload_too_large: return "payload_too_large";
    case errc::rate_limited: return "rate_limited";
    case errc::widget_rate_limited: return "widget_rate_limited";
    case errc::method_not_allowed: return "method_not_allowed";
    case errc::request_timeout: return "request_timeout";
    case errc::uri_too_long: return "uri_too_long";
    case errc::header_too_large: return "header_too_large";
    case errc::not_implemented: return "not_implemented";
    case errc::version_not_supported: return "version_not_supported";
    case errc::unavailable: return "unavailable";
    case errc::internal: return "internal";
  }
  return "internal";
}

} // namespace mailassay::core
