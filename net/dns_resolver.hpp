#pragma once

#include "core/base/expected.hpp"
#include "core/dns/cache.hpp"
#include "core/dns/records.hpp"
#include "core/dns/route.hpp"
#include "net/dns_loop.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::net {

/// Settings of the DNS resolver (MAILASSAY_DNS_* keys, see docs/dns.md).
struct dns_resolver_config {
  /// Servers as "host:port" ("[v6]:port" for IPv6); empty: the system's
  /// /etc/resolv.conf.
  std::vector<std::string> servers;
  /// Time-out of the first try of a query; c-ares doubles it at each round
  /// over the server list.
  std::chrono::milliseconds timeout{2000};
  /// Tries per query over the server list (c-ares `tries`).
  int tries = 2;
  /// Queries handed to c-ares at once; further queries wait in a queue.
  std::size_t max_in_flight = 256;
  /// Mail-route cache of `resolve_mail_route`.
  core::dns::cache_config cache;
  /// Clock for cache TTLs; empty: std::chrono::steady_clock::now. Tests
  /// inject one to move time.
  std::function<core::dns::time_point()> clock;
  /// Names the provider of a route's first MX host (`mail_route::provider`,
  /// issue #30); empty: no route names one.
  std::shared_ptr<const core::provider::table> providers;
};

/// Counters and gauges for /metrics: the loop's (queries sent, answers,
/// failures, in flight, queued) and the mail-route cache's.
struct dns_resolver_counters : dns_loop_counters {
  std::uint64_t route_requests = 0;  ///< Calls of `resolve_mail_route`.
  std::uint64_t cache_hits = 0;      ///< Routes answered from the cache.
  std::uint64_t cache_misses = 0;    ///< Routes that started a resolution.
  std::uint64_t cache_joins = 0;     ///< Routes that joined one in flight.
  std::uint64_t cache_evictions = 0; ///< Cache entries evicted for room.
  std::uint64_t cache_size = 0;      ///< Routes cached now.
};

/// An asynchronous c-ares resolver that never blocks its callers. One I/O
/// thread runs the c-ares event loop; `resolve` and `resolve_mail_route` may
/// be called from any thread and return at once. Callbacks run on the
/// resolver thread (forward them, do not block in them); after `shutdown`
/// they run on the calling thread with a `timeout` result. The mail-route
/// cache lives inside the resolver, guarded by a mutex, so every caller
/// shares it and its single flight.
class dns_resolver {
public:
  /// Receives the result of one query.
  using lookup_callback = std::function<void(core::dns::lookup_result)>;

  /// Receives the mail route of a domain.
  using route_callback = std::function<void(core::dns::mail_route)>;

  /// Creates a resolver and starts its thread; fails on a bad server list
  /// or when c-ares cannot start.
  static core::expected<std::unique_ptr<dns_resolver>>
  create(dns_resolver_config config);

  /// The provider table routes are named from (issue #30); may be empty.
  const std::shared_ptr<const core::provider::table>& providers() const;

  /// Shuts down (see `shutdown`).
  ~dns_resolver();

  dns_resolver(const dns_resolver&) = delete;
  dns_resolver& operator=(const dns_resolver&) = delete;

  /// Queries `name` for `type` and calls `callback` with the result.
  /// CNAME chains in the answer are followed (c-ares parsers).
  void resolve(std::string name, core::dns::record_type type,
               lookup_callback callback);

  /// Decides the mail route of `domain` (MX, then A and AAAA only when
  /// there is no MX) and calls `callback` with it. Concurrent calls for one
  /// domain share one query set; a cached route sends no query until its
  /// TTL runs out.
  void resolve_mail_route(std::string domain, route_callback callback);

  /// Resolves the A and AAAA records of a host name (an MX host) through a
  /// cache of its own with the same TTL rules and single flight as the
  /// routes: concurrent calls for one name share one query pair. Answers a
  /// route of kind implicit_mx whose `addresses` are the host's (A first),
  /// or no_mx (no address), invalid_domain (NXDOMAIN), dns_error.
  void resolve_host(std::string host, route_callback callback);

  /// Returns the cached route of `domain` when fresh, without querying; lets
  /// a caller skip a thread hop on the hot path.
  std::shared_ptr<const core::dns::mail_route>
  cached_route(std::string_view domain);

  /// Returns a snapshot of the counters.
  dns_resolver_counters counters() const;

  /// Cancels queries in flight and in the queue (their callbacks get
  /// `timeout`, routes `dns_error`) and joins the thread; idempotent.
  void shutdown();

private:
  struct impl;
  explicit dns_resolver(std::unique_ptr<impl> self);

  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::net
