#include "http/codec/validation.hpp"
#include "http/embedded_text.hpp"
#include "http/handler_support.hpp"
#include "http/rate_limit.hpp"

namespace mailassay::http {

namespace uc = actors::accounts;

namespace {

// A domain-restricted key admitted this request's origin: let the page
// read the answer.
void allow_admitted_origin(const call& c, const uc::principal& who) {
  if (who.key && !who.key->allowed_domains.empty())
    if (auto origin = c.req().header("Origin"))
      c.ex->allow_origin(std::string{*origin});
}

// Every request made with an API key counts in its usage, whatever its
// answer; `successful` means answered 200 (docs/usage-stats.md).
void count_usage(const call& c, const uc::principal& who, std::string email) {
  if (!who.key || !c.svc->cfg.limits.enabled)
    return;
  c.ex->record_usage(who.key, std::move(email));
}

// Checks what the principal may ask for, then hands the request to a
// validation actor; the result is written from wherever it completes.
void run_validation(const call& c, const uc::principal& who,
                    core::expected<codec::validation_input> in) {
  allow_admitted_origin(c, who);
  if (!in) {
    count_usage(c, who, {});
    return c.ex->fail(in.error_value());
  }
  actors::validation::request req;
  req.email = std::move(in->email);
  req.timeout_ms = in->timeout_ms;
  if (who.key) {
    const auto& cfg = who.key->config;
    if (in->smtp && !cfg.smtp) {
      count_usage(c, who, std::move(req.email));
      return c.ex->fail(core::make_error(
          core::errc::forbidden,
          "SMTP verification is not enabled for this API key (config.smtp)"));
    }
    req.toggles = {cfg.disposable, cfg.role_account, cfg.random_detection,
                   cfg.enrichment};
  }
  // A test key's sandbox: no DNS, no SMTP, no credit; the local part picks
  // the answer (core/validation/sandbox.hpp).
  req.sandbox = who.sandbox();
  // The probe costs one credit, reserved before it and given back when no
  // SMTP server answered (docs/smtp.md); 402 when the balance is short.
  req.smtp = in->smtp;
  if (req.smtp)
    req.organization_id = who.organization_id();
  auto answer = [](const call& c, const actors::validation::result& r) {
    if (r.refused)
      return c.ex->fail(*r.refused);
    c.ex->json(200, codec::validation_result_text(r));
  };
  // Most answers need no waiting: no callback to build for them, and the
  // address moves on into the usage record.
  if (actors::validation::result now;
      c.svc->validation.validate_now(req, now)) {
    count_usage(c, who, std::move(req.email));
    return answer(c, now);
  }
  count_usage(c, who, req.email);
  c.svc->validation.submit(
      {std::move(req),
       [c, answer](actors::validation::result&& r) { answer(c, r); }});
}

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
                 d.refused_by == "device"
                     ? "Too many validation requests from this device, "
                       "please try again later"
                     : "Too many validation requests from this IP, please "
                       "try again later",
                 d);
}

// The tighter of two allowed decisions (docs/rate-limits.md).
const actors::limit_decision& tighter_of(const actors::limit_decision& a,
                                         const actors::limit_decision& b) {
  if (a.reported.empty())
    return b;
  if (b.reported.empty())
    return a;
  core::limits::decision da{true, a.limit, a.remaining, a.reset_seconds, 0};
  core::limits::decision db{true, b.limit, b.remaining, b.reset_seconds, 0};
  return core::limits::tighter(db, da) ? b : a;
}

// The principal the key cache found for a request, if it could decide.
using cached_t = std::optional<core::expected<uc::principal>>;

