#include "core/smtp/classify.hpp"

#include "core/base/ascii.hpp"
#include "core/base/utf8.hpp"

#include <array>

namespace mailassay::core::smtp {

namespace {

using v = rcpt_verdict;

// One reply-text pattern: applies to replies of class `klass` (4 or 5, 0 for
// both) and matches when the lower-cased text contains `needle` (as a whole
// word when `word`). Rows are tried in order; the first match decides.
struct text_rule {
  int klass;
  std::string_view needle;
  rcpt_verdict verdict;
  bool word = false;
};

// Repetitive by design: one row per pattern, each with the real reply it was
// written for, so that a row is reviewed against its reply; rows alike in
// shape are different servers' wordings, not repeated logic.
// clang-format off
constexpr std::array text_rules{
    // Microsoft 365 directory-based edge blocking rejects unknown recipients
    // with "access denied", so this row precedes the policy rows:
    // "550 5.4.1 Recipient address rejected: Access denied. AS(201806281)"
    text_rule{5, "recipient address rejected: access denied", v::no_such_user},

    // Postfix smtpd_recipient_limit: "452 4.5.3 Error: too many recipients"
    // Exchange: "452 4.5.3 Too many recipients"
    text_rule{0, "too many recipients", v::too_many_recipients},

    // ---- policy: the server refuses us, not the mailbox -----------------
    // Postfix reject_rbl_client: "554 5.7.1 Service unavailable; Client host
    // [192.0.2.1] blocked using zen.spamhaus.org; https://www.spamhaus.org/..."
    text_rule{5, "spamhaus", v::blocked_by_policy},
    // Same, other lists: "554 Service unavailable; Client host [192.0.2.1]
    // blocked using b.barracudacentral.org"
    text_rule{5, "blocked using", v::blocked_by_policy},
    // Comcast: "554 resimta-ch2-18v.sys.comcast.net 192.0.2.1 found on one or
    // more DNSBLs, see http://postmaster.comcast.net/smtp-error-codes.php"
    text_rule{5, "dnsbl", v::blocked_by_policy},
    // "550 Your IP 192.0.2.1 is on our blacklist"
    text_rule{5, "blacklist", v::blocked_by_policy},
    // "554 Rejected: 192.0.2.1 is listed on our blocklist"
    text_rule{5, "blocklist", v::blocked_by_policy},
    // Outlook.com: "550 SC-001 (BAY004-MC1F12) Unfortunately, messages from
    // 192.0.2.1 weren't sent. Please contact your Internet service provider
    // since part of their network is on our block list."
    text_rule{5, "block list", v::blocked_by_policy},
    // "550 Message rejected because of spam" / Yahoo "553 5.7.1 [BL21]
    // Connections will not be accepted from 192.0.2.1, because the ip is in
    // Spamhaus's list" (the code decides that one already)
    text_rule{5, "spam", v::blocked_by_policy, true},
    // "550 Blocked" / "550 Sender blocked"
    text_rule{5, "blocked", v::blocked_by_policy, true},
    // "554 Your access to this mail system has been rejected due to the
    // sending MTA's poor reputation"
    text_rule{5, "reputation", v::blocked_by_policy},
    // "550 Rejected by local policy" / "554 Message rejected for policy
    // reasons"
    text_rule{5, "policy", v::blocked_by_policy},
    // "550 Access denied" / Postfix "554 5.7.1 <x@y>: Relay access denied"
    text_rule{5, "access denied", v::blocked_by_policy},
    // "550 5.7.1 Relaying not permitted" / Exim "550 relay not permitted"
    text_rule{5, "not permitted", v::blocked_by_policy},
    // qmail: "553 sorry, that domain isn't in my list of allowed rcpthosts
    // (#5.7.1)" - this host does not take mail for the domain; nothing is
    // known about the mailbox.
    text_rule{5, "rcpthosts", v::blocked_by_policy},
    // Sendmail: "550 5.7.1 <x@y>... Relaying denied"
    text_rule{5, "relaying denied", v::blocked_by_policy},
    // Postfix reject_unknown_client_hostname: "550 5.7.1 Client host
    // rejected: cannot find your hostname, [192.0.2.1]"
    text_rule{5, "client host rejected", v::blocked_by_policy},
    // Postfix reject_unverified_sender: "550 5.1.7 <we@us>: Sender address
    // rejected: undeliverable address"
    text_rule{5, "sender address rejected", v::blocked_by_policy},
    // Gmail: "550-5.7.25 The IP address sending this message does not have a
    // PTR record setup" / "550 Reverse DNS lookup failed for 192.0.2.1"
    text_rule{5, "reverse dns", v::blocked_by_policy},
    text_rule{5, "ptr record", v::blocked_by_policy},
    // "550 Your IP is not allowed to send mail here"
    text_rule{5, "ip", v::blocked_by_policy, true},

    // ---- disabled -------------------------------------------------------
    // Gmail: "550-5.2.1 The email account that you tried to reach is
    // disabled." / Yahoo: "554 30 Sorry, your message to x@yahoo.com cannot
    // be delivered. This mailbox is disabled (554.30)."
    text_rule{5, "disabled", v::disabled},
    // "550 Account inactive"
    text_rule{5, "inactive", v::disabled},
    // "550 Mailbox suspended"
    text_rule{5, "suspended", v::disabled},

    // ---- mailbox full ---------------------------------------------------
    // Gmail: "552-5.2.2 The email account that you tried to reach is over
    // quota." / "452 <x@y> over quota"
    text_rule{0, "over quota", v::mailbox_full},
    // Dovecot LMTP: "552 5.2.2 <x@y> Quota exceeded (mailbox for user is
    // full)"
    text_rule{0, "quota exceeded", v::mailbox_full},
    // Exim: "550 mailbox is full"
    text_rule{0, "mailbox is full", v::mailbox_full},
    // "552 Mailbox full"
    text_rule{0, "mailbox full", v::mailbox_full},

    // ---- no such user (5xx only) ----------------------------------------
    // Postfix: "550 5.1.1 <x@y>: Recipient address rejected: User unknown in
    // virtual mailbox table" (also "... in local recipient table"),
    // Sendmail: "550 5.1.1 <x@y>... User unknown"
    text_rule{5, "user unknown", v::no_such_user},
    // Courier: "550 unknown user"
    text_rule{5, "unknown user", v::no_such_user},
    // Gmail: "550-5.1.1 The email account that you tried to reach does not
    // exist." / "550 Mailbox does not exist"
    text_rule{5, "does not exist", v::no_such_user},
    // Yahoo: "554 delivery error: dd This user doesn't have a yahoo.com
    // account (x@yahoo.com) [0] - mta1234.mail.bf1.yahoo.com"
    text_rule{5, "user doesn't have a", v::no_such_user},
    // Outlook/Exchange: "550 5.5.0 Requested action not taken: mailbox
    // unavailable"
    text_rule{5, "mailbox unavailable", v::no_such_user},
    // Exim: "550 Unrouteable address"
    text_rule{5, "unrouteable address", v::no_such_user},
    // "550 5.1.1 No such user here" / "550 No such user (x@y)"
    text_rule{5, "no such user", v::no_such_user},
    // qmail: "550 sorry, no mailbox here by that name. (#5.1.1)"
    text_rule{5, "no mailbox here", v::no_such_user},
    // "550 Mailbox not found"
    text_rule{5, "mailbox not found", v::no_such_user},
    // "550 Invalid recipient <x@y>"
    text_rule{5, "invalid recipient", v::no_such_user},
    // "550 Recipient not found"
    text_rule{5, "recipient not found", v::no_such_user},
    // "550 Unknown recipient"
    text_rule{5, "unknown recipient", v::no_such_user},

    // ---- temporary ------------------------------------------------------
    // Postgrey: "450 4.2.0 <x@y>: Recipient address rejected: Greylisted,
    // see http://postgrey.schweikert.ch/help/example.org.html"
    text_rule{4, "greylist", v::greylisted_or_throttled},
    // "421 4.7.0 Try again later, closing connection."
    text_rule{4, "try again later", v::greylisted_or_throttled},
};
// clang-format on

// Of the lower-cased text: a-z or 0-9.
bool is_word_char(char c) {
  return is_ascii_lower(c) || is_ascii_digit(c);
}

bool contains(std::string_view text, std::string_view needle, bool word) {
  for (auto pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + 1)) {
    if (!word)
      return true;
    auto end = pos + needle.size();
    if ((pos == 0 || !is_word_char(text[pos - 1])) &&
        (end == text.size() || !is_word_char(text[end])))
      return true;
  }
  return false;
}

// Decides from the RFC 3463 code alone when it is specific enough; nothing
// for vague ones (x.0.0, 5.5.0, 5.4.x ...), left to the text.
std::optional<std::pair<rcpt_verdict, std::string_view>>
by_enhanced(const enhanced_code& e, std::string_view lowered) {
  if (e.subject == 5 && e.detail == 3)
    return std::pair{v::too_many_recipients, "enhanced x.5.3"};
  if (e.subject == 2 && e.detail == 2)
    return std::pair{v::mailbox_full, "enhanced x.2.2"};
  if (e.klass == 4)
    return std::pair{v::greylisted_or_throttled, "enhanced 4.x.x"};
  if (e.klass != 5)
    return std::nullopt;
  if (e.subject == 7)
    return std::pair{v::blocked_by_policy, "enhanced 5.7.x"};
  if (e.subject == 1 && (e.detail == 7 || e.detail == 8))
    return std::pair{v::blocked_by_policy, "enhanced 5.1.7/5.1.8 (sender)"};
  if (e.subject == 1 &&
      (e.detail == 0 || e.detail == 1 || e.detail == 3 || e.detail == 6)) {
    // Some servers put a rejected MAIL FROM under 5.1.0
    // ("550 5.1.0 <we@us> sender rejected").
    if (contains(lowered, "sender", true))
      return std::pair{v::blocked_by_policy, "enhanced 5.1.x (sender)"};
    return std::pair{v::no_such_user, "enhanced 5.1.{0,1,3,6}"};
  }
  if (e.subject == 2 && e.detail == 1)
    return std::pair{v::disabled, "enhanced 5.2.1"};
  return std::nullopt;
}

} // namespace

