#pragma once

#include "core/base/errc.hpp"
#include "http/query.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mailassay::core::account {
struct api_key;
} // namespace mailassay::core::account

namespace mailassay::http {

class metrics;

/// A request as handlers see it, without RESTinio's types so that handler
/// code compiles without it. The views point into the request RESTinio
/// read, which the exchange keeps until it ends: copy what outlives it.
struct request_view {
  std::string_view method; ///< Upper case: GET, POST ...
  std::string_view path;
  std::string_view query;
  std::string_view body;
  std::string peer_ip;
  std::string client_ip; ///< Peer, or the first X-Forwarded-For hop of a
                         ///< trusted proxy.
  /// "http" (the service speaks plain HTTP), or what a trusted proxy's
  /// `X-Forwarded-Proto` says ("https" behind a TLS proxy).
  std::string_view scheme = "http";
  std::vector<std::pair<std::string_view, std::string_view>> headers;
  std::map<std::string, std::string> params; ///< From the route pattern.
  /// The query's parameters, read when the route reads its query (see
  /// `route::query`); empty otherwise.
  query_args args;

  /// Notes which names `headers` holds, so that looking up one it does not
  /// hold (most lookups) skips the walk; call after filling `headers`.
  void index_headers();

  /// Returns the first header named `name` (case-insensitive).
  std::optional<std::string_view> header(std::string_view name) const;

  /// Returns how many headers are named `name` (case-insensitive).
  std::size_t header_count(std::string_view name) const;

  /// Returns the decoded query parameter `name`, if present.
  std::optional<std::string> query_param(std::string_view name) const;

  /// Whether the request is a HEAD (answered like a GET, without a body).
  bool is_head() const { return method == "HEAD"; }

private:
  /// A bit per name in `headers` (a hash of its length and first and last
  /// letters); all set until index_headers() ran.
  std::uint64_t header_bits_ = ~std::uint64_t{0};
};

/// A response to write.
struct response {
  int status = 200;
  std::string body;
  std::string_view content_type = "application/json"; ///< Static text.
  std::vector<std::pair<std::string, std::string>> headers;
};

/// Values of the three RateLimit headers.
struct rate_headers {
  std::int64_t limit = 0;
  std::int64_t remaining = 0;
  std::int64_t reset = 0; ///< Seconds until the window resets.
};

/// A response whose body is written piece by piece with the chunked transfer
/// coding, each piece after the previous one reached the socket, so a large
/// body never sits in memory whole. Any thread may call it (and drop it):
/// like the exchange's members, its calls run on the request's home thread.
class body_stream {
public:
  struct impl;

  explicit body_stream(std::unique_ptr<impl> p);

  /// Aborts the response unless it was finished or aborted.
  ~body_stream();

  body_stream(const body_stream&) = delete;
  body_stream& operator=(const body_stream&) = delete;

  /// Sends `data` as one chunk (the head goes with the first), then runs
  /// `then(true)` once it was written, or `then(false)` when the connection
  /// failed; `then` runs on an I/O thread and must not block.
  void write(std::string data, std::function<void(bool)> then);

  /// Sends `last` (may be empty) and ends the body; the request is done.
  void finish(std::string last = {});

  /// Gives up after the head was sent (its status cannot change): closes
  /// the connection without ending the body, so the client sees it
  /// incomplete; `e` is logged.
  void abort(const core::error& e);

private:
  /// Shared with the calls posted to the home thread.
  std::shared_ptr<impl> impl_;
  /// `finish` or `abort` was called: that call ends the body, not the
  /// destructor, which may run before it (see ~body_stream).
  bool ending_ = false;
};

using body_stream_ptr = std::shared_ptr<body_stream>;

/// One request in flight: answered exactly once, by whoever comes first —
/// the handler, an actor's answer, or the deadline timer.
///
/// Every request has one home thread: the event loop that read it. The
/// exchange's state is only touched there, so it needs no lock and no
/// atomic: a member called from another thread (a storage worker, Redis,
/// the resolver, the validation pipeline) posts itself to the home loop
/// first, and calls from one thread keep their order (docs/architecture.md,
/// "The request path").
class exchange : public std::enable_shared_from_this<exchange> {
public:
  struct impl;

