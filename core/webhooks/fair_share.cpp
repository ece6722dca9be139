#include "core/webhooks/fair_share.hpp"

#include <algorithm>
#include <set>

namespace mailassay::core::webhooks {

std::int64_t share_of(const slot_limits& limits,
                      std::int64_t active_organizations) {
  auto active = std::max<std::int64_t>(1, active_organizations);
  auto share = std::min(limits.total / active, limits.per_organization);
  return std::max<std::int64_t>(1, share);
}

std::vector<allotment>
allot(const slot_limits& limits,
      const std::map<std::string, std::int64_t>& in_flight,
      const std::vector<std::string>& waiting) {
  std::int64_t running = 0;
  std::set<std::string> active;
  for (const auto& [org, n] : in_flight)
    if (n > 0) {
      running += n;
      active.insert(org);
    }
  for (const auto& org : waiting)
    active.insert(org);
  auto free = limits.total - running;
  auto share = share_of(limits, static_cast<std::int64_t>(active.size()));
  struct seat {
    std::string org;
    std::int64_t held = 0;
    std::int64_t given = 0;
    std::size_t order = 0;
  };
  std::vector<seat> seats;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < waiting.size(); ++i) {
    if (!seen.insert(waiting[i]).second)
      continue;
    auto it = in_flight.find(waiting[i]);
    seats.push_back({waiting[i], it == in_flight.end() ? 0 : it->second, 0, i});
  }
  // One slot per round to the least served organization below its share.
  while (free > 0) {
    seat* next = nullptr;
    for (auto& s : seats)
      if (s.held + s.given < share &&
          (next == nullptr || s.held + s.given < next->held + next->given))
        next = &s;
    if (next == nullptr)
      break;
    ++next->given;
    --free;
  }
  std::vector<allotment> out;
  for (const auto& s : seats)
    if (s.given > 0)
      out.push_back({s.org, s.given});
  return out;
}

} // namespace mailassay::core::webhooks
