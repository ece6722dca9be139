#pragma once

// multipart/form-data bodies (RFC 7578 over RFC 2046 §5.1), parsed in place:
// each part's body is a view into the request body.

#include "core/base/expected.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::batch {

/// One part of a form: a field, or a file.
struct multipart_part {
  /// The `name` of its Content-Disposition (never empty).
  std::string name;
  /// The `filename` of its Content-Disposition; "" when none was given.
  std::string filename;
  /// Its Content-Type header as written; "" when absent (RFC 7578 §4.4:
  /// then text/plain).
  std::string content_type;
  /// Its content, a view into the body given to `parse_multipart`.
  std::string_view body;
};

/// Returns the boundary of a `multipart/form-data` Content-Type header value
/// (quoted or not); `errc::bad_request` for another type or no boundary.
expected<std::string> multipart_boundary(std::string_view content_type);

/// Splits `body` at `boundary` into parts, in order. Lines may end in CRLF
/// (RFC 2046) or LF; preamble and epilogue are ignored. `errc::bad_request`
/// when the boundary never occurs, the closing delimiter is missing or a part
/// has no Content-Disposition name.
expected<std::vector<multipart_part>>
parse_multipart_body(std::string_view body, std::string_view boundary);

/// `multipart_boundary` then `parse_multipart_body`; the parts view `body`.
expected<std::vector<multipart_part>>
parse_multipart(std::string_view content_type, std::string_view body);

} // namespace mailassay::core::batch
