#pragma once

// The mail route the scheduler tests hand the scheduler, as the DNS stage
// would find it.

#include "core/dns/route.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace mailassay::tests::smtp {

/// A route of MX `hosts`, in that order of preference (20, 30, ...).
inline std::shared_ptr<const core::dns::mail_route>
mx_route(std::vector<std::string> hosts) {
  auto r = std::make_shared<core::dns::mail_route>();
  r->kind = core::dns::route_kind::mx;
  std::uint16_t prio = 10;
  for (auto& h : hosts)
    r->hosts.push_back({std::move(h), prio += 10});
  return r;
}

} // namespace mailassay::tests::smtp
