#include "actors/validation/validator.hpp"

#include <chrono>

#include "net/dns_resolver.hpp"

namespace mailassay::actors::validation {

namespace {

using clock_type = std::chrono::steady_clock;

void conclude(result& r, clock_type::time_point started) {
  core::validation::facts f;
  f.address = &r.address;
  if (r.route)
    f.route = r.route->kind;
  f.disposable = r.checks.disposable;
  f.role_account = r.checks.role_account;
  f.random = r.checks.random;
  f.free_provider = r.checks.free_provider;
  f.typo = r.checks.suggested_domain.has_value();
  f.smtp = r.smtp;
  r.verdict = core::validation::decide(f);
  r.duration_ms
    = std::chrono::duration<double, std::milli>(clock_type::now() - started)
        .count();
}

} // namespace

validator::validator(std::shared_ptr<const core::risk::lists> lists,
                     std::shared_ptr<net::dns_resolver> resolver,
                     core::syntax::options syntax)
  : lists_(std::move(lists)), resolver_(std::move(resolver)), syntax_(syntax) {
}

void validator::validate(request req, std::function<void(result)> done) const {
  auto started = clock_type::now();
  result r;
  r.address = core::syntax::parse(req.email, syntax_);
  r.enrichment = req.toggles.enrichment;
  r.checks = core::validation::run_free_checks(*lists_, r.address, req.toggles);
  // No DNS for what cannot be routed: bad syntax, or an IP literal.
  if (!r.address.valid || r.address.ip_literal) {
    conclude(r, started);
    return done(std::move(r));
  }
  if (auto cached = resolver_->cached_route(r.address.ascii_domain)) {
    r.route = std::move(*cached);
    conclude(r, started);
    return done(std::move(r));
  }
  auto domain = r.address.ascii_domain;
  resolver_->resolve_mail_route(
    std::move(domain),
    [r = std::move(r), started,
     done = std::move(done)](core::dns::mail_route route) mutable {
      r.route = std::move(route);
      conclude(r, started);
      done(std::move(r));
    });
}

} // namespace mailassay::actors::validation
