#include "core/egress/decide.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mailassay::core;
using egress::status;

namespace {

dns::lookup_result code_only(dns::rcode code) {
  dns::lookup_result r;
  r.code = code;
  return r;
}

dns::lookup_result addresses(std::vector<std::string> ips) {
  dns::lookup_result r;
  r.code = dns::rcode::ok;
  r.addresses = std::move(ips);
  return r;
}

dns::lookup_result texts(std::vector<std::string> t) {
  dns::lookup_result r;
  r.code = dns::rcode::ok;
  r.texts = std::move(t);
  return r;
}

dns::lookup_result mx(std::vector<std::string> hosts) {
  dns::lookup_result r;
  r.code = dns::rcode::ok;
  for (auto& h : hosts)
    r.mx.push_back({h, 10});
  return r;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_SUITE("core.egress.decide") {
  TEST_CASE("helo_dns wants an FQDN with an address") {
    using dns::rcode;
    struct row {
      std::string helo;
      std::optional<dns::lookup_result> a, aaaa;
      status want;
      std::string says;
    };
    std::vector<row> rows{
        {"probe.example.io", addresses({"192.0.2.1"}), code_only(rcode::nodata),
         status::ok, "192.0.2.1"},
        {"probe.example.io", code_only(rcode::nodata),
         addresses({"2001:db8::1"}), status::ok, "2001:db8::1"},
        {"", std::nullopt, std::nullopt, status::fail, "empty"},
        {"localhost", std::nullopt, std::nullopt, status::fail,
         "not a fully qualified"},
        {"probe.example.io", code_only(rcode::nxdomain),
         code_only(rcode::nxdomain), status::fail, "no A or AAAA"},
        {"probe.example.io", code_only(rcode::timeout),
         code_only(rcode::nodata), status::warn, "timeout"},
    };
    for (auto& r : rows) {
      CAPTURE(r.helo);
      auto c = egress::decide_helo_dns(r.helo, r.a, r.aaaa);
      CHECK(c.name == "helo_dns");
      CHECK(c.result == r.want);
      CHECK_MESSAGE(has(c.detail, r.says), c.detail);
    }
  }

  TEST_CASE("egress_ptr wants forward-confirmed reverse DNS naming the HELO") {
    using dns::rcode;
    auto obs = [](dns::lookup_result ptr, std::vector<std::string> fwd,
                  bool routable = true) {
      egress::ptr_observation o;
      o.address = "192.0.2.7";
      o.helo = "probe.example.io";
      o.ptr = std::move(ptr);
      o.helo_addresses = std::move(fwd);
      o.routable = routable;
      return o;
    };
    struct row {
      egress::ptr_observation o;
      status want;
      std::string says;
    };
    std::vector<row> rows{
        {obs(texts({"probe.example.io"}), {"192.0.2.7"}), status::ok,
         "forward-confirmed"},
        {obs(texts({"PROBE.example.io"}), {"198.51.100.1", "192.0.2.7"}),
         status::ok, "192.0.2.7 -> probe.example.io"},
        {obs(texts({"static-7.isp.example"}), {"192.0.2.7"}), status::fail,
         "names static-7.isp.example, not smtp.helo probe.example.io"},
        {obs(texts({"probe.example.io"}), {"198.51.100.1"}), status::fail,
         "not forward-confirmed"},
        {obs(code_only(rcode::nxdomain), {}), status::fail, "no PTR record"},
        {obs(code_only(rcode::nxdomain), {}, false), status::warn, "NAT"},
        {obs(code_only(rcode::servfail), {}), status::warn, "servfail"},
    };
    egress::ptr_observation unknown;
    unknown.address_error = "no route";
    rows.push_back({unknown, status::warn, "unknown (no route)"});
    for (auto& r : rows) {
      auto c = egress::decide_egress_ptr(r.o);
      CHECK(c.name == "egress_ptr");
      CHECK_MESSAGE(c.result == r.want, c.detail);
      CHECK_MESSAGE(has(c.detail, r.says), c.detail);
    }
  }

  TEST_CASE("dnsbl fails naming each list and its reason") {
    using dns::rcode;
    auto list = [](std::string zone, dns::lookup_result a,
                   dns::lookup_result txt = code_only(rcode::nodata)) {
      return egress::dnsbl_observation{std::move(zone), std::move(a),
                                       std::move(txt)};
    };
    auto clean = [&](std::string zone) {
      return list(std::move(zone), code_only(rcode::nxdomain));
    };
    struct row {
      std::vector<egress::dnsbl_observation> lists;
      bool routable;
      status want;
      std::vector<std::string> says;
    };
    std::vector<row> rows{
        {{clean("zen.test"), clean("bl.test")},
         true,
         status::ok,
         {"not listed on zen.test, bl.test"}},
        {{list("zen.test", addresses({"127.0.0.2"}),
               texts({"Listed by SBL, see https://check.example/"})),
          clean("bl.test")},
         true,
         status::fail,
         {"listed on zen.test (127.0.0.2: Listed by SBL, see "
          "https://check.example/)"}},
        {{list("zen.test", addresses({"127.0.0.4"})),
          list("bl.test", addresses({"127.0.0.2"}), texts({"spam trap"}))},
         true,
         status::fail,
         {"zen.test (127.0.0.4: no reason given)", "bl.test (127.0.0.2: spam "
                                                   "trap)"}},
        {{list("zen.test", addresses({"127.255.255.254"})), clean("bl.test")},
         true,
         status::warn,
         {"zen.test refused the query", "not listed on bl.test"}},
        {{list("zen.test", code_only(rcode::timeout))},
         true,
         status::warn,
         {"zen.test: the lookup failed (timeout)"}},
        {{list("zen.test", addresses({"192.0.2.1"}))},
         true,
         status::warn,
         {"not a blocklist code"}},
        {{clean("zen.test")}, false, status::skip, {"private"}},
        {{}, true, status::skip, {"no blocklist"}},
    };
    for (auto& r : rows) {
      auto c = egress::decide_dnsbl("192.0.2.7", r.routable, r.lists);
      CHECK(c.name == "dnsbl");
      CHECK_MESSAGE(c.result == r.want, c.detail);
      for (auto& s : r.says)
        CHECK_MESSAGE(has(c.detail, s), c.detail);
    }
    CHECK(egress::decide_dnsbl("", true, {clean("zen.test")}).result ==
          status::skip);
  }

  TEST_CASE("port25 fails when no reference host opens, warns when some") {
    using o = egress::connect_observation;
    o open1{"mx1.test", "192.0.2.1", true, ""};
    o open2{"mx2.test", "192.0.2.2", true, ""};
    o shut{"mx3.test", "192.0.2.3", false, "timeout"};
    auto all = egress::decide_port25(25, {open1, open2}, "");
    CHECK(all.result == status::ok);
    CHECK(has(all.detail, "mx1.test (192.0.2.1)"));
    auto some = egress::decide_port25(25, {open1, shut}, "");
    CHECK(some.result == status::warn);
    CHECK(has(some.detail, "1 of 2"));
    CHECK(has(some.detail, "mx3.test (192.0.2.3): timeout"));
    auto none = egress::decide_port25(2525, {shut}, "");
    CHECK(none.result == status::fail);
    CHECK(has(none.detail, "outbound port 2525 looks blocked"));
    auto nothing = egress::decide_port25(25, {}, "gmail.com: dns_error");
    CHECK(nothing.result == status::fail);
    CHECK(has(nothing.detail, "gmail.com: dns_error"));
    CHECK(has(nothing.detail, "dns.servers"));
    CHECK(egress::decide_port25(25, {}, "").result == status::skip);
  }

  TEST_CASE("smtp_greeting fails on a refusal and warns on a busy host") {
    auto base = [] {
      egress::greeting_observation o;
      o.attempted = true;
      o.host = "mx.test";
      o.address = "192.0.2.1";
      o.greeting_code = 220;
      o.greeting_text = "mx.test ESMTP";
      o.ehlo_name = "mx.test";
      o.extensions = {"PIPELINING", "STARTTLS"};
      return o;
    };
    struct row {
      egress::greeting_observation o;
      status want;
      std::string says;
    };
    std::vector<row> rows;
    rows.push_back({base(), status::ok,
                    "greeting 220 mx.test ESMTP; EHLO answered by mx.test "
                    "(PIPELINING STARTTLS)"});
    auto rejected = base();
    rejected.greeting_code = 554;
    rejected.greeting_text = "5.7.1 no service";
    rejected.failure = "greeting_rejected";
    rejected.failure_code = 554;
    rejected.failure_text = "5.7.1 no service";
    rejected.ehlo_name.clear();
    rows.push_back({rejected, status::fail, "refused us: 554 5.7.1"});
    auto busy = rejected;
    busy.failure_code = busy.greeting_code = 421;
    busy.failure_text = "4.3.2 busy";
    rows.push_back({busy, status::warn, "try later"});
    auto listed = busy;
    listed.failure_text = "4.7.0 [192.0.2.7] blocked using zen.spamhaus.org";
    rows.push_back({listed, status::fail, "spamhaus"});
    auto helo = base();
    helo.failure = "helo_rejected";
    helo.failure_code = 550;
    helo.failure_text = "5.7.1 bad HELO";
    helo.ehlo_name.clear();
    rows.push_back({helo, status::fail, "refused EHLO: 550"});
    auto closed = base();
    closed.connect_error = "refused";
    closed.via_proxy = true;
    rows.push_back({closed, status::fail, "through the SOCKS5 proxy: refused"});
    auto silent = base();
    silent.greeting_code = 0;
    silent.failure = "timeout";
    rows.push_back({silent, status::warn, "no greeting (timeout)"});
    rows.push_back(
        {egress::greeting_observation{}, status::skip, "no reference"});
    for (auto& r : rows) {
      auto c = egress::decide_smtp_greeting(r.o);
      CHECK(c.name == "smtp_greeting");
      CHECK_MESSAGE(c.result == r.want, c.detail);
      CHECK_MESSAGE(has(c.detail, r.says), c.detail);
    }
  }

  TEST_CASE("policy texts are told from busy ones") {
    CHECK(egress::is_policy_text("5.7.1 Client host [192.0.2.1] blocked "
                                 "using zen.spamhaus.org"));
    CHECK(egress::is_policy_text("5.7.25 does not have a PTR record setup"));
    CHECK(egress::is_policy_text("5.7.606 Access denied, banned sending IP"));
    CHECK_FALSE(egress::is_policy_text("4.3.2 Service busy, try later"));
    CHECK_FALSE(egress::is_policy_text("4.7.0 Too many connections"));
  }

  TEST_CASE("mail_from wants an MX or an A at the sender's domain") {
    using dns::rcode;
    struct row {
      std::string from;
      std::optional<dns::lookup_result> mx, a;
      status want;
      std::string says;
    };
    std::vector<row> rows{
        {"verify@example.io", mx({"mx.example.io"}), std::nullopt, status::ok,
         "has MX mx.example.io"},
        {"verify@example.io", code_only(rcode::nodata),
         addresses({"192.0.2.1"}), status::ok, "no MX but an address"},
        {"verify@example.io", code_only(rcode::nxdomain),
         code_only(rcode::nxdomain), status::warn, "neither MX nor A"},
        {"verify@example.io", mx({"."}), std::nullopt, status::warn, "null MX"},
        {"verify@example.io", code_only(rcode::servfail),
         code_only(rcode::nodata), status::warn, "servfail"},
        {"", std::nullopt, std::nullopt, status::skip, "null sender"},
        {"nodomain", std::nullopt, std::nullopt, status::warn, "no domain"},
    };
    for (auto& r : rows) {
      CAPTURE(r.from);
      auto c = egress::decide_mail_from(r.from, r.mx, r.a);
      CHECK(c.name == "mail_from");
      CHECK_MESSAGE(c.result == r.want, c.detail);
      CHECK_MESSAGE(has(c.detail, r.says), c.detail);
    }
  }

  TEST_CASE("a report is ok while no check fails; gauges map the statuses") {
    egress::report r;
    r.checks = {{"helo_dns", status::ok, ""},
                {"dnsbl", status::warn, ""},
                {"mail_from", status::skip, ""}};
    CHECK(r.ok());
    CHECK(r.failed().empty());
    r.checks.push_back({"port25", status::fail, ""});
    CHECK_FALSE(r.ok());
    CHECK(r.failed() == std::vector<std::string>{"port25"});
    CHECK(egress::gauge_value(status::ok) == 1.0);
    CHECK(egress::gauge_value(status::warn) == 0.5);
    CHECK(egress::gauge_value(status::fail) == 0.0);
    CHECK(egress::gauge_value(status::skip) == std::nullopt);
  }
}
