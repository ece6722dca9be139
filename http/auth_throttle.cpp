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

bool admit_signup(const call& c) {
  const auto& limits = c.svc->cfg.limits;
  if (!limits.enabled)
    return true;
  actors::limit_check check;
  check.signup_ip = actors::window_scope{
      c.req().client_ip, limits.signup_ip_per_hour, core::limits::hour};
  check.now = steady_millis();
  auto d = c.svc->limiter.check(check);
  if (!d.reported.empty())
    c.ex->set_rate(headers_of(d));
  if (d.allowed)
    return true;
  c.ex->fail(too_many("Too many sign-ups from this IP, please try again later",
                      d.retry_after_seconds));
  return false;
}

std::optional<actors::window_scope> admit_login(const call& c,
                                                std::string_view email) {
  const auto& limits = c.svc->cfg.limits;
  actors::window_scope account{
      core::ascii_lower(email),
      limits.enabled ? limits.login_account_per_hour.get() : 0,
      core::limits::hour};
  if (!limits.enabled)
    return account;
  actors::limit_check ip;
  ip.login_ip = actors::window_scope{
      c.req().client_ip, limits.login_ip_per_minute, core::limits::minute};
  ip.now = steady_millis();
  auto d = c.svc->limiter.check(ip);
  if (!d.reported.empty())
    c.ex->set_rate(headers_of(d));
  if (!d.allowed) {
    c.ex->fail(
        too_many("Too many login attempts from this IP, please try again later",
                 d.retry_after_seconds));
    return std::nullopt;
  }
  if (account.limit <= 0)
    return account;
  actors::limit_check failures;
  failures.login_account = account;
  failures.now = ip.now;
  auto f = c.svc->limiter.peek(failures);
  if (f.remaining >= 1)
    return account;
  c.ex->set_rate(headers_of(f));
  // Less than one token left: the next comes within period / limit.
  auto per_token_ms =
      (account.period.count() + account.limit - 1) / account.limit;
  c.ex->fail(too_many("Too many failed logins for this account, please try "
                      "again later",
                      (per_token_ms + 999) / 1000));
  return std::nullopt;
}

void login_failed(const call& c, const actors::window_scope& account) {
  if (account.limit <= 0)
    return;
  actors::limit_check failure;
  failure.login_account = account;
  failure.now = steady_millis();
  c.svc->limiter.check(failure);
}

} // namespace mailassay::http
