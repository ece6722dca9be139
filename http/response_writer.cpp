#include "http/response_writer.hpp"

#include "http/deadline_list.hpp"
#include "http/metrics.hpp"
#include "http/text_cursor.hpp"
#include "http/text_pool.hpp"
#include "log/log.hpp"

#include <array>
#include <charconv>

namespace mailassay::http {

namespace {

std::string_view reason_of(int status) {
  switch (status) {
    case 200: return "OK";
    case 201: return "Created";
    case 204: return "No Content";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 402: return "Payment Required";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 422: return "Unprocessable Entity";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 499: return "Client Closed Request"; // nginx's; nobody reads it
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 500 ? "Client Error" : "Internal Server Error";
  }
}

} // namespace

namespace {

// Decimal text of `n` in `buf`.
std::string_view decimal(std::array<char, 24>& buf, std::int64_t n) {
  auto [end, ec] = std::to_chars(buf.data(), buf.data() + buf.size(), n);
  return {buf.data(), static_cast<std::size_t>(end - buf.data())};
}

// The headers every response carries, then the handler's own, through `out`
// (`append_header(name, value)` and `connection_close()`).
template <class Out>
void add_headers(Out& out, exchange::impl& s, const response& r) {
  if (r.status != 204)
    out.append_header("Content-Type", r.content_type);
  // Every answer: a browser must never guess another type than the one
  // given (a JSON error quoting a path is not a page).
  out.append_header("X-Content-Type-Options", "nosniff");
  out.append_header("X-Request-Id", s.id);
  // Read here, not when the request came in: the window as it stands now.
  if (!s.rate_set && s.hooks)
    s.rate = s.hooks->unmetered_rate(s.view, s.rate_key.get());
  std::array<char, 24> buf;
  out.append_header("RateLimit-Limit", decimal(buf, s.rate.limit));
  out.append_header("RateLimit-Remaining", decimal(buf, s.rate.remaining));
  out.append_header("RateLimit-Reset", decimal(buf, s.rate.reset));
  if (!s.cors_origin.empty()) {
    out.append_header("Access-Control-Allow-Origin", s.cors_origin);
    out.append_header("Access-Control-Expose-Headers",
                      "RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, "
                      "Retry-After, X-Request-Id");
    out.append_header("Vary", "Origin");
  }
  // RFC 9110 §11.6.1: a 401 names the scheme it wants (RFC 6750 §3).
  if (r.status == 401)
    out.append_header("WWW-Authenticate", "Bearer realm=\"mailassay\"");
  for (auto& [k, v] : s.extra_headers)
    out.append_header(k, v);
  for (auto& [k, v] : r.headers)
    out.append_header(k, v);
  if (s.close_connection)
    out.connection_close();
}

// add_headers into a RESTinio response builder (streamed responses).
template <class Builder>
struct builder_headers {
  Builder& b;
  void append_header(std::string_view name, std::string_view value) {
    b.append_header(std::string{name}, std::string{value});
  }
  void connection_close() { b.connection_close(); }
};

// add_headers into the text of a response head (after the status line,
// Connection and Content-Length, as RESTinio's create_header_string orders
// them), without a string pair per header.
struct head_text {
  text_cursor& out;
  void append_header(std::string_view name, std::string_view value) {
    out.raw(name);
    out.raw(": ");
    out.raw(value);
    out.raw("\r\n");
  }
  // The Connection field was written before, from close_connection.
  void connection_close() {}
};

} // namespace

double count_answer(exchange::impl& s, int status) {
  auto elapsed = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - s.started)
                     .count();
  if (s.stats)
    s.stats->observe(s.route, status, elapsed);
  if (s.usage_key && s.hooks)
    s.hooks->record_usage(std::move(s.usage_key), status == 200,
                          std::move(s.usage_address));
  return elapsed;
}

// Logs the answer and lets go of the request.
void close_answer(exchange::impl& s, int status, double elapsed) {
  auto level = status >= 500 ? log::level::error : log::level::info;
  // The fields cost more than the request at `warn`: build them only when
  // the line is written.
  if (log::enabled(level))
    log::event(level, "http_request",
               {{"request_id", s.id},
                {"method", std::string{s.view.method}},
                {"route", std::string{s.route}},
                {"status", std::to_string(status)},
                {"duration_ms", std::to_string(elapsed * 1000.0)}});
  if (s.in_flight)
    s.in_flight->fetch_sub(1);
}

restinio::http_status_line_t status_line(int status) {
  return restinio::http_status_line_t{
      restinio::http_status_code_t{static_cast<std::uint16_t>(status)},
      std::string{reason_of(status)}};
}

// Writes the answer and lets go of the request. The whole answer goes in
// one buffer, handed to the connection the way RESTinio's response builder
// hands it, without the builder's string pair per field and second copy of
// the head. An exchange without a RESTinio request (a refusal of the body
// gate, http/server.cpp) hands its text to `raw_out` instead.
void write_answer(exchange::impl& s, response r, body_mode mode) {
  if (s.listed)
    s.deadlines->remove(s);
  auto text = text_pool::take();
  bool keep_alive =
      s.req && s.req->header().should_keep_alive() && !s.close_connection;
  bool has_body = r.status != 204 && mode == body_mode::full;
  {
    text_cursor out{text, 320 + (has_body ? r.body.size() : 0)};
    if (r.status == 200) {
      out.raw("HTTP/1.1 200 OK\r\n");
    } else {
      out.raw("HTTP/1.1 ");
      out.integer(r.status);
      out.raw(" ");
      out.raw(reason_of(r.status));
      out.raw("\r\n");
    }
    // Connection and Content-Length first, where RESTinio puts them.
    if (keep_alive)
      out.raw("Connection: keep-alive\r\n");
    else
      out.raw("Connection: close\r\n");
    if (mode == body_mode::chunked_head) {
      out.raw("Transfer-Encoding: chunked\r\n");
    } else if (r.status != 204) {
      out.raw("Content-Length: ");
      out.integer(r.body.size());
      out.raw("\r\n");
    }
    head_text head{out};
    add_headers(head, s, r);
    out.raw("\r\n");
    if (has_body)
      out.raw(r.body);
  }
  text_pool::give(std::move(r.body));
  auto elapsed = count_answer(s, r.status);
  if (!s.req) {
    if (s.raw_out)
      *s.raw_out = std::move(text);
    return close_answer(s, r.status, elapsed);
  }
  restinio::writable_items_container_t parts;
  parts.emplace_back(pooled_text{std::move(text)});
  // The connection handle leaves the request, which stays with the
  // exchange (the view points into it): a held handle keeps the connection
  // alive.
  auto conn = std::move(restinio::impl::access_req_connection(*s.req));
  conn->write_response_parts(
      s.req->request_id(),
      restinio::response_output_flags_t{
          restinio::response_parts_attr_t::final_parts,
          restinio::response_connection_attr(keep_alive)},
      restinio::write_group_t{std::move(parts)});
  close_answer(s, r.status, elapsed);
}

void add_stream_headers(
    restinio::response_builder_t<restinio::chunked_output_t>& b,
    exchange::impl& s, const response& head) {
  builder_headers<restinio::response_builder_t<restinio::chunked_output_t>> out{
      b};
  add_headers(out, s, head);
}

} // namespace mailassay::http
