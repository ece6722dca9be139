#pragma once

// Runs core::smtp::session dialogues over real sockets, without a thread per
// session: standalone asio on a fixed set of I/O threads (one by default),
// async connect/read/write, one timer per session, STARTTLS through
// asio::ssl (OpenSSL), optional SOCKS5 (RFC 1928, no authentication).
//
//   run(call, done) ──post──> [strand of the session]
//     policy check (never connects to a refused address)
//     connect (bound to source_address when set; direct,
//              or to the proxy + SOCKS5 CONNECT)        timer: step
//     session.on_connected()
//     loop: read ──> session.on_data(bytes) ──> action
//             send      -> write line, read again          timer: step
//             start_tls -> handshake (SNI = MX host), then
//                          on_tls_established/failed       timer: step
//             wait      -> read again (timer keeps running)
//             need_more -> on_need_more(result so far), keep reading
//                          (the server may close); give(id, address) /
//                          finish(id) go on                 timer: step
//             close     -> close the socket, done(result)
//     timer (min(step, deadline)) -> session.on_timeout()
//     EOF / socket error          -> session.on_connection_closed()
//
// The timer bounds every step and the whole session (the call's deadline),
// the core's reply parser bounds what is buffered (reply_limits), and only
// the core session writes command lines (it refuses CR/LF in inputs).

#include "core/base/expected.hpp"
#include "core/smtp/address_policy.hpp"
#include "core/smtp/session.hpp"
#include "core/smtp/target.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::net {

/// Settings of the SMTP client.
struct smtp_client_config {
  /// I/O threads (each session lives on a strand of one io_context).
  int io_threads = 1;
  /// Which addresses may be connected to; checked again before every
  /// connect (the prober filters first), so a refused address is never
  /// touched even by a caller that forgot.
  core::smtp::target_policy policy;
  /// Verify the server certificate and its name (off by default: MX
  /// certificates are commonly self-signed or name another host, and
  /// opportunistic TLS only protects against passive listeners, RFC 7435).
  bool verify_tls = false;
  /// SOCKS5 proxy "ip:port" ("[v6]:port"), IP literal only (no resolver
  /// is used); empty: connect directly.
  std::string socks5_proxy;
  /// Local IP address every connection binds to before connecting (the
  /// egress address receivers see, `smtp.source_address`); empty: the
  /// kernel's choice.
  std::string source_address;
  /// Longest wait for the reply to QUIT (the addresses are known by then).
  std::chrono::milliseconds quit_timeout{2000};
};

/// Where a session connects and how long it may take.
struct smtp_dial {
  /// MX host name (SNI, logs); may be an IP literal.
  std::string host;
  /// The IP address to connect to.
  std::string address;
  /// TCP port.
  std::uint16_t port = 25;
  /// Time-out of each step (connect, each reply, the handshake).
  std::chrono::milliseconds step_timeout{30000};
  /// The session ends (as a time-out) at this time whatever the step.
  std::chrono::steady_clock::time_point deadline;
};

/// One session to run.
struct smtp_call {
  /// Where to and how long.
  smtp_dial dial;
  /// The dialogue, made by the caller (`core::smtp::session::make`).
  core::smtp::session session;
  /// For an open-ended session: called (on an I/O thread) each time it
  /// is ready for an address, with its result so far; answer with `give`
  /// or `finish` within the step time-out. Empty: `finish` at once.
  std::function<void(const core::smtp::session_result&)> on_need_more;
};

/// What one call yielded.
struct smtp_call_result {
  /// The connection outcome and, once connected, the session's result.
  core::smtp::session_report report;
  /// Time from the start of the call to its end.
  std::chrono::milliseconds elapsed{0};
};

/// Counters for /metrics and tests.
struct smtp_client_counters {
  std::uint64_t started = 0;   ///< Calls started.
  std::uint64_t connected = 0; ///< TCP connections made.
  std::uint64_t blocked = 0;   ///< Calls refused by the address policy.
  std::uint64_t tls = 0;       ///< TLS handshakes completed.
  std::uint64_t timeouts = 0;  ///< Timers that ended a call.
  std::uint64_t active = 0;    ///< Calls running now.
};

/// Non-blocking SMTP client; see the diagram at the top of this header.
/// Thread-safe; `done` runs on an I/O thread (forward it, do not block).
class smtp_client {
public:
  /// Receives the outcome of one call.
  using callback = std::function<void(smtp_call_result)>;

  /// Names a call for `give` and `finish` (never 0).
  using call_id = std::uint64_t;

  /// Starts the I/O threads; fails on a bad proxy, source address or TLS
  /// set-up.
  static core::expected<std::unique_ptr<smtp_client>>
  create(smtp_client_config config);

  /// Shuts down (see `shutdown`).
  ~smtp_client();

  smtp_client(const smtp_client&) = delete;
  smtp_client& operator=(const smtp_client&) = delete;

  /// Starts `call` and returns its id at once; `done` is called exactly
  /// once. After `shutdown` it is called at once, on the calling thread,
  /// with `connect_failure::other`, and the id is 0.
  call_id run(smtp_call call, callback done);

  /// An open-ended call waiting after `on_need_more` asks `address` next,
  /// with the catch-all `probe` after it (empty: none). Ignored when the
  /// call is not waiting or is gone.
  void give(call_id id, std::string address, std::string probe);

  /// An open-ended call waiting after `on_need_more` sends QUIT. Ignored
  /// when the call is not waiting or is gone.
  void finish(call_id id);

  /// Returns a snapshot of the counters.
  smtp_client_counters counters() const;

  /// Ends every call in flight (their `done` runs with what is known, the
  /// session seeing a time-out) and joins the I/O threads; idempotent. Not
  /// to be called from a `done` callback.
  void shutdown();

private:
  struct impl;
  explicit smtp_client(std::shared_ptr<impl> self);

  std::shared_ptr<impl> impl_;
};

} // namespace mailassay::net
