#include "core/base/time_format.hpp"
#include "http/handler_support.hpp"
#include "http/embedded_text.hpp"

namespace mailassay::http {

namespace {

codec::json health_body(bool healthy, std::int64_t now) {
  return {{"status", healthy ? "healthy" : "unhealthy"},
          {"timestamp", core::iso8601(now)},
          {"version", "v2"}};
}

codec::json status_body(const services& svc, bool db_ok, std::int64_t now) {
  return {{"status", db_ok ? "operational" : "degraded"},
          {"components",
           codec::json::array(
             {{{"name", "api"}, {"status", "operational"}},
              {{"name", "database"},
               {"status", db_ok ? "operational" : "unavailable"},
               {"backend", svc.cfg.database.url.rfind("sqlite", 0) == 0
                             ? "sqlite"
                             : "postgresql"}}})},
          {"uptimeSeconds", now - svc.started_at},
          {"version", svc.version},
          {"apiVersion", "v2"},
          {"timestamp", core::iso8601(now)}};
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

} // namespace

void handle_health(call c) {
  auto now = c.svc->now();
  c.ex->set_timeout_response(
    {503, health_body(false, now).dump(), "application/json", {}});
  ping_storage(c, [c](bool ok) {
    c.ex->json(ok ? 200 : 503, health_body(ok, c.svc->now()).dump());
  });
}

void handle_status(call c) {
  auto now = c.svc->now();
  c.ex->set_timeout_response(
    {200, status_body(*c.svc, false, now).dump(), "application/json", {}});
  ping_storage(c, [c](bool ok) {
    c.ex->json(200, status_body(*c.svc, ok, c.svc->now()).dump());
  });
}

void handle_metrics(call c) {
  c.ex->respond(response{200, c.svc->stats.render(),
                         "text/plain; version=0.0.4; charset=utf-8", {}});
}

void handle_openapi(call c) {
  c.ex->json(200, std::string{openapi_text()});
}

} // namespace mailassay::http
