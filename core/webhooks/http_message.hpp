#pragma once

// The two pieces of HTTP/1.1 (RFC 9112) a webhook delivery needs, without
// I/O: the request head it writes, and the status of the answer it reads.
// net/http_client.cpp feeds the socket's bytes to `read_response_head` and
// needs nothing else of the answer: a delivery is judged by its status
// alone, so the body is never read (the connection is closed).

#include "core/base/expected.hpp"
#include "core/webhooks/target_url.hpp"

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace mailassay::core::webhooks {

/// One header field of a request.
struct header_field {
  std::string name;  ///< A token (RFC 9110 §5.1).
  std::string value; ///< Visible ASCII and spaces; no CR, LF or NUL.
};

/// Writes the head of a request for `url` with a body of `body_size`
/// bytes: request line, Host, `fields`, Content-Length and
/// `Connection: close`. A field name that is not a token or a value with a
/// control character (header injection) -> errc::bad_request.
expected<std::string> request_head(std::string_view method,
                                   const target_url& url,
                                   std::span<const header_field> fields,
                                   std::size_t body_size);

/// How far the head of the answer has arrived.
enum class head_state {
  incomplete, ///< More bytes needed.
  complete,   ///< The final (non-1xx) status line and fields are in.
  malformed,  ///< Not an HTTP/1.x answer.
  too_large,  ///< No end of head within the limit.
};

/// What `read_response_head` found.
struct response_head {
  head_state state = head_state::incomplete;
  int status_code = 0; ///< Set when complete.
};

/// Reads the answer's head from the bytes received so far (interim 1xx
/// answers, RFC 9110 §15.2, are skipped). More than `max_bytes` without a
/// final head is `too_large`.
response_head read_response_head(std::string_view received,
                                 std::size_t max_bytes);

} // namespace mailassay::core::webhooks
