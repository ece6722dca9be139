#include "core/smtp/host_series.hpp"

#include <algorithm>

namespace mailassay::core::smtp {

host_series::host_series(limits::millis idle, std::size_t max_hosts)
    : idle_(idle), max_hosts_(std::max<std::size_t>(1, max_hosts)) {}

bool host_series::idle_past_window(const host_counts& h,
                                   limits::millis now) const {
  return h.open == 0 && now - h.last_used > idle_;
}

void host_series::opened(const std::string& host, limits::millis now) {
  auto it = hosts_.find(host);
  if (it == hosts_.end()) {
    if (hosts_.size() >= max_hosts_)
      std::erase_if(hosts_, [&](const auto& kv) {
        return idle_past_window(kv.second, now);
      });
    if (hosts_.size() >= max_hosts_) {
      // Full of hosts in their window: the one idle the longest goes.
      auto oldest = hosts_.end();
      for (auto i = hosts_.begin(); i != hosts_.end(); ++i)
        if (i->second.open == 0 &&
            (oldest == hosts_.end() ||
             i->second.last_used < oldest->second.last_used))
          oldest = i;
      if (oldest == hosts_.end()) {
        ++untracked_;
        return;
      }
      hosts_.erase(oldest);
    }
    it = hosts_.emplace(host, host_counts{}).first;
  }
  auto& h = it->second;
  ++h.open;
  ++h.opened;
  h.peak = std::max(h.peak, h.open);
  h.last_used = now;
}

void host_series::closed(const std::string& host, limits::millis now) {
  auto it = hosts_.find(host);
  if (it == hosts_.end() || it->second.open == 0)
    return;
  --it->second.open;
  it->second.last_used = now;
}

const std::map<std::string, host_counts>&
host_series::in_use(limits::millis now) {
  std::erase_if(
      hosts_, [&](const auto& kv) { return idle_past_window(kv.second, now); });
  return hosts_;
}

} // namespace mailassay::core::smtp
