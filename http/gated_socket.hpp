#pragma once

// The TCP socket RESTinio reads requests through (the `stream_socket_t` of the
// server traits): a `body_gate` looks at every read before the HTTP parser
// does, and the socket answers what the gate refuses (a malformed or
// oversized head, a bad chunked body, a request that does not arrive in
// time) itself, since RESTinio 0.6 would close those connections without a
// word. See body_gate.hpp for what the gate decides, gate_service.hpp for
// what the server gives every socket, lingering_close.hpp for how a
// refused connection ends.

#include "http/body_gate.hpp"
#include "http/gate_service.hpp"
#include "http/lingering_close.hpp"
#include "os/coarse_clock.hpp"

#include <restinio/all.hpp>

#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

namespace mailassay::http {

/// A TCP socket whose reads pass through a `body_gate`.
///
/// Decided bytes are handed to RESTinio in its own read buffer; an
/// incomplete head stays in that buffer while more is read behind it (or is
/// kept aside when decided bytes precede it), so a normal request costs one
/// scan of its head and no allocation. A head larger than RESTinio's buffer
/// is read into a buffer of the socket's own, up to the head limit, and
/// handed over in pieces.
///
/// A refusal is answered here: the response is written once no write of
/// RESTinio's is under way (RESTinio may read the next request while it
/// writes the previous answer), RESTinio's read ends with EOF so that it
/// closes the connection, and the socket, handed to `lingering_close`, sends
/// FIN and reads what the client still sends for a moment ("lingering close"),
/// so the client reads the answer instead of a reset. After a 413 of the gate
/// (answered by RESTinio's handler, see http/server.cpp) closing lingers
/// the same way.
///
/// Read deadline: the first time RESTinio waits for bytes of a request, the
/// socket notes when `read_timeout` will have passed (a write completing
/// before any byte of the request arrived moves it, as RESTinio's own read
/// timer is moved). One timer per connection, armed once per deadline,
/// checks it; a request partly received by then is answered 408. An idle
/// connection is left to RESTinio's timer (set a little longer), which
/// closes it without an answer.
class gated_socket {
public:
  using socket_type = asio::ip::tcp::socket;
  using executor_type = socket_type::executor_type;
  using clock = std::chrono::steady_clock;

  /// A closed socket on `ctx`, gated by the settings of `ctx`'s server.
  explicit gated_socket(asio::io_context& ctx)
      : sock_(ctx), svc_(&asio::use_service<gate_service>(ctx)),
        gate_(svc_->limits, svc_->head) {}

  gated_socket(gated_socket&& other) noexcept
      : sock_(std::move(other.sock_)), svc_(other.svc_),
        gate_(std::move(other.gate_)), stash_(std::move(other.stash_)),
        stash_cap_(other.stash_cap_), stash_len_(other.stash_len_),
        closed_(other.closed_) {
    other.forget();
  }

  gated_socket& operator=(gated_socket&& other) noexcept {
    sock_ = std::move(other.sock_);
    svc_ = other.svc_;
    gate_ = std::move(other.gate_);
    stash_ = std::move(other.stash_);
    stash_cap_ = other.stash_cap_;
    stash_len_ = other.stash_len_;
    closed_ = other.closed_;
    other.forget();
    return *this;
  }

  gated_socket(const gated_socket&) = delete;
  gated_socket& operator=(const gated_socket&) = delete;

  ~gated_socket() {
    if (watch_) {
      watch_->owner = nullptr;
      watch_->timer.cancel();
    }
    if (check_)
      check_->owner = nullptr;
  }

  /// The TCP socket (accept, options, endpoints).
  socket_type& lowest_layer() { return sock_; }

  /// The TCP socket (accept, options, endpoints).
  const socket_type& lowest_layer() const { return sock_; }

  /// The socket's executor.
  executor_type get_executor() { return sock_.get_executor(); }

  /// The peer's address.
  auto remote_endpoint() const { return sock_.remote_endpoint(); }

  /// Whether the socket is open.
  bool is_open() const { return sock_.is_open(); }

