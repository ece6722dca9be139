#include "net/dns_resolver.hpp"

#include "core/dns/route.hpp"
#include "net/dns_loop.hpp"
#include "os/coarse_clock.hpp"

#include <atomic>
#include <mutex>
#include <optional>
#include <utility>

namespace mailassay::net {

namespace {

using core::dns::lookup_result;
using core::dns::mail_route;
using core::dns::rcode;
using core::dns::record_type;

dns_loop_settings loop_settings(const dns_resolver_config& config) {
  return {config.servers, config.timeout, config.tries, config.max_in_flight};
}

} // namespace

// The caches and their single flight, on top of the query loop: a route
// asks MX, then A and AAAA when there is no MX; a host asks A and AAAA.
struct dns_resolver::impl {
  using route_cache = core::dns::cache<route_callback>;
  using pair_callback =
      std::function<void(lookup_result a, lookup_result aaaa)>;

  impl(dns_resolver_config cfg, std::unique_ptr<dns_loop> l)
      : config(std::move(cfg)), loop(std::move(l)), routes(config.cache),
        hosts(config.cache) {}

  // TTLs are seconds and every cached validation reads this: the coarse
  // clock.
  core::dns::time_point now() const {
    return config.clock ? config.clock() : os::coarse_steady_now();
  }

  enum class lookup { served, joined, started };

  // Answers `callback` from `cache` when it holds `name` (on the loop
  // thread, never on the caller's stack); else adds it to the lookup in
  // flight for `name`, starting one when there is none (the caller then
  // sends the queries).
  lookup serve_or_join(route_cache& cache, const std::string& name,
                       route_callback& callback) {
    std::shared_ptr<const mail_route> hit;
    bool start = false;
    {
      std::lock_guard guard{cache_mutex};
      auto found = cache.find(name, now());
      if (found.status == core::dns::cache_status::hit)
        hit = std::move(found.route);
      else
        start = cache.begin(name, std::move(callback));
    }
    if (!hit)
      return start ? lookup::started : lookup::joined;
    loop->post([cb = std::move(callback), r = std::move(hit)]() mutable {
      call_guarded(cb, *r);
    });
    return lookup::served;
  }

  // Stores `result` for `name` and answers everyone who waited for it.
  void complete(route_cache& cache, const std::string& name,
                const mail_route& result) {
    std::vector<route_callback> waiters;
    {
      std::lock_guard guard{cache_mutex};
      waiters = cache.complete(name, result, now());
    }
    for (auto& w : waiters)
      call_guarded(w, result);
  }

  // Asks A and AAAA of `name` at once; `done` runs when both answered.
  void resolve_pair(const std::string& name, pair_callback done) {
    struct pair_state {
      std::optional<lookup_result> a, aaaa;
      pair_callback done;
    };
    auto state = std::make_shared<pair_state>();
    state->done = std::move(done);
    auto joined = [state] {
      if (state->a && state->aaaa)
        state->done(std::move(*state->a), std::move(*state->aaaa));
    };
    loop->query(name, record_type::a, [state, joined](lookup_result r) {
      state->a = std::move(r);
      joined();
    });
    loop->query(name, record_type::aaaa, [state, joined](lookup_result r) {
      state->aaaa = std::move(r);
      joined();
    });
  }

  void route(std::string domain, route_callback callback) {
    ++route_requests;
    auto name = core::dns::normalize_name(domain);
    switch (serve_or_join(routes, name, callback)) {
      case lookup::served: ++cache_hits; return;
      case lookup::joined: ++cache_joins; return;
      case lookup::started: break;
    }
    ++cache_misses;
    loop->query(name, record_type::mx,
                [this, name](lookup_result mx) { on_mx(name, std::move(mx)); });
  }

