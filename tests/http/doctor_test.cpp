// `mailassay doctor` black-box: the real binary against the project's DNS
// and SMTP peers on loopback, one world per case (reverse DNS, blocklists,
// open and closed ports), its exit code and its JSON.

#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <map>
#include <string>

using namespace mailassay::testing;
using mailassay::tests::peers::dns_peer;
using mailassay::tests::peers::smtp_greeting;
using mailassay::tests::peers::smtp_peer;
using mailassay::tests::peers::smtp_peer_options;
using nlohmann::json;

namespace {

// A world where every check passes: the probes leave from 127.0.0.2, whose
// PTR names the HELO, which resolves back to it; the reference domain's MX
// is the SMTP peer on 127.0.0.1; the sender's domain has an MX.
constexpr const char* good_zone = R"(
probe.example.io A 127.0.0.2
2.0.0.127.in-addr.arpa PTR probe.example.io
example.io MX 10 mx.example.io
mx.example.io A 127.0.0.1
ref.test MX 10 mx.ref.test
mx.ref.test A 127.0.0.1
)";

std::map<std::string, std::string> doctor_env(const dns_peer& dns, int port) {
  std::map<std::string, std::string> env{
      {"MAILASSAY_DNS_SERVERS", dns.server()},
      {"MAILASSAY_DNS_TIMEOUT_MS", "5000"},
      {"MAILASSAY_SMTP_HELO", "probe.example.io"},
      {"MAILASSAY_SMTP_MAIL_FROM", "verify@example.io"},
      {"MAILASSAY_SMTP_PORT", std::to_string(port)},
      {"MAILASSAY_SMTP_SOURCE_ADDRESS", "127.0.0.2"},
      {"MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS", "127.0.0.0/8"},
      {"MAILASSAY_EGRESS_REFERENCE_DOMAINS", "ref.test"},
      {"MAILASSAY_EGRESS_DNSBL", "zen.test,bl.test"}};
  test_environment(env);
  return env;
}

struct outcome {
  int code = -1;
  json report;
  std::string text;

  // The check named `name`.
  json check(const std::string& name) const {
    for (const auto& c : report["checks"])
      if (c["name"] == name)
        return c;
    FAIL("no check " << name << " in " << text);
    return {};
  }
};

outcome doctor(const std::map<std::string, std::string>& env) {
  outcome o;
  o.code = run_binary({"doctor", "--json"}, env, o.text);
  auto brace = o.text.find('{');
  REQUIRE_MESSAGE(brace != std::string::npos, o.text);
  o.report = json::parse(o.text.substr(brace, o.text.rfind('}') - brace + 1));
  return o;
}

} // namespace

