#pragma once

#include "http/exchange_impl.hpp"

#include <restinio/all.hpp>

#include <chrono>
#include <mutex>
#include <optional>

namespace mailassay::http {

/// The requests of one server waiting for their deadline, oldest first, and
/// one timer armed for the oldest.
///
/// Every request has the same timeout, so arrival order is deadline order:
/// adding and removing are O(1) under a short lock, and one timer serves
/// every request instead of an asio timer (heap insert, cancel posted back
/// to the I/O thread) per request. The timer fires at the oldest deadline
/// known when it was armed; a request answered in time just leaves the
/// list, and the timer then re-arms for the new oldest one.
class deadline_list : public std::enable_shared_from_this<deadline_list> {
public:
  /// Times requests out `timeout` after they are added, on `ioctx`.
  deadline_list(asio::io_context& ioctx, std::chrono::milliseconds timeout);

  /// Adds an exchange; its `time_out` runs at the deadline unless it was
  /// answered (removed) by then. Does nothing once closed.
  void add(exchange& ex);

  /// Removes an exchange if it is in the list; any thread.
  void remove(exchange::impl& x);

  /// Forgets every request and frees the timer (before the I/O context
  /// goes away); later `add`s do nothing.
  void close();

private:
  void arm(std::chrono::steady_clock::time_point at);
  void on_timer();
  void unlink(exchange::impl& x);

  std::mutex mtx_;
  std::optional<asio::steady_timer> timer_;
  std::chrono::milliseconds timeout_;
  exchange::impl* head_ = nullptr;
  exchange::impl* tail_ = nullptr;
  bool armed_ = false;
  bool closed_ = false;
};

} // namespace mailassay::http
