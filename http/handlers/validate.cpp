#include "core/base/ascii.hpp"
#include "http/embedded_text.hpp"
#include "http/handler_support.hpp"
#include "security/digest.hpp"

#include <chrono>

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
void count_usage(const call& c, const uc::principal& who,
                 const std::string& email) {
  if (!who.key)
    return;
  auto hash = email.empty() ? std::string{}
                            : security::sha256_hex(core::ascii_lower(email));
  c.ex->on_answer([svc = c.svc, key = who.key->id, org = who.organization_id,
                   hash](int status) {
    svc->usage.record(key, org, svc->now(), status == 200, 0, hash);
  });
}

// Checks what the principal may ask for, then hands the request to a
// validation actor; the result is written from wherever it completes.
void run_validation(call c, const uc::principal& who,
                    const core::expected<codec::validation_input>& in) {
  allow_admitted_origin(c, who);
  count_usage(c, who, in ? in->email : std::string{});
  if (!in)
    return c.ex->fail(in.error_value());
  actors::validation::request req;
  req.email = in->email;
  req.timeout_ms = in->timeout_ms;
  if (who.key) {
    const auto& cfg = who.key->config;
    if (in->smtp && !cfg.smtp)
      return c.ex->fail(core::make_error(
          core::errc::forbidden,
          "SMTP verification is not enabled for this API key (config.smtp)"));
    req.toggles = {cfg.disposable, cfg.role_account, cfg.random_detection,
                   cfg.enrichment};
  }
  // Until SMTP probing lands the request is accepted and reported with
  // smtp.checked false, and no credit is charged.
  req.smtp = false;
  c.svc->validation.submit({std::move(req), [c](actors::validation::result r) {
                              c.ex->json(200,
                                         codec::validation_result(r).dump());
                            }});
}

} // namespace

// Authenticates from the key cache when possible (no storage on the hot
// path), else on a storage worker, then runs `next(call, principal)`.
template <class Next>
void with_fast_principal(call c, Next next) {
  auto creds = credentials_of(c.req());
  if (auto cached = uc::authenticate_cached(c.svc->keys, creds, c.svc->now())) {
    if (!*cached)
      return c.ex->fail(cached->error_value());
    return next(c, **cached);
  }
  with_principal(
      c, false,
      [c, next](uc::account_env&, const uc::principal& who) { next(c, who); });
}

void handle_widget_validate(call c) {
  auto in = codec::widget_validation(c.req());
  with_fast_principal(c, [in](call c, const uc::principal& who) {
    // Only a key that works from its own sites may sit in a page.
    if (!who.key || who.key->allowed_domains.empty())
      return c.ex->fail(core::make_error(
          core::errc::forbidden,
          "The widget needs an API key restricted with allowedDomains"));
    run_validation(c, who, in);
  });
}

void handle_widget_script(call c) {
  c.ex->respond(response{200,
                         std::string{widget_script()},
                         "application/javascript; charset=utf-8",
                         {{"Cache-Control", "public, max-age=300"}}});
}

void handle_validate(call c) {
  // The per-IP window is checked before anything else, so a flood of bad
  // credentials costs no storage lookups.
  actors::limit_check check;
  check.ip = actors::ip_scope{c.req().client_ip, std::nullopt};
  check.now = std::chrono::duration_cast<core::limits::millis>(
      std::chrono::steady_clock::now().time_since_epoch());
  c.svc->limiter.check(std::move(check), [c](actors::limit_decision d) {
    c.ex->set_rate({d.limit, d.remaining, d.reset_seconds});
    if (!d.allowed) {
      auto e = core::make_error(
          core::errc::rate_limited,
          "Too many requests from this IP, please try again later");
      e.retry_after = d.retry_after_seconds;
      return c.ex->fail(e);
    }
    auto in = codec::validation(c.req());
    with_fast_principal(c, [in](call c, const uc::principal& who) {
      run_validation(c, who, in);
    });
  });
}

} // namespace mailassay::http
