#pragma once

// A request body read as JSON (RFC 8259), stricter than nlohmann alone:
//
// - a NUL byte anywhere is malformed (nlohmann's lexer takes it for the end
//   of the input, so `{"email":"a@b.c"}\0garbage` would pass);
// - a name given twice in one object is refused, like a query parameter or
//   a multipart field given twice (RFC 8259 §4 leaves its meaning open, and
//   "the last one wins" silently drops what the client sent);
// - a number beyond the range of a double (`1e400`) is well-formed JSON with
//   a bad value: 422 naming the field, not "malformed JSON";
// - objects and arrays nest at most `json_max_depth` deep.

#include "core/base/expected.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string_view>

namespace mailassay::http {

/// How deep objects and arrays may nest in a request body; no request
/// needs more than three levels.
inline constexpr std::size_t json_max_depth = 32;

/// Parses `body` as one JSON value. Malformed JSON, a NUL byte or nesting
/// deeper than `json_max_depth` -> errc::bad_request; a name repeated in an
/// object or a number out of range -> errc::validation_failed with one
/// message naming the field (`config.smtp`, `allowedDomains.0`).
core::expected<nlohmann::json> parse_json_body(std::string_view body);

} // namespace mailassay::http
