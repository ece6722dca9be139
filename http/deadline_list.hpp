#pragma once

#include "http/exchange_impl.hpp"

#include <restinio/all.hpp>

#include <atomic>
#include <chrono>
#include <optional>

namespace mailassay::http {

/// The requests of one event loop waiting for their deadline, oldest first,
/// and one timer armed for the oldest. Used on its loop's thread only (the
/// requests' home, see exchange.hpp), so it takes no lock.
///
/// Every request has the same timeout, so arrival order is deadline order:
/// adding and removing are O(1), and one timer serves every request instead
/// of an asio timer (heap insert, cancel) per request. The timer fires at
/// the oldest deadline known when it was armed; a request answered in time
/// just leaves the list, and the timer then re-arms for the new oldest one.
class deadline_list : public std::enable_shared_from_this<deadline_list> {
public:
  /// Times requests out at their `deadline_at`, on `ioctx`; `waiting`
  /// (shared by every loop of the server) counts the requests listed.
  deadline_list(asio::io_context& ioctx, std::atomic<std::int64_t>& waiting);

  /// Adds an unanswered exchange; the list owns it until it is answered or
  /// its `time_out` ran at the deadline. Does nothing once closed.
  void add(exchange& ex);

  /// Removes an exchange if it is in the list.
  void remove(exchange::impl& x);

  /// Answers every listed request with `e` now (the server stops while
  /// they wait): each leaves the list, and its work is cancelled.
  void fail_all(const core::error& e);

  /// Forgets every request and frees the timer (before the I/O context
  /// goes away, its thread stopped); later `add`s do nothing.
  void close();

private:
  void arm(std::chrono::steady_clock::time_point at);
  void on_timer();
  /// Unlinks `x` and returns the list's reference to its exchange.
  std::shared_ptr<exchange> unlink(exchange::impl& x);

  std::optional<asio::steady_timer> timer_;
  std::atomic<std::int64_t>& waiting_;
  exchange::impl* head_ = nullptr;
  exchange::impl* tail_ = nullptr;
  bool armed_ = false;
  bool closed_ = false;
};

} // namespace mailassay::http
