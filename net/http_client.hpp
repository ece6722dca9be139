#pragma once

// A small non-blocking HTTP/1.1 client for webhook deliveries: one POST per
// connection, plain or TLS (OpenSSL through asio::ssl, certificate and
// host name always verified), on a fixed set of I/O threads.
//
//   post(request, done) ──post──> [strand of the call]
//     head = core::webhooks::request_head(...)  (refuses header injection)
//     resolve the host (IP literal: as is; a name: the injected resolver)
//     check EVERY address with the address policy; any refused -> blocked
//     connect to the checked addresses in order (never to anything else,
//       so a second lookup cannot swap in another address: no rebinding)
//     TLS handshake (SNI and verification against the URL's host)
//     write head + body
//     read until core::webhooks::read_response_head has the status line
//       (at most `max_head_bytes`; the body is never read) -> done(status)
//     one timer bounds the whole call (`request.timeout`)
//
// A delivery is judged by its status alone, so the connection is closed as
// soon as the status is known.

#include "core/base/expected.hpp"
#include "core/smtp/address_policy.hpp"
#include "core/webhooks/http_message.hpp"
#include "core/webhooks/target_url.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::net {

/// The addresses a host name resolved to, or why it did not.
struct http_resolution {
  std::vector<std::string> addresses; ///< Text form ("192.0.2.1", "::1").
  std::string error;                  ///< Empty on success.
};

/// Settings of the HTTP client.
struct http_client_config {
  /// I/O threads.
  int io_threads = 1;
  /// Which addresses may be connected to (the SMTP prober's policy).
  core::smtp::target_policy policy;
  /// A PEM file of extra trust anchors (a private CA, or a test's
  /// self-signed certificate); the system's store is always used too.
  std::string ca_file;
  /// Largest answer head read; a larger one fails as `protocol`.
  std::size_t max_head_bytes = 16384;
  /// Resolves a host name; `done` may run on any thread, once. Empty: only
  /// IP literals can be reached.
  std::function<void(std::string host,
                     std::function<void(http_resolution)> done)>
      resolve;
};

/// One POST to make.
struct http_post {
  /// Where to (see core::webhooks::parse_target_url).
  core::webhooks::target_url url;
  /// Fields besides Host, Content-Length and Connection.
  std::vector<core::webhooks::header_field> fields;
  /// The body, sent as it is.
  std::string body;
  /// The whole call (resolution included) ends as `timeout` after this.
  std::chrono::milliseconds timeout{10000};
};

/// How a call ended.
enum class http_failure {
  none,        ///< An answer's status line arrived (any status).
  bad_request, ///< The request could not be written (a bad header field).
  resolve,     ///< The host name did not resolve.
  blocked,     ///< An address of the host is refused by the policy.
  connect,     ///< No address accepted a connection.
  tls,         ///< The TLS handshake or the certificate check failed.
  timeout,     ///< The call's time ran out.
  protocol,    ///< The answer was not HTTP/1.x, too large, or cut short.
  shutdown,    ///< The client was shut down.
};

/// Returns "none", "bad_request", "resolve", "blocked", "connect", "tls",
/// "timeout", "protocol" or "shutdown".
std::string_view to_string(http_failure f);

/// What one call yielded.
struct http_result {
  http_failure failure = http_failure::none;
  int status_code = 0; ///< The answer's status (failure none only).
  std::string detail;  ///< Why it failed, for logs and the delivery log.
  std::string address; ///< The address connected to, if any.
  std::chrono::milliseconds elapsed{0};
};

/// Counters for /metrics and tests.
struct http_client_counters {
  std::uint64_t started = 0;  ///< Calls started.
  std::uint64_t blocked = 0;  ///< Calls refused by the address policy.
  std::uint64_t answered = 0; ///< Calls that got a status line.
  std::uint64_t active = 0;   ///< Calls running now.
};

/// The client; see the diagram above. Thread-safe; `done` runs on an I/O
/// thread (forward it, do not block).
class http_client {
public:
  /// Receives the outcome of one call.
  using callback = std::function<void(http_result)>;

  /// Starts the I/O threads; fails when the TLS set-up (the CA file) fails.
  static core::expected<std::unique_ptr<http_client>>
  create(http_client_config config);

  /// Shuts down (see `shutdown`).
  ~http_client();

  http_client(const http_client&) = delete;
  http_client& operator=(const http_client&) = delete;

  /// Starts a POST and returns at once; `done` is called exactly once
  /// (at once, on the calling thread, after `shutdown`).
  void post(http_post request, callback done);

  /// Returns a snapshot of the counters.
  http_client_counters counters() const;

  /// Ends every call in flight (`shutdown` failures) and joins the I/O
  /// threads; idempotent. Not to be called from a `done` callback.
  void shutdown();

private:
  struct impl;
  explicit http_client(std::shared_ptr<impl> self);

  std::shared_ptr<impl> impl_;
};

} // namespace mailassay::net
