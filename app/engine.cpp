#include "actors/validation/validator.hpp"
#include "app/app.hpp"
#include "config/risk_files.hpp"
#include "net/dns_resolver.hpp"

#include <iostream>

namespace mailassay::app {

std::shared_ptr<net::dns_resolver>
resolver_or_exit(const config::settings& cfg) {
  auto providers = config::load_provider_table(cfg.risk);
  if (!providers) {
    std::cerr << "mailassay: " << providers.error_value().message << "\n";
    std::exit(2);
  }
  if (auto ok = config::check_provider_limits(cfg.smtp, **providers); !ok) {
    std::cerr << "mailassay: " << ok.error_value().message << "\n";
    std::exit(2);
  }
  net::dns_resolver_config dns;
  dns.providers = std::move(*providers);
  dns.servers = cfg.dns.servers;
  dns.timeout = std::chrono::milliseconds(cfg.dns.timeout_ms);
  dns.tries = cfg.dns.tries;
  dns.max_in_flight = static_cast<std::size_t>(cfg.dns.max_inflight);
  dns.cache.capacity = static_cast<std::size_t>(cfg.dns.cache_size);
  dns.cache.min_ttl = static_cast<std::uint32_t>(cfg.dns.min_ttl);
  dns.cache.max_ttl = static_cast<std::uint32_t>(cfg.dns.max_ttl);
  dns.cache.negative_ttl = static_cast<std::uint32_t>(cfg.dns.negative_ttl);
  dns.cache.error_ttl = static_cast<std::uint32_t>(cfg.dns.error_ttl);
  auto resolver = net::dns_resolver::create(std::move(dns));
  if (!resolver) {
    std::cerr << "mailassay: cannot start the DNS resolver: "
              << resolver.error_value().message << "\n";
    std::exit(2);
  }
  return std::shared_ptr<net::dns_resolver>(std::move(*resolver));
}

std::shared_ptr<actors::validation::validator>
validator_or_exit(const config::settings& cfg) {
  auto lists = config::load_risk_lists(cfg.risk);
  if (!lists) {
    std::cerr << "mailassay: " << lists.error_value().message << "\n";
    std::exit(2);
  }
  return std::make_shared<actors::validation::validator>(
      std::move(*lists), resolver_or_exit(cfg), syntax_options(cfg));
}

core::syntax::options syntax_options(const config::settings& cfg) {
  core::syntax::options syntax;
  syntax.allow_test_domains = cfg.validation.allow_test_domains;
  return syntax;
}

} // namespace mailassay::app
