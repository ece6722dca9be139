#pragma once

// Writing an exchange's answer: the response head (every answer's headers,
// then the handler's) and body in one buffer handed to the connection,
// counted in metrics and usage and logged as it goes. For the exchange's own
// files (exchange.cpp, body_stream.cpp).

#include "http/exchange_impl.hpp"

#include <restinio/all.hpp>

namespace mailassay::http {

/// What follows a response's head.
enum class body_mode {
  full,         ///< Content-Length and the body.
  length_only,  ///< Content-Length, no body: a HEAD (RFC 9110 §9.3.2).
  chunked_head, ///< Transfer-Encoding: chunked, no body: a streamed GET's
                ///< HEAD, whose length is not known in advance.
};

/// Writes the answer and lets go of the request. The whole answer goes in
/// one buffer, handed to the connection the way RESTinio's response builder
/// hands it, without the builder's string pair per field and second copy of
/// the head. An exchange without a RESTinio request (a refusal of the body
/// gate, http/server.cpp) hands its text to `raw_out` instead.
void write_answer(exchange::impl& s, response r, body_mode mode);

/// Adds the headers every answer carries, then `head`'s, to a streamed
/// response's builder.
void add_stream_headers(
    restinio::response_builder_t<restinio::chunked_output_t>& b,
    exchange::impl& s, const response& head);

/// Counts the answer (metrics, usage) before its last bytes are written, so
/// a client's next request sees it; returns the seconds since it came in.
double count_answer(exchange::impl& s, int status);

/// Logs the answer and lets go of the request.
void close_answer(exchange::impl& s, int status, double elapsed);

/// The status line of `status`, with its reason phrase.
restinio::http_status_line_t status_line(int status);

} // namespace mailassay::http
