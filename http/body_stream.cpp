#include "http/deadline_list.hpp"
#include "http/exchange.hpp"
#include "http/exchange_impl.hpp"
#include "http/metrics.hpp"
#include "http/response_writer.hpp"
#include "log/log.hpp"

namespace mailassay::http {

struct body_stream::impl {
  exchange_ptr ex;
  int status = 200;
  std::optional<restinio::response_builder_t<restinio::chunked_output_t>> out;
  // For `abort`: the builder can only end a body, not cut it off.
  restinio::impl::connection_handle_t conn;
  restinio::request_id_t request_id = 0;
  bool ended = false;
};

namespace {

// Like the exchange's members, a stream's calls run on the request's home
// thread (called elsewhere, e.g. by a storage worker, they are posted
// there): they touch the exchange's state and RESTinio's builder and
// connection, whose last reference must go there too (its destructor counts
// the loop's connections without a lock).

void write_here(body_stream::impl& p, std::string data,
                std::function<void(bool)> then) {
  if (p.ended)
    return;
  p.out->append_chunk(std::move(data));
  p.out->flush(
      [then = std::move(then)](const asio::error_code& ec) { then(!ec); });
}

void finish_here(body_stream::impl& p, std::string last) {
  if (p.ended)
    return;
  p.ended = true;
  if (!last.empty())
    p.out->append_chunk(std::move(last));
  auto& s = p.ex->state();
  auto elapsed = count_answer(s, p.status);
  p.out->done();
  close_answer(s, p.status, elapsed);
}

void abort_here(body_stream::impl& p, const core::error& e) {
  if (p.ended)
    return;
  p.ended = true;
  auto& s = p.ex->state();
  // A client that went away is not the server's fault.
  auto level =
      e.code == core::errc::internal ? log::level::error : log::level::warn;
  log::event(level, "stream_aborted",
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

} // namespace

body_stream::body_stream(std::unique_ptr<impl> p) : impl_(std::move(p)) {}

body_stream::~body_stream() {
  if (!impl_)
    return;
  auto& ex = *impl_->ex;
  // The state goes with the closure, so it ends on the home thread. A stream
  // whose finish or abort was called is left to that call, which may still
  // wait in the home loop's queue when this runs there.
  ex.resume([p = std::move(impl_), ending = ending_] {
    if (!ending)
      abort_here(*p, core::make_error(core::errc::internal,
                                      "stream dropped unfinished"));
  });
}

void body_stream::write(std::string data, std::function<void(bool)> then) {
  impl_->ex->resume(
      [p = impl_, data = std::move(data), then = std::move(then)]() mutable {
        write_here(*p, std::move(data), std::move(then));
      });
}

void body_stream::finish(std::string last) {
  ending_ = true;
  impl_->ex->resume([p = impl_, last = std::move(last)]() mutable {
    finish_here(*p, std::move(last));
  });
}

void body_stream::abort(const core::error& e) {
  ending_ = true;
  impl_->ex->resume([p = impl_, e] { abort_here(*p, e); });
}

void exchange::stream(response head,
                      std::function<void(body_stream_ptr)> then) {
  if (!at_home())
    return resume([self = shared_from_this(), head = std::move(head),
                   then = std::move(then)]() mutable {
      self->stream(std::move(head), std::move(then));
    });
  auto& s = *impl_;
  if (s.done)
    return then(nullptr);
  s.done = true;
  s.cancelled.store(true, std::memory_order_release);
  // A HEAD gets the head a GET would get, and no body to stream.
  if (s.view.is_head()) {
    write_answer(s, std::move(head), body_mode::chunked_head);
    return then(nullptr);
  }
  if (s.listed)
    s.deadlines->remove(s);
  auto p = std::make_unique<body_stream::impl>();
  p->ex = shared_from_this();
  p->status = head.status;
  p->conn = restinio::impl::access_req_connection(*s.req);
  p->request_id = s.req->request_id();
  p->out.emplace(s.req->create_response<restinio::chunked_output_t>(
      status_line(head.status)));
  add_stream_headers(*p->out, s, head);
  then(std::make_shared<body_stream>(std::move(p)));
}

} // namespace mailassay::http
