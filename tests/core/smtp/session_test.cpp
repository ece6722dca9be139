#include "core/smtp/session.hpp"

#include <doctest/doctest.h>

#include <string>
#include <utility>
#include <vector>

using namespace mailassay::core::smtp;

namespace {

// One exchange: what the server does (reply bytes, or an event "!tls",
// "!tls_failed", "!timeout", "!closed"), and what the session must do:
// the command it sends (without CRLF), "<start_tls>", "<close>" or "" (wait).
struct step {
  std::string server;
  std::string expect;
};

constexpr const char* ehlo_plain = "250-mx.example.org\r\n"
                                   "250-PIPELINING\r\n"
                                   "250 ENHANCEDSTATUSCODES\r\n";
constexpr const char* ehlo_tls = "250-mx.example.org\r\n250 STARTTLS\r\n";
constexpr const char* ehlo_utf8 = "250-mx.example.org\r\n250 SMTPUTF8\r\n";

std::string render(const action& a) {
  switch (a.kind) {
    case action_kind::wait: return "";
    case action_kind::start_tls: return "<start_tls>";
    case action_kind::close: return "<close>";
    case action_kind::need_more: return "<need_more>";
    case action_kind::send:
      REQUIRE(a.line.size() >= 2);
      CHECK(a.line.substr(a.line.size() - 2) == "\r\n");
      return a.line.substr(0, a.line.size() - 2);
  }
  return "?";
}

session_config config(tls_policy tls = tls_policy::opportunistic) {
  session_config c;
  c.host = "mx.example.org";
  c.helo = "probe.mailassay.test";
  c.mail_from = "verify@mailassay.test";
  c.tls = tls;
  return c;
}

session_result run(session_config cfg, session_request req,
                   const std::vector<step>& script) {
  auto made = session::make(std::move(cfg), std::move(req));
  REQUIRE(made.has_value());
  auto& s = *made;
  CHECK(render(s.on_connected()).empty());
  for (const auto& st : script) {
    CAPTURE(st.server);
    action a;
    if (st.server == "!tls")
      a = s.on_tls_established();
    else if (st.server == "!tls_failed")
      a = s.on_tls_failed();
    else if (st.server == "!timeout")
      a = s.on_timeout();
    else if (st.server == "!closed")
      a = s.on_connection_closed();
    else if (st.server == "!finish")
      a = s.finish();
    else if (st.server.rfind("!give:", 0) == 0) {
      // "!give:address" or "!give:address|probe".
      auto arg = st.server.substr(6);
      auto bar = arg.find('|');
      a = bar == std::string::npos
              ? s.give(arg)
              : s.give(arg.substr(0, bar), arg.substr(bar + 1));
    } else
      a = s.on_data(st.server);
    CHECK(render(a) == st.expect);
  }
  CHECK(s.done());
  return s.result();
}

session_request one(std::string address, std::string probe = {}) {
  return session_request{{std::move(address)}, std::move(probe)};
}

// The opening every plain dialogue shares.
std::vector<step> opening(const char* ehlo = ehlo_plain) {
  return {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
          {ehlo, "MAIL FROM:<verify@mailassay.test>"}};
}

std::vector<step> operator+(std::vector<step> a, std::vector<step> b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

} // namespace

TEST_SUITE("core.smtp.session") {
  TEST_CASE("an accepted address ends with QUIT and no failure") {
    auto r =
        run(config(), one("alice@example.org"),
            opening() + std::vector<step>{
                            {"250 2.1.0 Ok\r\n", "RCPT TO:<alice@example.org>"},
                            {"250 2.1.5 Ok\r\n", "QUIT"},
                            {"221 2.0.0 Bye\r\n", "<close>"},
                        });
    CHECK(r.failure == session_failure::none);
    CHECK(r.host == "mx.example.org");
    CHECK_FALSE(r.tls);
    CHECK(r.caps.pipelining);
    REQUIRE(r.addresses.size() == 1);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r.addresses[0].rcpt.code == 250);
    CHECK_FALSE(r.addresses[0].catch_all.has_value());
  }

