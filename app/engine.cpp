#include "actors/validation/validator.hpp"
#include "app/app.hpp"
#include "config/risk_files.hpp"
#include "net/dns_resolver.hpp"

#include <iostream>

namespace mailassay::app {

namespace {

// Prints `e` as the start-up error it is and exits 2: for the commands that
// have started no thread yet (`serve` returns instead).
[[noreturn]] void exit_with(const core::error& e) {
  std::cerr << "mailassay: " << e.message << "\n";
  std::exit(2);
}

} // namespace

core::expected<std::shared_ptr<net::dns_resolver>>
make_resolver(const config::settings& cfg) {
  auto providers = config::load_provider_table(cfg.risk);
  if (!providers)
    return std::move(providers).error_value();
  if (auto ok = config::check_provider_limits(cfg.smtp, **providers); !ok)
    return std::move(ok).error_value();
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
    auto e = std::move(resolver).error_value();
    e.message = "cannot start the DNS resolver: " + e.message;
    return e;
  }
  return std::shared_ptr<net::dns_resolver>(std::move(*resolver));
}

std::shared_ptr<net::dns_resolver>
resolver_or_exit(const config::settings& cfg) {
  auto made = make_resolver(cfg);
  if (!made)
    exit_with(made.error_value());
  return std::move(*made);
}

core::expected<std::shared_ptr<actors::validation::validator>>
make_validator(const config::settings& cfg) {
  auto lists = config::load_risk_lists(cfg.risk);
  if (!lists)
    return std::move(lists).error_value();
  auto resolver = make_resolver(cfg);
  if (!resolver)
    return std::move(resolver).error_value();
  return std::make_shared<actors::validation::validator>(
      std::move(*lists), std::move(*resolver), syntax_options(cfg));
}

std::shared_ptr<actors::validation::validator>
validator_or_exit(const config::settings& cfg) {
  auto made = make_validator(cfg);
  if (!made)
    exit_with(made.error_value());
  return std::move(*made);
}

core::syntax::options syntax_options(const config::settings& cfg) {
  core::syntax::options syntax;
  syntax.allow_test_domains = cfg.validation.allow_test_domains;
  return syntax;
}

} // namespace mailassay::app