  /// A new exchange, its state made in the same allocation; http/server.cpp
  /// fills the state before anyone else sees it.
  static std::shared_ptr<exchange> create();

  exchange(const exchange&) = delete;
  exchange& operator=(const exchange&) = delete;

  /// The request; immutable once handed to the handler, so any thread may
  /// read it.
  const request_view& request() const;

  /// The request id (echoed in `X-Request-Id` and logs); immutable.
  const std::string& id() const;

  /// Whether the caller runs on the request's home thread.
  bool at_home() const;

  /// Runs `f` on the request's home thread: at once when called there,
  /// else posted to its loop (which keeps the exchange alive meanwhile).
  void resume(std::function<void()> f);

  /// Lets a browser page at `origin` read the response (CORS); set once the
  /// credential admitted that origin.
  void allow_origin(std::string origin);

  /// Counts the request in the usage of `key` once it is answered,
  /// successful when answered 200 (docs/usage-stats.md); the recorder
  /// hashes `address` off the I/O thread.
  void record_usage(std::shared_ptr<const core::account::api_key> key,
                    std::string address);

  /// Adds a header to whatever response the request gets, success or
  /// error (e.g. `Cache-Control: no-store` on an endpoint whose answers
  /// carry a secret). A header of one particular answer goes in its
  /// `response::headers` instead.
  void add_header(std::string name, std::string value);

  /// Sets the values of the RateLimit headers of the response.
  void set_rate(rate_headers r);

  /// Names the API key that authenticated the request, so the RateLimit
  /// headers of an endpoint that takes no token read its windows without
  /// authenticating it again.
  void set_rate_key(std::shared_ptr<const core::account::api_key> key);

  /// Writes the response unless one was written already.
  void respond(response r);

  /// Starts a streamed response with the status, type and headers of
  /// `head` (its body is ignored) on the home thread, then runs `then`
  /// there with the stream; with null if a response was written already,
  /// or when the request is a HEAD (then the head alone was written). The
  /// request no longer times out: the stream ends it.
  void stream(response head, std::function<void(body_stream_ptr)> then);

  /// Writes `body` as JSON with `status`.
  void json(int status, std::string body);

  /// Writes the error body for `e` (status from the errc table).
  void fail(const core::error& e);

  /// Sets what the deadline timer answers if nothing else did by then
  /// (default: 503 in the error format).
  void set_timeout_response(response r);

  /// Answers with the timeout response; called by the deadline timer.
  void time_out();

  /// The client closed its connection before the answer (home thread): the
  /// request ends as answered, 499 in the log as nginx counts it, so its
  /// work stops; nothing is sent that anyone would read.
  void client_gone();

  /// Returns whether a response was written. From another thread the
  /// answer may be stale by the time it is read: a "no" only says the
  /// request was not answered when the home thread last wrote.
  bool answered() const;

  /// A flag set (on the home thread) when the request is answered: work
  /// still running for it anywhere (a pipeline job, a probe, a credit)
  /// reads it to stop. Keeps the exchange alive while held.
  std::shared_ptr<const std::atomic<bool>> cancel_flag();

  /// When the request's deadline answers it (arrival plus the server's
  /// request timeout); work for it need not go on past this.
  std::chrono::steady_clock::time_point deadline() const;

  /// When the request arrived (its head read).
  std::chrono::steady_clock::time_point arrived() const;

  /// The RESTinio side; for http/server.cpp only.
  impl& state() { return *impl_; }

protected:
  /// `state` lives in the derived object that create() makes.
  explicit exchange(impl& state) : impl_(&state) {}
  ~exchange() = default;

  /// Answers 500 unless answered: everyone who could answer let go. Runs on
  /// whichever thread let go last: nobody else can reach the state then.
  void settle();

private:
  /// Writes `r` on the calling thread (the home thread, or the last owner).
  void answer_here(response r);

  impl* impl_;
};

using exchange_ptr = std::shared_ptr<exchange>;

} // namespace mailassay::http
