#include "actors/egress_monitor.hpp"
#include "http/codec/service.hpp"
#include "http/embedded_text.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http {

namespace {

// GET /status's report; `db_ok` from a storage ping.
codec::service_status report_of(const services& svc, bool db_ok,
                                std::int64_t now) {
  return {db_ok,
          svc.cfg.database.url.rfind("sqlite", 0) == 0 ? "sqlite"
                                                       : "postgresql",
          now - svc.started_at, svc.version, now};
}

// Runs a storage ping and hands its outcome to `done(bool)`.
template <class F>
void ping_storage(call c, F done) {
  c.svc->storage.submit({[c, done](actors::job_context& ctx) {
    if (c.ex->answered())
      return;
    done(ctx.db && ctx.db->ping().has_value());
  }});
}

// What /health says of SMTP probing's egress.
codec::smtp_health smtp_health_of(const services& svc) {
  codec::smtp_health h;
  if (!svc.egress)
    return h;
  h.state = "unchecked";
  if (auto reading = svc.egress->latest()) {
    h.state = reading->report.ok() ? "ok" : "degraded";
    h.report = std::move(reading->report);
    h.checked_at = reading->checked_at;
  }
  return h;
}

} // namespace

void handle_health(call c) {
  auto now = c.svc->now();
  c.ex->set_timeout_response(
      {503,
       codec::text_of(codec::health(false, now, smtp_health_of(*c.svc))),
       "application/json",
       {}});
  ping_storage(c, [c](bool ok) {
    c.ex->json(ok ? 200 : 503, codec::text_of(codec::health(
                                   ok, c.svc->now(), smtp_health_of(*c.svc))));
  });
}

void handle_status(call c) {
  auto now = c.svc->now();
  c.ex->set_timeout_response(
      {200,
       codec::text_of(codec::status(report_of(*c.svc, false, now))),
       "application/json",
       {}});
  ping_storage(c, [c](bool ok) {
    c.ex->json(200, codec::text_of(
                        codec::status(report_of(*c.svc, ok, c.svc->now()))));
  });
}

void handle_metrics(call c) {
  c.ex->respond(response{200,
                         c.svc->stats.render(),
                         "text/plain; version=0.0.4; charset=utf-8",
                         {}});
}

void handle_openapi(call c) {
  c.ex->json(200, std::string{openapi_text()});
}

} // namespace mailassay::http
