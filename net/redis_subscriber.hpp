#pragma once

// A Redis connection SUBSCRIBEd to one channel, driven by an asio event
// loop like net::redis_client (whose connections are request/response and
// time each reply; a subscriber waits for messages that come when others
// publish, so it has no reply deadline). Reconnects with back-off and
// subscribes again; what was published while it was away is lost.

#include "net/redis_url.hpp"

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

namespace mailassay::net {

/// The subscriber. Callbacks run on the loop's thread and must not block.
class redis_subscriber : public std::enable_shared_from_this<redis_subscriber> {
public:
  /// Runs for each message published on the channel.
  using message_fn = std::function<void(std::string_view message)>;

  /// Connects to `endpoint` on `ioctx` and subscribes to `channel`.
  static std::shared_ptr<redis_subscriber> start(asio::io_context& ioctx,
                                                 redis_endpoint endpoint,
                                                 std::string channel,
                                                 message_fn on_message);

  ~redis_subscriber();

  /// Whether subscribed now.
  bool up() const { return up_.load(std::memory_order_relaxed); }

  /// Closes the connection and stops reconnecting; waits until done when
  /// called from another thread (the loop must be running).
  void stop();

  struct impl;

private:
  explicit redis_subscriber(asio::io_context& ioctx);
  std::unique_ptr<impl> impl_;
  std::atomic<bool> up_{false};
};

} // namespace mailassay::net
