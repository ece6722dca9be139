#include "http/codec/error.hpp"

#include "http/codec/json_text.hpp"
#include "http/errors.hpp"

#include <string_view>

namespace mailassay::http::codec {

using core::errc;

// Messages may quote the request (a path, a column name) in bytes that are
// not UTF-8: text_of writes them as U+FFFD, never an exception
// instead of the answer.
std::string error_body(const core::error& e) {
  auto status = status_of(e.code);
  if (e.code == errc::validation_failed) {
    nlohmann::json messages = e.details;
    if (messages.empty())
      messages.push_back(e.message);
    return text_of(nlohmann::json{{"message", messages},
                                  {"error", "Unprocessable Entity"},
                                  {"statusCode", 422}});
  }
  if (e.code == errc::widget_rate_limited)
    return text_of(nlohmann::json{{"statusCode", 429},
                                  {"message", e.message},
                                  {"reason", "WIDGET_RATE_LIMIT"},
                                  {"retryAfterSeconds", e.retry_after}});
  // Internal details stay in the log, never in the body.
  std::string_view message = e.code == errc::internal
                                 ? std::string_view{"Internal server error"}
                                 : std::string_view{e.message};
  // Most answers (401, 404, 429 under a flood): the bytes nlohmann would
  // write, in its key order, without building the object.
  if (written_as_is(message)) {
    std::string out;
    out.reserve(48 + message.size());
    out.append(R"({"code":")").append(code_of(e.code));
    out.append(R"(","message":")").append(message);
    out.append(R"(","statusCode":)").append(std::to_string(status));
    out.push_back('}');
    return out;
  }
  return text_of(nlohmann::json{{"message", std::string{message}},
                                {"code", code_of(e.code)},
                                {"statusCode", status}});
}

} // namespace mailassay::http::codec
