#pragma once

// How a connection the body gate refused ends (http/gated_socket.hpp): the
// answer is written, FIN sent, and what the client still sends is read and
// dropped for a moment ("lingering close"), so that the client reads the
// answer instead of a reset.

#include <restinio/all.hpp>

#include <array>
#include <chrono>
#include <memory>
#include <string>
#include <utility>

namespace mailassay::http {

/// Writes `text` (a whole response; may be empty) on `sock`, sends FIN, then
/// reads and drops what the client still sends until it closes or 5 s pass,
/// then closes. The socket is owned by the closing from here on.
inline void lingering_close(asio::ip::tcp::socket sock, std::string text) {
  using socket_type = asio::ip::tcp::socket;
  using executor_type = socket_type::executor_type;
  struct closer : std::enable_shared_from_this<closer> {
    closer(socket_type s, std::string t)
        : sock(std::move(s)), text(std::move(t)),
          strand(asio::make_strand(sock.get_executor())), timer(strand) {}
    socket_type sock;
    std::string text;
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
      if (text.empty()) {
        read();
        return;
      }
      asio::async_write(
          sock, asio::buffer(text),
          asio::bind_executor(strand, [self = shared_from_this()](
                                          asio::error_code ec, std::size_t) {
            asio::error_code ignored;
            if (ec) {
              self->timer.cancel();
              self->sock.close(ignored);
              return;
            }
            self->sock.shutdown(socket_type::shutdown_send, ignored);
            self->read();
          }));
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
  if (!sock.is_open())
    return;
  auto c = std::make_shared<closer>(std::move(sock), std::move(text));
  asio::dispatch(c->strand, [c] { c->start(); });
}

} // namespace mailassay::http
