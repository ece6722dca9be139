// Fuzz target: JSON request bodies (http/json_body.hpp) and every body
// decoder of the codecs (http/codec/), with their error bodies
// (http/codec/error.hpp). Oracles: a body the strict parser accepts is one
// nlohmann accepts, to the same value; a body nlohmann refuses is refused;
// no decoder throws; every error renders as JSON.

#include "fuzz/fuzz_check.hpp"

#include "http/codec/accounts.hpp"
#include "http/codec/error.hpp"
#include "http/codec/keys.hpp"
#include "http/codec/validation.hpp"
#include "http/json_body.hpp"

#include <cstdint>
#include <string>

namespace codec = mailassay::http::codec;
using mailassay::http::request_view;

namespace {

template <class T>
void check(const mailassay::core::expected<T>& r) {
  if (r)
    return;
  // An error body is always JSON, whatever the body quoted.
  auto body = mailassay::http::codec::error_body(r.error_value());
  MAILASSAY_FUZZ_CHECK(
      !nlohmann::json::parse(body, nullptr, false).is_discarded());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data,
                                      std::size_t size) {
  std::string body{reinterpret_cast<const char*>(data), size};
  auto strict = mailassay::http::parse_json_body(body);
  auto loose = nlohmann::json::parse(body, nullptr, false);
  if (strict)
    MAILASSAY_FUZZ_CHECK(!loose.is_discarded() && *strict == loose);
  if (loose.is_discarded())
    MAILASSAY_FUZZ_CHECK(!strict);
  check(strict);

  request_view req;
  req.method = "POST";
  req.path = "/v2/fuzz";
  req.body = body;
  req.headers.emplace_back("Content-Type", "application/json");
  req.index_headers();
  check(codec::validation(req));
  check(codec::widget_validation(req));
  check(codec::signup(req));
  check(codec::login(req));
  check(codec::refresh_token(req));
  check(codec::new_member(req));
  check(codec::role_change(req));
  check(codec::new_key(req));
  check(codec::key_update(req));
  return 0;
}
