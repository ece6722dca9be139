#include "core/webhooks/target_url.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace mailassay::core;
using namespace mailassay::core::webhooks;

namespace {

std::string problem(const char* url) {
  auto u = parse_target_url(url);
  if (u)
    return "";
  REQUIRE(u.error_value().details.size() == 1);
  return u.error_value().details.front();
}

smtp::target_policy allow(std::vector<std::string> nets) {
  auto p = smtp::target_policy::parse(nets);
  REQUIRE(p);
  return *p;
}

} // namespace

TEST_SUITE("core.webhooks.target_url") {
  TEST_CASE("parses scheme, host, port and target") {
    struct row {
      const char* url;
      bool tls;
      const char* host;
      bool ip;
      int port;
      const char* target;
      const char* host_header;
    };
    const row rows[] = {
        {"https://hooks.example.com/in", true, "hooks.example.com", false, 443,
         "/in", "hooks.example.com"},
        {"HTTPS://Hooks.Example.COM.", true, "hooks.example.com", false, 443,
         "/", "hooks.example.com"},
        {"https://a.example:8443/x?y=1&z", true, "a.example", false, 8443,
         "/x?y=1&z", "a.example:8443"},
        {"http://127.0.0.1:9000/hook", false, "127.0.0.1", true, 9000, "/hook",
         "127.0.0.1:9000"},
        {"http://a.example:80", false, "a.example", false, 80, "/",
         "a.example"},
        {"https://[2001:DB8::1]/h", true, "2001:db8::1", true, 443, "/h",
         "[2001:db8::1]"},
        {"https://[::1]:444?q", true, "::1", true, 444, "/?q", "[::1]:444"},
    };
    for (const auto& r : rows) {
      auto u = parse_target_url(r.url);
      REQUIRE_MESSAGE(u, r.url);
      CHECK(u->tls == r.tls);
      CHECK(u->host == r.host);
      CHECK(u->host_is_ip == r.ip);
      CHECK(u->port == r.port);
      CHECK(u->target == r.target);
      CHECK(u->host_header() == r.host_header);
    }
  }

  TEST_CASE("refuses what is not a plain absolute http(s) URL") {
    CHECK(problem("") == "url must not be empty");
    CHECK(problem("hooks.example.com/x") ==
          "url must be an absolute http or https URL");
    CHECK(problem("ftp://hooks.example.com/") ==
          "url must be an absolute http or https URL");
    CHECK(problem("https://user:pw@hooks.example.com/") ==
          "url must not contain credentials");
    CHECK(problem("https://hooks.example.com/#top") ==
          "url must not have a fragment");
    CHECK(problem("https://hooks.example.com/a b") ==
          "url must be ASCII without spaces or control characters "
          "(percent-encode the rest)");
    CHECK(problem("https://hooks.exämple.com/") ==
          "url must be ASCII without spaces or control characters "
          "(percent-encode the rest)");
    CHECK(problem("https:///x") == "url must name a host");
    CHECK(problem("https://hooks.example.com:0/") ==
          "url port must be between 1 and 65535");
    CHECK(problem("https://hooks.example.com:65536/") ==
          "url port must be between 1 and 65535");
    CHECK(problem("https://hooks.example.com:/") == "url has an empty port");
    CHECK(problem("https://[::1/") == "url has an unterminated IPv6 address");
    CHECK(problem("https://[127.0.0.1]/") ==
          "url has a malformed IPv6 address");
    CHECK(problem("https://under_score.example/") ==
          "url host must be a DNS name or an IP address");
    CHECK(problem("https://-bad.example/") ==
          "url host must be a DNS name or an IP address");
    // Numeric spellings of IPv4 that resolvers read differently.
    CHECK(problem("http://127.1/") ==
          "url host must be a DNS name or an IP address");
    CHECK(problem("http://2130706433/") ==
          "url host must be a DNS name or an IP address");
    CHECK(problem("http://0x7f.1/") ==
          "url host must be a DNS name or an IP address");
    CHECK(problem(("https://h.example/" + std::string(2048, 'a')).c_str()) ==
          "url must be at most 2048 bytes long");
  }

  TEST_CASE("https is required unless the operator allows http") {
    auto u = parse_target_url("http://hooks.example.com/");
    REQUIRE(u);
    CHECK(refusal(*u, false, {}) == "url must use https");
    CHECK_FALSE(refusal(*u, true, {}));
  }

  TEST_CASE("IP literals and localhost follow the SMTP address policy") {
    const char* refused[] = {
        "https://127.0.0.1/",
        "https://localhost:8080/",
        "https://a.localhost/",
        "https://10.1.2.3/",
        "https://169.254.169.254/latest",
        "https://[::1]/",
        "https://[fe80::1]/",
        "https://0.0.0.0/",
        "https://192.168.0.1/",
        "https://[::ffff:127.0.0.1]/",
    };
    for (auto url : refused) {
      auto u = parse_target_url(url);
      REQUIRE_MESSAGE(u, url);
      CHECK_MESSAGE(refusal(*u, true, {}), url);
    }
    auto u = parse_target_url("https://127.0.0.1:9/");
    REQUIRE(u);
    CHECK(refusal(*u, false, {}) ==
          "url must not point at a loopback address (127.0.0.1); the operator "
          "may allow networks with MAILASSAY_WEBHOOKS_ALLOW_PRIVATE_TARGETS");
    CHECK_FALSE(refusal(*u, false, allow({"127.0.0.0/8"})));
    auto local = parse_target_url("https://localhost/");
    REQUIRE(local);
    CHECK_FALSE(refusal(*local, false, allow({"127.0.0.1"})));
    // Names are checked when resolved, before each delivery.
    auto name = parse_target_url("https://hooks.example.com/");
    REQUIRE(name);
    CHECK_FALSE(refusal(*name, false, {}));
    auto pub = parse_target_url("https://93.184.216.34/");
    REQUIRE(pub);
    CHECK_FALSE(refusal(*pub, false, {}));
  }

  TEST_CASE("ports are 443, 80 with http, or those the operator lists") {
    auto at = [](const char* url) {
      auto u = parse_target_url(url);
      REQUIRE_MESSAGE(u, url);
      return *u;
    };
    const std::vector<std::int64_t> none;
    const std::vector<std::int64_t> listed{8443, 9000};
    CHECK_FALSE(port_refusal(at("https://h.example/"), false, none, false));
    CHECK_FALSE(port_refusal(at("https://h.example:443/"), false, none, false));
    CHECK_FALSE(port_refusal(at("http://h.example/"), true, none, false));
    CHECK(port_refusal(at("https://h.example:80/"), false, none, false) ==
          "url must use port 443 (got 80); the operator may allow others "
          "with MAILASSAY_WEBHOOKS_ALLOWED_PORTS");
    CHECK(port_refusal(at("https://h.example:22/"), true, none, false) ==
          "url must use port 443 or 80 (got 22); the operator may allow "
          "others with MAILASSAY_WEBHOOKS_ALLOWED_PORTS");
    CHECK(port_refusal(at("https://h.example:6379/"), true, listed, false));
    CHECK_FALSE(
        port_refusal(at("https://h.example:9000/"), false, listed, false));
    CHECK_FALSE(port_refusal(at("https://h.example:6379/"), false, none, true));
  }
}
