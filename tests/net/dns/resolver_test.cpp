#include "net/dns_resolver.hpp"
#include "tests/peers/dns_peer.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace mailassay;
using namespace std::chrono_literals;
using core::dns::lookup_result;
using core::dns::mail_route;
using core::dns::mx_record;
using core::dns::rcode;
using core::dns::record_type;
using core::dns::route_kind;
using net::dns_resolver;
using net::dns_resolver_config;
using tests::peers::dns_behaviour;
using tests::peers::dns_peer;
using tests::peers::dns_soa;
using tests::peers::dns_type;

namespace {

// Never the system resolver: every test talks to its own peer on loopback.
dns_resolver_config config_for(const dns_peer& peer) {
  dns_resolver_config cfg;
  cfg.servers = {peer.server()};
  cfg.timeout = 500ms;
  cfg.tries = 2;
  cfg.cache.min_ttl = 0;
  return cfg;
}

std::unique_ptr<dns_resolver> make_resolver(dns_resolver_config cfg) {
  auto r = dns_resolver::create(std::move(cfg));
  REQUIRE(r.has_value());
  return std::move(*r);
}

mail_route route_of(dns_resolver& resolver, const std::string& domain) {
  auto done = std::make_shared<std::promise<mail_route>>();
  auto result = done->get_future();
  resolver.resolve_mail_route(domain,
                              [done](mail_route r) { done->set_value(r); });
  REQUIRE(result.wait_for(10s) == std::future_status::ready);
  return result.get();
}

lookup_result lookup(dns_resolver& resolver, const std::string& name,
                     record_type type) {
  auto done = std::make_shared<std::promise<lookup_result>>();
  auto result = done->get_future();
  resolver.resolve(name, type, [done](lookup_result r) { done->set_value(r); });
  REQUIRE(result.wait_for(10s) == std::future_status::ready);
  return result.get();
}

// Collects callbacks from the resolver thread.
template <class T>
struct inbox {
  std::mutex mutex;
  std::condition_variable cv;
  std::vector<T> items;

  void put(T x) {
    std::lock_guard guard{mutex};
    items.push_back(std::move(x));
    cv.notify_all();
  }

  bool wait_for(std::size_t n, std::chrono::milliseconds limit) {
    std::unique_lock lock{mutex};
    return cv.wait_for(lock, limit, [&] { return items.size() >= n; });
  }
};

// A clock the test moves by hand.
struct manual_clock {
  std::shared_ptr<std::atomic<std::int64_t>> ms =
      std::make_shared<std::atomic<std::int64_t>>(0);

  std::function<core::dns::time_point()> fn() const {
    return [ms = ms] {
      return core::dns::time_point{} + std::chrono::milliseconds{ms->load()};
    };
  }

  void advance(std::chrono::milliseconds d) const { *ms += d.count(); }
};

} // namespace

