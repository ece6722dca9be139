// DNS-bound validation throughput: validates generated addresses over a few
// thousand distinct domains through actors::validation::validator (the
// pipeline the service and `mailassay check` use) with net::dns_resolver
// pointed at the project's DNS peer, started in-process on 127.0.0.1 with
// wildcard zones. At most `window` validations are in flight at once.
//
// What it shows: the shared cache and single flight make the number of DNS
// queries track distinct domains x query types, not addresses.
//
//   dns_bench [--addresses 200000] [--domains 5000] [--window 1000]
//             [--source-dir DIR]
//
// Domains (deterministic, shuffled into the address stream):
//   70%  dN.mx.bench.test    wildcard MX            -> route mx, 1 query
//   20%  dN.a.bench.test     wildcard A, no MX      -> implicit_mx, 3 queries
//                                                      (MX nodata, A, AAAA)
//   10%  dN.nx.bench.test    no entry               -> invalid_domain, 1 query
// Expected queries = mx + 3 x implicit + nx domains.

#include "bench_support.hpp"

#include "actors/validation/validator.hpp"
#include "config/risk_files.hpp"
#include "config/settings.hpp"
#include "net/dns_resolver.hpp"
#include "tests/peers/dns_peer.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <latch>
#include <map>
#include <semaphore>
#include <string>
#include <vector>

#ifndef MAILASSAY_SOURCE_DIR
#define MAILASSAY_SOURCE_DIR "."
#endif

namespace dns = mailassay::core::dns;
namespace val = mailassay::actors::validation;
using mailassay::tests::peers::dns_peer;

namespace {

using generator = mailassay::bench::xorshift;

const char* const first_names[] = {
    "anna", "ben",    "chloe",  "david", "emma", "farid", "grace",
    "hugo", "ines",   "jonas",  "keiko", "liam", "maria", "noah",
    "olga", "pierre", "quinn",  "rosa",  "sven", "tomas", "ursula",
    "vik",  "wen",    "xavier", "yuki",  "zofia"};
const char* const last_names[] = {
    "smith",  "garcia", "mueller", "rossi",   "kowalski", "tanaka", "nguyen",
    "dubois", "silva",  "jensen",  "ivanova", "okafor",   "brown",  "haddad"};
const char* const roles[] = {"info", "sales", "support", "admin", "contact"};

std::string domain_of(std::size_t i, std::size_t domains) {
  // First 70% MX, next 20% implicit MX, last 10% NXDOMAIN. Appending (not
  // "d" + to_string) also keeps GCC 12's -Wrestrict false positive away.
  auto mx_end = domains * 7 / 10, a_end = domains * 9 / 10;
  std::string name = "d";
  name += std::to_string(i);
  name += i < mx_end  ? ".mx.bench.test"
          : i < a_end ? ".a.bench.test"
                      : ".nx.bench.test";
  return name;
}

std::string local_part(generator& g) {
  auto pick = g.below(10);
  std::string first = first_names[g.below(std::size(first_names))];
  std::string last = last_names[g.below(std::size(last_names))];
  if (pick == 0)
    return roles[g.below(std::size(roles))];
  if (pick < 5)
    return first + "." + last;
  if (pick < 8)
    return first + std::to_string(g.below(2000));
  return first.substr(0, 1) + last + "+news";
}

int usage() {
  std::fprintf(stderr, "usage: dns_bench [--addresses N] [--domains N] "
                       "[--window N] [--source-dir DIR]\n");
  return 2;
}

struct pass_result {
  double seconds = 0;
  std::map<std::string, std::size_t> routes; // route kind -> addresses
};

// Validates every address with at most `window` in flight.
pass_result run_pass(const val::validator& v,
                     const std::vector<std::string>& addresses,
                     std::ptrdiff_t window) {
  std::counting_semaphore<> slots{window};
  std::latch finished{static_cast<std::ptrdiff_t>(addresses.size())};
  std::atomic<std::size_t> kinds[6] = {};
  auto started = std::chrono::steady_clock::now();
  for (const auto& a : addresses) {
    slots.acquire();
    val::request req;
    req.email = a;
    // `done` runs inline on a cache hit, else on the resolver thread.
    v.validate(std::move(req), [&](val::result r) {
      if (r.route)
        kinds[static_cast<int>(r.route->kind)]++;
      slots.release();
      finished.count_down();
    });
  }
  finished.wait();
  pass_result out;
  out.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  for (int k = 0; k < 6; ++k)
    if (auto n = kinds[k].load())
      out.routes[std::string{dns::to_string(static_cast<dns::route_kind>(k))}] =
          n;
  return out;
}

void print_routes(const pass_result& p) {
  std::printf("  routes:");
  for (const auto& [kind, n] : p.routes)
    std::printf(" %s=%zu", kind.c_str(), n);
  std::printf("\n");
}

} // namespace

