#pragma once

// The checks of a request head (RFC 9112 §2-§7, RFC 9110 §5) the body gate
// makes before the HTTP parser sees a byte, so that a malformed or
// oversized request gets a status and the spec's error body instead of the
// silent close RESTinio 0.6 gives every parser error.
//
// The checks are stricter than the parser (http_parser 2.9, built
// non-strict): whatever they accept, the parser accepts too, and they refuse
// what RFC 9112 tells a server to refuse: a space or control character in
// the request target, whitespace before a field's colon, line folding, a
// bare CR, NUL or other control characters in a field value, an invalid or
// repeated Content-Length, Content-Length beside Transfer-Encoding, a
// transfer coding other than chunked, a missing or repeated Host.
//
// Pure byte logic, no allocation unless a head is refused.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::http {

/// Limits of a request head (`http.max_head_bytes`,
/// `http.max_header_fields`).
struct head_limits {
  /// The request line and the field lines, line ends included.
  std::size_t max_bytes = 65536;
  /// Field lines at most.
  std::size_t max_fields = 100;
};

/// What a head says about its request, or why it is refused.
struct head_facts {
  /// 0: acceptable; else the status to answer: 400, 414, 431, 501 or 505.
  int status = 0;
  /// Why, for the error body; empty when acceptable.
  std::string message;
  /// A POST to the batch upload route (its own body limit).
  bool upload = false;
  /// The request's body is chunked.
  bool chunked = false;
  /// Content-Length (saturated at UINT64_MAX); 0 when absent.
  std::uint64_t length = 0;
  /// Offset of the Content-Length field line in the head, or npos.
  std::size_t length_at = std::string_view::npos;
};

/// Checks a complete head: from the request line through the empty line
/// that ends it (CRLF or a bare LF as line ends, RFC 9112 §2.2).
head_facts check_head(std::string_view head, const head_limits& limits);

/// Checks the start of a head whose empty line has not arrived: refuses at
/// once what can no longer become acceptable (a method that is not a token,
/// a complete request line that is malformed, more than `max_bytes`);
/// status 0 means "read on".
head_facts check_head_start(std::string_view start, const head_limits& limits);

/// Checks one field line of a chunked body's trailer section (without its
/// line end): 0 when acceptable, else 400 with `message` set.
int check_trailer_line(std::string_view line, std::string& message);

/// The value of field `name` (any case, surrounding blanks trimmed) in a
/// complete head, "" when absent; `count` gets how many field lines have that
/// name (the gate reads an upload's credentials from its head, issue #28).
std::string_view head_field(std::string_view head, std::string_view name,
                            int& count);

} // namespace mailassay::http