TEST_SUITE("app.doctor") {
  TEST_CASE("a sound egress passes every check and exits 0") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    auto o = doctor(doctor_env(dns, mx.port()));
    CHECK_MESSAGE(o.code == 0, o.text);
    CHECK(o.report["ok"] == true);
    CHECK(o.report["egressAddress"] == "127.0.0.2");
    std::vector<std::string> names;
    for (const auto& c : o.report["checks"]) {
      names.push_back(c["name"]);
      CHECK_MESSAGE(c["status"] == "ok", c.dump());
    }
    CHECK(names == std::vector<std::string>{"helo_dns", "egress_ptr", "dnsbl",
                                            "port25", "smtp_greeting",
                                            "mail_from"});
    CHECK(o.check("smtp_greeting")["detail"].get<std::string>().find(
              "220 mx.peer.test") != std::string::npos);
    // The greeting's EHLO named us, from the source address.
    CHECK(mx.commands("EHLO") == 1);
  }

  TEST_CASE("a listed address fails dnsbl naming the list and its reason") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    dns.load_zone(R"(
2.0.0.127.zen.test A 127.0.0.2
2.0.0.127.zen.test TXT Listed by zen.test, see https://zen.test/q/127.0.0.2
)");
    auto o = doctor(doctor_env(dns, mx.port()));
    CHECK_MESSAGE(o.code == 1, o.text);
    CHECK(o.report["ok"] == false);
    auto c = o.check("dnsbl");
    CHECK(c["status"] == "fail");
    auto detail = c["detail"].get<std::string>();
    CHECK_MESSAGE(detail.find("zen.test (127.0.0.2: Listed by zen.test, see "
                              "https://zen.test/q/127.0.0.2)") !=
                      std::string::npos,
                  detail);
    CHECK_MESSAGE(detail.find("bl.test") == std::string::npos, detail);
  }

  TEST_CASE("a HELO the PTR does not name fails egress_ptr") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    dns.update("2.0.0.127.in-addr.arpa",
               [](auto& e) { e.ptr = {"static-2.isp.test"}; });
    auto o = doctor(doctor_env(dns, mx.port()));
    CHECK_MESSAGE(o.code == 1, o.text);
    auto c = o.check("egress_ptr");
    CHECK(c["status"] == "fail");
    CHECK_MESSAGE(c["detail"].get<std::string>().find(
                      "names static-2.isp.test, not smtp.helo "
                      "probe.example.io") != std::string::npos,
                  c.dump());
    CHECK(o.check("dnsbl")["status"] == "ok");
  }

  TEST_CASE("a closed port fails port25; some closed hosts only warn") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    SUBCASE("every reference host closed: fail, exit 1") {
      auto port = free_port();
      auto o = doctor(doctor_env(dns, port));
      CHECK_MESSAGE(o.code == 1, o.text);
      auto c = o.check("port25");
      CHECK(c["status"] == "fail");
      CHECK_MESSAGE(c["detail"].get<std::string>().find(
                        "outbound port " + std::to_string(port) +
                        " looks blocked") != std::string::npos,
                    c.dump());
      CHECK(o.check("smtp_greeting")["status"] == "skip");
    }
    SUBCASE("one of two closed: warn, exit 0") {
      // mx.other.test listens nowhere on the peer's port.
      dns.load_zone("other.test MX 10 mx.other.test\n"
                    "mx.other.test A 127.0.0.3\n");
      auto env = doctor_env(dns, mx.port());
      env["MAILASSAY_EGRESS_REFERENCE_DOMAINS"] = "ref.test,other.test";
      auto o = doctor(env);
      CHECK_MESSAGE(o.code == 0, o.text);
      auto c = o.check("port25");
      CHECK(c["status"] == "warn");
      CHECK(c["detail"].get<std::string>().find("mx.other.test (127.0.0.3)") !=
            std::string::npos);
      CHECK(o.check("smtp_greeting")["status"] == "ok");
    }
  }

  TEST_CASE("a refusing greeting fails smtp_greeting") {
    dns_peer dns;
    smtp_peer_options opts;
    opts.greeting = smtp_greeting::reject;
    smtp_peer mx{opts};
    dns.load_zone(good_zone);
    auto o = doctor(doctor_env(dns, mx.port()));
    CHECK_MESSAGE(o.code == 1, o.text);
    auto c = o.check("smtp_greeting");
    CHECK(c["status"] == "fail");
    CHECK(c["detail"].get<std::string>().find("refused us: 554") !=
          std::string::npos);
  }

  TEST_CASE("a sender's domain without MX or A warns; the null sender skips") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    auto env = doctor_env(dns, mx.port());
    env["MAILASSAY_SMTP_MAIL_FROM"] = "verify@nowhere.test";
    auto o = doctor(env);
    CHECK_MESSAGE(o.code == 0, o.text);
    CHECK(o.check("mail_from")["status"] == "warn");
    env["MAILASSAY_SMTP_MAIL_FROM"] = "";
    CHECK(doctor(env).check("mail_from")["status"] == "skip");
  }

  TEST_CASE("without smtp.source_address the egress address is the kernel's "
            "choice toward the first reference host") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    dns.load_zone("1.0.0.127.in-addr.arpa PTR probe.example.io\n"
                  "probe.example.io A 127.0.0.1\n");
    auto env = doctor_env(dns, mx.port());
    env.erase("MAILASSAY_SMTP_SOURCE_ADDRESS");
    auto o = doctor(env);
    CHECK(o.report["egressAddress"] == "127.0.0.1");
    CHECK_MESSAGE(o.check("egress_ptr")["status"] == "ok", o.text);
    CHECK(mx.client_addresses().back() == "127.0.0.1");
  }

  TEST_CASE("an unreachable resolver fails port25 and exits 1") {
    dns_peer dns;
    auto env = doctor_env(dns, 25);
    env["MAILASSAY_DNS_SERVERS"] = "127.0.0.1:1"; // nothing answers
    auto o = doctor(env);
    CHECK_MESSAGE(o.code == 1, o.text);
    auto c = o.check("port25");
    CHECK(c["status"] == "fail");
    CHECK(c["detail"].get<std::string>().find("dns.servers") !=
          std::string::npos);
  }

  TEST_CASE("the text form prints one line per check") {
    dns_peer dns;
    smtp_peer mx;
    dns.load_zone(good_zone);
    std::string out;
    auto code = run_binary({"doctor"}, doctor_env(dns, free_port()), out);
    CHECK(code == 1);
    for (auto* line : {"ok    helo_dns", "ok    egress_ptr", "ok    dnsbl",
                       "fail  port25", "skip  smtp_greeting", "ok    mail_from",
                       "egress address: 127.0.0.2"})
      CHECK_MESSAGE(out.find(line) != std::string::npos, out);
  }
}
