#pragma once

// What this process does when another one changes shared state
// (docs/architecture.md, "Shared state"): PostgreSQL notifications, sent by
// the store inside the changing transaction (storage/notify.hpp), arrive on
// a LISTEN connection (net/pg_listener) and are applied here:
//
// | change        | applied                                             |
// |---------------|-----------------------------------------------------|
// | API key       | its key-cache entry is dropped                      |
// | member        | nothing cached today (memberships are read per JWT  |
// |               | request); counted                                   |
// | batch cancel  | the job stops at once if this process runs it       |
// | signing key   | the keys are read again (a rotation)                |
//
// Each time LISTEN is (re)established the whole key cache is flushed and
// the signing keys are read again: a notification sent while the listener
// was down is lost, so anything may have changed meanwhile.

#include "net/pg_listener.hpp"
#include "storage/notify.hpp"
#include "use_cases/accounts/change_echo.hpp"
#include "use_cases/accounts/key_cache.hpp"

#include <asio/io_context.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace mailassay::actors {

/// Counts of applied changes, for /metrics.
struct cluster_event_counters {
  std::atomic<std::int64_t> keys{0};         ///< Key entries dropped.
  std::atomic<std::int64_t> members{0};      ///< Member changes heard.
  std::atomic<std::int64_t> cancels{0};      ///< Batch cancels passed on.
  std::atomic<std::int64_t> signing_keys{0}; ///< Rotations heard.
  std::atomic<std::int64_t> flushes{0};      ///< Whole-cache flushes.
  std::atomic<std::int64_t> unknown{0};      ///< Payloads not understood.
  std::atomic<std::int64_t> acks_sent{0};    ///< Acknowledgements sent.
  std::atomic<std::int64_t> acks_heard{0};   ///< Acknowledgements heard
                                             ///< (own ones included).
};

/// Where the changes go.
struct cluster_event_sinks {
  use_cases::accounts::key_cache* keys = nullptr;
  /// Stops a cancelled job if this process runs it.
  std::function<void(const std::string& job_id)> cancel_job;
  /// Reads the signing keys again (off the loop thread: a storage job).
  std::function<void()> reload_signing_keys;
  /// Told of every payload and of the listener's state; may be null.
  use_cases::accounts::change_echo* echo = nullptr;
};

/// Applies one notification payload; returns whether it was understood.
bool apply_change(std::string_view payload, const cluster_event_sinks& sinks,
                  cluster_event_counters& counters);

/// Applies what a (re)established LISTEN means: flush and reload.
void apply_resubscribed(const cluster_event_sinks& sinks,
                        cluster_event_counters& counters);

/// The listener and its sinks, for `serve` on PostgreSQL.
class cluster_events {
public:
  /// Starts listening on `channel` over a connection of `conninfo` (named
  /// storage::listener_application_name, so it is counted), on `ioctx` (a
  /// loop thread of its own); API-key changes are acknowledged as `node`
  /// (unique per process).
  cluster_events(asio::io_context& ioctx, std::string conninfo,
                 std::string channel, std::string node,
                 cluster_event_sinks sinks);

  /// Stops the listener (see `stop`).
  ~cluster_events();

  cluster_events(const cluster_events&) = delete;
  cluster_events& operator=(const cluster_events&) = delete;

  /// Closes the connection; no sink runs afterwards.
  void stop();

  /// The applied-change counters.
  const cluster_event_counters& counters() const { return *counters_; }

  /// The connection's counters (`listening` ...).
  const net::pg_listener_counters& listener() const {
    return listener_->counters();
  }

private:
  std::shared_ptr<cluster_event_counters> counters_;
  std::shared_ptr<net::pg_listener> listener_;
  use_cases::accounts::change_echo* echo_ = nullptr;
};

} // namespace mailassay::actors
