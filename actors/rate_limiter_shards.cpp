#include "actors/rate_limiter_shards.hpp"

#include <algorithm>
#include <bit>
#include <thread>

namespace mailassay::actors {

namespace {

// Shard `i`'s part of each table's bound split over `shards`, so that all
// shards together hold as many buckets as one table did. At least 8 each:
// the buckets one check takes from one table (login per IP and per
// account) must not evict each other.
rate_limiter_options share_of(rate_limiter_options o, std::size_t shards,
                              std::size_t i) {
  auto split = [shards, i](std::size_t& max) {
    max = std::max<std::size_t>(8, max / shards + (i < max % shards ? 1 : 0));
  };
  split(o.max_ip_buckets);
  split(o.max_key_buckets);
  split(o.max_device_buckets);
  split(o.max_widget_ip_buckets);
  split(o.max_auth_buckets);
  return o;
}

// Past 64 shards, two checks almost never meet in one: more would only
// shrink each shard's share of the bounds.
std::size_t shard_count(std::size_t asked) {
  if (asked == 0)
    asked = std::max(1u, std::thread::hardware_concurrency());
  return std::bit_ceil(std::min<std::size_t>(asked, 64));
}

} // namespace

table_figures figures_of(const limiter_tables& t) {
  auto n = [](std::size_t v) { return static_cast<std::int64_t>(v); };
  table_figures f;
  f.ip = n(t.ip.size());
  f.keys = n(t.keys.size());
  f.device = n(t.device.size());
  f.widget_ip = n(t.widget_ip.size());
  f.auth = n(t.auth.size());
  f.evictions = n(t.ip.evictions() + t.keys.evictions() + t.device.evictions() +
                  t.widget_ip.evictions() + t.auth.evictions());
  f.active_evictions =
      n(t.ip.active_evictions() + t.keys.active_evictions() +
        t.device.active_evictions() + t.widget_ip.active_evictions() +
        t.auth.active_evictions());
  f.swept = n(t.ip.swept() + t.keys.swept() + t.device.swept() +
              t.widget_ip.swept() + t.auth.swept());
  return f;
}

limiter_shared::limiter_shared(const rate_limiter_options& o)
    : opts(o), ip_per_minute(o.ip_per_minute) {
  auto n = shard_count(o.shards);
  for (std::size_t i = 0; i < n; ++i)
    shards.push_back(std::make_unique<limiter_shard>(share_of(o, n, i)));
}

} // namespace mailassay::actors
