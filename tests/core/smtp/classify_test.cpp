#include "core/smtp/classify.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace mailassay::core::smtp;

namespace {

reply parse_one(const std::string& text) {
  reply_parser p;
  auto out = p.feed(text + "\r\n");
  REQUIRE(out.replies.size() == 1);
  return out.replies[0];
}

struct row {
  const char* reply;
  rcpt_verdict verdict;
  const char* rule;
};

using v = rcpt_verdict;

} // namespace

TEST_SUITE("core.smtp.classify") {
  TEST_CASE("classifies real RCPT replies, enhanced codes first") {
    const row rows[] = {
        // accepted
        {"250 2.1.5 Ok", v::accepted, "code 2xx"},
        {"251 User not local; will forward", v::accepted, "code 2xx"},
        {"354 go ahead", v::protocol_error, "code 3xx"},
        // enhanced codes
        {"550-5.1.1 The email account that you tried to reach does not "
         "exist. Please try\r\n550-5.1.1 double-checking the recipient's email "
         "address for typos or\r\n550 5.1.1 unnecessary spaces. "
         "https://support.google.com/mail/?p=NoSuchUser",
         v::no_such_user, "enhanced 5.1.{0,1,3,6}"},
        {"550 5.1.1 <x@y>: Recipient address rejected: User unknown in "
         "virtual mailbox table",
         v::no_such_user, "enhanced 5.1.{0,1,3,6}"},
        {"550 5.1.0 Address rejected", v::no_such_user,
         "enhanced 5.1.{0,1,3,6}"},
        {"553 5.1.3 Bad recipient address syntax", v::no_such_user,
         "enhanced 5.1.{0,1,3,6}"},
        {"551 5.1.6 Mailbox has moved", v::no_such_user,
         "enhanced 5.1.{0,1,3,6}"},
        {"550 5.1.0 <we@us> sender rejected", v::blocked_by_policy,
         "enhanced 5.1.x (sender)"},
        {"550 5.1.8 <we@us>: Sender address rejected: Domain not found",
         v::blocked_by_policy, "enhanced 5.1.7/5.1.8 (sender)"},
        {"552 5.2.2 The email account that you tried to reach is over quota",
         v::mailbox_full, "enhanced x.2.2"},
        {"452 4.2.2 The email account that you tried to reach is over quota",
         v::mailbox_full, "enhanced x.2.2"},
        {"550 5.2.1 The email account that you tried to reach is disabled.",
         v::disabled, "enhanced 5.2.1"},
        {"450 4.2.1 The user you are trying to contact is receiving mail at a "
         "rate that prevents additional messages from being delivered.",
         v::greylisted_or_throttled, "enhanced 4.x.x"},
        {"554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using "
         "zen.spamhaus.org",
         v::blocked_by_policy, "enhanced 5.7.x"},
        {"550 5.7.1 Unknown user (policy says never invalid)",
         v::blocked_by_policy, "enhanced 5.7.x"},
        {"550 5.7.606 Access denied, banned sending IP [192.0.2.1]",
         v::blocked_by_policy, "enhanced 5.7.x"},
        {"450 4.2.0 <x@y>: Recipient address rejected: Greylisted, see "
         "http://postgrey.schweikert.ch/help/y.html",
         v::greylisted_or_throttled, "enhanced 4.x.x"},
        {"421 4.7.0 Try again later, closing connection.",
         v::greylisted_or_throttled, "enhanced 4.x.x"},
        {"452 4.5.3 Too many recipients", v::too_many_recipients,
         "enhanced x.5.3"},
        {"552 5.5.3 Too many recipients", v::too_many_recipients,
         "enhanced x.5.3"},
        {"452 4.3.1 Insufficient system storage", v::greylisted_or_throttled,
         "enhanced 4.x.x"},
        // text patterns, one row per pattern, with the reply it was written for
        {"550 5.4.1 Recipient address rejected: Access denied. "
         "AS(201806281) [AM0PR01MB1234.eurprd01.prod.exchangelabs.com]",
         v::no_such_user, "recipient address rejected: access denied"},
        {"452 Error: too many recipients", v::too_many_recipients,
         "too many recipients"},
        {"554 Service unavailable; Client host [192.0.2.1] blocked by "
         "zen.spamhaus.org",
         v::blocked_by_policy, "spamhaus"},
        {"554 Service unavailable; Client host [192.0.2.1] blocked using "
         "b.barracudacentral.org",
         v::blocked_by_policy, "blocked using"},
        {"554 resimta-ch2-18v.sys.comcast.net 192.0.2.1 found on one or more "
         "DNSBLs, see http://postmaster.comcast.net/smtp-error-codes.php",
         v::blocked_by_policy, "dnsbl"},
        {"550 Your IP 192.0.2.1 is on our blacklist", v::blocked_by_policy,
         "blacklist"},
        {"554 Rejected: 192.0.2.1 is listed on our blocklist",
         v::blocked_by_policy, "blocklist"},
        {"550 SC-001 (BAY004-MC1F12) Unfortunately, messages from 192.0.2.1 "
         "weren't sent. Please contact your Internet service provider since "
         "part of their network is on our block list.",
         v::blocked_by_policy, "block list"},
        {"550 Message rejected because of spam", v::blocked_by_policy, "spam"},
        {"550 Sender blocked", v::blocked_by_policy, "blocked"},
        {"554 Your access to this mail system has been rejected due to the "
         "sending MTA's poor reputation",
         v::blocked_by_policy, "reputation"},
        {"550 Rejected by local policy", v::blocked_by_policy, "policy"},
        {"550 Access denied", v::blocked_by_policy, "access denied"},
        {"554 <x@y>: Relay access denied", v::blocked_by_policy,
         "access denied"},
        {"550 relay not permitted", v::blocked_by_policy, "not permitted"},
        {"553 sorry, that domain isn't in my list of allowed rcpthosts "
         "(#5.7.1)",
         v::blocked_by_policy, "rcpthosts"},
        {"550 <x@y>... Relaying denied", v::blocked_by_policy,
         "relaying denied"},
        {"550 Client host rejected: cannot find your hostname, [192.0.2.1]",
         v::blocked_by_policy, "client host rejected"},
        {"550 <we@us>: Sender address rejected: undeliverable address",
         v::blocked_by_policy, "sender address rejected"},
        {"550 Reverse DNS lookup failed for 192.0.2.1", v::blocked_by_policy,
         "reverse dns"},
        {"550 The IP address sending this message does not have a PTR record "
         "setup",
         v::blocked_by_policy, "ptr record"},
        {"550 Your IP is not allowed to send mail here", v::blocked_by_policy,
         "ip"},
        {"554 30 Sorry, your message to x@yahoo.com cannot be delivered. This "
         "mailbox is disabled (554.30).",
         v::disabled, "disabled"},
        {"550 Account inactive", v::disabled, "inactive"},
        {"550 Mailbox suspended", v::disabled, "suspended"},
        {"452 <x@y> over quota", v::mailbox_full, "over quota"},
        {"552 <x@y> Quota exceeded (mailbox for user is full)", v::mailbox_full,
         "quota exceeded"},
        {"550 mailbox is full", v::mailbox_full, "mailbox is full"},
        {"450 Mailbox full, try later", v::mailbox_full, "mailbox full"},
        {"550 <x@y>: Recipient address rejected: User unknown in virtual "
         "mailbox table",
         v::no_such_user, "user unknown"},
        {"550 <x@y>... User unknown", v::no_such_user, "user unknown"},
        {"550 unknown user", v::no_such_user, "unknown user"},
        {"550 The email account that you tried to reach does not exist.",
         v::no_such_user, "does not exist"},
        {"554 delivery error: dd This user doesn't have a yahoo.com account "
         "(x@yahoo.com) [0] - mta1234.mail.bf1.yahoo.com",
         v::no_such_user, "user doesn't have a"},
        {"550 5.5.0 Requested action not taken: mailbox unavailable",
         v::no_such_user, "mailbox unavailable"},
        {"550 Unrouteable address", v::no_such_user, "unrouteable address"},
        {"550 No such user (x@y)", v::no_such_user, "no such user"},
        {"550 sorry, no mailbox here by that name. (#5.1.1)", v::no_such_user,
         "no mailbox here"},
        {"550 Mailbox not found", v::no_such_user, "mailbox not found"},
        {"550 Invalid recipient <x@y>", v::no_such_user, "invalid recipient"},
        {"550 Recipient not found", v::no_such_user, "recipient not found"},
        {"550 Unknown recipient", v::no_such_user, "unknown recipient"},
        {"450 <x@y>: Recipient address rejected: Greylisted",
         v::greylisted_or_throttled, "greylist"},
        {"421 Try again later", v::greylisted_or_throttled, "try again later"},
        // basic codes when nothing else decides
        {"452 Requested action not taken", v::too_many_recipients, "code 452"},
        {"451 Local error in processing", v::greylisted_or_throttled,
         "code 4xx"},
        {"552 Requested mail action aborted", v::mailbox_full, "code 552"},
        {"552 5.3.4 Message size exceeds fixed limit", v::other_permanent,
         "code 5xx"},
        {"550 Requested action not taken", v::other_permanent, "code 5xx"},
        {"553 Requested action not taken: mailbox name not allowed",
         v::other_permanent, "code 5xx"},
        // words must be whole words: "ip" in "recipient" is not an IP
        {"550 Recipient rejected", v::other_permanent, "code 5xx"},
        // a 4xx is never permanent, whatever the text says
        {"450 User unknown, try later", v::greylisted_or_throttled, "code 4xx"},
    };
    for (const auto& r : rows) {
      CAPTURE(r.reply);
      auto c = classify_rcpt(parse_one(r.reply));
      CHECK(to_string(c.verdict) == to_string(r.verdict));
      CHECK(c.rule == r.rule);
    }
  }

  TEST_CASE("never calls a plain 550 no_such_user") {
    for (const char* text :
         {"550 Access denied", "550 Requested action not taken", "550",
          "550 Denied by policy", "550 IP 192.0.2.1 has poor reputation"}) {
      CAPTURE(text);
      CHECK(classify_rcpt(parse_one(text)).verdict != v::no_such_user);
    }
  }

  TEST_CASE("keeps code, enhanced code and a trimmed bounded message") {
    auto c = classify_rcpt(parse_one("550 5.1.1   spaced out\tuser   "));
    CHECK(c.code == 550);
    CHECK(c.enhanced == enhanced_code{5, 1, 1});
    CHECK(c.message == "spaced out user");
    auto big = classify_rcpt(parse_one("550 " + std::string(2000, 'z')));
    CHECK(big.message.size() == max_message);
  }

  TEST_CASE("a message that is not UTF-8 is kept as UTF-8, never cut inside "
            "a character") {
    // Latin-1 "ü": replaced, the rest kept.
    auto latin = classify_rcpt(parse_one("550 5.1.1 M\xFCller unknown"));
    CHECK(latin.message == "M\xEF\xBF\xBDller unknown");
    // 299 bytes, then a 2-byte character that would end past the bound.
    auto cut = bounded_message(std::string(299, 'a') + "\xC3\xA9tail");
    CHECK(cut == std::string(299, 'a'));
    auto bytes = bounded_message(std::string(400, '\xFF'));
    CHECK(bytes.size() == 300); // 100 x U+FFFD
    CHECK(bytes.substr(0, 3) == "\xEF\xBF\xBD");
  }

  TEST_CASE("an unasked reason is named in the message, and parses back") {
    struct row {
      unasked_reason why;
      std::string_view text;
    };
    using u = unasked_reason;
    for (auto r : {row{u::budget, "budget"}, row{u::stopped, "stopped"},
                   row{u::unroutable_mx, "unroutable_mx"},
                   row{u::no_mx_address, "no_mx_address"},
                   row{u::all_hosts_failed, "all_hosts_failed"}}) {
      CAPTURE(r.text);
      CHECK(to_string(r.why) == r.text);
      CHECK(parse_unasked_reason(r.text) == r.why);
      auto c = unasked(r.why);
      CHECK(c.verdict == v::not_attempted);
      CHECK(c.code == 0);
      CHECK(c.message == r.text);
      CHECK(c.why_unasked == r.why);
    }
    for (std::string_view text : {"", "Budget", "timeout", "stopped "})
      CHECK_FALSE(parse_unasked_reason(text).has_value());
  }

  TEST_CASE("a classified reply has no unasked reason") {
    CHECK_FALSE(classify_rcpt(parse_one("250 2.1.5 Ok")).why_unasked);
  }

  TEST_CASE("a classification without a reply says who decided and why") {
    auto c = without_reply(v::other_temporary, "no reply in time", "session");
    CHECK(c.verdict == v::other_temporary);
    CHECK(c.code == 0);
    CHECK_FALSE(c.enhanced);
    CHECK(c.message == "no reply in time");
    CHECK(c.rule == "session");
    CHECK_FALSE(c.why_unasked);
  }
}
