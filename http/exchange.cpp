#include "http/exchange.hpp"

#include "actors/log.hpp"
#include "core/base/ascii.hpp"
#include "http/codec/error.hpp"
#include "http/errors.hpp"
#include "http/exchange_impl.hpp"
#include "http/metrics.hpp"
#include "http/rate_limit.hpp"
#include "http/services.hpp"
#include "http/text_cursor.hpp"
#include "http/text_pool.hpp"

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
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return status < 500 ? "Client Error" : "Internal Server Error";
  }
}

} // namespace

namespace {

// An exchange with its state: one allocation with the shared count.
struct exchange_with_state final : exchange {
  exchange::impl s;

  exchange_with_state() : exchange(s) { s.self = this; }
  // Before `s` goes: the base class can no longer reach it.
  ~exchange_with_state() { settle(); }
};

} // namespace

std::shared_ptr<exchange> exchange::create() {
  return std::make_shared<exchange_with_state>();
}

void exchange::settle() {
  // Everyone who could answer let go of the request: never leave a client
  // (and a connection slot) hanging.
  if (!impl_->done.load())
    fail(core::make_error(core::errc::internal, "request dropped unanswered"));
}

const request_view& exchange::request() const {
  return impl_->view;
}

const std::string& exchange::id() const {
  return impl_->id;
}

void exchange::record_usage(std::shared_ptr<const core::account::api_key> key,
                            std::string address) {
  impl_->usage_key = std::move(key);
  impl_->usage_address = std::move(address);
}

void exchange::allow_origin(std::string origin) {
  impl_->cors_origin = std::move(origin);
}

void exchange::set_rate_key(std::shared_ptr<const core::account::api_key> key) {
  impl_->rate_key = std::move(key);
}

void exchange::add_header(std::string name, std::string value) {
  impl_->extra_headers.emplace_back(std::move(name), std::move(value));
}

void exchange::set_rate(rate_headers r) {
  impl_->rate = r;
  impl_->rate_set = true;
}

bool exchange::answered() const {
  return impl_->done.load();
}

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
  if (!s.rate_set && s.svc)
    s.rate = unmetered_rate(*s.svc, s.view, s.rate_key.get());
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

// Counts the answer (metrics, usage) before its last bytes are written, so
// a client's next request sees it; returns the seconds since it came in.
double count_answer(exchange::impl& s, int status) {
  auto elapsed = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - s.started)
                     .count();
  if (s.stats)
    s.stats->observe(s.route, status, elapsed);
  if (s.usage_key)
    s.svc->usage.record_key(std::move(s.usage_key), s.svc->now(), status == 200,
                            0, std::move(s.usage_address));
  return elapsed;
}

