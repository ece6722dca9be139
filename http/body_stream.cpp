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
