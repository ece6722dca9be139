#include "core/provider/table.hpp"

#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>

using namespace mailassay::core::provider;

namespace {

constexpr std::string_view small = R"(# a comment
google.com        google       mailbox  # S1
googlemail.com    google       mailbox
mail.protection.outlook.com microsoft365 mailbox
olc.protection.outlook.com  outlook      mailbox

PPHosted.com      proofpoint   gateway
)";

table parsed(std::string_view text) {
  auto t = table::parse(text);
  REQUIRE(t.has_value());
  return std::move(*t);
}

std::string shipped_text() {
  const char* root = std::getenv("MAILASSAY_SOURCE_DIR");
  std::string path =
      std::string{root ? root : "."} + "/data/risk/providers.txt";
  std::ifstream in{path};
  REQUIRE_MESSAGE(in, "cannot read " << path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The provider `t` names for `host`, as "name/kind"; "" for none.
std::string answer(const table& t, std::string_view host) {
  auto* p = t.find(host);
  return p ? p->name + "/" + std::string{to_string(p->kind)} : "";
}

} // namespace

TEST_SUITE("core.provider.table") {
  TEST_CASE("matches a host equal to a suffix or below it, any case, with "
            "a trailing dot") {
    auto t = parsed(small);
    struct row {
      std::string_view host;
      std::string_view expected;
    };
    const row rows[] = {
        {"aspmx.l.google.com", "google/mailbox"},
        {"ALT1.GMAIL-SMTP-IN.L.GOOGLE.COM.", "google/mailbox"},
        {"smtp.google.com", "google/mailbox"},
        {"google.com", "google/mailbox"},
        {"aspmx2.googlemail.com", "google/mailbox"},
        {"contoso-com.mail.protection.outlook.com", "microsoft365/mailbox"},
        {"hotmail-com.olc.protection.outlook.com", "outlook/mailbox"},
        {"mx0a-001b2d01.pphosted.com", "proofpoint/gateway"},
        // Only whole labels match.
        {"notgoogle.com", ""},
        {"google.com.evil.test", ""},
        {"protection.outlook.com", ""},
        {"outlook.com", ""},
        {"", ""},
        {".", ""},
        {"com", ""},
    };
    for (const auto& r : rows) {
      CAPTURE(r.host);
      CHECK(answer(t, r.host) == r.expected);
    }
  }

  TEST_CASE("the longest matching suffix wins, whatever the line order") {
    auto t = parsed("example.net a mailbox\nin.example.net b gateway\n");
    CHECK(answer(t, "mx.in.example.net") == "b/gateway");
    CHECK(answer(t, "mx.out.example.net") == "a/mailbox");
    auto u = parsed("in.example.net b gateway\nexample.net a mailbox\n");
    CHECK(answer(u, "mx.in.example.net") == "b/gateway");
  }

  TEST_CASE("lists each provider name once, sorted") {
    auto t = parsed(small);
    CHECK(t.names() == std::vector<std::string>{"google", "microsoft365",
                                                "outlook", "proofpoint"});
    CHECK(t.size() == 5);
    REQUIRE(t.named("outlook"));
    CHECK(t.named("outlook")->kind == provider_kind::mailbox);
    CHECK(t.named("yahoo") == nullptr);
  }

  TEST_CASE("an empty table matches nothing") {
    table t;
    CHECK(t.find("aspmx.l.google.com") == nullptr);
    CHECK(parsed("# only a comment\n\n").size() == 0);
  }

  TEST_CASE("refuses a bad line, naming it") {
    struct row {
      std::string_view text;
      std::string_view message;
    };
    const row rows[] = {
        {"google.com google\n", "line 1: expected"},
        {"a.com x mailbox\ngoogle.com google mailbox extra\n", "line 2"},
        {"google.com google inbox\n", "kind is mailbox or gateway"},
        {".google.com google mailbox\n", "bad host name suffix"},
        {"google.com. google mailbox\n", "bad host name suffix"},
        {"goo gle.com google mailbox x\n", "line 1"},
        {"go_ogle.com google mailbox\n", "bad host name suffix"},
        {"google.com Google mailbox\n", "bad provider name"},
        {"google.com averyveryverylongname mailbox\n", "bad provider name"},
        {"a.com x mailbox\nb.com x gateway\n",
         "line 2: provider listed with two"},
        {"a.com x mailbox\nA.COM y mailbox\n", "line 2: suffix listed twice"},
    };
    for (const auto& r : rows) {
      CAPTURE(r.text);
      auto t = table::parse(r.text);
      REQUIRE_FALSE(t.has_value());
      CHECK(t.error_value().message.find(r.message) != std::string::npos);
    }
  }

  TEST_CASE("the shipped table names the providers of issue #30") {
    auto t = parsed(shipped_text());
    struct row {
      std::string_view host;
      std::string_view expected;
    };
    const row rows[] = {
        {"smtp.google.com", "google/mailbox"},
        {"alt4.gmail-smtp-in.l.google.com", "google/mailbox"},
        {"aspmx3.googlemail.com", "google/mailbox"},
        {"contoso-com.mail.protection.outlook.com", "microsoft365/mailbox"},
        {"contoso-com.o-v1.mx.microsoft", "microsoft365/mailbox"},
        {"hotmail-com.olc.protection.outlook.com", "outlook/mailbox"},
        {"outlook-com.olc.protection.outlook.com", "outlook/mailbox"},
        {"mta5.am0.yahoodns.net", "yahoo/mailbox"},
        {"mx-aol.mail.gm0.yahoodns.net", "yahoo/mailbox"},
        {"mx01.mail.icloud.com", "icloud/mailbox"},
        {"mx.zoho.eu", "zoho/mailbox"},
        {"in1-smtp.messagingengine.com", "fastmail/mailbox"},
        {"mail.protonmail.ch", "proton/mailbox"},
        {"mx.yandex.net", "yandex/mailbox"},
        {"mxs.mail.ru", "mailru/mailbox"},
        {"mx00.gmx.net", "gmx/mailbox"},
        {"mx-ha03.web.de", "gmx/mailbox"},
        {"mx00.mail.com", "gmx/mailbox"},
        {"mx1.qq.com", "qq/mailbox"},
        {"163mx01.mxmail.netease.com", "netease/mailbox"},
        {"mx0a-00123456.pphosted.com", "proofpoint/gateway"},
        {"mx1-us1.ppe-hosted.com", "proofpoint/gateway"},
        {"us-smtp-inbound-1.mimecast.com", "mimecast/gateway"},
        {"d123.ess.barracudanetworks.com", "barracuda/gateway"},
        {"mx1.hc1234-56.iphmx.com", "cisco/gateway"},
        {"in.tmes.trendmicro.com", "trendmicro/gateway"},
        {"mx-01-eu-west-1.prod.hydra.sophos.com", "sophos/gateway"},
        {"cluster1.eu.mailcontrol.com", "forcepoint/gateway"},
        {"mail.example.org", ""},
    };
    for (const auto& r : rows) {
      CAPTURE(r.host);
      CHECK(answer(t, r.host) == r.expected);
    }
  }
}
