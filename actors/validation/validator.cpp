#include "actors/validation/validator.hpp"

#include "core/validation/sandbox.hpp"
#include "net/dns_resolver.hpp"

#include <chrono>
#include <map>
#include <utility>

namespace mailassay::actors::validation {

validator::validator(std::shared_ptr<const core::risk::lists> lists,
                     std::shared_ptr<net::dns_resolver> resolver,
                     core::syntax::options syntax)
    : lists_(std::move(lists)), resolver_(std::move(resolver)),
      syntax_(syntax) {}

void validator::prepare(const request& req, result& r) const {
  r.address = core::syntax::parse(req.email, syntax_);
  r.enrichment = req.toggles.enrichment;
  // core keeps no state: the memo of domain facts belongs to the thread
  // that validates (HTTP loops, pipeline actors, the CLI), one per thread.
  thread_local core::validation::domain_memo memo;
  r.checks =
      core::validation::run_free_checks(*lists_, r.address, req.toggles, memo);
}

// No DNS for what cannot be routed: bad syntax, or an IP literal.
bool validator::routable(const result& r) {
  return r.address.valid && !r.address.ip_literal;
}

void validator::conclude(result& r, clock_type::time_point started) {
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
  r.duration_ms =
      std::chrono::duration<double, std::milli>(clock_type::now() - started)
          .count();
}

void validator::answer_sandbox(result& r, clock_type::time_point started) {
  r.sandbox = true;
  // Bad syntax and IP literals are answered as they would be live: they
  // never reach DNS or SMTP there either.
  if (routable(r)) {
    namespace v = core::validation;
    auto a = v::sandbox_answer_of(v::sandbox_case_of(r.address.local_part));
    r.route = std::make_shared<const core::dns::mail_route>(std::move(a.route));
    r.smtp = a.smtp;
    r.smtp_reply = {std::string{a.reply.host}, a.reply.attempts, a.reply.code,
                    std::string{a.reply.enhanced},
                    std::string{a.reply.message}};
  }
  r.credits_used = 0;
  conclude(r, started);
}

bool validator::validate_now(const request& req, result& r) const {
  if (req.sandbox) {
    auto started = start_of(req);
    prepare(req, r);
    answer_sandbox(r, started);
    return true;
  }
  if (req.smtp)
    return false;
  auto started = start_of(req);
  prepare(req, r);
  if (routable(r)) {
    r.route = resolver_->cached_route(r.address.ascii_domain);
    if (!r.route)
      return false;
  }
  conclude(r, started);
  return true;
}

void validator::finish_free(result&& r, clock_type::time_point started,
                            result_callback done) const {
  if (!routable(r)) {
    conclude(r, started);
    return done(std::move(r));
  }
  if (auto cached = resolver_->cached_route(r.address.ascii_domain)) {
    r.route = std::move(cached);
    conclude(r, started);
    return done(std::move(r));
  }
  auto domain = r.address.ascii_domain;
  resolver_->resolve_mail_route(
      std::move(domain), [r = std::move(r), started, done = std::move(done)](
                             core::dns::mail_route route) mutable {
        r.route =
            std::make_shared<const core::dns::mail_route>(std::move(route));
        conclude(r, started);
        done(std::move(r));
      });
}

void validator::validate(request req, result_callback done) const {
  if (req.sandbox) {
    auto started = start_of(req);
    result r;
    prepare(req, r);
    answer_sandbox(r, started);
    return done(std::move(r));
  }
  auto started = start_of(req);
  result r;
  prepare(req, r);
  finish_free(std::move(r), started, std::move(done));
}

void validator::validate_group(std::vector<request> reqs,
                               group_callback done) const {
  auto started = clock_type::now();
  // One route lookup per domain (one lock of the shared DNS
  // cache) instead of one per address.
  std::map<std::string, std::vector<std::pair<std::size_t, result>>> free;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    result r;
    prepare(reqs[i], r);
    if (reqs[i].sandbox) {
      answer_sandbox(r, started);
      done(i, std::move(r));
      continue;
    }
    if (!routable(r)) {
      conclude(r, started);
      done(i, std::move(r));
      continue;
    }
    auto domain = r.address.ascii_domain;
    free[domain].emplace_back(i, std::move(r));
  }
  for (auto& [domain, group] : free) {
    auto shared = std::make_shared<std::vector<std::pair<std::size_t, result>>>(
        std::move(group));
    auto routed = [shared, done, started](
                      std::shared_ptr<const core::dns::mail_route> route) {
      for (auto& [i, r] : *shared) {
        r.route = route;
        conclude(r, started);
        done(i, std::move(r));
      }
    };
    if (auto cached = resolver_->cached_route(domain)) {
      routed(std::move(cached));
      continue;
    }
    resolver_->resolve_mail_route(domain, [routed](
                                              core::dns::mail_route route) {
      routed(std::make_shared<const core::dns::mail_route>(std::move(route)));
    });
  }
}

} // namespace mailassay::actors::validation
