#pragma once

// A client connection that TLS may wrap once it is connected: at once for
// https (net/http_client), after STARTTLS for SMTP (net/smtp_client). Reads,
// writes and the close go to whichever layer is on top, so a call's code
// does not branch on it. Used on one strand, like the call that owns it.

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/ssl.hpp>
#include <asio/strand.hpp>
#include <asio/write.hpp>
#include <openssl/ssl.h>

#include <memory>
#include <string>
#include <system_error>
#include <utility>

namespace mailassay::net {

/// A TCP connection, plain until `start_tls`, then TLS over it.
class upgradable_socket {
public:
  /// The strand a call's handlers run on.
  using strand = asio::strand<asio::io_context::executor_type>;

  /// An unconnected socket whose handlers run on `on`.
  explicit upgradable_socket(const strand& on) : socket_(on) {}

  /// The TCP socket under TLS (connect through it, before `start_tls`).
  asio::ip::tcp::socket& tcp() { return tls_ ? tls_->next_layer() : socket_; }

  /// Whether TLS wraps the connection.
  bool secured() const { return tls_ != nullptr; }

  /// Wraps the connection in TLS with `ctx` and starts the client handshake;
  /// `done(error_code)` follows. `host` is sent as SNI unless it is an IP
  /// literal (RFC 6066 §3); with `verify`, the certificate must be valid
  /// and name `host`.
  template <class Handler>
  void start_tls(asio::ssl::context& ctx, const std::string& host, bool verify,
                 Handler&& done) {
    tls_ = std::make_unique<asio::ssl::stream<asio::ip::tcp::socket>>(
        std::move(socket_), ctx);
    std::error_code not_ip;
    asio::ip::make_address(host, not_ip);
    if (not_ip)
      SSL_set_tlsext_host_name(tls_->native_handle(), host.c_str());
    if (verify) {
      tls_->set_verify_mode(asio::ssl::verify_peer);
      tls_->set_verify_callback(asio::ssl::host_name_verification(host));
    }
    tls_->async_handshake(asio::ssl::stream_base::client,
                          std::forward<Handler>(done));
  }

  /// Writes all of `buffers`; `done(error_code, bytes)` follows.
  template <class Buffers, class Handler>
  void write(const Buffers& buffers, Handler&& done) {
    if (tls_)
      asio::async_write(*tls_, buffers, std::forward<Handler>(done));
    else
      asio::async_write(socket_, buffers, std::forward<Handler>(done));
  }

  /// Reads what is there, into `buffer`; `done(error_code, bytes)` follows.
  template <class Buffer, class Handler>
  void read_some(const Buffer& buffer, Handler&& done) {
    if (tls_)
      tls_->async_read_some(buffer, std::forward<Handler>(done));
    else
      socket_.async_read_some(buffer, std::forward<Handler>(done));
  }

  /// Shuts the connection down both ways and closes it (pending operations
  /// end with an error); errors are ignored.
  void close() {
    std::error_code ignored;
    auto& s = tcp();
    s.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    s.close(ignored);
  }

private:
  asio::ip::tcp::socket socket_;
  std::unique_ptr<asio::ssl::stream<asio::ip::tcp::socket>> tls_;
};

} // namespace mailassay::net