  TEST_CASE("a 550 5.1.1 is no_such_user and shows the domain is no "
            "catch-all without a probe") {
    auto r =
        run(config(), one("ghost@example.org", "x7q2k9@example.org"),
            opening() +
                std::vector<step>{
                    {"250 2.1.0 Ok\r\n", "RCPT TO:<ghost@example.org>"},
                    {"550 5.1.1 <ghost@example.org>: User unknown\r\n", "QUIT"},
                    {"!closed", "<close>"},
                });
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(r.addresses[0].rcpt.enhanced == enhanced_code{5, 1, 1});
    CHECK(r.addresses[0].catch_all == false);
    CHECK(r.rcpt_sent == 1);
  }

  TEST_CASE("a catch-all domain accepts both the address and the probe") {
    auto r = run(config(), one("alice@example.org", "x7q2k9@example.org"),
                 opening() + std::vector<step>{
                                 {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                                 {"250 Ok\r\n", "RCPT TO:<x7q2k9@example.org>"},
                                 {"250 Ok\r\n", "QUIT"},
                                 {"221 Bye\r\n", "<close>"},
                             });
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r.addresses[0].catch_all == true);
    CHECK(r.catch_all == true);
  }

  TEST_CASE("a refused probe means no catch-all; an erroring probe is null") {
    auto refused =
        run(config(), one("alice@example.org", "x7q2k9@example.org"),
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                            {"250 Ok\r\n", "RCPT TO:<x7q2k9@example.org>"},
                            {"550 5.1.1 User unknown\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(refused.addresses[0].catch_all == false);
    auto deferred =
        run(config(), one("alice@example.org", "x7q2k9@example.org"),
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                            {"250 Ok\r\n", "RCPT TO:<x7q2k9@example.org>"},
                            {"450 4.2.0 Greylisted\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK_FALSE(deferred.addresses[0].catch_all.has_value());
    CHECK(deferred.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("after a 550 5.1.1 no probe is sent and the verdict stays "
            "false") {
    session_request req{{"ghost@example.org", "alice@example.org"},
                        "x7q2k9@example.org"};
    auto r =
        run(config(), req,
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<ghost@example.org>"},
                            {"550 5.1.1 User unknown\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                            // No RCPT for the probe: false is known already.
                            {"250 Ok\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(r.catch_all == false);
    CHECK(r.rcpt_sent == 2);
    for (const auto& a : r.addresses)
      CHECK(a.catch_all == false);
  }

  TEST_CASE("a 550 5.1.1 after an accepted probe makes the verdict false") {
    session_request req{{"alice@example.org", "ghost@example.org"},
                        "x7q2k9@example.org"};
    auto r =
        run(config(), req,
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                            {"250 Ok\r\n", "RCPT TO:<x7q2k9@example.org>"},
                            {"250 Ok\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<ghost@example.org>"},
                            {"550 5.1.1 User unknown\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(r.catch_all == false);
    CHECK(r.addresses[0].catch_all == false);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::no_such_user);
  }

  TEST_CASE("a greylisted address is greylisted_or_throttled") {
    auto r = run(config(), one("alice@example.org"),
                 opening() + std::vector<step>{
                                 {"250 Ok\r\n", "RCPT TO:<alice@example.org>"},
                                 {"450 4.2.0 <alice@example.org>: Recipient "
                                  "address rejected: Greylisted\r\n",
                                  "QUIT"},
                                 {"221 Bye\r\n", "<close>"},
                             });
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::greylisted_or_throttled);
    CHECK(r.addresses[0].rcpt.code == 450);
  }

  TEST_CASE("several addresses share a session with RSET between") {
    session_request req{{"a@example.org", "b@example.org", "c@example.org"},
                        "zz9@example.org"};
    auto r =
        run(config(), req,
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                            {"550 5.2.1 Mailbox disabled\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<b@example.org>"},
                            {"552 5.2.2 Mailbox full\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<c@example.org>"},
                            {"250 Ok\r\n", "RCPT TO:<zz9@example.org>"},
                            {"550 5.1.1 unknown\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::disabled);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::mailbox_full);
    CHECK(r.addresses[2].rcpt.verdict == rcpt_verdict::accepted);
    for (const auto& a : r.addresses)
      CHECK(a.catch_all == false);
    CHECK(r.rcpt_sent == 4);
  }

  TEST_CASE("a 452 after two RCPTs stops the session and leaves the rest "
            "for a new one") {
    session_request req{
        {"a@example.org", "b@example.org", "c@example.org", "d@example.org"},
        {}};
    auto r =
        run(config(), req,
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                            {"250 Ok\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<b@example.org>"},
                            {"250 Ok\r\n", "RSET"},
                            {"250 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                            {"250 Ok\r\n", "RCPT TO:<c@example.org>"},
                            {"452 4.5.3 Too many recipients\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(r.failure == session_failure::none);
    CHECK_FALSE(r.addresses[0].retry_in_new_session());
    CHECK_FALSE(r.addresses[1].retry_in_new_session());
    CHECK(r.addresses[2].rcpt.verdict == rcpt_verdict::too_many_recipients);
    CHECK(r.addresses[2].retry_in_new_session());
    CHECK(r.addresses[3].rcpt.verdict == rcpt_verdict::not_attempted);
    CHECK(r.addresses[3].retry_in_new_session());
  }

  TEST_CASE("a 421 greeting fails the host without a command") {
    auto r = run(config(), one("a@example.org"),
                 {{"421 4.3.2 Service not available, busy\r\n", "<close>"}});
    CHECK(r.failure == session_failure::greeting_rejected);
    CHECK(r.failure_code == 421);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::not_attempted);
  }

  TEST_CASE("a 554 greeting is answered with QUIT") {
    auto r = run(config(), one("a@example.org"),
                 {{"554 5.7.1 No SMTP service here\r\n", "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.failure == session_failure::greeting_rejected);
    CHECK(r.failure_message == "No SMTP service here");
  }

  TEST_CASE("a refused EHLO falls back to HELO without extensions") {
    auto r = run(
        config(tls_policy::opportunistic), one("a@example.org"),
        {{"220 old.example.org\r\n", "EHLO probe.mailassay.test"},
         {"502 5.5.1 Command not implemented\r\n", "HELO probe.mailassay.test"},
         {"250 old.example.org\r\n", "MAIL FROM:<verify@mailassay.test>"},
         {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
         {"250 Ok\r\n", "QUIT"},
         {"221 Bye\r\n", "<close>"}});
    CHECK_FALSE(r.caps.esmtp);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("a refused HELO fails the host") {
    auto r = run(config(), one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {"500 what\r\n", "HELO probe.mailassay.test"},
                  {"550 go away\r\n", "QUIT"},
                  {"!closed", "<close>"}});
    CHECK(r.failure == session_failure::helo_rejected);
  }

  TEST_CASE("STARTTLS is used when offered and EHLO is sent again") {
    auto r = run(
        config(tls_policy::opportunistic), one("a@example.org"),
        {{"220 mx\r\n", "EHLO probe.mailassay.test"},
         {ehlo_tls, "STARTTLS"},
         {"220 2.0.0 Ready to start TLS\r\n", "<start_tls>"},
         {"!tls", "EHLO probe.mailassay.test"},
         {"250-mx\r\n250 SIZE 1000\r\n", "MAIL FROM:<verify@mailassay.test>"},
         {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
         {"250 Ok\r\n", "QUIT"},
         {"221 Bye\r\n", "<close>"}});
    CHECK(r.tls);
    CHECK(r.caps.size == 1000u);
    CHECK_FALSE(r.caps.starttls);
  }

  TEST_CASE("STARTTLS is skipped when the policy says never") {
    auto r = run(config(tls_policy::never), one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_tls, "MAIL FROM:<verify@mailassay.test>"},
                  {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                  {"250 Ok\r\n", "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK_FALSE(r.tls);
  }

  TEST_CASE("required TLS fails the host when STARTTLS is not offered") {
    auto r = run(config(tls_policy::required), one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_plain, "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.failure == session_failure::tls_unavailable);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::not_attempted);
  }

  TEST_CASE("a refused STARTTLS continues in clear unless TLS is required") {
    auto clear = run(config(tls_policy::opportunistic), one("a@example.org"),
                     {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                      {ehlo_tls, "STARTTLS"},
                      {"454 4.7.0 TLS not available\r\n",
                       "MAIL FROM:<verify@mailassay.test>"},
                      {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                      {"250 Ok\r\n", "QUIT"},
                      {"221 Bye\r\n", "<close>"}});
    CHECK(clear.failure == session_failure::none);
    CHECK_FALSE(clear.tls);
    auto required = run(config(tls_policy::required), one("a@example.org"),
                        {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                         {ehlo_tls, "STARTTLS"},
                         {"454 4.7.0 TLS not available\r\n", "QUIT"},
                         {"221 Bye\r\n", "<close>"}});
    CHECK(required.failure == session_failure::tls_unavailable);
  }

  TEST_CASE("a failed TLS handshake closes the session") {
    auto r = run(config(tls_policy::required), one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_tls, "STARTTLS"},
                  {"220 Go ahead\r\n", "<start_tls>"},
                  {"!tls_failed", "<close>"}});
    CHECK(r.failure == session_failure::tls_failed);
  }

  TEST_CASE("bytes injected after the STARTTLS reply are refused") {
    auto r = run(config(), one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_tls, "STARTTLS"},
                  {"220 Go ahead\r\n250 Ok", "<close>"}});
    CHECK(r.failure == session_failure::protocol_error);
  }

  TEST_CASE("SMTPUTF8 is asked for when an address needs it and offered") {
    auto r = run(config(), one("jos\xc3\xa9@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_utf8, "MAIL FROM:<verify@mailassay.test> SMTPUTF8"},
                  {"250 Ok\r\n", "RCPT TO:<jos\xc3\xa9@example.org>"},
                  {"250 Ok\r\n", "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("an address needing SMTPUTF8 is unknown when it is not offered") {
    session_request req{{"jos\xc3\xa9@example.org", "bob@example.org"}, {}};
    auto r = run(config(), req,
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_plain, "MAIL FROM:<verify@mailassay.test>"},
                  {"250 Ok\r\n", "RCPT TO:<bob@example.org>"},
                  {"250 Ok\r\n", "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::smtputf8_unsupported);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::accepted);
  }

  TEST_CASE("a refused sender blocks every address, never invalid") {
    session_request req{{"a@example.org", "b@example.org"}, {}};
    auto r =
        run(config(), req,
            opening() + std::vector<step>{
                            {"550 5.7.1 Sender rejected by policy\r\n", "QUIT"},
                            {"221 Bye\r\n", "<close>"},
                        });
    CHECK(r.failure == session_failure::sender_rejected);
    for (const auto& a : r.addresses)
      CHECK(a.rcpt.verdict == rcpt_verdict::blocked_by_policy);
  }

  TEST_CASE("the null sender is sent as MAIL FROM:<>") {
    auto cfg = config();
    cfg.mail_from.clear();
    auto r = run(cfg, one("a@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_plain, "MAIL FROM:<>"},
                  {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                  {"250 Ok\r\n", "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.failure == session_failure::none);
  }

  TEST_CASE("CR, LF, NUL and angle brackets in inputs never reach the wire") {
    for (const std::string& bad : std::vector<std::string>{
             "a@example.org\r\nDATA", "a@example.org\nRSET", "a\r@example.org",
             "a>@example.org", "<a@example.org",
             std::string("a\0b@x.org", 9)}) {
      CAPTURE(bad);
      auto made = session::make(config(), one(bad));
      REQUIRE(made.has_value());
      CHECK(made->result().addresses[0].rcpt.verdict ==
            rcpt_verdict::protocol_error);
    }
    auto r = run(config(),
                 session_request{{"a@example.org\r\nDATA", "b@example.org"},
                                 "p@example.org\r\nDATA"},
                 opening() + std::vector<step>{
                                 {"250 Ok\r\n", "RCPT TO:<b@example.org>"},
                                 {"250 Ok\r\n", "QUIT"},
                                 {"221 Bye\r\n", "<close>"},
                             });
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::protocol_error);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::accepted);
    CHECK_FALSE(r.catch_all.has_value());
    for (const char* helo : {"", "a b", "x\r\nRSET", "h\xc3\xa9.org"}) {
      auto cfg = config();
      cfg.helo = helo;
      CHECK_FALSE(session::make(cfg, one("a@example.org")).has_value());
    }
    for (const char* from : {"v@x.org\r\nRCPT TO:<y>", "v@x.org>", "<v"}) {
      auto cfg = config();
      cfg.mail_from = from;
      CHECK_FALSE(session::make(cfg, one("a@example.org")).has_value());
    }
  }

  TEST_CASE("a batch of only refused inputs just says QUIT") {
    auto r = run(config(), one("bad\n@example.org"),
                 {{"220 mx\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_plain, "QUIT"},
                  {"221 Bye\r\n", "<close>"}});
    CHECK(r.rcpt_sent == 0);
  }

  TEST_CASE("garbage, extra replies, timeouts and closes end the session") {
    auto garbage =
        run(config(), one("a@example.org"),
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                            {"\x16\x03\x01 garbage\r\n", "<close>"},
                        });
    CHECK(garbage.failure == session_failure::protocol_error);
    CHECK(garbage.addresses[0].rcpt.verdict == rcpt_verdict::protocol_error);

    auto extra = run(config(), one("a@example.org"),
                     {{"220 mx\r\n250 unasked\r\n", "<close>"}});
    CHECK(extra.failure == session_failure::protocol_error);

    auto overlong = run(config(), one("a@example.org"),
                        {{"220 " + std::string(5000, 'x'), "<close>"}});
    CHECK(overlong.failure == session_failure::protocol_error);

    auto slow = run(config(), one("a@example.org"),
                    opening() + std::vector<step>{
                                    {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                                    {"!timeout", "<close>"},
                                });
    CHECK(slow.failure == session_failure::timeout);
    CHECK(slow.addresses[0].rcpt.verdict == rcpt_verdict::other_temporary);

    auto dropped =
        run(config(), one("a@example.org"),
            opening() + std::vector<step>{
                            {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                            {"!closed", "<close>"},
                        });
    CHECK(dropped.failure == session_failure::connection_closed);

    auto tarpit =
        run(config(), one("a@example.org"), {{"!timeout", "<close>"}});
    CHECK(tarpit.failure == session_failure::timeout);
    CHECK(tarpit.addresses[0].rcpt.verdict == rcpt_verdict::not_attempted);
  }

  TEST_CASE("garbage after QUIT ends the session without a failure") {
    auto r = run(config(), one("a@example.org"),
                 opening() + std::vector<step>{
                                 {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                                 {"250 Ok\r\n", "QUIT"},
                                 {"221 Bye", ""},
                                 {"\x01garbage\r\n", "<close>"},
                             });
    CHECK(r.failure == session_failure::none);
  }

  TEST_CASE("a 421 mid-session closes without QUIT") {
    session_request req{{"a@example.org", "b@example.org"}, {}};
    auto r = run(config(), req,
                 opening() + std::vector<step>{
                                 {"250 Ok\r\n", "RCPT TO:<a@example.org>"},
                                 {"421 4.7.0 Try again later, closing "
                                  "connection.\r\n",
                                  "<close>"},
                             });
    CHECK(r.failure == session_failure::server_closing);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::greylisted_or_throttled);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::not_attempted);
  }

  TEST_CASE("replies fed byte by byte drive the same dialogue") {
    auto made = session::make(config(), one("a@example.org"));
    REQUIRE(made.has_value());
    auto& s = *made;
    s.on_connected();
    std::vector<std::string> sent;
    for (const std::string& chunk :
         std::vector<std::string>{"220 mx\r\n", ehlo_plain, "250 Ok\r\n",
                                  "250 2.1.5 Ok\r\n", "221 Bye\r\n"})
      for (char c : chunk) {
        auto a = s.on_data(std::string_view{&c, 1});
        if (a.kind != action_kind::wait)
          sent.push_back(render(a));
      }
    CHECK(sent == std::vector<std::string>{"EHLO probe.mailassay.test",
                                           "MAIL FROM:<verify@mailassay.test>",
                                           "RCPT TO:<a@example.org>", "QUIT",
                                           "<close>"});
    CHECK(s.result().addresses[0].rcpt.verdict == rcpt_verdict::accepted);
  }
}

TEST_SUITE("core.smtp.session.open_ended") {
  // A session shared by the callers of one route: it asks for each address
  // when it is ready for one.
  session_request open_ended() {
    session_request r;
    r.open_ended = true;
    return r;
  }

  TEST_CASE("asks for work after the greeting and after each address") {
    auto r =
        run(config(tls_policy::never), open_ended(),
            {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
             {ehlo_plain, "<need_more>"},
             {"!give:ann@example.org", "MAIL FROM:<verify@mailassay.test>"},
             {"250 2.1.0 Ok\r\n", "RCPT TO:<ann@example.org>"},
             {"250 2.1.5 Ok\r\n", "<need_more>"},
             // A transaction ran: RSET before the next one.
             {"!give:bob@example.org", "RSET"},
             {"250 2.0.0 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
             {"250 2.1.0 Ok\r\n", "RCPT TO:<bob@example.org>"},
             {"550 5.1.1 <bob@example.org>: User unknown\r\n", "<need_more>"},
             {"!finish", "QUIT"},
             {"221 2.0.0 Bye\r\n", "<close>"}});
    REQUIRE(r.addresses.size() == 2);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(r.addresses[1].rcpt.verdict == rcpt_verdict::no_such_user);
    CHECK(r.failure == session_failure::none);
    CHECK(r.rcpt_sent == 2);
    // A mailbox refused as unknown: not a catch-all.
    CHECK(r.catch_all == false);
  }

  TEST_CASE("sends the catch-all probe given with an address once it is "
            "accepted") {
    auto r = run(config(tls_policy::never), open_ended(),
                 {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
                  {ehlo_plain, "<need_more>"},
                  {"!give:ann@example.org|zq7@example.org",
                   "MAIL FROM:<verify@mailassay.test>"},
                  {"250 2.1.0 Ok\r\n", "RCPT TO:<ann@example.org>"},
                  {"250 2.1.5 Ok\r\n", "RCPT TO:<zq7@example.org>"},
                  {"250 2.1.5 Ok\r\n", "<need_more>"},
                  // The verdict is known: a later probe is not sent.
                  {"!give:bob@example.org|zq8@example.org", "RSET"},
                  {"250 2.0.0 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                  {"250 2.1.0 Ok\r\n", "RCPT TO:<bob@example.org>"},
                  {"250 2.1.5 Ok\r\n", "<need_more>"},
                  {"!finish", "QUIT"},
                  {"221 2.0.0 Bye\r\n", "<close>"}});
    CHECK(r.catch_all == true);
    CHECK(r.rcpt_sent == 3);
  }

  TEST_CASE("a server that closes while the session waits for work ends it "
            "without touching the answered addresses") {
    auto r =
        run(config(tls_policy::never), open_ended(),
            {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
             {ehlo_plain, "<need_more>"},
             {"!give:ann@example.org", "MAIL FROM:<verify@mailassay.test>"},
             {"250 2.1.0 Ok\r\n", "RCPT TO:<ann@example.org>"},
             {"250 2.1.5 Ok\r\n", "<need_more>"},
             {"!closed", "<close>"}});
    CHECK(r.failure == session_failure::connection_closed);
    REQUIRE(r.addresses.size() == 1);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    // A reply while idle (a server's 421 time-out) ends it too.
    auto late =
        run(config(tls_policy::never), open_ended(),
            {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
             {ehlo_plain, "<need_more>"},
             {"421 4.4.2 Idle time-out\r\n", "<close>"}});
    CHECK(late.failure == session_failure::protocol_error);
  }

  TEST_CASE("an unsafe address never reaches the wire, and work outside the "
            "idle state is ignored") {
    auto made = session::make(config(tls_policy::never), open_ended());
    REQUIRE(made.has_value());
    auto& s = *made;
    CHECK(render(s.give("ann@example.org")) == "");
    CHECK(render(s.finish()) == "");
    s.on_connected();
    CHECK(render(s.on_data("220 mx ESMTP\r\n")) == "EHLO probe.mailassay.test");
    CHECK(render(s.on_data(ehlo_plain)) == "<need_more>");
    CHECK(render(s.give("evil@example.org>\r\nDATA")) == "<need_more>");
    REQUIRE(s.result().addresses.size() == 1);
    CHECK(s.result().addresses[0].rcpt.verdict == rcpt_verdict::protocol_error);
    CHECK(render(s.give("ann@example.org")) ==
          "MAIL FROM:<verify@mailassay.test>");
    // Not idle: ignored.
    CHECK(render(s.give("bob@example.org")) == "");
    CHECK(render(s.finish()) == "");
    CHECK(s.result().addresses.size() == 2);
  }

  TEST_CASE("a 452 to a given address ends the session for a new one") {
    auto r =
        run(config(tls_policy::never), open_ended(),
            {{"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
             {ehlo_plain, "<need_more>"},
             {"!give:ann@example.org", "MAIL FROM:<verify@mailassay.test>"},
             {"250 2.1.0 Ok\r\n", "RCPT TO:<ann@example.org>"},
             {"452 4.5.3 Error: too many recipients\r\n", "QUIT"},
             {"221 2.0.0 Bye\r\n", "<close>"}});
    REQUIRE(r.addresses.size() == 1);
    CHECK(r.addresses[0].rcpt.verdict == rcpt_verdict::too_many_recipients);
    CHECK(r.addresses[0].retry_in_new_session());
  }

  TEST_CASE("a 452 to the probe is asked again alone for a server that takes "
            "one RCPT per transaction, and never decides the address") {
    auto cfg = config(tls_policy::never);
    cfg.probe_alone_after_452 = true;
    auto opening_ann = std::vector<step>{
        {"220 mx.example.org ESMTP\r\n", "EHLO probe.mailassay.test"},
        {ehlo_plain, "<need_more>"},
        {"!give:ann@example.org|zq7@example.org",
         "MAIL FROM:<verify@mailassay.test>"},
        {"250 2.1.0 Ok\r\n", "RCPT TO:<ann@example.org>"},
        {"250 2.1.5 Ok\r\n", "RCPT TO:<zq7@example.org>"},
        // Consumer Outlook.com's answer to a second RCPT.
        {"452 4.5.3 Too many recipients (AS780090)\r\n", "RSET"},
        {"250 2.0.0 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
        {"250 2.1.0 Ok\r\n", "RCPT TO:<zq7@example.org>"}};
    auto refused =
        run(cfg, open_ended(),
            opening_ann +
                std::vector<step>{
                    {"550 5.5.0 Requested action not taken: mailbox "
                     "unavailable\r\n",
                     "<need_more>"},
                    {"!give:bob@example.org", "RSET"},
                    {"250 2.0.0 Ok\r\n", "MAIL FROM:<verify@mailassay.test>"},
                    {"250 2.1.0 Ok\r\n", "RCPT TO:<bob@example.org>"},
                    {"250 2.1.5 Ok\r\n", "<need_more>"},
                    {"!finish", "QUIT"},
                    {"221 2.0.0 Bye\r\n", "<close>"}});
    REQUIRE(refused.addresses.size() == 2);
    CHECK(refused.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(refused.addresses[1].rcpt.verdict == rcpt_verdict::accepted);
    CHECK(refused.catch_all == false);
    CHECK(refused.failure == session_failure::none);
    CHECK(refused.rcpt_sent == 4);
    // A second 452 to the lone probe: no verdict, the session ends as any
    // 452 ends it; the address keeps its answer.
    auto again =
        run(cfg, open_ended(),
            opening_ann +
                std::vector<step>{{"452 4.5.3 Too many recipients\r\n", "QUIT"},
                                  {"221 2.0.0 Bye\r\n", "<close>"}});
    REQUIRE(again.addresses.size() == 1);
    CHECK(again.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK_FALSE(again.catch_all.has_value());
    // Without the habit (a host of no known provider) the first 452 to the
    // probe ends the session, as before.
    auto plain =
        run(config(tls_policy::never), open_ended(),
            std::vector<step>(opening_ann.begin(), opening_ann.begin() + 5) +
                std::vector<step>{{"452 4.5.3 Too many recipients\r\n", "QUIT"},
                                  {"221 2.0.0 Bye\r\n", "<close>"}});
    CHECK(plain.addresses[0].rcpt.verdict == rcpt_verdict::accepted);
    CHECK_FALSE(plain.catch_all.has_value());
    CHECK(plain.rcpt_sent == 2);
  }

  TEST_CASE("TLS policies are named as the configuration spells them") {
    struct row {
      tls_policy policy;
      std::string_view text;
    };
    for (auto r : {row{tls_policy::never, "never"},
                   row{tls_policy::opportunistic, "opportunistic"},
                   row{tls_policy::required, "required"}}) {
      CHECK(to_string(r.policy) == r.text);
      CHECK(parse_tls_policy(r.text) == r.policy);
    }
    for (std::string_view text : {"", "Never", "none", "starttls", "required "})
      CHECK_FALSE(parse_tls_policy(text).has_value());
  }
}