  /// Cancels pending operations.
  void cancel(asio::error_code& ec) { sock_.cancel(ec); }

  /// Shuts down; after a refusal only the sending side (see `close`).
  void shutdown(socket_type::shutdown_type what, asio::error_code& ec) {
    sock_.shutdown(gate_.refused() ? socket_type::shutdown_send : what, ec);
  }

  /// Closes; after a refusal the socket drains the client's input for a
  /// moment first, so the 413 is read rather than reset away.
  void close() {
    closed_ = true;
    asio::error_code ec;
    if (gate_.refused() && sock_.is_open()) {
      sock_.cancel(ec);
      sock_.shutdown(socket_type::shutdown_send, ec);
      lingering_close(std::move(sock_), {});
    } else {
      sock_.close(ec);
    }
    upload_slot_.reset();
    // A read waiting for RESTinio's writes, or for an upload's admission,
    // learns that it ends.
    resume_parked();
    if (auto p = std::move(check_parked_))
      p->resume();
  }

  /// Writes as the TCP socket does, noting that a write is under way.
  template <class Buffers, class Handler>
  auto async_write_some(const Buffers& bufs, Handler&& handler) {
    ++writes_;
    // Unbound: the completion runs on the socket's executor, the loop's
    // io_context, which is RESTinio's too (single-thread traits, no strand),
    // so `handler` may be called from it directly.
    return sock_.async_write_some(
        bufs, [this, h = std::forward<Handler>(handler)](
                  const asio::error_code& ec, std::size_t n) mutable {
          // The connection (and this socket) lives while RESTinio's
          // handler is pending: it holds the connection.
          --writes_;
          if (!received_any())
            restart_deadline();
          std::move(h)(ec, n);
          if (writes_ == 0)
            resume_parked();
        });
  }

  /// Reads into the first buffer of `bufs`, completing with decided bytes
  /// only.
  template <class Buffers, class Handler>
  void async_read_some(const Buffers& bufs, Handler&& handler) {
    asio::mutable_buffer b = *asio::buffer_sequence_begin(bufs);
    using handler_type = std::decay_t<Handler>;
    read_op<handler_type> op{this, static_cast<char*>(b.data()), b.size(), 0,
                             std::forward<Handler>(handler)};
    start_read(std::move(op));
  }

private:
  template <class Handler>
  struct read_op;

  // RESTinio's read, once no admission of an upload is pending.
  template <class Handler>
  void start_read(read_op<Handler> op) {
    if (check_ && !check_->done && !closed_) {
      // The upload's body waits until its head is admitted.
      check_parked_ = std::make_unique<check_wait<Handler>>(std::move(op));
      return;
    }
    if (check_ && check_->done) {
      auto c = std::move(check_);
      c->owner = nullptr;
      if (!c->result.refusal.empty())
        return op.refuse_rendered(std::move(c->result.refusal));
      upload_slot_ = std::move(c->result.slot);
    }
    if (closed_ || !sock_.is_open())
      return op.complete_later(asio::error::operation_aborted, 0);
    if (gate_.injection_pending()) {
      out_.assign(body_gate::refused_chunk);
      out_at_ = 0;
      gate_.injected();
    }
    if (out_at_ < out_.size())
      return op.complete_later({}, take_out(op.base, op.cap));
    if (stash_len_ > 0) {
      // Kept bytes may be a whole request already (pipelined after
      // others, or refused): decide on them before waiting for more. More
      // than RESTinio's buffer holds (kept after a large head) are decided
      // in the socket's own buffer.
      if (stash_len_ > op.cap)
        big_ = std::make_unique<std::string>(stash_.get(), stash_len_);
      else
        std::memcpy(op.base, stash_.get(), stash_len_);
      op.filled = big_ ? 0 : stash_len_;
      stash_len_ = 0;
      return op.process();
    }
    op.read_more();
  }

  // A read waiting for RESTinio's writes to end (see `refuse`).
  struct parked_read {
    virtual ~parked_read() = default;
    virtual void resume() = 0;
  };

