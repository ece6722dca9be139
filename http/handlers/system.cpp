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

void handle_docs(call c) {
  // A self-contained page: the service may run without internet access.
  static const char* page = R"HTML(<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>mailassay API</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2em auto;
padding:0 1em;color:#222}h2{border-bottom:1px solid #ddd}code{background:#f4f4f4;
padding:0 .3em}.m{display:inline-block;min-width:4.5em;font-weight:bold}
.op{margin:.6em 0}.d{color:#555;margin-left:5em}</style></head>
<body><h1>mailassay API</h1><p>Machine-readable description:
<a href="/v2/openapi.json">/v2/openapi.json</a> (OpenAPI 3).</p>
<div id="ops">Loading…</div><script>
fetch('/v2/openapi.json').then(r=>r.json()).then(spec=>{
 const root=document.getElementById('ops');root.textContent='';
 const tags={};
 for(const [path,ops] of Object.entries(spec.paths))
  for(const [method,op] of Object.entries(ops)){
   const t=(op.tags||['other'])[0];(tags[t]=tags[t]||[]).push([method,path,op]);}
 for(const [t,list] of Object.entries(tags)){
  const h=document.createElement('h2');h.textContent=t;root.appendChild(h);
  for(const [m,p,op] of list){const d=document.createElement('div');
   d.className='op';const s=document.createElement('span');s.className='m';
   s.textContent=m.toUpperCase();const c=document.createElement('code');
   c.textContent=p;const x=document.createElement('div');x.className='d';
   x.textContent=op.summary||'';d.append(s,c,x);root.appendChild(d);}}
});</script></body></html>)HTML";
  c.ex->respond(response{200, page, "text/html; charset=utf-8", {}});
}

} // namespace mailassay::http