  // Names the provider once per resolution, so that every answer served
  // from the cache carries it at no cost.
  mail_route with_provider(mail_route route) const {
    if (config.providers && route.kind == core::dns::route_kind::mx &&
        !route.hosts.empty())
      if (auto* p = config.providers->find(route.hosts.front().host))
        route.provider = *p;
    return route;
  }

  void on_mx(const std::string& name, lookup_result mx) {
    if (!core::dns::needs_address_lookup(mx)) {
      complete(routes, name, with_provider(core::dns::interpret(name, mx)));
      return;
    }
    // RFC 5321 §5.1: no MX, so the domain's own addresses decide.
    resolve_pair(name, [this, name, mx = std::move(mx)](lookup_result a,
                                                        lookup_result aaaa) {
      complete(routes, name,
               core::dns::interpret(name, mx,
                                    core::dns::merge_address_answers(a, aaaa)));
    });
  }

  void host(std::string host_name, route_callback callback) {
    auto name = core::dns::normalize_name(host_name);
    if (serve_or_join(hosts, name, callback) != lookup::started)
      return;
    resolve_pair(name, [this, name](lookup_result a, lookup_result aaaa) {
      // A host's addresses read like an implicit MX: same TTL rules.
      lookup_result no_mx;
      no_mx.code = rcode::nodata;
      complete(hosts, name,
               core::dns::interpret(name, no_mx,
                                    core::dns::merge_address_answers(a, aaaa)));
    });
  }

  dns_resolver_config config;
  std::unique_ptr<dns_loop> loop;

  mutable std::mutex cache_mutex;
  route_cache routes;
  route_cache hosts; ///< MX host addresses.

  std::atomic<std::uint64_t> route_requests{0};
  std::atomic<std::uint64_t> cache_hits{0};
  std::atomic<std::uint64_t> cache_misses{0};
  std::atomic<std::uint64_t> cache_joins{0};
};

const std::shared_ptr<const core::provider::table>&
dns_resolver::providers() const {
  return impl_->config.providers;
}

dns_resolver::dns_resolver(std::unique_ptr<impl> self)
    : impl_(std::move(self)) {}

dns_resolver::~dns_resolver() {
  shutdown();
}

core::expected<std::unique_ptr<dns_resolver>>
dns_resolver::create(dns_resolver_config config) {
  auto loop = dns_loop::create(loop_settings(config));
  if (!loop)
    return std::move(loop).error_value();
  return std::unique_ptr<dns_resolver>{new dns_resolver(
      std::make_unique<impl>(std::move(config), std::move(*loop)))};
}

void dns_resolver::resolve(std::string name, core::dns::record_type type,
                           lookup_callback callback) {
  impl_->loop->query(std::move(name), type, std::move(callback));
}

void dns_resolver::resolve_mail_route(std::string domain,
                                      route_callback callback) {
  impl_->route(std::move(domain), std::move(callback));
}

void dns_resolver::resolve_host(std::string host, route_callback callback) {
  impl_->host(std::move(host), std::move(callback));
}

std::shared_ptr<const core::dns::mail_route>
dns_resolver::cached_route(std::string_view domain) {
  std::lock_guard guard{impl_->cache_mutex};
  auto found = impl_->routes.find(domain, impl_->now());
  if (found.status != core::dns::cache_status::hit)
    return nullptr;
  ++impl_->cache_hits;
  return std::move(found.route);
}

dns_resolver_counters dns_resolver::counters() const {
  auto& m = *impl_;
  dns_resolver_counters c;
  static_cast<dns_loop_counters&>(c) = m.loop->counters();
  c.route_requests = m.route_requests;
  c.cache_hits = m.cache_hits;
  c.cache_misses = m.cache_misses;
  c.cache_joins = m.cache_joins;
  std::lock_guard guard{m.cache_mutex};
  c.cache_evictions = m.routes.stats().evictions;
  c.cache_size = m.routes.size();
  return c;
}

void dns_resolver::shutdown() {
  if (impl_)
    impl_->loop->shutdown();
}

} // namespace mailassay::net