  // The deadline timer, shared with its pending wait so that the socket
  // may go first.
  struct watch {
    explicit watch(executor_type ex) : timer(ex) {}
    asio::steady_timer timer;
    gated_socket* owner = nullptr;
    bool armed = false;
  };

  template <class Handler>
  struct read_op {
    gated_socket* self;
    char* base;
    std::size_t cap;
    std::size_t filled;
    Handler handler;

    // Waits for more bytes behind the `filled` undecided ones (into the
    // socket's own buffer while a head is larger than RESTinio's).
    void read_more() {
      auto& s = *self;
      s.held_ = filled;
      s.ensure_deadline();
      s.reading_ = true;
      // Unbound, as async_write_some's completion.
      if (s.big_) {
        auto at = s.big_->size();
        s.big_->resize(at + big_step);
        s.sock_.async_read_some(asio::buffer(s.big_->data() + at, big_step),
                                std::move(*this));
        return;
      }
      s.sock_.async_read_some(asio::buffer(base + filled, cap - filled),
                              std::move(*this));
    }

    // Hands `n` decided bytes to RESTinio; a request they complete is
    // dispatched inside and finds this socket (gate_service::parsing).
    void hand_over(std::size_t n) {
      auto* svc = self->svc_;
      svc->parsing = self;
      std::move(handler)(asio::error_code{}, n);
      svc->parsing = nullptr;
    }

    void complete_later(asio::error_code ec, std::size_t n) {
      // As `hand_over` (the handler holds the connection, so the socket),
      // on the loop (see async_write_some).
      asio::post(self->sock_.get_executor(),
                 [h = std::move(handler), ec, n, s = self]() mutable {
                   s->svc_->parsing = s;
                   std::move(h)(ec, n);
                   s->svc_->parsing = nullptr;
                 });
    }

    void operator()(const asio::error_code& ec, std::size_t n) {
      auto& s = *self;
      s.reading_ = false;
      if (s.big_ && !ec)
        s.big_->resize(s.big_->size() - big_step + n);
      if (s.closed_)
        return std::move(handler)(asio::error::operation_aborted, 0);
      if (s.timed_out_) {
        s.timed_out_ = false;
        return refuse(408, "The request did not arrive within " +
                               std::to_string(s.svc_->read_timeout.count()) +
                               " ms");
      }
      if (ec)
        return std::move(handler)(ec, 0);
      filled += n;
      process();
    }

    // Decides on what was read.
    void process() {
      auto& s = *self;
      if (s.big_)
        return process_big();
      auto v = s.gate_.scan(base, filled, cap);
      if (v.refuse)
        return refuse(v.refuse, s.gate_.refusal());
      if (v.check) {
        // The head goes to RESTinio now; its body after the admission.
        if (v.keep > 0)
          s.keep_aside(base + filled - v.keep, v.keep, cap);
        s.start_check();
        s.delivered();
        return hand_over(v.deliver);
      }
      if (v.grow) {
        s.big_ = std::make_unique<std::string>(base, filled);
        return read_more();
      }
      if (v.deliver == 0) {
        // Nothing decided: an incomplete head stays where it is and more is
        // read behind it; discarded input is overwritten.
        filled = v.keep;
        return read_more();
      }
      if (v.keep > 0)
        s.keep_aside(base + filled - v.keep, v.keep, cap);
      s.delivered();
      hand_over(v.deliver);
    }

    // The same in the socket's own buffer: once decided, its bytes go to
    // RESTinio a buffer at a time.
    void process_big() {
      auto& s = *self;
      auto& big = *s.big_;
      // Room for the zero chunk the gate may write.
      auto len = big.size();
      big.resize(len + body_gate::refused_chunk.size() + 1);
      auto v = s.gate_.scan(big.data(), len, big.size());
      if (v.refuse) {
        s.big_.reset();
        return refuse(v.refuse, s.gate_.refusal());
      }
      if (v.check)
        s.start_check();
      if (v.deliver == 0 && !s.gate_.injection_pending()) {
        big.resize(v.keep);
        return read_more();
      }
      auto own = std::move(s.big_);
      s.out_.assign(own->data(), v.deliver);
      s.out_at_ = 0;
      if (v.keep > 0)
        s.keep_aside(own->data() + len - v.keep, v.keep, len);
      if (s.gate_.injection_pending()) {
        s.out_.append(body_gate::refused_chunk);
        s.gate_.injected();
      }
      s.delivered();
      hand_over(s.take_out(base, cap));
    }

