#include "actors/validation/validator.hpp"

#include "actors/smtp/prober.hpp"
#include "net/dns_resolver.hpp"

#include <algorithm>
#include <chrono>
#include <iterator>

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
  r.duration_ms =
      std::chrono::duration<double, std::milli>(clock_type::now() - started)
          .count();
}

// No DNS for what cannot be routed: bad syntax, or an IP literal.
bool routable(const core::syntax::parsed_address& a) {
  return a.valid && !a.ip_literal;
}

bool probeable(const result& r) {
  using core::dns::route_kind;
  return routable(r.address) && r.route &&
         (r.route->kind == route_kind::mx ||
          r.route->kind == route_kind::implicit_mx);
}

void record_outcome(result& r, const core::smtp::address_outcome& o) {
  r.smtp = smtp::to_smtp_facts(o);
  r.smtp_reply.host = o.host;
  r.smtp_reply.attempts = o.attempts;
  r.smtp_reply.code = o.rcpt.code;
  if (o.rcpt.enhanced)
    r.smtp_reply.enhanced = o.rcpt.enhanced->to_string();
  r.smtp_reply.message = o.rcpt.message;
}

} // namespace

// Probes `r`'s mailbox when asked and possible, charging one credit only
// when an SMTP server answered; then concludes. A check that cannot reach a
// server (bad syntax, no MX, unroutable MX) costs nothing.
void validator::finish(request req, result&& r, clock_type::time_point started,
                       result_callback done) const {
  if (!req.smtp || !smtp_.prober || !probeable(r)) {
    conclude(r, started);
    return done(std::move(r));
  }
  auto probe = [this, started](request req, result r, result_callback done) {
    smtp::probe_request pr;
    pr.domain = r.address.ascii_domain;
    pr.addresses = {r.address.local_part + "@" + r.address.ascii_domain};
    pr.route = *r.route;
    pr.budget = std::chrono::milliseconds(req.timeout_ms);
    pr.retry_deferrals = req.smtp_retry_deferrals;
    smtp_.prober->probe(
        std::move(pr), [this, started, prepaid = req.credits_prepaid,
                        org = req.organization_id, r = std::move(r),
                        done = std::move(done)](smtp::probe_result p) mutable {
          bool reached = false;
          if (!p.addresses.empty()) {
            record_outcome(r, p.addresses.front());
            reached = !p.addresses.front().host.empty();
          }
          conclude(r, started);
          if (reached)
            r.credits_used = 1;
          else if (!prepaid && smtp_.refund)
            return smtp_.refund(
                org, [r = std::move(r), done = std::move(done)]() mutable {
                  done(std::move(r));
                });
          done(std::move(r));
        });
  };
  if (req.credits_prepaid || !smtp_.reserve)
    return probe(std::move(req), std::move(r), std::move(done));
  auto org = req.organization_id;
  smtp_.reserve(org, [probe, req = std::move(req), r = std::move(r),
                      done = std::move(done),
                      started](core::expected<core::unit> ok) mutable {
    if (!ok) {
      r.refused = ok.error_value();
      conclude(r, started);
      return done(std::move(r));
    }
    probe(std::move(req), std::move(r), std::move(done));
  });
}

