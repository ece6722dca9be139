#include "core/dns/cache.hpp"

#include <algorithm>

namespace mailassay::core::dns {

std::uint32_t cache_ttl(const cache_config& config, const mail_route& route) {
  if (route.kind == route_kind::dns_error)
    return config.error_ttl;
  auto ttl = route.ttl.value_or(route.negative() ? config.negative_ttl
                                                 : config.min_ttl);
  return std::clamp(ttl, config.min_ttl,
                    std::max(config.min_ttl, config.max_ttl));
}

} // namespace mailassay::core::dns