    // Answers the request with `status`, once RESTinio writes nothing, and
    // ends RESTinio's read with EOF so that it closes the connection.
    void refuse(int status, const std::string& message) {
      auto& s = *self;
      if (s.writes_ > 0) {
        s.parked_ = std::make_unique<parked<Handler>>(std::move(*this), status,
                                                      message);
        return;
      }
      asio::error_code ignored;
      auto peer = s.sock_.remote_endpoint(ignored).address();
      std::string text;
      if (s.svc_->render)
        text = s.svc_->render(peer, status, message);
      refuse_rendered(std::move(text));
    }

    // Sends `text` (a whole response) and ends RESTinio's read with EOF.
    void refuse_rendered(std::string text) {
      auto& s = *self;
      asio::error_code ignored;
      s.closed_ = true;
      s.deadline_ = clock::time_point{};
      s.sock_.cancel(ignored);
      lingering_close(std::move(s.sock_), std::move(text));
      complete_later(asio::error::eof, 0);
    }
  };

  template <class Handler>
  struct parked : parked_read {
    parked(read_op<Handler>&& o, int st, std::string m)
        : op(std::move(o)), status(st), message(std::move(m)) {}
    read_op<Handler> op;
    int status;
    std::string message;
    void resume() override {
      if (op.self->closed_)
        return op.complete_later(asio::error::operation_aborted, 0);
      op.refuse(status, message);
    }
  };

  // An upload's admission, shared with the server's answer so that the
  // socket may go first.
  struct upload_check {
    gated_socket* owner = nullptr;
    bool done = false;
    gate_service::upload_admission result;
  };

  // RESTinio's read of an upload's body, waiting for its admission.
  template <class Handler>
  struct check_wait : parked_read {
    explicit check_wait(read_op<Handler>&& o) : op(std::move(o)) {}
    read_op<Handler> op;
    void resume() override {
      if (op.self->closed_)
        return op.complete_later(asio::error::operation_aborted, 0);
      op.self->start_read(std::move(op));
    }
  };

  // Asks the server about the upload whose head was just scanned.
  void start_check() {
    auto st = std::make_shared<upload_check>();
    st->owner = this;
    check_ = st;
    if (!svc_->admit_upload) {
      st->done = true;
      return;
    }
    asio::error_code ignored;
    auto peer = sock_.remote_endpoint(ignored).address();
    auto ex = sock_.get_executor();
    svc_->admit_upload(gate_.checked_head(), peer,
                       [st, ex](gate_service::upload_admission a) mutable {
                         asio::post(ex, [st, a = std::move(a)]() mutable {
                           st->result = std::move(a);
                           st->done = true;
                           if (auto* owner = st->owner)
                             if (auto p = std::move(owner->check_parked_))
                               p->resume();
                         });
                       });
  }

  // A head larger than RESTinio's buffer is read this much at a time.
  static constexpr std::size_t big_step = 16384;

  // Copies decided bytes waiting in `out_` into RESTinio's buffer.
  std::size_t take_out(char* base, std::size_t cap) {
    auto n = std::min(cap, out_.size() - out_at_);
    std::memcpy(base, out_.data() + out_at_, n);
    out_at_ += n;
    if (out_at_ == out_.size()) {
      out_.clear();
      out_.shrink_to_fit();
      out_at_ = 0;
    }
    return n;
  }

  // Holds the start of a head that follows decided bytes until the next read
  // (RESTinio reuses its buffer from the start).
  void keep_aside(const char* p, std::size_t n, std::size_t cap) {
    if (!stash_ || stash_cap_ < std::max(cap, n)) {
      stash_cap_ = std::max(cap, n);
      stash_ = std::make_unique<char[]>(stash_cap_);
    }
    std::memcpy(stash_.get(), p, n);
    stash_len_ = n;
  }

