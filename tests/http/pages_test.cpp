#include "tests/http/fixtures.hpp"

#include <doctest/doctest.h>

#include <regex>

using namespace mailassay::testing;

namespace {

// The page headers of docs/dashboard.md, on any file of the dashboard.
void check_page_headers(const http_response& r, const std::string& what) {
  INFO(what);
  auto csp = r.header("content-security-policy");
  CHECK(csp.find("default-src 'none'") != std::string::npos);
  CHECK(csp.find("script-src 'self';") != std::string::npos);
  CHECK(csp.find("style-src 'self';") != std::string::npos);
  CHECK(csp.find("frame-ancestors 'none'") != std::string::npos);
  CHECK(csp.find("unsafe-inline") == std::string::npos);
  CHECK(csp.find("unsafe-eval") == std::string::npos);
  CHECK(r.header("x-content-type-options") == "nosniff");
  CHECK(r.header("referrer-policy") == "same-origin");
  CHECK(r.header("x-frame-options") == "DENY");
}

// A document with no inline script or style: every <script> has a src,
// no <style> element, no style= or on...= attribute.
void check_no_inline(const std::string& html, const std::string& what) {
  INFO(what);
  CHECK(html.find("<style") == std::string::npos);
  CHECK_FALSE(std::regex_search(html, std::regex{R"(\sstyle\s*=)"}));
  CHECK_FALSE(std::regex_search(html, std::regex{R"(\son[a-z]+\s*=)"}));
  std::regex script{R"(<script([^>]*)>([^<]*)</script>)"};
  for (std::sregex_iterator i{html.begin(), html.end(), script}, end; i != end;
       ++i) {
    CHECK((*i)[1].str().find("src=") != std::string::npos);
    CHECK((*i)[2].str().empty());
  }
}

} // namespace

TEST_SUITE("api.pages") {
  TEST_CASE("the dashboard is served at / with a strict CSP") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/");
    REQUIRE(r.status == 200);
    CHECK(r.header("content-type") == "text/html; charset=utf-8");
    check_page_headers(r, "/");
    check_no_inline(r.body, "/");
    CHECK(r.body.find("<script type=\"module\" src=\"/app/main.js\">") !=
          std::string::npos);
    // Every file the page names is there, with its type.
    for (auto [path, type] :
         {std::pair{"/app/main.js", "text/javascript; charset=utf-8"},
          std::pair{"/app/api.js", "text/javascript; charset=utf-8"},
          std::pair{"/app/pages/keys.js", "text/javascript; charset=utf-8"},
          std::pair{"/app/vendor/preact.mjs", "text/javascript; charset=utf-8"},
          std::pair{"/app/vendor/hooks.mjs", "text/javascript; charset=utf-8"},
          std::pair{"/app/vendor/htm.mjs", "text/javascript; charset=utf-8"},
          std::pair{"/app/vendor/pico.min.css", "text/css; charset=utf-8"},
          std::pair{"/app/app.css", "text/css; charset=utf-8"},
          std::pair{"/app/icon.svg", "image/svg+xml"},
          std::pair{"/app/vendor/preact.LICENSE.txt",
                    "text/plain; charset=utf-8"}}) {
      auto f = http_request(srv.port(), "GET", path);
      CHECK_MESSAGE(f.status == 200, path);
      CHECK_MESSAGE(f.header("content-type") == type, path);
      CHECK_MESSAGE(!f.body.empty(), path);
      check_page_headers(f, path);
    }
    // The vendored hooks import Preact by path, not by a bare name.
    auto hooks = http_request(srv.port(), "GET", "/app/vendor/hooks.mjs");
    CHECK(hooks.body.find("from\"./preact.mjs\"") != std::string::npos);
  }

  TEST_CASE("unknown dashboard files are 404 and no path leaves web/app") {
    server_process srv;
    for (auto* path :
         {"/app/nope.js", "/app/vendor/nope.mjs", "/app/../http/routes.cpp",
          "/app/%2e%2e/openapi.json", "/app/vendor/README.md"}) {
      auto r = http_request(srv.port(), "GET", path);
      CHECK_MESSAGE(r.status == 404, path);
    }
    CHECK(http_request(srv.port(), "POST", "/app/main.js").status == 405);
  }

  TEST_CASE("/docs loads its script from a file, under the same CSP") {
    server_process srv;
    auto r = http_request(srv.port(), "GET", "/docs");
    REQUIRE(r.status == 200);
    CHECK(r.header("content-type") == "text/html; charset=utf-8");
    check_page_headers(r, "/docs");
    check_no_inline(r.body, "/docs");
    CHECK(r.body.find("src=\"/app/docs.js\"") != std::string::npos);
    CHECK(http_request(srv.port(), "GET", "/app/docs.js").status == 200);
    CHECK(http_request(srv.port(), "GET", "/app/docs.css").status == 200);
  }

  TEST_CASE("/v2/auth/options tells whether sign-up is open") {
    {
      server_process srv;
      auto r = http_request(srv.port(), "GET", "/v2/auth/options");
      REQUIRE(r.status == 200);
      CHECK(json::parse(r.body) == json{{"signupEnabled", true}});
    }
    server_process closed{{{"MAILASSAY_AUTH_SIGNUP_ENABLED", "false"}}};
    auto r = http_request(closed.port(), "GET", "/v2/auth/options");
    CHECK(json::parse(r.body) == json{{"signupEnabled", false}});
  }

  TEST_CASE("the SMTP gauges the Operations page shows are in /metrics when "
            "probing is on") {
    {
      server_process off; // no sender identity: probing is off
      auto m = http_request(off.port(), "GET", "/metrics").body;
      CHECK(m.find("mailassay_smtp_sessions") == std::string::npos);
    }
    server_process on{{{"MAILASSAY_SMTP_HELO", "probe.example.io"},
                       {"MAILASSAY_SMTP_MAIL_FROM", "verify@example.io"}}};
    auto m = http_request(on.port(), "GET", "/metrics").body;
    for (auto* line : {"mailassay_smtp_probes_active 0",
                       "mailassay_smtp_queued 0", "mailassay_smtp_sessions 0",
                       "mailassay_smtp_probes 0", "mailassay_smtp_retries 0"})
      CHECK_MESSAGE(
          m.find(std::string{"\n"} + line + "\n") != std::string::npos, line);
  }
}
