#pragma once

// The scaffolding the asynchronous clients (net/http_client, net/smtp_client)
// share: one io_context run by a few threads of their own, and the calls in
// flight by id, so that a shutdown can end each of them before the threads
// are joined. The protocol of a call stays in its client.

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

namespace mailassay::net {

/// An io_context with its threads, and the live calls of type `Op` (which
/// has `void cancel()`: end at once, reporting a shutdown). Thread-safe.
template <class Op>
class call_pool {
public:
  /// Sizes the io_context's concurrency hint for `io_threads` threads.
  explicit call_pool(int io_threads) : io(std::max(1, io_threads)) {}

  /// Ends the calls and joins the threads (see `shutdown`).
  ~call_pool() { shutdown(); }

  call_pool(const call_pool&) = delete;
  call_pool& operator=(const call_pool&) = delete;

  /// The loop every call of the client runs on (each on a strand).
  asio::io_context io;

  std::atomic<std::uint64_t> started{0}; ///< Calls opened.
  std::atomic<std::uint64_t> active{0};  ///< Calls opened, not yet closed.

  /// Returns a client's counters with `started` and `active` filled in.
  template <class Counters>
  Counters counters() const {
    Counters c;
    c.started = started.load();
    c.active = active.load();
    return c;
  }

  /// Starts `io_threads` (at least one) threads running the loop; once,
  /// after the client's own set-up succeeded.
  void run(int io_threads) {
    work_.emplace(io.get_executor());
    for (int i = 0; i < std::max(1, io_threads); ++i)
      threads_.emplace_back([this] { io.run(); });
  }

  /// Registers the call `make(id)` builds, with a fresh id, and counts it;
  /// returns null (without calling `make`) after `shutdown`.
  template <class Make>
  std::shared_ptr<Op> open(Make&& make) {
    std::lock_guard guard{mutex_};
    if (stopped_)
      return nullptr;
    auto id = ++next_id_;
    std::shared_ptr<Op> op = make(id);
    live_.emplace(id, op);
    ++started;
    ++active;
    return op;
  }

  /// Returns the live call `id`, or null once it closed.
  std::shared_ptr<Op> find(std::uint64_t id) {
    std::lock_guard guard{mutex_};
    auto it = live_.find(id);
    return it == live_.end() ? nullptr : it->second.lock();
  }

  /// The call `id` ended: it is no longer live.
  void close(std::uint64_t id) {
    --active;
    std::lock_guard guard{mutex_};
    live_.erase(id);
  }

  /// Refuses new calls, cancels the live ones, lets the loop run out of
  /// work and joins the threads; idempotent. Not from a loop thread.
  void shutdown() {
    std::vector<std::shared_ptr<Op>> ops;
    {
      std::lock_guard guard{mutex_};
      if (stopped_)
        return;
      stopped_ = true;
      for (auto& [id, weak] : live_)
        if (auto op = weak.lock())
          ops.push_back(std::move(op));
    }
    for (auto& op : ops)
      op->cancel();
    ops.clear();
    work_.reset();
    for (auto& t : threads_)
      if (t.joinable())
        t.join();
  }

private:
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>>
      work_;
  std::vector<std::thread> threads_;
  std::mutex mutex_;
  bool stopped_ = false;
  std::uint64_t next_id_ = 0;
  std::unordered_map<std::uint64_t, std::weak_ptr<Op>> live_;
};

} // namespace mailassay::net
