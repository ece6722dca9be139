#pragma once

#include "http/exchange.hpp"

#include <restinio/all.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::http {

class deadline_list;

/// What an exchange asks of the server it belongs to when it answers, so
/// that it knows no limiter, key cache or usage recorder; http/server.cpp
/// passes them in.
class exchange_hooks {
public:
  /// The RateLimit values of an answer no limiter check decided; `key` is
  /// the API key that authenticated the request, or null.
  virtual rate_headers
  unmetered_rate(const request_view& req,
                 const core::account::api_key* key) const = 0;

  /// Counts the request in the usage of `key`; `ok` when it was answered
  /// 200.
  virtual void record_usage(std::shared_ptr<const core::account::api_key> key,
                            bool ok, std::string address) const = 0;

protected:
  ~exchange_hooks() = default;
};

/// RESTinio side of an exchange; only the server and the exchange's own
/// files (exchange.cpp, response_writer.cpp, body_stream.cpp,
/// deadline_list.cpp) see it.
///
/// Its fields are plain: only the request's home thread (the event loop
/// that read it, `home`) touches them once the request was handed on;
/// `exchange` posts every call from another thread there first. The one
/// exception is `cancelled`, which any thread may read.
struct exchange::impl {
  /// The event loop that read the request (http/server.cpp's event_loop),
  /// kept alive while the request is: its io_context and the RESTinio
  /// connection `req` holds must outlive a request a storage worker or an
  /// actor still holds after the server stopped. First, so it goes last.
  std::shared_ptr<void> loop;
  /// Its io_context; null for an answer made without one (a refusal of the
  /// body gate: made and answered on one thread).
  asio::io_context* home = nullptr;
  /// Set once the loop's thread stopped: continuations are dropped.
  const std::atomic<bool>* home_stopped = nullptr;
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
  /// `rate` as it is) and of usage records.
  const exchange_hooks* hooks = nullptr;
  metrics* stats = nullptr;
  std::atomic<std::int64_t>* in_flight = nullptr;
  /// A response was written (or a stream started).
  bool done = false;
  /// Set on the home thread with `done`: the request was answered, so work
  /// still running for it is wasted (exchange::cancel_flag). Read by any
  /// thread.
  std::atomic<bool> cancelled{false};
  /// The list whose timer answers this request if nothing else did by its
  /// deadline; set once, before the request is handed to anyone.
  /// The loop's deadlines (kept alive by `loop`).
  deadline_list* deadlines = nullptr;
  /// When it times out: `started` plus the server's request timeout.
  std::chrono::steady_clock::time_point deadline_at;
  impl* prev = nullptr; ///< Neighbours in the deadline list.
  impl* next = nullptr;
  /// Set while in the deadline list: the list owns the request until it is
  /// answered, so it is never destroyed while listed, and its last owner
  /// always lets go of an unlisted one.
  std::shared_ptr<exchange> listed;
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

} // namespace mailassay::http
