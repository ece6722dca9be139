#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace mailassay::http {

/// Request counters and a latency histogram, rendered in Prometheus text
/// format together with gauges that other rooms register.
class metrics {
public:
  /// Upper bounds of the latency buckets, in seconds.
  static constexpr std::array<double, 12> bounds
    = {0.0005, 0.001, 0.002, 0.005, 0.01, 0.025,
       0.05,   0.1,   0.25,  0.5,   1.0,  5.0};

  /// Counts one answered request of `route` with `status` taking `seconds`.
  void observe(const std::string& route, int status, double seconds);

  /// Adds a gauge read at render time: `name{labels} value`.
  void add_gauge(std::string name, std::string help,
                 std::function<double()> read);

  /// Renders every metric in Prometheus text format 0.0.4.
  std::string render() const;

private:
  struct gauge {
    std::string name, help;
    std::function<double()> read;
  };
  mutable std::mutex mtx_;
  std::map<std::pair<std::string, int>, std::uint64_t> requests_;
  std::array<std::uint64_t, bounds.size()> buckets_{};
  std::uint64_t count_ = 0;
  double sum_ = 0;
  std::vector<gauge> gauges_;
};

} // namespace mailassay::http
