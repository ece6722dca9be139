#include "http/session_cookie.hpp"

#include "core/base/ascii.hpp"
#include "http/codec/accounts.hpp"
#include "http/codec/error.hpp"
#include "http/errors.hpp"
#include "http/handler_support.hpp"

namespace mailassay::http::session_cookie {

namespace {

// Attributes every form of the cookie carries. Path=/ as the `__Host-`
// prefix requires: every request of the host carries the cookie, but only
// the auth endpoints read it, and scripts never see it (HttpOnly).
std::string attributes(const config::auth_settings& auth) {
  std::string out = "; Path=/; HttpOnly; SameSite=Strict";
  if (auth.cookie_secure)
    out += "; Secure";
  return out;
}

} // namespace

core::expected<bool> requested(const request_view& req) {
  auto mode = req.query_param("session");
  if (!mode)
    return false;
  if (*mode == "cookie")
    return true;
  auto e = core::make_error(core::errc::validation_failed, "");
  e.details = {"session must be \"cookie\" when present"};
  return e;
}

std::string_view name_of(const config::auth_settings& auth) {
  return auth.cookie_secure ? name : insecure_name;
}

core::expected<std::optional<std::string>> token(const request_view& req,
                                                 std::string_view cookie) {
  std::optional<std::string_view> found;
  int seen = 0;
  // Every Cookie header (HTTP/2 and some clients split them), and in each
  // the "name=value" pairs separated by "; " (RFC 6265 §5.4).
  for (const auto& [k, header] : req.headers) {
    if (!core::ascii_iequals(k, "Cookie"))
      continue;
    std::string_view rest = header;
    while (!rest.empty()) {
      auto end = rest.find(';');
      auto pair = core::trim_blanks(rest.substr(0, end));
      rest = end == std::string_view::npos ? std::string_view{}
                                           : rest.substr(end + 1);
      auto eq = pair.find('=');
      if (eq == std::string_view::npos ||
          core::trim_blanks(pair.substr(0, eq)) != cookie)
        continue;
      ++seen;
      found = core::trim_blanks(pair.substr(eq + 1));
    }
  }
  if (seen > 1)
    return core::make_error(core::errc::bad_request,
                            "The session cookie was sent more than once");
  if (!found || found->empty() || found->size() > 512)
    return std::optional<std::string>{};
  return std::optional<std::string>{std::string{*found}};
}

bool same_origin(const request_view& req) {
  // Browsers since 2020-2023 send Sec-Fetch-Site on every request, and
  // scripts cannot set it: it alone decides when present.
  if (auto site = req.header("Sec-Fetch-Site"))
    return core::ascii_iequals(core::trim_blanks(*site), "same-origin");
  auto origin = req.header("Origin");
  auto host = req.header("Host");
  if (!origin || !host)
    return false;
  auto o = core::trim_blanks(*origin);
  auto scheme_end = o.find("://");
  if (scheme_end == std::string_view::npos)
    return false; // "null" (a sandboxed or privacy-sensitive context)
  // Scheme, host and port (RFC 6454 §5): a page served over plain HTTP on
  // the same host is another origin than the HTTPS one.
  if (!core::ascii_iequals(o.substr(0, scheme_end), req.scheme))
    return false;
  o.remove_prefix(scheme_end + 3);
  auto h = core::trim_blanks(*host);
  return !o.empty() && o.size() == h.size() && core::ascii_iequals(o, h);
}

core::error cross_site() {
  return core::make_error(
      core::errc::forbidden,
      "Cross-site request refused: the session cookie is only accepted from "
      "this service's own pages");
}

std::string set_value(std::string_view refresh_token,
                      const config::auth_settings& auth) {
  return std::string{name_of(auth)} + "=" + std::string{refresh_token} +
         attributes(auth) +
         "; Max-Age=" + std::to_string(auth.refresh_ttl_seconds);
}

std::string clear_value(const config::auth_settings& auth) {
  return std::string{name_of(auth)} + "=" + attributes(auth) + "; Max-Age=0";
}

void reply(const call& c, const core::expected<use_cases::accounts::session>& s,
           int status) {
  const auto& auth = c.svc->cfg.auth;
  if (!s) {
    const auto& e = s.error_value();
    // A cookie that no longer opens a session goes, so the page stops
    // offering it.
    if (e.code != core::errc::unauthorized)
      return c.ex->fail(e);
    return c.ex->respond(response{status_of(e.code),
                                  codec::error_body(e),
                                  "application/json",
                                  {{"Set-Cookie", clear_value(auth)}}});
  }
  auto body = codec::session(*s);
  body.erase("refreshToken");
  c.ex->respond(response{status,
                         codec::text_of(body),
                         "application/json",
                         {{"Set-Cookie", set_value(s->refresh_token, auth)}}});
}

void reply_cleared(const call& c, const core::expected<core::unit>& r) {
  if (!r)
    return c.ex->fail(r.error_value());
  c.ex->respond(response{204,
                         {},
                         "application/json",
                         {{"Set-Cookie", clear_value(c.svc->cfg.auth)}}});
}

std::optional<bool> mode(const call& c) {
  auto cookie = requested(c.req());
  if (!cookie) {
    c.ex->fail(cookie.error_value());
    return std::nullopt;
  }
  if (*cookie && !same_origin(c.req())) {
    c.ex->fail(cross_site());
    return std::nullopt;
  }
  return *cookie;
}

void refresh(call c) {
  if (!same_origin(c.req()))
    return c.ex->fail(cross_site());
  auto t = token(c.req(), name_of(c.svc->cfg.auth));
  if (!t)
    return c.ex->fail(t.error_value());
  if (!*t)
    return c.ex->fail(core::unauthorized());
  with_storage(c,
               [c, t = std::move(**t)](use_cases::accounts::account_env& env) {
                 reply(c, use_cases::accounts::refresh(env, t), 200);
               });
}

void logout(call c) {
  if (!same_origin(c.req()))
    return c.ex->fail(cross_site());
  auto t = token(c.req(), name_of(c.svc->cfg.auth));
  if (!t)
    return c.ex->fail(t.error_value());
  if (!*t)
    return reply_cleared(c, core::unit{});
  with_storage(c,
               [c, t = std::move(**t)](use_cases::accounts::account_env& env) {
                 reply_cleared(c, use_cases::accounts::logout(env, t));
               });
}

} // namespace mailassay::http::session_cookie
