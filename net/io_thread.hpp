#pragma once

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include <chrono>
#include <functional>
#include <string>
#include <thread>

namespace mailassay::net {

/// Runs `f` on `io`'s thread and returns once it ran: at once when called
/// on that thread, else posted and waited for, at most `limit`. A loop that
/// is not running never answers: then this returns false and `f` runs only
/// if the loop runs again (`f` keeps what it touches alive). How the
/// cluster adapters stop from any thread.
bool run_on_loop(asio::io_context& io, std::function<void()> f,
                 std::chrono::milliseconds limit = std::chrono::seconds(5));

/// One event loop on a thread of its own: an io_context kept running until
/// `stop`. The cluster adapters (PostgreSQL listener, Redis client) share
/// one: their sockets wait in its reactor, so nothing polls or sleeps.
class io_thread {
public:
  /// Starts the thread, named `name` (at most 15 characters) for top -H.
  explicit io_thread(std::string name);

  /// Stops and joins the thread (if `stop` was not called).
  ~io_thread();

  io_thread(const io_thread&) = delete;
  io_thread& operator=(const io_thread&) = delete;

  /// The loop; post work to it from any thread.
  asio::io_context& context() { return ctx_; }

  /// Lets the loop run out of work, then stops it and joins the thread;
  /// handlers not run by then are dropped.
  void stop();

private:
  asio::io_context ctx_{1};
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::thread thread_;
};

} // namespace mailassay::net
