#pragma once

// The service's egress self-audit (docs/operations.md, "Why is every answer
// unknown?"): the audit of `mailassay doctor` at start and every interval,
// on a thread of its own because the audit blocks (DNS, connections, an
// EHLO) and must never hold a scheduler thread. A failed check is logged as
// a warning; the last report is read by /health and /metrics.

#include "core/egress/report.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace mailassay::net {
class egress_audit;
} // namespace mailassay::net

namespace mailassay::actors {

/// When the monitor audits.
struct egress_monitor_options {
  /// Audit once at start.
  bool at_start = true;
  /// Time between audits; zero: none after the first.
  std::chrono::seconds interval{3600};
  /// Unix seconds, for `checked_at`.
  std::function<std::int64_t()> now;
};

/// The last audit's report and when it ended.
struct egress_reading {
  core::egress::report report;
  std::int64_t checked_at = 0; ///< Unix seconds.
};

/// Runs an audit on its thread at start and every interval; see the top of
/// this header. Thread-safe.
class egress_monitor {
public:
  /// Starts the thread (it waits when neither `at_start` nor an interval
  /// asks for an audit).
  egress_monitor(std::shared_ptr<net::egress_audit> audit,
                 egress_monitor_options options);

  /// Stops (see `stop`).
  ~egress_monitor();

  egress_monitor(const egress_monitor&) = delete;
  egress_monitor& operator=(const egress_monitor&) = delete;

  /// Returns the last report; empty until the first audit ended.
  std::optional<egress_reading> latest() const;

  /// Whether audits run at all (at start or periodically).
  bool scheduled() const;

  /// Cancels an audit in progress and joins the thread; idempotent.
  void stop();

private:
  /// The thread's loop: audit, publish, wait for the interval or a stop.
  void run();

  std::shared_ptr<net::egress_audit> audit_;
  egress_monitor_options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<egress_reading> latest_;
  std::thread thread_;
};

} // namespace mailassay::actors
