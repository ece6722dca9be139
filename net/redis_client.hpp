#pragma once

// An asynchronous Redis connection driven by an asio event loop.
//
// hiredis' async API does the protocol; net::redis_asio gives its socket
// to the loop's reactor (hiredis' addRead/addWrite hooks become
// async_waits), so commands from any thread are pipelined on one connection and
// their callbacks run on the loop's thread when the replies arrive. Nothing
// blocks and nothing polls.
//
//   down ──connect──> handshake (AUTH, SELECT, SCRIPT LOAD) ──> up
//    ^                    │ error                               │
//    └──── backoff timer <┴─── connection lost, or a reply ─────┘
//                              later than `timeout`
//
// While the client is not up, `command` answers at once with no reply (the
// caller falls back); a reply that does not come within `timeout` counts
// the connection as broken: it is dropped (every pending callback gets no
// reply) and reconnected in the background.

#include "net/redis_url.hpp"

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

struct redisReply;

namespace mailassay::net {

/// Settings of a client.
struct redis_options {
  redis_endpoint endpoint;
  /// A reply later than this marks the connection broken.
  std::chrono::milliseconds timeout{250};
  /// Waits between reconnection attempts (doubling, reset once up).
  std::chrono::milliseconds min_backoff{100};
  std::chrono::milliseconds max_backoff{2000};
};

/// Figures for /metrics, updated by the loop thread.
struct redis_counters {
  std::atomic<bool> up{false};             ///< Connected and ready.
  std::atomic<std::int64_t> connects{0};   ///< Times it became ready.
  std::atomic<std::int64_t> failures{0};   ///< Connections lost/refused.
  std::atomic<std::int64_t> timeouts{0};   ///< Replies that came too late.
  std::atomic<std::int64_t> commands{0};   ///< Commands sent.
  std::atomic<std::int64_t> unanswered{0}; ///< Commands without a reply
                                           ///< (down, lost, timed out).
};

/// A Lua script run with EVALSHA (EVAL when the server does not have it,
/// e.g. after SCRIPT FLUSH).
struct redis_script {
  /// Builds the script and its SHA-1.
  explicit redis_script(std::string text);
  std::string text;
  std::string sha1; ///< Lower-case hex.
};

/// The client. Every callback runs on the loop's thread (or, when the client
/// is down, at once on the caller's) and must not block.
class redis_client : public std::enable_shared_from_this<redis_client> {
public:
  /// Runs with the reply, or null when there is none (not connected,
  /// connection lost, timed out); the reply is freed after it returns.
  using reply_fn = std::function<void(const redisReply* reply)>;
  /// Runs when the client becomes ready (`up`) or stops being (`why`).
  using state_fn = std::function<void(bool up, const std::string& why)>;

  /// Creates a client on `ioctx` and starts connecting.
  static std::shared_ptr<redis_client>
  start(asio::io_context& ioctx, redis_options opts, state_fn on_state = {});

  ~redis_client();

  /// Sends a command; thread-safe (posted to the loop when called from
  /// another thread). The arguments are copied before it returns.
  void command(std::vector<std::string> argv, reply_fn done);

  /// Runs `script` with `keys` and `args` (EVALSHA, then EVAL when the
  /// server answers NOSCRIPT). Thread-safe.
  void eval(std::shared_ptr<const redis_script> script,
            std::vector<std::string> keys, std::vector<std::string> args,
            reply_fn done);

  /// Whether the connection is ready (a hint: it may drop at any time).
  bool up() const { return counters_.up.load(std::memory_order_relaxed); }

  /// Closes the connection (pending commands get no reply) and stops
  /// reconnecting; waits until done when called from another thread.
  void stop();

  /// Drops the connection as if the server had (tests).
  void drop_connection();

  /// The client's counters.
  const redis_counters& counters() const { return counters_; }

  struct impl;

private:
  explicit redis_client(asio::io_context& ioctx);
  std::unique_ptr<impl> impl_;
  redis_counters counters_;
};

/// Returns whether `reply` is an error reply starting with `prefix`.
bool is_error_reply(const redisReply* reply, std::string_view prefix = {});

} // namespace mailassay::net