std::string_view to_string(rcpt_verdict verdict) {
  switch (verdict) {
    case v::accepted: return "accepted";
    case v::no_such_user: return "no_such_user";
    case v::mailbox_full: return "mailbox_full";
    case v::disabled: return "disabled";
    case v::greylisted_or_throttled: return "greylisted_or_throttled";
    case v::blocked_by_policy: return "blocked_by_policy";
    case v::too_many_recipients: return "too_many_recipients";
    case v::protocol_error: return "protocol_error";
    case v::other_permanent: return "other_permanent";
    case v::other_temporary: return "other_temporary";
    case v::smtputf8_unsupported: return "smtputf8_unsupported";
    case v::not_attempted: return "not_attempted";
  }
  return "unknown";
}

std::string_view to_string(unasked_reason why) {
  using r = unasked_reason;
  switch (why) {
    case r::budget: return "budget";
    case r::stopped: return "stopped";
    case r::unroutable_mx: return "unroutable_mx";
    case r::no_mx_address: return "no_mx_address";
    case r::all_hosts_failed: return "all_hosts_failed";
  }
  return "stopped";
}

std::optional<unasked_reason> parse_unasked_reason(std::string_view text) {
  using r = unasked_reason;
  for (auto why : {r::budget, r::stopped, r::unroutable_mx, r::no_mx_address,
                   r::all_hosts_failed})
    if (to_string(why) == text)
      return why;
  return std::nullopt;
}