  // Whether bytes of a request not yet delivered whole were received.
  bool received_any() const {
    return !gate_.idle() || held_ > 0 || stash_len_ > 0 || big_ ||
           out_at_ < out_.size();
  }

  // A request went to RESTinio whole: the next one gets its own deadline.
  void delivered() {
    // An upload's body was read: its slot is free again.
    if (gate_.idle() && !check_)
      upload_slot_.reset();
    held_ = 0;
    if (!received_any())
      deadline_ = clock::time_point{};
  }

  // Notes the deadline of the request being waited for and arms the timer
  // (at once when the deadline passed while the connection was idle: a
  // request that starts that late is already late).
  void ensure_deadline() {
    if (deadline_ == clock::time_point{})
      restart_deadline();
    else if (!watch_->armed)
      arm(deadline_);
  }

  void restart_deadline() {
    // Twice a request: the coarse clock (at most a tick early on a timeout
    // of seconds; on_watch reads the precise one, so it never re-arms for a
    // deadline already passed).
    deadline_ = os::coarse_steady_now() + svc_->read_timeout;
    if (!watch_) {
      watch_ = std::make_shared<struct watch>(sock_.get_executor());
      watch_->owner = this;
    }
    if (!watch_->armed)
      arm(deadline_);
  }

  void arm(clock::time_point at) {
    watch_->armed = true;
    watch_->timer.expires_at(at);
    watch_->timer.async_wait([w = watch_](const asio::error_code& ec) {
      w->armed = false;
      if (!ec && w->owner)
        w->owner->on_watch();
    });
  }

  void on_watch() {
    if (deadline_ == clock::time_point{} || closed_)
      return;
    if (clock::now() < deadline_)
      return arm(deadline_);
    // Idle connections are RESTinio's to close; a request partly received
    // gets its 408 through the pending read.
    if (!reading_ || !received_any())
      return;
    timed_out_ = true;
    asio::error_code ignored;
    sock_.cancel(ignored);
  }

  void resume_parked() {
    if (auto p = std::move(parked_))
      p->resume();
  }

  void forget() {
    check_.reset();
    check_parked_.reset();
    upload_slot_.reset();
    gate_ = body_gate{svc_->limits, svc_->head};
    stash_len_ = 0;
    stash_cap_ = 0;
    closed_ = false;
  }

  socket_type sock_;
  gate_service* svc_;
  body_gate gate_;
  std::unique_ptr<char[]> stash_;
  std::size_t stash_cap_ = 0;
  std::size_t stash_len_ = 0;
  // A head larger than RESTinio's buffer while it is read.
  std::unique_ptr<std::string> big_;
  // Decided bytes waiting for RESTinio's next read.
  std::string out_;
  std::size_t out_at_ = 0;
  // Undecided bytes in RESTinio's buffer while a read waits.
  std::size_t held_ = 0;
  bool closed_ = false;
  bool reading_ = false;
  bool timed_out_ = false;
  int writes_ = 0;
  std::unique_ptr<parked_read> parked_;
  // The admission of the upload whose head was delivered last, while its
  // answer is pending or not yet taken by the next read.
  std::shared_ptr<upload_check> check_;
  std::unique_ptr<parked_read> check_parked_;
  // Held while an admitted upload's body is read (the server's counters).
  std::shared_ptr<void> upload_slot_;
  clock::time_point deadline_{};
  std::shared_ptr<watch> watch_;
};

/// RESTinio's start-of-connection hook for this socket: nothing to prepare
/// (found by argument-dependent lookup).
template <class Connection, class Start, class Failed>
void prepare_connection_and_start_read(gated_socket&, Connection&, Start start,
                                       Failed) {
  start();
}

/// RESTinio's state-listener hook for this socket: not a TLS socket.
inline restinio::impl::tls_socket_t*
make_tls_socket_pointer_for_state_listener(gated_socket&) noexcept {
  return nullptr;
}

} // namespace mailassay::http
