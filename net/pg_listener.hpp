#pragma once

// A PostgreSQL LISTEN connection driven by an asio event loop.
//
// SOCI cannot receive notifications, so this speaks libpq directly: one
// connection of its own, opened with PQconnectStart/PQconnectPoll, whose
// socket (PQsocket) waits in the loop's reactor like any other. Nothing
// polls: the loop wakes when the server sends something.
//
//   idle ──start──> connecting ──(PQconnectPoll OK)──> subscribing
//     ^                 │ failed / 10 s                    │ LISTEN done
//     │                 v                                  v
//     └──backoff── waiting <──── connection lost ─────── listening
//                   (timer)                          (payloads delivered)
//
// Each time LISTEN is in place (first time and after every reconnect)
// `on_listening` runs: whatever was sent while the connection was down is
// lost, and the owner must assume anything may have changed meanwhile.
//
// The same connection also sends (`notify`): the acknowledgements of
// actors/cluster_events go out on it, one pg_notify at a time, without a
// storage worker.

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace mailassay::net {

/// Settings of a listener.
struct pg_listener_options {
  /// libpq keyword/value connection string (storage::postgres_conninfo).
  std::string conninfo;
  /// Channel to LISTEN on (letters, digits, underscores).
  std::string channel;
  /// Waits between reconnection attempts: doubles from `min_backoff` up to
  /// `max_backoff`, back to `min_backoff` once listening again.
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{5000};
  /// A connection attempt that has not finished by then is abandoned.
  std::chrono::milliseconds connect_timeout{10000};
};

/// Figures for /metrics, updated by the loop thread.
struct pg_listener_counters {
  std::atomic<bool> listening{false};         ///< LISTEN in place now.
  std::atomic<std::int64_t> notifications{0}; ///< Payloads delivered.
  std::atomic<std::int64_t> listens{0};  ///< Times LISTEN was put in place.
  std::atomic<std::int64_t> failures{0}; ///< Connections lost or refused.
  std::atomic<std::int64_t> sent{0};     ///< Payloads sent (`notify`).
};

/// The listener; every callback runs on the loop's thread and must not
/// block it.
class pg_listener : public std::enable_shared_from_this<pg_listener> {
public:
  /// Runs for each notification on the channel.
  using payload_fn = std::function<void(std::string_view payload)>;
  /// Runs each time LISTEN is in place; `first` on the first time.
  using listening_fn = std::function<void(bool first)>;
  /// Runs when a connection fails or is lost, with libpq's message.
  using failure_fn = std::function<void(const std::string& why)>;

  /// Creates a listener on `ioctx` and starts connecting.
  static std::shared_ptr<pg_listener> start(asio::io_context& ioctx,
                                            pg_listener_options opts,
                                            payload_fn on_payload,
                                            listening_fn on_listening,
                                            failure_fn on_failure = {});

  ~pg_listener();

  /// Closes the connection and stops reconnecting; waits until done when
  /// called from another thread than the loop's (the loop must be
  /// running). Callbacks do not run afterwards.
  void stop();

  /// Sends `payload` on the channel (pg_notify) from this connection once
  /// LISTEN is in place, after the ones queued before; thread-safe. Lost
  /// (not retried) when the connection is lost before it went out.
  void notify(std::string payload);

  /// Drops the connection as if the server had (tests: reconnection).
  void drop_connection();

  /// The listener's counters.
  const pg_listener_counters& counters() const { return counters_; }

  struct impl;

private:
  explicit pg_listener(asio::io_context& ioctx);
  std::unique_ptr<impl> impl_;
  pg_listener_counters counters_;
};

} // namespace mailassay::net
