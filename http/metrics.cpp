#include "http/metrics.hpp"

#include <cstdio>

namespace mailassay::http {

void metrics::observe(const std::string& route, int status, double seconds) {
  std::lock_guard guard{mtx_};
  ++requests_[{route, status}];
  for (size_t i = 0; i < bounds.size(); ++i)
    if (seconds <= bounds[i])
      ++buckets_[i];
  ++count_;
  sum_ += seconds;
}

void metrics::add_gauge(std::string name, std::string help,
                        std::function<double()> read) {
  std::lock_guard guard{mtx_};
  gauges_.push_back({std::move(name), std::move(help), std::move(read)});
}

std::string metrics::render() const {
  std::lock_guard guard{mtx_};
  std::string out;
  char buf[64];
  out += "# HELP mailassay_http_requests_total Answered HTTP requests.\n"
         "# TYPE mailassay_http_requests_total counter\n";
  for (auto& [key, n] : requests_)
    out += "mailassay_http_requests_total{route=\"" + key.first
           + "\",status=\"" + std::to_string(key.second) + "\"} "
           + std::to_string(n) + "\n";
  out += "# HELP mailassay_http_request_duration_seconds Time from request "
         "to response.\n"
         "# TYPE mailassay_http_request_duration_seconds histogram\n";
  for (size_t i = 0; i < bounds.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%g", bounds[i]);
    out += "mailassay_http_request_duration_seconds_bucket{le=\""
           + std::string{buf} + "\"} " + std::to_string(buckets_[i]) + "\n";
  }
  out += "mailassay_http_request_duration_seconds_bucket{le=\"+Inf\"} "
         + std::to_string(count_) + "\n";
  std::snprintf(buf, sizeof buf, "%.6f", sum_);
  out += "mailassay_http_request_duration_seconds_sum " + std::string{buf}
         + "\n";
  out += "mailassay_http_request_duration_seconds_count "
         + std::to_string(count_) + "\n";
  for (auto& g : gauges_) {
    auto base = g.name.substr(0, g.name.find('{'));
    out += "# HELP " + base + " " + g.help + "\n# TYPE " + base + " gauge\n";
    std::snprintf(buf, sizeof buf, "%.17g", g.read());
    out += g.name + " " + buf + "\n";
  }
  return out;
}

} // namespace mailassay::http
