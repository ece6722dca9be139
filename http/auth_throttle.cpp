#include "http/auth_throttle.hpp"

#include "core/base/ascii.hpp"
#include "http/rate_limit.hpp"
#include "http/services.hpp"

#include <algorithm>

namespace mailassay::http {

namespace {

core::error too_many(std::string message, std::int64_t retry_after) {
  auto e = core::make_error(core::errc::rate_limited, std::move(message));
  e.retry_after = std::max<std::int64_t>(1, retry_after);
  return e;
}

} // namespace

void admit_signup(const call& c, std::function<void()> next) {
  const auto& limits = c.svc->cfg.limits;
  if (!limits.enabled)
    return next();
  actors::limit_check check;
  check.signup_ip = actors::window_scope{
      c.req().client_ip, limits.signup_ip_per_hour, core::limits::hour};
  check.now = steady_millis();
  decide_at_home(c.ex, *c.svc, check,
                 [c, next = std::move(next)](const actors::limit_decision& d) {
                   if (d.reported != actors::limit_scope::none)
                     c.ex->set_rate(headers_of(d));
                   if (d.allowed)
                     return next();
                   c.ex->fail(too_many(
                       "Too many sign-ups from this IP, please try again later",
                       d.retry_after_seconds));
                 });
}

namespace {

// The login's two readings: the IP window's decision (a token taken) and
// the account's window as it stands (nothing taken).
void login_decided(
    const call& c, const actors::window_scope& account,
    const actors::limit_decision& ip, const actors::limit_decision& failures,
    const std::function<void(const actors::window_scope&)>& next) {
  if (ip.reported != actors::limit_scope::none)
    c.ex->set_rate(headers_of(ip));
  if (!ip.allowed)
    return c.ex->fail(
        too_many("Too many login attempts from this IP, please try again later",
                 ip.retry_after_seconds));
  if (account.limit <= 0 || failures.remaining >= 1)
    return next(account);
  c.ex->set_rate(headers_of(failures));
  // Less than one token left: the next comes within period / limit.
  auto per_token_ms =
      (account.period.count() + account.limit - 1) / account.limit;
  c.ex->fail(too_many("Too many failed logins for this account, please try "
                      "again later",
                      (per_token_ms + 999) / 1000));
}

} // namespace

void admit_login(const call& c, std::string_view email,
                 std::function<void(const actors::window_scope&)> next) {
  const auto& limits = c.svc->cfg.limits;
  actors::window_scope account{
      core::ascii_lower(email),
      limits.enabled ? limits.login_account_per_hour.get() : 0,
      core::limits::hour};
  if (!limits.enabled)
    return next(account);
  actors::limit_check ip;
  ip.login_ip = actors::window_scope{
      c.req().client_ip, limits.login_ip_per_minute, core::limits::minute};
  ip.now = steady_millis();
  actors::limit_check failures;
  if (account.limit > 0)
    failures.login_account = account;
  failures.now = ip.now;
  if (!c.svc->shared_limits) {
    auto d = c.svc->limiter.check(ip);
    // Refused by the IP: the account's window is not read.
    auto f = d.allowed && account.limit > 0 ? c.svc->limiter.peek(failures)
                                            : actors::limit_decision{};
    return login_decided(c, account, d, f, next);
  }
  c.svc->shared_limits->check_and_peek(
      ip, failures,
      [c, account, next = std::move(next)](const actors::limit_decision& d,
                                           const actors::limit_decision& f) {
        // Redis's thread: on at the request's home.
        c.ex->resume([c, account, next, d, f] {
          login_decided(c, account, d, f, next);
        });
      });
}

void login_failed(const call& c, const actors::window_scope& account) {
  if (account.limit <= 0)
    return;
  actors::limit_check failure;
  failure.login_account = account;
  failure.now = steady_millis();
  decide(*c.svc, failure, [](const actors::limit_decision&) {});
}

} // namespace mailassay::http
