#pragma once

#include <atomic>
#include <functional>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/base/errc.hpp"

namespace mailassay::http {

class metrics;

/// A request as handlers see it: copied out of RESTinio so that handler code
/// compiles without it.
struct request_view {
  std::string method; ///< Upper case: GET, POST ...
  std::string path;
  std::string query;
  std::string body;
  std::string peer_ip;
  std::string client_ip; ///< Peer, or the first X-Forwarded-For hop of a
                         ///< trusted proxy.
  std::vector<std::pair<std::string, std::string>> headers;
  std::map<std::string, std::string> params; ///< From the route pattern.

  /// Returns the first header named `name` (case-insensitive).
  std::optional<std::string_view> header(std::string_view name) const;

  /// Returns the decoded query parameter `name`, if present.
  std::optional<std::string> query_param(std::string_view name) const;
};

/// A response to write.
struct response {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Values of the three RateLimit headers.
struct rate_headers {
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t reset = 0; ///< Seconds until the window resets.
};

/// One request in flight: answered exactly once, by whoever comes first —
/// the handler, an actor, or the deadline timer.
class exchange : public std::enable_shared_from_this<exchange> {
public:
  struct impl;

  explicit exchange(std::unique_ptr<impl> p);
  ~exchange();

  /// The request.
  const request_view& request() const;

  /// The request id (echoed in `X-Request-Id` and logs).
  const std::string& id() const;

  /// Lets a browser page at `origin` read the response (CORS); set once the
  /// credential admitted that origin.
  void allow_origin(std::string origin);

  /// Runs `f(status)` once the response is written (usage counting).
  void on_answer(std::function<void(int)> f);

  /// Sets the values of the RateLimit headers of the response.
  void set_rate(rate_headers r);

  /// Writes the response unless one was written already; thread-safe.
  void respond(response r);

  /// Writes `body` as JSON with `status`.
  void json(int status, std::string body);

  /// Writes the error body for `e` (status from the errc table).
  void fail(const core::error& e);

  /// Sets what the deadline timer answers if nothing else did by then
  /// (default: 503 in the error format).
  void set_timeout_response(response r);

  /// Answers with the timeout response; called by the deadline timer.
  void time_out();

  /// Returns whether a response was written.
  bool answered() const;

  /// The RESTinio side; for http/server.cpp only.
  impl& state() { return *impl_; }

private:
  std::unique_ptr<impl> impl_;
};

using exchange_ptr = std::shared_ptr<exchange>;

} // namespace mailassay::http