void validator::validate_group(
    std::vector<request> reqs,
    std::function<void(std::size_t, result&&)> done) const {
  auto started = clock_type::now();
  auto one_by_one = [this, &done](std::size_t i, request req) {
    validate(std::move(req), [done, i](result&& r) { done(i, std::move(r)); });
  };
  // Grouped also without SMTP: one route lookup (one lock of the shared
  // DNS cache) for the whole group instead of one per address.
  if (reqs.size() < 2) {
    for (std::size_t i = 0; i < reqs.size(); ++i)
      one_by_one(i, std::move(reqs[i]));
    return;
  }
  struct group {
    std::vector<std::size_t> index;
    std::vector<result> results;
    bool smtp = false;
    std::int64_t timeout_ms = 0;
    bool retry_deferrals = true;
  };
  // One probe per deferral policy: a request that must not wait for a
  // greylisting retry cannot share a probe with one that may.
  std::vector<std::shared_ptr<group>> groups;
  std::string domain;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    result r;
    check(reqs[i], r);
    if (!routable(r.address)) {
      conclude(r, started);
      done(i, std::move(r));
      continue;
    }
    if (domain.empty())
      domain = r.address.ascii_domain;
    if (r.address.ascii_domain != domain || !reqs[i].credits_prepaid) {
      one_by_one(i, std::move(reqs[i]));
      continue;
    }
    auto retry = reqs[i].smtp_retry_deferrals;
    auto same = [retry](const auto& x) { return x->retry_deferrals == retry; };
    auto found = std::find_if(groups.begin(), groups.end(), same);
    if (found == groups.end()) {
      groups.push_back(std::make_shared<group>());
      groups.back()->retry_deferrals = retry;
      found = std::prev(groups.end());
    }
    auto& g = *found;
    g->smtp = g->smtp || (reqs[i].smtp && smtp_.prober);
    g->timeout_ms = std::max(g->timeout_ms, reqs[i].timeout_ms);
    g->index.push_back(i);
    g->results.push_back(std::move(r));
  }
  if (groups.empty())
    return;
  auto routed = [this, groups, done,
                 started](std::shared_ptr<const core::dns::mail_route> route) {
    for (const auto& g : groups) {
      for (auto& r : g->results)
        r.route = route;
      if (!g->smtp || !probeable(g->results.front())) {
        for (std::size_t k = 0; k < g->results.size(); ++k) {
          conclude(g->results[k], started);
          done(g->index[k], std::move(g->results[k]));
        }
        continue;
      }
      smtp::probe_request pr;
      pr.domain = g->results.front().address.ascii_domain;
      for (auto& r : g->results)
        pr.addresses.push_back(r.address.local_part + "@" +
                               r.address.ascii_domain);
      pr.route = *route;
      pr.budget = std::chrono::milliseconds(g->timeout_ms);
      pr.retry_deferrals = g->retry_deferrals;
      smtp_.prober->probe(
          std::move(pr), [g, done, started](smtp::probe_result p) {
            for (std::size_t k = 0; k < g->results.size(); ++k) {
              auto& r = g->results[k];
              if (k < p.addresses.size()) {
                record_outcome(r, p.addresses[k]);
                if (!p.addresses[k].host.empty())
                  r.credits_used = 1;
              }
              conclude(r, started);
              done(g->index[k], std::move(r));
            }
          });
    }
  };
  if (auto cached = resolver_->cached_route(domain))
    return routed(std::move(cached));
  resolver_->resolve_mail_route(
      std::move(domain), [routed](core::dns::mail_route route) {
        routed(std::make_shared<const core::dns::mail_route>(std::move(route)));
      });
}

validator::validator(std::shared_ptr<const core::risk::lists> lists,
                     std::shared_ptr<net::dns_resolver> resolver,
                     core::syntax::options syntax)
    : lists_(std::move(lists)), resolver_(std::move(resolver)),
      syntax_(syntax) {}

void validator::check(const request& req, result& r) const {
  r.address = core::syntax::parse(req.email, syntax_);
  r.enrichment = req.toggles.enrichment;
  r.checks = core::validation::run_free_checks(*lists_, r.address, req.toggles);
}

bool validator::validate_now(const request& req, result& r) const {
  if (req.smtp)
    return false;
  auto started = clock_type::now();
  check(req, r);
  if (routable(r.address)) {
    r.route = resolver_->cached_route(r.address.ascii_domain);
    if (!r.route)
      return false;
  }
  conclude(r, started);
  return true;
}

void validator::validate(request req, result_callback done) const {
  auto started = clock_type::now();
  result r;
  check(req, r);
  if (!routable(r.address)) {
    conclude(r, started);
    return done(std::move(r));
  }
  if (auto cached = resolver_->cached_route(r.address.ascii_domain)) {
    r.route = std::move(cached);
    return finish(std::move(req), std::move(r), started, std::move(done));
  }
  auto domain = r.address.ascii_domain;
  resolver_->resolve_mail_route(
      std::move(domain),
      [this, req = std::move(req), r = std::move(r), started,
       done = std::move(done)](core::dns::mail_route route) mutable {
        r.route =
            std::make_shared<const core::dns::mail_route>(std::move(route));
        finish(std::move(req), std::move(r), started, std::move(done));
      });
}

} // namespace mailassay::actors::validation