// The rest of `admit`, once the endpoint's scopes were decided (`first`):
// the refusal, or authentication and then `next(c, who)`.
template <class Refusal, class Next>
void admitted(const call& c, const cached_t& cached, bool enabled,
              const actors::limit_decision& first, Refusal refused, Next next) {
  if (enabled) {
    c.ex->set_rate(headers_of(first));
    if (!first.allowed) {
      if (first.refused_by != "key")
        return c.ex->fail(refused(first));
      count_usage(c, **cached, {});
      return c.ex->fail(key_refusal(first));
    }
  }
  if (cached) {
    if (!*cached)
      return c.ex->fail(cached->error_value());
    return next(c, **cached);
  }
  with_principal(
      c, false,
      [c, enabled, first, next](uc::account_env&, const uc::principal& who) {
        allow_admitted_origin(c, who);
        if (!enabled || !who.key || !has_windows(who.key->limits))
          return next(c, who);
        actors::limit_check k;
        k.key = key_scope_of(*who.key);
        k.now = steady_millis();
        decide(*c.svc, k,
               [c, first, who, next](const actors::limit_decision& d) {
                 if (!d.allowed) {
                   c.ex->set_rate(headers_of(d));
                   count_usage(c, who, {});
                   return c.ex->fail(key_refusal(d));
                 }
                 c.ex->set_rate(headers_of(tighter_of(first, d)));
                 next(c, who);
               });
      });
}

// Admits a request to a validation endpoint, then runs `next(c, who)`.
//
// One limiter check covers the endpoint's own scopes (`check`: the validate
// per-IP window, or the widget's device and IP windows) and the API key's
// windows when the key cache authenticates the request. It comes before
// any storage lookup, so a flood of bad credentials is held by the per-IP
// window and a cached key needs none. When the cache cannot decide (a JWT,
// or a key not loaded yet), storage authenticates after the endpoint's
// scopes were taken, and the key's windows are checked then
// (docs/rate-limits.md). Limits kept in this process are checked on this
// thread; shared ones (Redis) continue when Redis answers.
template <class Refusal, class Next>
void admit(const call& c, actors::limit_check check, Refusal refused,
           Next next) {
  auto cached = cached_principal(*c.svc, c.req());
  const bool enabled = c.svc->cfg.limits.enabled;
  const uc::principal* who = cached && *cached ? &**cached : nullptr;
  // A page reads its 429 too, when its key admitted the origin.
  if (who)
    allow_admitted_origin(c, *who);
  if (!enabled)
    return admitted(c, cached, false, {}, refused, next);
  if (who && who->key && has_windows(who->key->limits))
    check.key = key_scope_of(*who->key);
  if (!c.svc->shared_limits)
    return admitted(c, cached, true, c.svc->limiter.check(check), refused,
                    next);
  // The continuation holds the principal (and its key) until Redis answers.
  c.svc->shared_limits->check(
      check, [c, cached, refused, next](const actors::limit_decision& d) {
        admitted(c, cached, true, d, refused, next);
      });
}

} // namespace

void handle_widget_validate(call c) {
  const auto& limits = c.svc->cfg.limits;
  actors::limit_check check;
  if (auto device = device_id_of(c.req()))
    check.device = actors::widget_scope{std::move(*device),
                                        limits.widget_device_per_minute,
                                        core::limits::minute};
  check.widget_ip = actors::widget_scope{
      c.req().client_ip, limits.widget_ip_per_minute, core::limits::minute};
  check.now = steady_millis();
  admit(c, std::move(check), widget_refusal,
        [](const call& c, const uc::principal& who) {
          // Only a key that works from its own sites may sit in a page.
          if (!who.key || who.key->allowed_domains.empty())
            return c.ex->fail(core::make_error(
                core::errc::forbidden,
                "The widget needs an API key restricted with allowedDomains"));
          run_validation(c, who, codec::widget_validation(c.req()));
        });
}

void handle_widget_script(call c) {
  c.ex->respond(response{200,
                         std::string{widget_script()},
                         "application/javascript; charset=utf-8",
                         {{"Cache-Control", "public, max-age=300"}}});
}

void handle_validate(call c) {
  actors::limit_check check;
  check.ip = actors::ip_scope{c.req().client_ip, std::nullopt};
  check.now = steady_millis();
  admit(c, std::move(check), ip_refusal,
        [](const call& c, const uc::principal& who) {
          run_validation(c, who, codec::validation(c.req()));
        });
}

} // namespace mailassay::http
