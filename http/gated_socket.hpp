#pragma once

// The TCP socket RESTinio reads requests through (the `stream_socket_t` of the
// server traits): a `body_gate` looks at every read before the HTTP parser
// does. See body_gate.hpp for what it decides.

#include "http/body_gate.hpp"

#include <restinio/all.hpp>

#include <array>
#include <chrono>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

namespace mailassay::http {

/// The body limits of the server running on an I/O context; every socket
/// made on that context reads them (an asio service, so no global state).
class body_limits_service : public asio::execution_context::service {
public:
  /// The service's identity for `asio::use_service`.
  inline static asio::execution_context::id id;

  /// Made by `asio::use_service` on first use.
  explicit body_limits_service(asio::execution_context& ctx)
      : asio::execution_context::service(ctx) {}

  /// Set by the server before it accepts connections.
  body_limits limits;

private:
  void shutdown() override {}
};

/// A TCP socket whose reads pass through a `body_gate`.
///
/// Decided bytes are handed to RESTinio in its own read buffer; an
/// incomplete head stays in that buffer while more is read behind it (or is
/// kept aside when decided bytes precede it), so a normal request costs one
/// scan of its head and no allocation. After a refusal the input is
/// discarded, and closing keeps reading for a moment after sending FIN
/// ("lingering close"), so the client reads the 413 instead of a reset.
class gated_socket {
public:
  using socket_type = asio::ip::tcp::socket;
  using executor_type = socket_type::executor_type;

  /// A closed socket on `ctx`, gated by the limits of `ctx`'s server.
  explicit gated_socket(asio::io_context& ctx)
      : sock_(ctx),
        limits_(&asio::use_service<body_limits_service>(ctx).limits),
        gate_(*limits_) {}

  gated_socket(gated_socket&& other) noexcept
      : sock_(std::move(other.sock_)), limits_(other.limits_),
        gate_(other.gate_), stash_(std::move(other.stash_)),
        stash_len_(other.stash_len_), closed_(other.closed_) {
    other.forget();
  }

  gated_socket& operator=(gated_socket&& other) noexcept {
    sock_ = std::move(other.sock_);
    limits_ = other.limits_;
    gate_ = other.gate_;
    stash_ = std::move(other.stash_);
    stash_len_ = other.stash_len_;
    closed_ = other.closed_;
    other.forget();
    return *this;
  }

  gated_socket(const gated_socket&) = delete;
  gated_socket& operator=(const gated_socket&) = delete;

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
      linger(std::move(sock_));
      return;
    }
    sock_.close(ec);
  }

  /// Writes as the TCP socket does.
  template <class Buffers, class Handler>
  auto async_write_some(const Buffers& bufs, Handler&& handler) {
    return sock_.async_write_some(bufs, std::forward<Handler>(handler));
  }

  /// Reads into the first buffer of `bufs`, completing with decided bytes
  /// only.
  template <class Buffers, class Handler>
  void async_read_some(const Buffers& bufs, Handler&& handler) {
    asio::mutable_buffer b = *asio::buffer_sequence_begin(bufs);
    using handler_type = std::decay_t<Handler>;
    auto ex = asio::get_associated_executor(handler, sock_.get_executor());
    read_op<handler_type> op{this, static_cast<char*>(b.data()),  b.size(), 0,
                             ex,   std::forward<Handler>(handler)};
    if (closed_ || !sock_.is_open())
      return op.complete_later(asio::error::operation_aborted, 0);
    if (gate_.injection_pending()) {
      std::memcpy(op.base, body_gate::refused_chunk.data(),
                  body_gate::refused_chunk.size());
      gate_.injected();
      return op.complete_later({}, body_gate::refused_chunk.size());
    }
    if (stash_len_ > 0) {
      std::memcpy(op.base, stash_.get(), stash_len_);
      op.filled = stash_len_;
      stash_len_ = 0;
    }
    op.read_more();
  }

private:
  template <class Handler>
  struct read_op {
    gated_socket* self;
    char* base;
    std::size_t cap;
    std::size_t filled;
    asio::associated_executor_t<Handler, executor_type> ex;
    Handler handler;

    void read_more() {
      auto& sock = self->sock_;
      auto buf = asio::buffer(base + filled, cap - filled);
      auto e = ex;
      sock.async_read_some(buf, asio::bind_executor(e, std::move(*this)));
    }

    void complete_later(asio::error_code ec, std::size_t n) {
      auto e = ex;
      asio::post(e, [h = std::move(handler), ec, n]() mutable {
        std::move(h)(ec, n);
      });
    }

    void operator()(const asio::error_code& ec, std::size_t n) {
      auto& s = *self;
      if (s.closed_)
        return std::move(handler)(asio::error::operation_aborted, 0);
      if (ec)
        return std::move(handler)(ec, 0);
      filled += n;
      auto v = s.gate_.scan(base, filled, cap);
      if (v.deliver == 0) {
        // Nothing decided: an incomplete head stays where it is and more is
        // read behind it; discarded input is overwritten.
        filled = v.keep;
        return read_more();
      }
      if (v.keep > 0)
        s.keep_aside(base + filled - v.keep, v.keep, cap);
      std::move(handler)(asio::error_code{}, v.deliver);
    }
  };

  // Holds the start of a head that follows decided bytes until the next read
  // (RESTinio reuses its buffer from the start).
  void keep_aside(const char* p, std::size_t n, std::size_t cap) {
    if (!stash_ || stash_cap_ < cap) {
      stash_ = std::make_unique<char[]>(cap);
      stash_cap_ = cap;
    }
    std::memcpy(stash_.get(), p, n);
    stash_len_ = n;
  }

  void forget() {
    gate_ = body_gate{*limits_};
    stash_len_ = 0;
    stash_cap_ = 0;
    closed_ = false;
  }

  // Reads and drops what the client still sends, until it closes or a few
  // seconds pass, then closes.
  static void linger(socket_type sock) {
    struct drain : std::enable_shared_from_this<drain> {
      explicit drain(socket_type s)
          : sock(std::move(s)), strand(asio::make_strand(sock.get_executor())),
            timer(strand) {}
      socket_type sock;
      asio::strand<executor_type> strand;
      asio::steady_timer timer;
      std::array<char, 4096> buf;

      void start() {
        timer.expires_after(std::chrono::seconds(5));
        timer.async_wait([self = shared_from_this()](asio::error_code ec) {
          if (!ec) {
            asio::error_code ignored;
            self->sock.close(ignored);
          }
        });
        read();
      }

      void read() {
        sock.async_read_some(
            asio::buffer(buf),
            asio::bind_executor(strand, [self = shared_from_this()](
                                            asio::error_code ec, std::size_t) {
              if (!ec)
                return self->read();
              asio::error_code ignored;
              self->timer.cancel();
              self->sock.close(ignored);
            }));
      }
    };
    auto d = std::make_shared<drain>(std::move(sock));
    asio::dispatch(d->strand, [d] { d->start(); });
  }

  socket_type sock_;
  const body_limits* limits_;
  body_gate gate_;
  std::unique_ptr<char[]> stash_;
  std::size_t stash_cap_ = 0;
  std::size_t stash_len_ = 0;
  bool closed_ = false;
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