classification without_reply(rcpt_verdict verdict, std::string_view why,
                             std::string_view rule) {
  classification c;
  c.verdict = verdict;
  c.message = std::string{why};
  c.rule = rule;
  return c;
}

classification unasked(unasked_reason why) {
  auto c =
      without_reply(rcpt_verdict::not_attempted, to_string(why), "unasked");
  c.why_unasked = why;
  return c;
}

std::string bounded_message(std::string_view text) {
  std::string out;
  // A few bytes more than kept, so the cut below falls between characters.
  for (char c : text.substr(0, max_message + 4)) {
    auto u = static_cast<unsigned char>(c);
    out.push_back(u < 0x20 || u == 0x7f ? ' ' : c);
  }
  // Servers answer in Latin-1 and worse: the text goes into JSON.
  out = core::utf8_scrub(out, max_message);
  auto first = out.find_first_not_of(' ');
  if (first == std::string::npos)
    return {};
  out.erase(0, first);
  out.erase(out.find_last_not_of(' ') + 1);
  return out;
}

classification classify_rcpt(const reply& r) {
  classification out;
  out.code = r.code;
  out.enhanced = r.enhanced;
  auto text = r.text();
  out.message = bounded_message(text);
  std::string lowered = text;
  for (auto& c : lowered)
    c = ascii_lower(c);
  auto decide = [&](rcpt_verdict verdict, std::string_view rule) {
    out.verdict = verdict;
    out.rule = rule;
    return out;
  };
  auto klass = r.klass();
  if (klass == 2)
    return decide(v::accepted, "code 2xx");
  if (klass != 4 && klass != 5)
    return decide(v::protocol_error, "code 3xx");
  if (r.enhanced)
    if (auto d = by_enhanced(*r.enhanced, lowered))
      return decide(d->first, d->second);
  for (const auto& rule : text_rules)
    if ((rule.klass == 0 || rule.klass == klass) &&
        contains(lowered, rule.needle, rule.word))
      return decide(rule.verdict, rule.needle);
  if (r.code == 452)
    return decide(v::too_many_recipients, "code 452");
  if (klass == 4)
    return decide(v::greylisted_or_throttled, "code 4xx");
  if (r.code == 552 && !r.enhanced)
    return decide(v::mailbox_full, "code 552");
  return decide(v::other_permanent, "code 5xx");
}

} // namespace mailassay::core::smtp
