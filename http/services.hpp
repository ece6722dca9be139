#pragma once

#include "actors/batch/runner.hpp"
#include "actors/rate_limiter.hpp"
#include "actors/shared_limiter.hpp"
#include "actors/storage_pool.hpp"
#include "actors/usage_recorder.hpp"
#include "actors/validation_pool.hpp"
#include "config/settings.hpp"
#include "core/limits/client_ip.hpp"
#include "core/syntax/address.hpp"
#include "http/load_shedding.hpp"
#include "http/metrics.hpp"
#include "use_cases/accounts/key_cache.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

namespace mailassay::actors::webhooks {
class dispatcher;
} // namespace mailassay::actors::webhooks

namespace mailassay::actors {
class egress_monitor;
} // namespace mailassay::actors

namespace mailassay::http {

/// What handlers may use; built once by the composition root.
struct services {
  const config::settings& cfg;
  actors::storage_pool& storage;
  use_cases::accounts::key_cache& keys;
  actors::validation_pool& validation;
  actors::usage_recorder& usage;
  actors::rate_limiter& limiter;
  core::limits::trusted_networks trusted_proxies;
  metrics& stats;
  std::string version;               ///< Build version, e.g. "0.1.0".
  std::int64_t started_at = 0;       ///< Unix seconds.
  std::function<std::int64_t()> now; ///< Unix seconds.
  std::atomic<std::int64_t> in_flight{0};
  /// Requests waiting for an answer now (in a deadline list): the queue
  /// `http.max_waiting_requests` bounds.
  std::atomic<std::int64_t> waiting{0};
  /// Requests answered 503 at once because a queue was full.
  shed_counts shed;
  std::atomic<bool> draining{false};
  /// The address parser's options (batch uploads parse addresses).
  core::syntax::options syntax{};
  /// Runs batch jobs; null in tools without one.
  actors::batch_runner* batches = nullptr;
  /// The limits shared by every process through Redis (`redis.url`); null:
  /// `limiter` alone decides, in this process.
  actors::shared_limiter* shared_limits = nullptr;
  /// Sends webhook deliveries; null in tools without one.
  actors::webhooks::dispatcher* webhooks = nullptr;
  /// The egress self-audit of SMTP probing; null when probing is off.
  const actors::egress_monitor* egress = nullptr;
};

} // namespace mailassay::http
