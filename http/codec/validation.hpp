#pragma once

// The validation documents: the request body of POST /v2/email/validate
// and of the widget, and the result, written directly (the hot path;
// tests/http_unit/codec_test.cpp keeps it byte-identical to nlohmann's
// dump of the reference mapping).

#include "actors/validation/validator.hpp"
#include "core/base/expected.hpp"
#include "http/exchange.hpp"

#include <cstdint>
#include <string>

namespace mailassay::http::codec {

/// A validation request body: {email, smtp?, timeout?}.
struct validation_input {
  std::string email;
  bool smtp = false;
  std::int64_t timeout_ms = 10000;
};

/// Reads a validation request body.
core::expected<validation_input> validation(const request_view& req);

/// A widget request body: {email}.
core::expected<validation_input> widget_validation(const request_view& req);

/// What the result writer does with text that is not UTF-8.
enum class bad_utf8 {
  refuse,  ///< Throws nlohmann's type_error, as `dump()` does.
  replace, ///< Writes U+FFFD, as `text_of()` does (the CLI echoes input).
};

/// Appends the JSON text of `r` to `out`: the bytes nlohmann's `dump()`
/// writes for the reference mapping (keys sorted, strings escaped the same
/// way), written directly instead of through a tree of `std::map` objects
/// (docs/performance.md).
void write_validation_result(std::string& out,
                             const actors::validation::result& r,
                             bad_utf8 policy = bad_utf8::refuse);

/// Returns the JSON text of `r`; see `write_validation_result`.
std::string validation_result_text(const actors::validation::result& r,
                                   bad_utf8 policy = bad_utf8::refuse);

} // namespace mailassay::http::codec
