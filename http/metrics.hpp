#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::http {

/// Request counters and a latency histogram, rendered in Prometheus text
/// format together with gauges that other rooms register.
///
/// `observe` runs once per answered request on whichever thread answers,
/// so it takes no lock: counters are atomics in a fixed table of (route,
/// status) slots claimed on first use; only a table that filled up (more
/// than `slot_count` distinct pairs) falls back to a map under a mutex.
class metrics {
public:
  /// Upper bounds of the latency buckets, in seconds.
  static constexpr std::array<double, 12> bounds = {
      0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0};

  /// Creates empty counters.
  metrics();

  /// Frees the counters.
  ~metrics();

  metrics(const metrics&) = delete;
  metrics& operator=(const metrics&) = delete;

  /// Counts one answered request of `route` with `status` taking `seconds`.
  void observe(std::string_view route, int status, double seconds);

  /// Counts a streamed response cut off after its head was sent (the client
  /// left, or storage failed mid-export); the request itself stays counted
  /// under the status its head carried.
  void stream_aborted() {
    aborted_streams_.fetch_add(1, std::memory_order_relaxed);
  }

  /// Adds a gauge read at render time: `name{labels} value`.
  void add_gauge(std::string name, std::string help,
                 std::function<double()> read);

  /// Reads the series of a family known only at render time (one per MX
  /// host, say): (labels as written between the braces, value) pairs.
  using series_reader =
      std::function<std::vector<std::pair<std::string, double>>()>;

  /// Adds a gauge family whose series `read` lists at render time:
  /// `name{labels} value` per pair; the labels must be escaped already.
  void add_gauge_family(std::string name, std::string help, series_reader read);

  /// A histogram as it stands at render time.
  struct histogram_reading {
    /// (upper bound as written in `le`, observations at or below it),
    /// cumulative, in increasing order; "+Inf" last.
    std::vector<std::pair<std::string, std::uint64_t>> buckets;
    /// Sum of the observed values.
    double sum = 0;
    /// Number of observations.
    std::uint64_t count = 0;
  };

  /// Reads a histogram at render time.
  using histogram_reader = std::function<histogram_reading()>;

  /// Adds a histogram read at render time: `name_bucket{le}`, `name_sum`
  /// and `name_count` under one HELP and `TYPE histogram`.
  void add_histogram(std::string name, std::string help, histogram_reader read);

  /// Renders every metric in Prometheus text format 0.0.4.
  std::string render() const;

  /// Number of (route, status) pairs counted without a lock.
  static constexpr std::size_t slot_count = 512;

private:
  struct gauge {
    std::string name, help;
    std::function<double()> read;
  };
  struct family {
    std::string name, help;
    series_reader read;
  };
  struct histogram {
    std::string name, help;
    histogram_reader read;
  };
  struct slot {
    /// 0 free, 1 being claimed, 2 ready (route and status readable).
    std::atomic<std::uint32_t> state{0};
    int status = 0;
    std::string route;
    std::atomic<std::uint64_t> n{0};
  };
  std::atomic<std::uint64_t>* counter_of(std::string_view route, int status);

  std::unique_ptr<slot[]> slots_;
  /// Requests per latency bucket (not cumulative; `render` adds them up);
  /// the last one is above the largest bound.
  std::array<std::atomic<std::uint64_t>, bounds.size() + 1> buckets_{};
  std::atomic<double> sum_{0};
  std::atomic<std::uint64_t> aborted_streams_{0};
  mutable std::mutex mtx_; ///< Gauges and the overflow map.
  std::map<std::pair<std::string, int>, std::uint64_t> overflow_;
  std::vector<gauge> gauges_;
  std::vector<family> families_;
  std::vector<histogram> histograms_;
};

} // namespace mailassay::http
