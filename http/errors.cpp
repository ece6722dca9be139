#include "http/errors.hpp"

namespace mailassay::http {

using core::errc;

namespace {

struct row {
  errc code;
  int status;
  const char* name;
};

// errc -> HTTP status and `code`, in one place.
constexpr row table[] = {
    {errc::bad_request, 400, "BAD_REQUEST"},
    {errc::validation_failed, 422, "VALIDATION_FAILED"},
    {errc::unauthorized, 401, "UNAUTHORIZED"},
    {errc::no_authorization, 401, "UNAUTHORIZED"},
    {errc::insufficient_credits, 402, "INSUFFICIENT_CREDITS"},
    {errc::forbidden, 403, "FORBIDDEN"},
    {errc::not_found, 404, "NOT_FOUND"},
    {errc::conflict, 409, "CONFLICT"},
    {errc::active_job_exists, 409, "ACTIVE_JOB_EXISTS"},
    {errc::results_erased, 410, "RESULTS_ERASED"},
    {errc::payload_too_large, 413, "PAYLOAD_TOO_LARGE"},
    {errc::rate_limited, 429, "TOO_MANY_REQUESTS"},
    {errc::widget_rate_limited, 429, "WIDGET_RATE_LIMIT"},
    {errc::method_not_allowed, 405, "METHOD_NOT_ALLOWED"},
    {errc::request_timeout, 408, "REQUEST_TIMEOUT"},
    {errc::uri_too_long, 414, "URI_TOO_LONG"},
    {errc::header_too_large, 431, "HEADER_TOO_LARGE"},
    {errc::not_implemented, 501, "NOT_IMPLEMENTED"},
    {errc::version_not_supported, 505, "HTTP_VERSION_NOT_SUPPORTED"},
    {errc::unavailable, 503, "SERVICE_UNAVAILABLE"},
    {errc::internal, 500, "INTERNAL_ERROR"},
};

const row& find(errc code) {
  for (auto& r : table)
    if (r.code == code)
      return r;
  return table[std::size(table) - 1];
}

} // namespace

int status_of(errc code) {
  return find(code).status;
}

const char* code_of(errc code) {
  return find(code).name;
}

} // namespace mailassay::http
