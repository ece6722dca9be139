#include "http/admission.hpp"

#include "http/services.hpp"

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

} // namespace mailassay::http
