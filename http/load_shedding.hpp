#pragma once

// Load shedding (issue #29): every queue a request may wait on has a bound
// (docs/operations.md, "Queues and load shedding"). A request that would
// wait beyond it is answered at once with 503 and Retry-After, and counted,
// instead of queueing until its deadline answers it.

#include "core/base/errc.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace mailassay::http {

/// The queues on the request path.
enum class queue : unsigned char {
  requests,   ///< Requests waiting for any answer (http.max_waiting_requests).
  storage,    ///< Storage jobs waiting for a worker.
  validation, ///< Validations waiting in the pipeline's mailboxes.
};

/// How many kinds of queue there are.
inline constexpr std::size_t queue_count = 3;

/// The name of `q` in /metrics (`queue` label).
const char* queue_name(queue q);

/// Requests shed per queue since the start; any thread.
class shed_counts {
public:
  /// Counts one request shed at `q`.
  void add(queue q) { n_[static_cast<std::size_t>(q)].fetch_add(1); }

  /// Returns how many were shed at `q`.
  std::uint64_t of(queue q) const {
    return n_[static_cast<std::size_t>(q)].load();
  }

private:
  std::array<std::atomic<std::uint64_t>, queue_count> n_{};
};

/// Whether a queue holding `waiting` is full under `bound` (0: unbounded).
constexpr bool full(std::int64_t waiting, std::int64_t bound) {
  return bound > 0 && waiting >= bound;
}

/// The 503 of a full queue `q`, with Retry-After: 1.
core::error overloaded(queue q);

} // namespace mailassay::http
