#include "http/metrics.hpp"

#include <cstdio>
#include <string_view>
#include <thread>
#include <vector>

namespace mailassay::http {

namespace {

std::size_t slot_hash(std::string_view route, int status) {
  return std::hash<std::string_view>{}(route)*31 +
         static_cast<std::size_t>(status);
}

} // namespace

metrics::metrics() : slots_(std::make_unique<slot[]>(slot_count)) {}

metrics::~metrics() = default;

std::atomic<std::uint64_t>* metrics::counter_of(std::string_view route,
                                                int status) {
  auto start = slot_hash(route, status);
  for (std::size_t probe = 0; probe < slot_count; ++probe) {
    auto& s = slots_[(start + probe) % slot_count];
    auto state = s.state.load(std::memory_order_acquire);
    if (state == 0) {
      std::uint32_t expected = 0;
      if (s.state.compare_exchange_strong(expected, 1,
                                          std::memory_order_acquire)) {
        s.route.assign(route);
        s.status = status;
        s.state.store(2, std::memory_order_release);
        return &s.n;
      }
      state = expected;
    }
    // Another thread is writing this slot's key: it is readable at once.
    while (state == 1) {
      std::this_thread::yield();
      state = s.state.load(std::memory_order_acquire);
    }
    if (s.status == status && s.route == route)
      return &s.n;
  }
  return nullptr;
}

void metrics::observe(std::string_view route, int status, double seconds) {
  if (auto* n = counter_of(route, status)) {
    n->fetch_add(1, std::memory_order_relaxed);
  } else {
    std::lock_guard guard{mtx_};
    ++overflow_[{std::string{route}, status}];
  }
  std::size_t i = 0;
  while (i < bounds.size() && seconds > bounds[i])
    ++i;
  buckets_[i].fetch_add(1, std::memory_order_relaxed);
  sum_.fetch_add(seconds, std::memory_order_relaxed);
}

void metrics::add_gauge(std::string name, std::string help,
                        std::function<double()> read) {
  std::lock_guard guard{mtx_};
  gauges_.push_back({std::move(name), std::move(help), std::move(read)});
}

void metrics::add_gauge_family(std::string name, std::string help,
                               series_reader read) {
  std::lock_guard guard{mtx_};
  families_.push_back({std::move(name), std::move(help), std::move(read)});
}

void metrics::add_histogram(std::string name, std::string help,
                            histogram_reader read) {
  std::lock_guard guard{mtx_};
  histograms_.push_back({std::move(name), std::move(help), std::move(read)});
}

std::string metrics::render() const {
  std::lock_guard guard{mtx_};
  auto requests = overflow_;
  for (std::size_t i = 0; i < slot_count; ++i) {
    const auto& s = slots_[i];
    if (s.state.load(std::memory_order_acquire) == 2)
      requests[{s.route, s.status}] += s.n.load(std::memory_order_relaxed);
  }
  std::string out;
  char buf[64];
  out += "# HELP mailassay_http_requests_total Answered HTTP requests.\n"
         "# TYPE mailassay_http_requests_total counter\n";
  for (auto& [key, n] : requests)
    out += "mailassay_http_requests_total{route=\"" + key.first +
           "\",status=\"" + std::to_string(key.second) + "\"} " +
           std::to_string(n) + "\n";
  out += "# HELP mailassay_http_request_duration_seconds Time from request "
         "to response.\n"
         "# TYPE mailassay_http_request_duration_seconds histogram\n";
  std::uint64_t cumulative = 0;
  for (size_t i = 0; i < bounds.size(); ++i) {
    cumulative += buckets_[i].load(std::memory_order_relaxed);
    std::snprintf(buf, sizeof buf, "%g", bounds[i]);
    out += "mailassay_http_request_duration_seconds_bucket{le=\"" +
           std::string{buf} + "\"} " + std::to_string(cumulative) + "\n";
  }
  auto count =
      cumulative + buckets_[bounds.size()].load(std::memory_order_relaxed);
  out += "mailassay_http_request_duration_seconds_bucket{le=\"+Inf\"} " +
         std::to_string(count) + "\n";
  std::snprintf(buf, sizeof buf, "%.6f", sum_.load(std::memory_order_relaxed));
  out +=
      "mailassay_http_request_duration_seconds_sum " + std::string{buf} + "\n";
  out += "mailassay_http_request_duration_seconds_count " +
         std::to_string(count) + "\n";
  out += "# HELP mailassay_http_streams_aborted_total Streamed responses cut "
         "off after their head was sent.\n"
         "# TYPE mailassay_http_streams_aborted_total counter\n"
         "mailassay_http_streams_aborted_total " +
         std::to_string(aborted_streams_.load(std::memory_order_relaxed)) +
         "\n";
  // One HELP/TYPE per family (the name before its labels), its series
  // together: Prometheus refuses a second HELP for a name.
  auto family = [](const gauge& g) {
    return std::string_view{g.name}.substr(0, g.name.find('{'));
  };
  std::vector<bool> written(gauges_.size(), false);
  for (std::size_t i = 0; i < gauges_.size(); ++i) {
    if (written[i])
      continue;
    auto base = std::string{family(gauges_[i])};
    out += "# HELP " + base + " " + gauges_[i].help + "\n# TYPE " + base +
           " gauge\n";
    for (std::size_t k = i; k < gauges_.size(); ++k) {
      if (written[k] || family(gauges_[k]) != base)
        continue;
      written[k] = true;
      std::snprintf(buf, sizeof buf, "%.17g", gauges_[k].read());
      out += gauges_[k].name + " " + buf + "\n";
    }
  }
  for (const auto& f : families_) {
    out +=
        "# HELP " + f.name + " " + f.help + "\n# TYPE " + f.name + " gauge\n";
    for (const auto& [labels, value] : f.read()) {
      std::snprintf(buf, sizeof buf, "%.17g", value);
      out += f.name + "{" + labels + "} " + buf + "\n";
    }
  }
  for (const auto& h : histograms_) {
    auto r = h.read();
    out += "# HELP " + h.name + " " + h.help + "\n# TYPE " + h.name +
           " histogram\n";
    for (const auto& [le, n] : r.buckets)
      out += h.name + "_bucket{le=\"" + le + "\"} " + std::to_string(n) + "\n";
    std::snprintf(buf, sizeof buf, "%.17g", r.sum);
    out += h.name + "_sum " + buf + "\n";
    out += h.name + "_count " + std::to_string(r.count) + "\n";
  }
  return out;
}

} // namespace mailassay::http
