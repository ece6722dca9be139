// The dashboard and /docs: files of web/app embedded in the binary
// (http/embed_web.cmake), served with the page headers (docs/dashboard.md).
#include "http/codec/service.hpp"
#include "http/embedded_text.hpp"
#include "http/handler_support.hpp"

#include <unordered_map>

namespace mailassay::http {

namespace {

// Scripts, styles, images and requests only from this service; no inline
// script or style, no plugin, no framing, no form posting elsewhere.
// `img-src data:` is for the icons Pico.css draws as data: SVGs.
constexpr const char* content_security_policy =
    "default-src 'none'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; "
    "manifest-src 'self'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'";

std::string_view content_type_of(std::string_view path) {
  auto ends = [&](std::string_view ext) {
    return path.size() >= ext.size() &&
           path.substr(path.size() - ext.size()) == ext;
  };
  if (ends(".js") || ends(".mjs"))
    return "text/javascript; charset=utf-8";
  if (ends(".css"))
    return "text/css; charset=utf-8";
  if (ends(".html"))
    return "text/html; charset=utf-8";
  if (ends(".svg"))
    return "image/svg+xml";
  return "text/plain; charset=utf-8";
}

const embedded_file* find_file(std::string_view path) {
  static const auto index = [] {
    std::unordered_map<std::string_view, const embedded_file*> out;
    for (const auto& f : web_files())
      out.emplace(f.path, &f);
    return out;
  }();
  auto i = index.find(path);
  return i == index.end() ? nullptr : i->second;
}

// Every file of the dashboard goes out with the same headers: the CSP
// matters for documents (and for an SVG opened on its own), `no-cache`
// makes the browser revalidate so a new binary's pages are seen at once.
// (`X-Content-Type-Options: nosniff` is on every response, exchange.cpp.)
void serve(const call& c, std::string_view path) {
  auto* f = find_file(path);
  if (!f)
    return c.ex->fail(core::make_error(core::errc::not_found, "No such file"));
  c.ex->respond(response{200,
                         std::string{f->text},
                         content_type_of(f->path),
                         {{"Content-Security-Policy", content_security_policy},
                          {"X-Frame-Options", "DENY"},
                          {"Referrer-Policy", "same-origin"},
                          {"Cross-Origin-Opener-Policy", "same-origin"},
                          {"Cache-Control", "no-cache"}}});
}

} // namespace

void handle_app_index(call c) {
  serve(c, "/app/index.html");
}

void handle_app_file(call c) {
  serve(c, c.req().path);
}

void handle_docs(call c) {
  serve(c, "/app/docs.html");
}

void handle_auth_options(call c) {
  c.ex->json(
      200, codec::text_of(codec::auth_options(c.svc->cfg.auth.signup_enabled)));
}

} // namespace mailassay::http
