#pragma once

// What one call of the asynchronous clients (net/http_client,
// net/smtp_client) holds and how it ends: its strand, its connection, its
// timer and its callback, and one `end` that stops the timer, closes the
// connection, leaves the client's call_pool and hands the result on, once.
// The protocol stays in the client's call class, which derives from this.

#include "net/upgradable_socket.hpp"

#include <asio/dispatch.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

namespace mailassay::net {

/// The base of a client's call class `Call`, which runs on a strand of
/// `Owner::calls` (a call_pool<Call>) and is started through `start`
/// (`Call::begin` runs on the strand; `Call` befriends this class).
/// `Result` has `std::chrono::milliseconds elapsed`.
template <class Call, class Owner, class Result>
class client_call : public std::enable_shared_from_this<Call> {
public:
  /// Receives the result of the call, once.
  using callback = std::function<void(Result)>;

  /// Runs `Call::begin` on the call's strand.
  void start() {
    asio::dispatch(strand_,
                   [self = this->shared_from_this()] { self->begin(); });
  }

protected:
  /// Call `id` of `owner`, answering `done`.
  client_call(Owner& owner, std::uint64_t id, callback done)
      : owner_(owner), id_(id), strand_(asio::make_strand(owner.calls.io)),
        conn_(strand_), timer_(strand_), done_(std::move(done)) {}

  /// Ends the call with `result` (its `elapsed` set from `started_`) unless
  /// it ended already: the timer stops, the connection closes, the call
  /// leaves the pool, and the callback runs, once.
  void end(Result result) {
    if (finished_)
      return;
    finished_ = true;
    timer_.cancel();
    conn_.close();
    owner_.calls.close(id_);
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started_);
    auto done = std::move(done_);
    done_ = nullptr;
    if (done)
      done(std::move(result));
  }

  Owner& owner_;     ///< The client's shared state (config, pool ...).
  std::uint64_t id_; ///< The call's id in the pool.
  upgradable_socket::strand strand_; ///< Every handler of the call runs here.
  upgradable_socket conn_;           ///< The connection, TLS once upgraded.
  asio::steady_timer timer_;         ///< The call's time-outs.
  /// When the call began (set again by `Call::begin`).
  std::chrono::steady_clock::time_point started_ =
      std::chrono::steady_clock::now();
  bool finished_ = false; ///< `end` ran: later handlers do nothing.

private:
  callback done_;
};

} // namespace mailassay::net
