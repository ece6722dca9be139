#pragma once

// A scriptable HTTP/1.1 receiver on loopback for webhook tests: plain or
// TLS (a self-signed certificate made at start naming `tls_name` and
// 127.0.0.1, written to a PEM file the client can trust), answers chosen
// per request (a status after a delay, or a connection closed or held
// without an answer), every request recorded with its headers and raw
// body. One thread per connection; tests wait on its condition variable.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace mailassay::tests::peers {

/// What the peer is.
struct http_peer_options {
  std::string address = "127.0.0.1";
  /// Serve TLS (else plain HTTP).
  bool tls = false;
  /// The certificate's DNS name (subjectAltName, with IP 127.0.0.1).
  std::string tls_name = "localhost";
};

/// One answer.
struct http_peer_reply {
  int status = 200;
  /// Wait this long first (a slow receiver; longer than the client's
  /// time-out: a hanging one).
  std::chrono::milliseconds delay{0};
  /// Close the connection instead of answering.
  bool close = false;
};

/// One request as received.
struct http_peer_request {
  std::string method;
  std::string target;
  std::map<std::string, std::string> headers; ///< Lower-case names.
  std::string body;                           ///< Raw bytes.
  int answered = 0; ///< The status sent (0: closed or held).

  /// Returns a header's value or "".
  std::string header(const std::string& lower_name) const;
};

/// The receiver; see the top of this file. Thread-safe.
class http_peer {
public:
  /// Listens on a free port of `options.address`; throws when it cannot.
  explicit http_peer(http_peer_options options = {});
  /// Stops: closes the listener and every connection, joins the threads.
  ~http_peer();
  http_peer(const http_peer&) = delete;
  http_peer& operator=(const http_peer&) = delete;

  /// The port listened on.
  std::uint16_t port() const;

  /// "http(s)://<address>:<port><path>".
  std::string url(const std::string& path = "/hook") const;

  /// The PEM file of the certificate (TLS only; "" otherwise).
  std::string ca_file() const;

  /// Answers for the next requests, in order; after them `fallback`.
  void script(std::vector<http_peer_reply> replies);

  /// The answer once the script is used up (200 at start).
  void set_fallback(http_peer_reply reply);

  /// Every request so far, in arrival order.
  std::vector<http_peer_request> requests() const;

  /// Waits until at least `n` requests arrived; false when `timeout`
  /// passed first.
  bool wait_for(std::size_t n, std::chrono::milliseconds timeout) const;

  /// Connections accepted so far.
  std::size_t connections() const;

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::tests::peers
