#include "http/errors.hpp"

#include "http/codec.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

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

// Messages may quote the request (a path, a column name) in bytes that are
// not UTF-8: codec::text_of writes them as U+FFFD, never an exception
// instead of the answer.
std::string error_body(const core::error& e) {
  auto status = status_of(e.code);
  if (e.code == errc::validation_failed) {
    nlohmann::json messages = e.details;
    if (messages.empty())
      messages.push_back(e.message);
    return codec::text_of(nlohmann::json{{"message", messages},
                                         {"error", "Unprocessable Entity"},
                                         {"statusCode", 422}});
  }
  if (e.code == errc::widget_rate_limited)
    return codec::text_of(nlohmann::json{{"statusCode", 429},
                                         {"message", e.message},
                                         {"reason", "WIDGET_RATE_LIMIT"},
                                         {"retryAfterSeconds", e.retry_after}});
  // Internal details stay in the log, never in the body.
  std::string_view message = e.code == errc::internal
                                 ? std::string_view{"Internal server error"}
                                 : std::string_view{e.message};
  // Most answers (401, 404, 429 under a flood): the bytes nlohmann would
  // write, in its key order, without building the object.
  if (codec::written_as_is(message)) {
    std::string out;
    out.reserve(48 + message.size());
    out.append(R"({"code":")").append(code_of(e.code));
    out.append(R"(","message":")").append(message);
    out.append(R"(","statusCode":)").append(std::to_string(status));
    out.push_back('}');
    return out;
  }
  return codec::text_of(nlohmann::json{{"message", std::string{message}},
                                       {"code", code_of(e.code)},
                                       {"statusCode", status}});
}

} // namespace mailassay::http
