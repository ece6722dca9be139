#pragma once

#include "http/exchange.hpp"

#include <restinio/all.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http {

struct services;
class deadline_list;

/// RESTinio side of an exchange; only server.cpp and exchange.cpp see it.
struct exchange::impl {
  /// Kept until the exchange ends: `view` points into it. Its connection
  /// handle leaves it when the answer is written (exchange.cpp).
  restinio::request_handle_t req;
  request_view view;
  std::string id;
  /// Route pattern (or "unmatched"), for metrics; static text.
  std::string_view route;
  std::chrono::steady_clock::time_point started;
  rate_headers rate;
  bool rate_set = false; ///< A handler set `rate` from its limiter check.
  /// See exchange::set_rate_key; null: authenticated again if need be.
  std::shared_ptr<const core::account::api_key> rate_key;
  /// Source of the RateLimit headers when no handler set them (null keeps
  /// `rate` as it is) and the usage recorder.
  const services* svc = nullptr;
  metrics* stats = nullptr;
  std::atomic<std::int64_t>* in_flight = nullptr;
  std::atomic<bool> done{false};
  /// The list whose timer answers this request if nothing else did by its
  /// deadline; set once, before the request is handed to anyone.
  std::shared_ptr<deadline_list> deadlines;
  /// `deadlines->add` ran (set under the list's lock). The request is added
  /// only once its handler returned unanswered: one answered at once never
  /// takes the list's lock. `respond` sets `done` then reads this, `add`
  /// sets this then reads `done`: one of them sees the other.
  std::atomic<bool> added{false};
  // Guarded by the list's mutex.
  std::chrono::steady_clock::time_point deadline_at; ///< When it times out.
  impl* prev = nullptr; ///< Neighbours in the deadline list.
  impl* next = nullptr;
  bool listed = false;      ///< In the deadline list.
  exchange* self = nullptr; ///< The exchange owning this state.
  std::optional<response> on_timeout;
  /// The body gate refused the request's body (see body_gate.hpp).
  bool body_refused = false;
  /// The response closes the connection (`Connection: close`).
  bool close_connection = false;
  std::string cors_origin; ///< Echoed in Access-Control-Allow-Origin.
  /// Where the answer's text goes when there is no RESTinio request (`req`
  /// null: a refusal the body gate made before any request was parsed).
  std::string* raw_out = nullptr;
  /// exchange::add_header: written on every response of the request.
  std::vector<std::pair<std::string, std::string>> extra_headers;
  /// See exchange::record_usage; null when the request is not counted.
  std::shared_ptr<const core::account::api_key> usage_key;
  std::string usage_address;
};

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