int main(int argc, char** argv) {
  std::size_t address_count = 200000, domain_count = 5000;
  std::ptrdiff_t window = 1000;
  std::string source_dir = MAILASSAY_SOURCE_DIR;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (i + 1 >= argc)
      return usage();
    if (arg == "--addresses")
      address_count = std::stoul(argv[++i]);
    else if (arg == "--domains")
      domain_count = std::stoul(argv[++i]);
    else if (arg == "--window")
      window = std::stol(argv[++i]);
    else if (arg == "--source-dir")
      source_dir = argv[++i];
    else
      return usage();
  }
  if (domain_count < 10 || address_count < domain_count || window < 1)
    return usage();

  dns_peer peer; // 127.0.0.1, free port, UDP + TCP
  peer.load_zone("*.mx.bench.test 3600 MX 10 mx.bench.test\n"
                 "*.a.bench.test 3600 A 127.0.0.2\n");

  // Every domain at least once, then random picks, then shuffled.
  generator g;
  std::vector<std::string> addresses;
  addresses.reserve(address_count);
  for (std::size_t i = 0; i < address_count; ++i) {
    auto d = i < domain_count ? i : g.below(domain_count);
    addresses.push_back(local_part(g) + "@" + domain_of(d, domain_count));
  }
  for (std::size_t i = addresses.size() - 1; i > 0; --i)
    std::swap(addresses[i], addresses[g.below(i + 1)]);
  auto mx_domains = domain_count * 7 / 10;
  auto a_domains = domain_count * 9 / 10 - mx_domains;
  auto nx_domains = domain_count - mx_domains - a_domains;
  auto expected_queries = mx_domains + 3 * a_domains + nx_domains;

  mailassay::config::settings cfg; // service defaults
  cfg.risk.data_dir = source_dir + "/data/risk";
  auto lists = mailassay::config::load_risk_lists(cfg.risk);
  if (!lists) {
    std::fprintf(stderr, "dns_bench: %s\n",
                 lists.error_value().message.c_str());
    return 1;
  }
  mailassay::net::dns_resolver_config rc;
  rc.servers = {peer.server()};
  rc.timeout = std::chrono::milliseconds(cfg.dns.timeout_ms);
  rc.tries = cfg.dns.tries;
  rc.max_in_flight = static_cast<std::size_t>(cfg.dns.max_inflight);
  rc.cache.capacity = static_cast<std::size_t>(cfg.dns.cache_size);
  rc.cache.min_ttl = static_cast<std::uint32_t>(cfg.dns.min_ttl);
  rc.cache.max_ttl = static_cast<std::uint32_t>(cfg.dns.max_ttl);
  rc.cache.negative_ttl = static_cast<std::uint32_t>(cfg.dns.negative_ttl);
  rc.cache.error_ttl = static_cast<std::uint32_t>(cfg.dns.error_ttl);
  auto resolver = mailassay::net::dns_resolver::create(std::move(rc));
  if (!resolver) {
    std::fprintf(stderr, "dns_bench: resolver: %s\n",
                 resolver.error_value().message.c_str());
    return 1;
  }
  std::shared_ptr<mailassay::net::dns_resolver> shared{std::move(*resolver)};
  mailassay::core::syntax::options syntax;
  syntax.allow_test_domains = true; // the zones live under .test
  val::validator v{std::move(*lists), shared, syntax};

  std::printf("dns_bench: %zu addresses, %zu domains (%zu MX, %zu implicit "
              "MX, %zu NXDOMAIN), window %td, peer %s\n",
              address_count, domain_count, mx_domains, a_domains, nx_domains,
              window, peer.server().c_str());

  auto cold = run_pass(v, addresses, window);
  auto c = shared->counters();
  auto received = peer.total_queries();
  std::printf("pass 1 (cold cache): %.3f s, %.0f addresses/s\n", cold.seconds,
              static_cast<double>(address_count) / cold.seconds);
  print_routes(cold);
  std::printf("  DNS queries received by the peer: %zu (expected %zu = "
              "%zu MX + 3 x %zu implicit + %zu NX domains; %zu over TCP)\n",
              received, expected_queries, mx_domains, a_domains, nx_domains,
              peer.tcp_queries());
  std::printf(
      "  resolver: queries_sent=%llu failures=%llu route_requests=%llu "
      "cache_hits=%llu cache_misses=%llu cache_joins=%llu "
      "peak_in_flight=%llu\n",
      (unsigned long long)c.queries_sent, (unsigned long long)c.failures,
      (unsigned long long)c.route_requests, (unsigned long long)c.cache_hits,
      (unsigned long long)c.cache_misses, (unsigned long long)c.cache_joins,
      (unsigned long long)c.peak_in_flight);

  auto warm = run_pass(v, addresses, window);
  std::printf("pass 2 (warm cache): %.3f s, %.0f addresses/s, %zu new "
              "queries\n",
              warm.seconds, static_cast<double>(address_count) / warm.seconds,
              peer.total_queries() - received);
  print_routes(warm);

  shared->shutdown();
  peer.stop();
  bool ok = received == expected_queries && c.failures == 0;
  std::printf("queries per domain: %.2f, queries per address: %.4f -> %s\n",
              static_cast<double>(received) / domain_count,
              static_cast<double>(received) / address_count,
              ok ? "OK (one query set per domain)" : "CHECK");
  return ok ? 0 : 1;
}
