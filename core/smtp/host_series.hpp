#pragma once

// Per-MX-host session counts for /metrics, kept only for the hosts in use:
// a host stays while it has a session open or was used (a session opened
// or ended) within the idle window, then it is dropped, so the label set of
// the per-host series stays small however many hosts the process meets.
// At most `max_hosts` are kept: a new host takes the place of the one idle
// the longest; when every kept host has a session open, the new one is not
// counted until a place frees. Pure: the caller passes the time.

#include "core/limits/token_bucket.hpp"

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace mailassay::core::smtp {

/// Sessions to one MX host since it was last taken into the table.
struct host_counts {
  std::uint64_t open = 0;      ///< Sessions open (or connecting) now.
  std::uint64_t opened = 0;    ///< Connections opened.
  std::uint64_t peak = 0;      ///< Most sessions open at once.
  limits::millis last_used{0}; ///< Last time a session opened or ended.
};

/// The per-host table behind `mailassay_smtp_host_*{host}`.
class host_series {
public:
  /// Keeps a host `idle` after its last session ended, `max_hosts` at most
  /// (at least 1).
  host_series(limits::millis idle, std::size_t max_hosts);

  /// A session to `host` opened at `now`.
  void opened(const std::string& host, limits::millis now);

  /// A session to `host` ended at `now`.
  void closed(const std::string& host, limits::millis now);

  /// Drops the hosts idle for longer than the window at `now` and returns
  /// the rest.
  const std::map<std::string, host_counts>& in_use(limits::millis now);

  /// Hosts not counted because every place was taken by a host with a
  /// session open (since start).
  std::uint64_t untracked() const { return untracked_; }

private:
  bool idle_past_window(const host_counts& h, limits::millis now) const;

  limits::millis idle_;
  std::size_t max_hosts_;
  std::uint64_t untracked_ = 0;
  std::map<std::string, host_counts> hosts_;
};

} // namespace mailassay::core::smtp
