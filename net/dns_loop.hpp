#pragma once

#include "core/base/expected.hpp"
#include "core/dns/records.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mailassay::net {

/// Settings of the c-ares loop (the query part of dns_resolver_config).
struct dns_loop_settings {
  /// Servers as "host:port"; empty: the system's /etc/resolv.conf.
  std::vector<std::string> servers;
  /// Time-out of the first try of a query (c-ares doubles it per round).
  std::chrono::milliseconds timeout{2000};
  /// Tries per query over the server list.
  int tries = 2;
  /// Queries handed to c-ares at once; further queries wait in a queue.
  std::size_t max_in_flight = 256;
};

/// Counters and gauges of the queries, for /metrics.
struct dns_loop_counters {
  std::uint64_t queries_sent = 0;   ///< Queries handed to c-ares.
  std::uint64_t answers = 0;        ///< Ended with ok, nodata or nxdomain.
  std::uint64_t failures = 0;       ///< Ended without an answer.
  std::uint64_t in_flight = 0;      ///< Queries in c-ares now.
  std::uint64_t peak_in_flight = 0; ///< Most queries in c-ares at once.
  std::uint64_t queued = 0;         ///< Queries waiting for a slot now.
};

/// Calls `f` and swallows what it throws: a callback must neither unwind
/// through c-ares' C frames nor keep the callbacks after it from running.
template <class F, class... Ts>
void call_guarded(F& f, Ts&&... xs) {
  try {
    f(std::forward<Ts>(xs)...);
  } catch (...) {
  }
}

/// One thread running a c-ares channel with poll(2). Queries submitted from
/// any thread return at once; at most `max_in_flight` are in c-ares, the
/// rest wait in order. Each answer is read by `dns_wire` and handed to its
/// callback on the loop thread. After `shutdown`, callbacks get `timeout`
/// on the calling thread.
class dns_loop {
public:
  /// Receives the result of one query.
  using answer_callback = std::function<void(core::dns::lookup_result)>;

  /// Starts the loop; fails on a bad server list or when c-ares cannot.
  static core::expected<std::unique_ptr<dns_loop>>
  create(dns_loop_settings settings);

  /// Shuts down (see `shutdown`).
  ~dns_loop();

  dns_loop(const dns_loop&) = delete;
  dns_loop& operator=(const dns_loop&) = delete;

  /// Queries `name` for `type`; `done` runs on the loop thread. From the
  /// loop thread itself (a callback asking a follow-up) the query is
  /// queued without a wake-up.
  void query(std::string name, core::dns::record_type type,
             answer_callback done);

  /// Runs `f` on the loop thread, so that a caller's callback never runs
  /// on the caller's own stack; inline once shut down.
  void post(std::function<void()> f);

  /// Returns a snapshot of the counters.
  dns_loop_counters counters() const;

  /// Cancels queries in flight and in the queue (their callbacks get
  /// `timeout`) and joins the thread; idempotent.
  void shutdown();

private:
  struct impl;
  explicit dns_loop(std::unique_ptr<impl> self);

  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::net
