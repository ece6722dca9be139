#include "http/admission.hpp"

#include "http/services.hpp"

#include <utility>

namespace mailassay::http {

namespace uc = use_cases::accounts;

core::error file_too_large(const services& svc) {
  return core::make_error(core::errc::payload_too_large,
                          "The file is larger than the limit of " +
                              std::to_string(svc.cfg.batch.max_file_bytes) +
                              " bytes");
}

core::error body_refusal(const services& svc, const route* r) {
  if (r && r->traits == route_traits::file_upload)
    return file_too_large(svc);
  return core::make_error(core::errc::payload_too_large,
                          "Request body exceeds the limit of " +
                              std::to_string(hard_body_limit) + " bytes");
}

std::optional<core::error> widget_key_refusal(const uc::principal& who) {
  if (who.key && !who.key->allowed_domains.empty())
    return std::nullopt;
  return core::make_error(
      core::errc::forbidden,
      "The widget needs an API key restricted with allowedDomains");
}

void allow_admitted_origin(const call& c, const uc::principal& who) {
  if (who.key && !who.key->allowed_domains.empty())
    if (auto origin = c.req().header("Origin"))
      c.ex->allow_origin(std::string{*origin});
}

void count_usage(const call& c, const uc::principal& who, std::string email) {
  if (!who.key || !c.svc->cfg.limits.enabled)
    return;
  c.ex->record_usage(who.key, std::move(email));
}

namespace {

const char* period_name(core::limits::millis period) {
  if (period == core::limits::hour)
    return "hour";
  if (period == core::limits::day)
    return "day";
  return "minute";
}

core::error refusal(core::errc code, std::string message,
                    const actors::limit_decision& d) {
  auto e = core::make_error(code, std::move(message));
  e.retry_after = d.retry_after_seconds;
  return e;
}

} // namespace

core::error key_refusal(const actors::limit_decision& d) {
  auto per = period_name(d.period);
  return refusal(core::errc::rate_limited,
                 std::string{"API key per-"} + per + " rate limit exceeded (" +
                     std::to_string(d.limit) + " requests per " + per +
                     "), please try again later",
                 d);
}

core::error ip_refusal(const actors::limit_decision& d) {
  return refusal(core::errc::rate_limited,
                 "Too many requests from this IP, please try again later", d);
}

core::error widget_refusal(const actors::limit_decision& d) {
  return refusal(core::errc::widget_rate_limited,
                 d.refused_by == actors::limit_scope::device
                     ? "Too many validation requests from this device, "
                       "please try again later"
                     : "Too many validation requests from this IP, please "
                       "try again later",
                 d);
}

const actors::limit_decision& tighter_of(const actors::limit_decision& a,
                                         const actors::limit_decision& b) {
  if (a.reported == actors::limit_scope::none)
    return b;
  if (b.reported == actors::limit_scope::none)
    return a;
  core::limits::decision da{true, a.limit, a.remaining, a.reset_seconds, 0};
  core::limits::decision db{true, b.limit, b.remaining, b.reset_seconds, 0};
  return core::limits::tighter(db, da) ? b : a;
}

void admit(admission& a) {
  const auto& svc = *a.c.svc;
  a.enabled = svc.cfg.limits.enabled;
  a.cached = cached_principal(svc, a.c.req());
  limit_endpoint(a);
}

namespace {

// The endpoint's decision taken: 429 or on.
void endpoint_decided(admission& a, const actors::limit_decision& d) {
  // Answered while Redis decided (its deadline): nothing more to do.
  if (a.c.ex->answered())
    return;
  a.first = d;
  const auto& c = a.c;
  c.ex->set_rate(headers_of(d));
  if (!d.allowed) {
    if (d.refused_by != actors::limit_scope::key)
      return c.ex->fail(a.refused(d));
    count_usage(c, **a.cached, {});
    return c.ex->fail(key_refusal(d));
  }
  authenticate(a);
}

// The key's decision taken: 429 or run.
void key_decided(admission& a, const uc::principal& who,
                 const actors::limit_decision& d) {
  const auto& c = a.c;
  if (c.ex->answered())
    return;
  if (!d.allowed) {
    c.ex->set_rate(headers_of(d));
    count_usage(c, who, {});
    return c.ex->fail(key_refusal(d));
  }
  c.ex->set_rate(headers_of(tighter_of(a.first, d)));
  a.run(c, who);
}

} // namespace

void limit_endpoint(admission& a) {
  const auto& c = a.c;
  const uc::principal* who = a.cached && *a.cached ? &**a.cached : nullptr;
  // A page reads its 429 too, when its key admitted the origin.
  if (who)
    allow_admitted_origin(c, *who);
  if (!a.enabled)
    return authenticate(a);
  if (who && who->key && has_windows(who->key->limits))
    a.check.key = key_scope_of(*who->key);
  // Kept in this process: decided on this thread.
  if (!c.svc->shared_limits)
    return endpoint_decided(a, c.svc->limiter.check(a.check));
  // Shared through Redis: its answer comes on Redis's thread and resumes
  // at home.
  auto held = std::make_shared<admission>(std::move(a));
  held->c.svc->shared_limits->check(
      held->check, [held](const actors::limit_decision& d) {
        held->c.ex->resume([held, d] { endpoint_decided(*held, d); });
      });
}

void authenticate(admission& a) {
  const auto& c = a.c;
  if (a.cached) {
    if (!*a.cached)
      return c.ex->fail(a.cached->error_value());
    // The first step checked a cached key's windows already.
    return a.run(c, **a.cached);
  }
  auto held = std::make_shared<admission>(std::move(a));
  with_caller(held->c, callers::validation,
              [held](uc::account_env&, const uc::principal& who) {
                held->c.ex->resume([held, who] {
                  if (!held->c.ex->answered())
                    limit_key(*held, who);
                });
              });
}

void limit_key(admission& a, const uc::principal& who) {
  const auto& c = a.c;
  allow_admitted_origin(c, who);
  if (!a.enabled || !who.key || !has_windows(who.key->limits))
    return a.run(c, who);
  actors::limit_check k;
  k.key = key_scope_of(*who.key);
  k.now = steady_millis();
  if (!c.svc->shared_limits)
    return key_decided(a, who, c.svc->limiter.check(k));
  auto held = std::make_shared<admission>(std::move(a));
  held->c.svc->shared_limits->check(
      k, [held, who](const actors::limit_decision& d) {
        held->c.ex->resume([held, who, d] { key_decided(*held, who, d); });
      });
}

} // namespace mailassay::http
