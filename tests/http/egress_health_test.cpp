// The service's own egress audit, black-box: a server whose egress is
// listed and whose PTR names another host reports `smtp: degraded` with the
// failed checks in GET /health (still 200, still healthy: the API answers)
// and the checks as gauges on /metrics.

#include "tests/http/fixtures.hpp"
#include "tests/http/smtp_service.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"
#include "tests/support/wait.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <string>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::smtp_peer;

namespace {

// Probes leave from 127.0.0.2, listed on zen.test, whose PTR names a host
// other than the HELO; the reference host (the SMTP peer) is reachable.
constexpr const char* failing_world = R"(
probe.example.io A 127.0.0.2
2.0.0.127.in-addr.arpa PTR static-2.isp.test
example.io MX 10 mx.example.io
mx.example.io A 127.0.0.1
ref.test MX 10 mx.ref.test
mx.ref.test A 127.0.0.1
2.0.0.127.zen.test A 127.0.0.2
2.0.0.127.zen.test TXT Listed by zen.test
)";

json health(api& a) {
  auto r = a.call("GET", "/health");
  REQUIRE(r.status == 200);
  return json::parse(r.body);
}

} // namespace

TEST_SUITE("api.egress") {
  TEST_CASE("a failing egress degrades /health's smtp and sets the gauges") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(failing_world);
    server_process srv{
        smtp_server_env(dns.server(), std::to_string(mx.port()),
                        {{"MAILASSAY_SMTP_SOURCE_ADDRESS", "127.0.0.2"},
                         {"MAILASSAY_EGRESS_REFERENCE_DOMAINS", "ref.test"},
                         {"MAILASSAY_EGRESS_DNSBL", "zen.test"},
                         {"MAILASSAY_EGRESS_AT_START", "true"},
                         {"MAILASSAY_EGRESS_INTERVAL_SECONDS", "0"}})};
    api a{srv};
    json h;
    REQUIRE(eventually(
        [&] {
          h = health(a);
          return h["details"]["smtp"] != "unchecked";
        },
        std::chrono::seconds(60), std::chrono::milliseconds(50)));
    CHECK(h["status"] == "healthy");
    CHECK(h["version"] == "v2");
    CHECK(h.contains("timestamp"));
    CHECK(h["details"]["smtp"] == "degraded");
    CHECK(h["details"]["failedChecks"] == json::array({"egress_ptr", "dnsbl"}));
    auto egress = h["details"]["egress"];
    CHECK(egress["egressAddress"] == "127.0.0.2");
    CHECK(egress["ok"] == false);
    CHECK(egress.contains("checkedAt"));
    auto checks = egress["checks"];
    auto dnsbl = std::find_if(checks.begin(), checks.end(),
                              [](auto& c) { return c["name"] == "dnsbl"; });
    REQUIRE(dnsbl != checks.end());
    CHECK((*dnsbl)["detail"].get<std::string>().find(
              "zen.test (127.0.0.2: Listed by zen.test)") != std::string::npos);

    CHECK(a.metric("mailassay_egress_check{check=\"dnsbl\"}") == 0.0);
    CHECK(a.metric("mailassay_egress_check{check=\"egress_ptr\"}") == 0.0);
    CHECK(a.metric("mailassay_egress_check{check=\"helo_dns\"}") == 1.0);
    CHECK(a.metric("mailassay_egress_check{check=\"port25\"}") == 1.0);
    CHECK(a.metric("mailassay_egress_check{check=\"smtp_greeting\"}") == 1.0);
    CHECK(a.metric("mailassay_egress_check{check=\"mail_from\"}") == 1.0);
    // Each failed check is a warning in the log, with its detail.
    CHECK(eventually([&] {
      auto log = srv.log();
      return log.find("egress_check_failed") != std::string::npos &&
             log.find("static-2.isp.test") != std::string::npos;
    }));
  }

  TEST_CASE("the audit runs again every interval: a delisted address "
            "clears the degraded state") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(failing_world);
    // Only the blocklist fails: the PTR names the HELO.
    dns.update("2.0.0.127.in-addr.arpa",
               [](auto& e) { e.ptr = {"probe.example.io"}; });
    server_process srv{
        smtp_server_env(dns.server(), std::to_string(mx.port()),
                        {{"MAILASSAY_SMTP_SOURCE_ADDRESS", "127.0.0.2"},
                         {"MAILASSAY_EGRESS_REFERENCE_DOMAINS", "ref.test"},
                         {"MAILASSAY_EGRESS_DNSBL", "zen.test"},
                         {"MAILASSAY_EGRESS_AT_START", "true"},
                         {"MAILASSAY_EGRESS_INTERVAL_SECONDS", "1"}})};
    api a{srv};
    auto state = [&] { return health(a)["details"]["smtp"]; };
    REQUIRE(eventually([&] { return state() == "degraded"; },
                       std::chrono::seconds(60),
                       std::chrono::milliseconds(50)));
    CHECK(health(a)["details"]["failedChecks"] == json::array({"dnsbl"}));
    dns.remove("2.0.0.127.zen.test");
    REQUIRE(eventually([&] { return state() == "ok"; },
                       std::chrono::seconds(60),
                       std::chrono::milliseconds(50)));
    CHECK(a.metric("mailassay_egress_check{check=\"dnsbl\"}") == 1.0);
  }

  TEST_CASE("probes leave from smtp.source_address") {
    smtp_service s;
    s.start("d.test MX 10 mx.d.test\nmx.d.test A 127.0.0.1\n",
            {{"MAILASSAY_SMTP_SOURCE_ADDRESS", "127.0.0.2"},
             {"MAILASSAY_SMTP_TLS", "never"}},
            {}, "Source");
    auto r = s.a->post("/v2/email/validate",
                       {{"email", "alice@d.test"}, {"smtp", true}}, s.key);
    REQUIRE_MESSAGE(r.status == 200, r.body);
    CHECK(json::parse(r.body)["smtp"]["deliverable"] == true);
    auto clients = s.mx.client_addresses();
    REQUIRE_FALSE(clients.empty());
    for (const auto& c : clients)
      CHECK(c == "127.0.0.2");
  }

  TEST_CASE("without SMTP probing /health says smtp: off") {
    server_process srv;
    api a{srv};
    auto h = health(a);
    CHECK(h["status"] == "healthy");
    CHECK(h["details"]["smtp"] == "off");
    CHECK_FALSE(h["details"].contains("egress"));
  }
}