TEST_SUITE("net.dns_resolver") {
  TEST_CASE("reads PTR names and TXT texts (the egress audit's questions)") {
    dns_peer peer;
    std::string long_text(300, 'x'); // two <character-string>s on the wire
    peer.load_zone("2.0.0.127.in-addr.arpa PTR Probe.Example.IO.\n"
                   "2.0.0.127.zen.test TXT Listed by zen.test\n"
                   "2.0.0.127.zen.test TXT " +
                   long_text + "\nempty.test A 192.0.2.1\n");
    auto resolver = make_resolver(config_for(peer));
    auto ptr = lookup(*resolver, "2.0.0.127.in-addr.arpa", record_type::ptr);
    CHECK(ptr.code == rcode::ok);
    CHECK(ptr.texts == std::vector<std::string>{"probe.example.io"});
    auto txt = lookup(*resolver, "2.0.0.127.zen.test", record_type::txt);
    CHECK(txt.code == rcode::ok);
    CHECK(txt.texts ==
          std::vector<std::string>{"Listed by zen.test", long_text});
    CHECK(peer.queries("2.0.0.127.zen.test", dns_type::txt) == 1);
    CHECK(lookup(*resolver, "empty.test", record_type::txt).code ==
          rcode::nodata);
    CHECK(lookup(*resolver, "3.0.0.127.in-addr.arpa", record_type::ptr).code ==
          rcode::nxdomain);
  }

  TEST_CASE("returns MX hosts in priority order") {
    dns_peer peer;
    peer.add_mx("example.org", 20, "mx2.example.org");
    peer.add_mx("example.org", 5, "mx0.example.org");
    peer.add_mx("example.org", 10, "mx1.example.org");
    peer.set_ttl("example.org", 120);
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "Example.ORG");
    CHECK(route.kind == route_kind::mx);
    CHECK(route.hosts == std::vector<mx_record>{{"mx0.example.org", 5},
                                                {"mx1.example.org", 10},
                                                {"mx2.example.org", 20}});
    CHECK(route.ttl == 120u);
    CHECK(peer.queries("example.org", dns_type::mx) == 1);
    CHECK(peer.queries("example.org", dns_type::a) == 0);
  }

  TEST_CASE("a route names the provider of its first MX host, once per "
            "resolution (issue #30)") {
    dns_peer peer;
    peer.add_mx("gm.test", 10, "alt1.mx.prov.test");
    peer.add_mx("gm.test", 5, "MX.Prov.Test");
    peer.add_mx("mixed.test", 5, "mx.other.test");
    peer.add_mx("mixed.test", 10, "mx.prov.test");
    peer.add_a("implicit.prov.test", "127.0.0.9");
    auto cfg = config_for(peer);
    auto table = core::provider::table::parse("prov.test google mailbox\n");
    REQUIRE(table.has_value());
    cfg.providers =
        std::make_shared<const core::provider::table>(std::move(*table));
    auto resolver = make_resolver(std::move(cfg));
    auto route = route_of(*resolver, "gm.test");
    REQUIRE(route.provider.has_value());
    CHECK(route.provider->name == "google");
    CHECK(route.provider->kind == core::provider::provider_kind::mailbox);
    // From the cache, still named.
    CHECK(route_of(*resolver, "gm.test").provider == route.provider);
    // Only the first MX host decides; an implicit MX has no MX host.
    CHECK_FALSE(route_of(*resolver, "mixed.test").provider.has_value());
    auto implicit = route_of(*resolver, "implicit.prov.test");
    CHECK(implicit.kind == route_kind::implicit_mx);
    CHECK_FALSE(implicit.provider.has_value());
  }

  TEST_CASE("without a provider table no route names a provider") {
    dns_peer peer;
    peer.add_mx("gm.test", 10, "mx.prov.test");
    auto resolver = make_resolver(config_for(peer));
    CHECK_FALSE(route_of(*resolver, "gm.test").provider.has_value());
  }

  TEST_CASE("a lone MX \".\" is a null MX") {
    dns_peer peer;
    peer.add_mx("nullmx.org", 0, ".");
    peer.add_a("nullmx.org", "127.0.0.9");
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "nullmx.org");
    CHECK(route.kind == route_kind::null_mx);
    CHECK(route.hosts.empty());
    CHECK(peer.queries("nullmx.org", dns_type::a) == 0);
  }

  TEST_CASE("a domain with only an A record has an implicit MX") {
    dns_peer peer;
    peer.add_a("aonly.org", "127.0.0.5");
    peer.set_soa("aonly.org", dns_soa{600, 900});
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "aonly.org");
    CHECK(route.kind == route_kind::implicit_mx);
    CHECK(route.hosts == std::vector<mx_record>{{"aonly.org", 0}});
    CHECK(route.addresses == std::vector<std::string>{"127.0.0.5"});
    CHECK(route.ttl == 300u); // the A record's, below the SOA's 600
  }

  TEST_CASE("a domain with only an AAAA record has an implicit MX") {
    dns_peer peer;
    peer.add_aaaa("v6only.org", "2001:db8::25");
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "v6only.org");
    CHECK(route.kind == route_kind::implicit_mx);
    CHECK(route.addresses == std::vector<std::string>{"2001:db8::25"});
    CHECK(peer.queries("v6only.org", dns_type::aaaa) == 1);
  }

  TEST_CASE("a domain without MX or address has no MX") {
    dns_peer peer;
    peer.set("empty.org", {});
    peer.set_soa("empty.org", dns_soa{45, 3600});
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "empty.org");
    CHECK(route.kind == route_kind::no_mx);
    CHECK(route.ttl == 45u);
  }

  TEST_CASE("NXDOMAIN is an invalid domain with the SOA's negative TTL") {
    dns_peer peer;
    peer.set_behaviour("gone.org", dns_behaviour::nxdomain);
    peer.set_soa("gone.org", dns_soa{900, 30});
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "gone.org");
    CHECK(route.kind == route_kind::invalid_domain);
    CHECK(route.cause == rcode::nxdomain);
    CHECK(route.ttl == 30u); // min(SOA TTL, MINIMUM), RFC 2308 §5
    CHECK(route_of(*resolver, "never-configured.org").kind ==
          route_kind::invalid_domain);
  }

  TEST_CASE("SERVFAIL and REFUSED are DNS errors, never invalid") {
    dns_peer peer;
    peer.set_behaviour("broken.org", dns_behaviour::servfail);
    peer.set_behaviour("closed.org", dns_behaviour::refused);
    auto resolver = make_resolver(config_for(peer));
    auto broken = route_of(*resolver, "broken.org");
    CHECK(broken.kind == route_kind::dns_error);
    CHECK(broken.cause == rcode::servfail);
    auto closed = route_of(*resolver, "closed.org");
    CHECK(closed.kind == route_kind::dns_error);
    CHECK(closed.cause == rcode::refused);
  }

  TEST_CASE("a server that never answers gives a DNS error in time") {
    dns_peer peer;
    peer.set_behaviour("silent.org", dns_behaviour::drop);
    auto cfg = config_for(peer);
    cfg.timeout = 150ms;
    cfg.tries = 2; // 150 ms, then 300 ms (c-ares doubles each round)
    auto resolver = make_resolver(cfg);
    auto start = std::chrono::steady_clock::now();
    auto route = route_of(*resolver, "silent.org");
    auto took = std::chrono::steady_clock::now() - start;
    CHECK(route.kind == route_kind::dns_error);
    CHECK(route.cause == rcode::timeout);
    CHECK(took >= 400ms);
    CHECK(took < 1500ms);
    CHECK(peer.queries("silent.org", dns_type::mx) == 2);
  }

  TEST_CASE("a slow answer within the time-out is still an answer") {
    dns_peer peer;
    peer.add_mx("slow.org", 10, "mx.slow.org");
    peer.set_delay("slow.org", 100ms);
    auto resolver = make_resolver(config_for(peer));
    CHECK(route_of(*resolver, "slow.org").kind == route_kind::mx);
  }

  TEST_CASE("follows a CNAME chain to the MX records") {
    dns_peer peer;
    peer.set_cname("alias.org", "alias2.org");
    peer.set_ttl("alias.org", 40);
    peer.set_cname("alias2.org", "target.org");
    peer.add_mx("target.org", 10, "mx.target.org");
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "alias.org");
    CHECK(route.kind == route_kind::mx);
    CHECK(route.hosts == std::vector<mx_record>{{"mx.target.org", 10}});
    CHECK(route.ttl == 40u);
    auto a = lookup(*resolver, "alias.org", record_type::a);
    CHECK(a.code == rcode::nodata);
  }

  TEST_CASE("a CNAME to addresses gives an implicit MX") {
    dns_peer peer;
    peer.set_cname("www.site.org", "host.site.org");
    peer.add_a("host.site.org", "127.0.0.7");
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "www.site.org");
    CHECK(route.kind == route_kind::implicit_mx);
    CHECK(route.addresses == std::vector<std::string>{"127.0.0.7"});
  }

  TEST_CASE("plain lookups report records, codes and TTLs") {
    dns_peer peer;
    peer.add_a("host.org", "127.0.0.2");
    peer.add_a("host.org", "127.0.0.3");
    peer.add_aaaa("host.org", "::1");
    peer.set_ttl("host.org", 42);
    peer.set_soa("host.org", dns_soa{7, 100});
    auto resolver = make_resolver(config_for(peer));
    auto a = lookup(*resolver, "host.org", record_type::a);
    CHECK(a.code == rcode::ok);
    CHECK(a.has_a);
    CHECK(a.addresses == std::vector<std::string>{"127.0.0.2", "127.0.0.3"});
    CHECK(a.ttl == 42u);
    auto aaaa = lookup(*resolver, "host.org", record_type::aaaa);
    CHECK(aaaa.has_aaaa);
    CHECK(aaaa.addresses == std::vector<std::string>{"::1"});
    auto mx = lookup(*resolver, "host.org", record_type::mx);
    CHECK(mx.code == rcode::nodata);
    CHECK(mx.ttl == 7u);
    CHECK(lookup(*resolver, "nothing.org", record_type::a).code ==
          rcode::nxdomain);
    auto c = resolver->counters();
    CHECK(c.queries_sent == 4);
    CHECK(c.answers == 4);
    CHECK(c.failures == 0);
  }

  TEST_CASE("callbacks run on the resolver thread, not the caller's") {
    dns_peer peer;
    peer.add_mx("example.org", 10, "mx.example.org");
    auto resolver = make_resolver(config_for(peer));
    auto done = std::make_shared<std::promise<std::thread::id>>();
    auto id = done->get_future();
    resolver->resolve_mail_route("example.org", [done](mail_route) {
      done->set_value(std::this_thread::get_id());
    });
    REQUIRE(id.wait_for(5s) == std::future_status::ready);
    CHECK(id.get() != std::this_thread::get_id());
  }

  TEST_CASE("an answer too big for UDP is fetched over TCP") {
    dns_peer peer;
    for (int i = 0; i < 30; ++i)
      peer.add_mx("big.org", static_cast<std::uint16_t>(30 - i),
                  "mail-exchanger-number-" + std::to_string(i) + ".big.org");
    auto resolver = make_resolver(config_for(peer));
    auto route = route_of(*resolver, "big.org");
    CHECK(route.kind == route_kind::mx);
    REQUIRE(route.hosts.size() == 30);
    CHECK(route.hosts.front().host == "mail-exchanger-number-29.big.org");
    CHECK(peer.tcp_queries() >= 1);
  }

  TEST_CASE("a cached route sends no query until its TTL runs out") {
    dns_peer peer;
    peer.add_mx("cached.org", 10, "mx.cached.org");
    peer.set_ttl("cached.org", 60);
    manual_clock clock;
    auto cfg = config_for(peer);
    cfg.clock = clock.fn();
    auto resolver = make_resolver(cfg);
    CHECK(route_of(*resolver, "cached.org").kind == route_kind::mx);
    CHECK(route_of(*resolver, "cached.org").kind == route_kind::mx);
    CHECK(resolver->cached_route("cached.org") != nullptr);
    clock.advance(59s);
    CHECK(route_of(*resolver, "cached.org").kind == route_kind::mx);
    CHECK(peer.queries("cached.org", dns_type::mx) == 1);
    clock.advance(2s);
    CHECK_FALSE(resolver->cached_route("cached.org") != nullptr);
    CHECK(route_of(*resolver, "cached.org").kind == route_kind::mx);
    CHECK(peer.queries("cached.org", dns_type::mx) == 2);
    auto c = resolver->counters();
    CHECK(c.cache_hits == 3);
    CHECK(c.cache_misses == 2);
  }

  TEST_CASE("a 1 s TTL expires in real time") {
    dns_peer peer;
    peer.add_mx("short.org", 10, "mx.short.org");
    peer.set_ttl("short.org", 1);
    auto resolver = make_resolver(config_for(peer));
    route_of(*resolver, "short.org");
    route_of(*resolver, "short.org");
    CHECK(peer.queries("short.org", dns_type::mx) == 1);
    auto deadline = std::chrono::steady_clock::now() + 5s;
    while (peer.queries("short.org", dns_type::mx) < 2 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(100ms);
      route_of(*resolver, "short.org");
    }
    CHECK(peer.queries("short.org", dns_type::mx) == 2);
  }

  TEST_CASE("negative answers are cached for the SOA's TTL or the default") {
    dns_peer peer;
    peer.set_behaviour("gone.org", dns_behaviour::nxdomain);
    peer.set_soa("gone.org", dns_soa{5, 3600});
    peer.set_behaviour("nosoa.org", dns_behaviour::nxdomain);
    manual_clock clock;
    auto cfg = config_for(peer);
    cfg.clock = clock.fn();
    cfg.cache.negative_ttl = 20;
    auto resolver = make_resolver(cfg);
    route_of(*resolver, "gone.org");
    route_of(*resolver, "nosoa.org");
    clock.advance(4s);
    route_of(*resolver, "gone.org");
    CHECK(peer.queries("gone.org", dns_type::mx) == 1);
    clock.advance(2s);
    route_of(*resolver, "gone.org");
    CHECK(peer.queries("gone.org", dns_type::mx) == 2);
    route_of(*resolver, "nosoa.org");
    CHECK(peer.queries("nosoa.org", dns_type::mx) == 1);
    clock.advance(15s);
    route_of(*resolver, "nosoa.org");
    CHECK(peer.queries("nosoa.org", dns_type::mx) == 2);
  }

  TEST_CASE("concurrent lookups of one domain send one query set") {
    dns_peer peer;
    peer.add_mx("popular.org", 10, "mx.popular.org");
    peer.set_delay("popular.org", 200ms);
    peer.add_a("bare.org", "127.0.0.4");
    peer.set_delay("bare.org", 200ms);
    auto resolver = make_resolver(config_for(peer));
    inbox<mail_route> routes;
    std::vector<std::thread> callers;
    for (int t = 0; t < 5; ++t)
      callers.emplace_back([&] {
        for (int i = 0; i < 10; ++i) {
          resolver->resolve_mail_route(
              "popular.org", [&](mail_route r) { routes.put(std::move(r)); });
          resolver->resolve_mail_route(
              "bare.org", [&](mail_route r) { routes.put(std::move(r)); });
        }
      });
    for (auto& t : callers)
      t.join();
    REQUIRE(routes.wait_for(100, 10s));
    std::size_t mx = 0, implicit = 0;
    for (const auto& r : routes.items) {
      mx += r.kind == route_kind::mx;
      implicit += r.kind == route_kind::implicit_mx;
    }
    CHECK(mx == 50);
    CHECK(implicit == 50);
    CHECK(peer.queries("popular.org") == 1);
    CHECK(peer.queries("bare.org", dns_type::mx) == 1);
    CHECK(peer.queries("bare.org", dns_type::a) == 1);
    CHECK(peer.queries("bare.org", dns_type::aaaa) == 1);
    auto c = resolver->counters();
    CHECK(c.cache_misses == 2);
    CHECK(c.cache_joins == 98);
  }

  TEST_CASE("1000 distinct domains resolve with bounded queries in flight") {
    dns_peer peer{{"127.0.0.2", 0, true}};
    peer.add_mx("*.bench.test", 10, "mx.bench.test");
    peer.set_delay("*.bench.test", 5ms);
    auto cfg = config_for(peer);
    cfg.max_in_flight = 16;
    cfg.timeout = 2000ms;
    auto resolver = make_resolver(cfg);
    inbox<mail_route> routes;
    for (int i = 0; i < 1000; ++i) {
      std::string domain{"d"};
      domain += std::to_string(i);
      domain += ".bench.test";
      resolver->resolve_mail_route(
          domain, [&](mail_route r) { routes.put(std::move(r)); });
    }
    REQUIRE(routes.wait_for(1000, 30s));
    std::size_t mx = 0;
    for (const auto& r : routes.items)
      mx += r.kind == route_kind::mx && r.hosts.size() == 1;
    CHECK(mx == 1000);
    auto c = resolver->counters();
    CHECK(c.queries_sent == 1000);
    CHECK(c.peak_in_flight <= 16);
    CHECK(c.peak_in_flight >= 2);
    CHECK(c.queued == 0);
    CHECK(c.in_flight == 0);
    CHECK(peer.total_queries() == 1000);
    CHECK(peer.peak_delayed() <= 16);
  }

  TEST_CASE("shutdown answers pending callbacks with a time-out") {
    dns_peer peer;
    peer.set_behaviour("silent.org", dns_behaviour::drop);
    auto cfg = config_for(peer);
    cfg.timeout = 5000ms;
    auto resolver = make_resolver(cfg);
    inbox<rcode> codes;
    inbox<mail_route> routes;
    resolver->resolve("silent.org", record_type::a,
                      [&](lookup_result r) { codes.put(r.code); });
    resolver->resolve_mail_route(
        "silent.org", [&](mail_route r) { routes.put(std::move(r)); });
    std::this_thread::sleep_for(50ms);
    auto start = std::chrono::steady_clock::now();
    resolver->shutdown();
    CHECK(std::chrono::steady_clock::now() - start < 1s);
    REQUIRE(codes.wait_for(1, 1s));
    CHECK(codes.items[0] == rcode::timeout);
    REQUIRE(routes.wait_for(1, 1s));
    CHECK(routes.items[0].kind == route_kind::dns_error);
    resolver->resolve("late.org", record_type::mx,
                      [&](lookup_result r) { codes.put(r.code); });
    REQUIRE(codes.wait_for(2, 1s));
    CHECK(codes.items[1] == rcode::timeout);
  }

  TEST_CASE("rejects a malformed server list") {
    dns_resolver_config cfg;
    cfg.servers = {"not an address"};
    auto r = dns_resolver::create(cfg);
    REQUIRE_FALSE(r.has_value());
    CHECK(r.error_value().code == core::errc::validation_failed);
  }
}