// Logs the answer and lets go of the request.
void close_answer(exchange::impl& s, int status, double elapsed) {
  auto level =
      status >= 500 ? actors::log_level::error : actors::log_level::info;
  // The fields cost more than the request at `warn`: build them only when
  // the line is written.
  if (actors::log_enabled(level))
    actors::log_event(level, "http_request",
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

} // namespace

namespace {

// What follows a response's head.
enum class body_mode {
  full,         ///< Content-Length and the body.
  length_only,  ///< Content-Length, no body: a HEAD (RFC 9110 §9.3.2).
  chunked_head, ///< Transfer-Encoding: chunked, no body: a streamed GET's
                ///< HEAD, whose length is not known in advance.
};

// Writes the answer and lets go of the request. The whole answer goes in
// one buffer, handed to the connection the way RESTinio's response builder
// hands it, without the builder's string pair per field and second copy of
// the head. An exchange without a RESTinio request (a refusal of the body
// gate, http/server.cpp) hands its text to `raw_out` instead.
void answer(exchange::impl& s, response r, body_mode mode) {
  if (s.added.load())
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

} // namespace

void exchange::respond(response r) {
  if (impl_->done.exchange(true))
    return;
  answer(*impl_, std::move(r),
         impl_->view.is_head() ? body_mode::length_only : body_mode::full);
}

struct body_stream::impl {
  exchange_ptr ex;
  int status = 200;
  std::optional<restinio::response_builder_t<restinio::chunked_output_t>> out;
  // For `abort`: the builder can only end a body, not cut it off.
  restinio::impl::connection_handle_t conn;
  restinio::request_id_t request_id = 0;
  std::atomic<bool> ended{false};
};

body_stream::body_stream(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

body_stream::~body_stream() {
  if (impl_ && !impl_->ended.load())
    abort(core::make_error(core::errc::internal, "stream dropped unfinished"));
}

void body_stream::write(std::string data, std::function<void(bool)> then) {
  auto& p = *impl_;
  if (p.ended.load())
    return;
  p.out->append_chunk(std::move(data));
  p.out->flush(
      [then = std::move(then)](const asio::error_code& ec) { then(!ec); });
}

void body_stream::finish(std::string last) {
  auto& p = *impl_;
  if (p.ended.exchange(true))
    return;
  if (!last.empty())
    p.out->append_chunk(std::move(last));
  auto& s = p.ex->state();
  auto elapsed = count_answer(s, p.status);
  p.out->done();
  close_answer(s, p.status, elapsed);
}

void body_stream::abort(const core::error& e) {
  auto& p = *impl_;
  if (p.ended.exchange(true))
    return;
  auto& s = p.ex->state();
  // A client that went away is not the server's fault.
  auto level = e.code == core::errc::internal ? actors::log_level::error
                                              : actors::log_level::warn;
  actors::log_event(level, "stream_aborted",
                    {{"request_id", s.id}, {"error", e.message}});
  auto elapsed = count_answer(s, p.status);
  if (s.stats)
    s.stats->stream_aborted();
  // A final, empty part that closes the connection: the body never gets its
  // last chunk.
  p.conn->write_response_parts(
      p.request_id,
      restinio::response_output_flags_t{
          restinio::response_parts_attr_t::final_parts,
          restinio::response_connection_attr_t::connection_close},
      restinio::write_group_t{restinio::writable_items_container_t{}});
  close_answer(s, p.status, elapsed);
}

body_stream_ptr exchange::stream(response head) {
  if (impl_->done.exchange(true))
    return nullptr;
  auto& s = *impl_;
  // A HEAD gets the head a GET would get, and no body to stream.
  if (s.view.is_head()) {
    answer(s, std::move(head), body_mode::chunked_head);
    return nullptr;
  }
  if (s.added.load())
    s.deadlines->remove(s);
  auto p = std::make_unique<body_stream::impl>();
  p->ex = shared_from_this();
  p->status = head.status;
  p->conn = restinio::impl::access_req_connection(*s.req);
  p->request_id = s.req->request_id();
  p->out.emplace(s.req->create_response<restinio::chunked_output_t>(
      status_line(head.status)));
  builder_headers<restinio::response_builder_t<restinio::chunked_output_t>> out{
      *p->out};
  add_headers(out, s, head);
  return std::make_shared<body_stream>(std::move(p));
}

void exchange::set_timeout_response(response r) {
  impl_->on_timeout = std::move(r);
}

void exchange::time_out() {
  if (impl_->on_timeout)
    return respond(*impl_->on_timeout);
  fail(core::make_error(core::errc::unavailable,
                        "The request could not be completed in time"));
}

void exchange::json(int status, std::string body) {
  respond(response{status, std::move(body), "application/json", {}});
}

void exchange::fail(const core::error& e) {
  response r{status_of(e.code), codec::error_body(e), "application/json", {}};
  if (e.code == core::errc::rate_limited ||
      e.code == core::errc::widget_rate_limited)
    r.headers.emplace_back("Retry-After", std::to_string(e.retry_after));
  if (e.code == core::errc::internal)
    actors::log_event(actors::log_level::error, "internal_error",
                      {{"request_id", impl_->id}, {"error", e.message}});
  respond(std::move(r));
}

deadline_list::deadline_list(asio::io_context& ioctx,
                             std::chrono::milliseconds timeout)
    : timer_(std::in_place, ioctx), timeout_(timeout) {}

void deadline_list::add(exchange& ex) {
  auto& x = ex.state();
  std::lock_guard guard{mtx_};
  if (closed_)
    return;
  x.added.store(true);
  if (x.done.load())
    return; // answered meanwhile, on another thread
  // From the arrival time: one clock read fewer, and the order is the same.
  x.deadline_at = x.started + timeout_;
  x.prev = tail_;
  x.next = nullptr;
  (tail_ ? tail_->next : head_) = &x;
  tail_ = &x;
  x.listed = true;
  if (!armed_)
    arm(x.deadline_at);
}

void deadline_list::remove(exchange::impl& x) {
  std::lock_guard guard{mtx_};
  unlink(x);
}

void deadline_list::close() {
  std::lock_guard guard{mtx_};
  closed_ = true;
  while (head_)
    unlink(*head_);
  timer_.reset();
}

void deadline_list::unlink(exchange::impl& x) {
  if (!x.listed)
    return;
  (x.prev ? x.prev->next : head_) = x.next;
  (x.next ? x.next->prev : tail_) = x.prev;
  x.prev = x.next = nullptr;
  x.listed = false;
}

// Called with the lock held; asio timers are not thread-safe, and every use
// of this one is under the lock.
void deadline_list::arm(std::chrono::steady_clock::time_point at) {
  armed_ = true;
  timer_->expires_at(at);
  timer_->async_wait([weak = weak_from_this()](const asio::error_code& ec) {
    if (ec)
      return;
    if (auto self = weak.lock())
      self->on_timer();
  });
}

void deadline_list::on_timer() {
  std::vector<exchange_ptr> due;
  {
    std::lock_guard guard{mtx_};
    armed_ = false;
    if (closed_)
      return;
    auto now = std::chrono::steady_clock::now();
    while (head_ && head_->deadline_at <= now) {
      auto& x = *head_;
      unlink(x);
      // A request whose last owner is letting go answers itself (500) in
      // its destructor.
      if (auto ex = x.self->weak_from_this().lock())
        due.push_back(std::move(ex));
    }
    if (head_)
      arm(head_->deadline_at);
  }
  for (auto& ex : due)
    ex->time_out();
}

} // namespace mailassay::http
