#pragma once

// Sends the webhook outbox (docs/webhooks.md). One dispatcher per process;
// every process sharing the database runs one, and a delivery is sent by
// whichever claims it (a lease per delivery, SKIP LOCKED on PostgreSQL):
//
//   tick (webhooks.poll_ms) or wake()
//     │ organizations with due deliveries ; core::webhooks::allot shares
//     │ the free slots (each at most its fair share) ; claim that many
//     │ of each organization                                  [storage lane]
//     │   per delivery, on the storage worker: past its window? ; open the
//     │   signing secret(s) ; render the body (http/codec/webhooks)
//     ▼
//   per delivery: sign (t = now) ──post──> net::http_client (own thread)
//     │   10 s at most; no answer, an error or a non-2xx = a failure
//     │   (tenants read its class, the log its detail)
//     ▼
//   attempt_done ─> core::webhooks: delivered | retry at next_attempt_ms |
//     │             given up (past the window)
//     ▼
//   record_webhook_attempt (attempt row, status, lease released)
//                                                           [storage lane]
//
// Nothing here shares a thread with validations: the dispatcher's storage
// work runs on its own lane, the HTTP calls on the client's thread, and
// the actor itself only moves messages. A process that dies mid-attempt
// leaves a lease that runs out after three attempt time-outs; the
// delivery is then sent again (at least once).

#include "actors/storage_pool.hpp"
#include "config/settings.hpp"
#include "core/webhooks/records.hpp"
#include "net/http_client.hpp"

#include <caf/actor.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace mailassay::actors::webhooks {

/// Counters of the dispatcher, for /metrics and tests.
struct dispatcher_gauges {
  std::atomic<std::int64_t> in_flight{0}; ///< Attempts running.
  std::atomic<std::int64_t> attempts{0};  ///< Attempts recorded.
  std::atomic<std::int64_t> delivered{0}; ///< Deliveries that got a 2xx.
  std::atomic<std::int64_t> given_up{0};  ///< Deliveries past their window.
};

/// Renders the JSON body of a delivery; runs on a storage worker (it may
/// read the record the event is about).
using body_renderer = std::function<core::expected<std::string>(
    storage::store&, const core::webhooks::delivery&)>;

/// What the dispatcher needs from its surroundings.
struct dispatcher_env {
  storage_pool* storage = nullptr; ///< A lane of its own.
  std::shared_ptr<net::http_client> client;
  config::webhooks_settings cfg; ///< With the server key resolved.
  body_renderer render;
  /// This process's name in delivery leases (unique per process).
  std::string owner;
  /// Unix milliseconds.
  std::function<std::int64_t()> now_ms;
};

/// The process's dispatcher: a facade over its actor.
class dispatcher {
public:
  /// Spawns the actor; it looks for due deliveries at once and every
  /// `cfg.poll_ms`.
  dispatcher(caf::actor_system& sys, dispatcher_env env);

  /// Stops the actor if `stop` was not called.
  ~dispatcher();

  /// Looks for due deliveries now (one was just queued here).
  void wake();

  /// Stops claiming, hands the leases of deliveries in flight back and
  /// ends the calls in flight; waits at most `timeout`.
  void stop(std::chrono::milliseconds timeout);

  /// Counters for /metrics.
  const dispatcher_gauges& gauges() const { return *gauges_; }

private:
  caf::actor_system& sys_;
  std::shared_ptr<net::http_client> client_;
  std::shared_ptr<dispatcher_gauges> gauges_;
  caf::actor actor_;
};

} // namespace mailassay::actors::webhooks
