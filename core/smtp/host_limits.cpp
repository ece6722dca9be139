#include "core/smtp/host_limits.hpp"

#include <algorithm>

namespace mailassay::core::smtp {

host_limits::host_limits(host_limits_config config) : config_(config) {}

bool host_limits::idle(const entry& e, limits::millis now) const {
  return e.open == 0 && (!e.bucket || e.bucket->is_full(now));
}

admission host_limits::try_open(std::string_view host, limits::millis now) {
  if (hosts_.size() >= sweep_at_) {
    sweep(now);
    sweep_at_ = std::max<std::size_t>(1024, hosts_.size() * 2);
  }
  auto& e = hosts_[std::string{host}];
  if (config_.max_sessions > 0 && e.open >= config_.max_sessions) {
    admission full;
    full.full = true;
    return full;
  }
  if (config_.connections_per_second > 0) {
    if (!e.bucket)
      e.bucket.emplace(limits::window_spec{config_.connections_per_second,
                                           limits::millis{1000}},
                       now);
    if (!e.bucket->take(now).allowed) {
      // One token refills in 1000/limit ms.
      auto per_token = (1000 + config_.connections_per_second - 1) /
                       config_.connections_per_second;
      admission later;
      later.retry_at = now + limits::millis{per_token};
      return later;
    }
  }
  ++e.open;
  admission granted;
  granted.granted = true;
  return granted;
}

void host_limits::close(std::string_view host, limits::millis now) {
  auto it = hosts_.find(std::string{host});
  if (it == hosts_.end())
    return;
  if (it->second.open > 0)
    --it->second.open;
  if (idle(it->second, now))
    hosts_.erase(it);
}

void host_limits::reconfigure(const host_limits_config& config,
                              limits::millis now) {
  config_ = config;
  for (auto& [host, e] : hosts_) {
    if (!e.bucket)
      continue;
    if (config_.connections_per_second > 0)
      e.bucket->reshape(limits::window_spec{config_.connections_per_second,
                                            limits::millis{1000}},
                        now);
    else
      e.bucket.reset();
  }
}

std::size_t host_limits::open_sessions(std::string_view host) const {
  auto it = hosts_.find(std::string{host});
  return it == hosts_.end() ? 0 : it->second.open;
}

void host_limits::sweep(limits::millis now) {
  std::erase_if(hosts_, [&](const auto& kv) { return idle(kv.second, now); });
}

} // namespace mailassay::core::smtp
