// Each provider's RCPT answers, read end to end in core: the reply text
// through classify_rcpt, the provider's habits through facts_of, the status
// through decide (docs/smtp.md, "What each provider answers").
#include "core/smtp/classify.hpp"
#include "core/smtp/provider_habits.hpp"
#include "core/validation/smtp_stage.hpp"
#include "core/validation/verdict.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using namespace mailassay::core;
using provider::provider_kind;
using provider::provider_ref;

namespace {

smtp::reply parse_one(const std::string& text) {
  smtp::reply_parser p;
  auto out = p.feed(text + "\r\n");
  REQUIRE(out.replies.size() == 1);
  return out.replies[0];
}

struct reading {
  std::string status;
  std::string reason;
  std::optional<bool> catch_all;
  std::string failure; ///< Empty: none.
};

// The answer `reply` for ann@d.test at a domain of `provider` (nullptr: no
// known provider), with the session's catch-all verdict `catch_all`.
reading read(const provider_ref* provider, const std::string& reply,
             std::optional<bool> catch_all) {
  smtp::address_outcome o;
  o.address = "ann@d.test";
  o.rcpt = smtp::classify_rcpt(parse_one(reply));
  o.answered = true;
  o.attempts = 1;
  o.host = "mx.d.test";
  o.catch_all = catch_all;
  if (o.rcpt.verdict == smtp::rcpt_verdict::greylisted_or_throttled)
    o.deferrals = 1;
  syntax::options opts;
  opts.allow_test_domains = true;
  auto address = syntax::parse("ann@d.test", opts);
  validation::facts f;
  f.address = &address;
  f.route = dns::route_kind::mx;
  f.smtp = validation::facts_of(o, smtp::habits_of(provider));
  auto v = validation::decide(f);
  return {std::string{validation::to_string(v.state)}, v.reason,
          f.smtp.catch_all,
          f.smtp.failure ? std::string{validation::to_string(*f.smtp.failure)}
                         : std::string{}};
}

const provider_ref microsoft365{"microsoft365", provider_kind::mailbox};
const provider_ref outlook{"outlook", provider_kind::mailbox};
const provider_ref yahoo{"yahoo", provider_kind::mailbox};
const provider_ref google{"google", provider_kind::mailbox};
const provider_ref mimecast{"mimecast", provider_kind::gateway};
const provider_ref proofpoint{"proofpoint", provider_kind::gateway};

} // namespace

TEST_SUITE("core.validation.provider_answers") {
  TEST_CASE("the habits table: yahoo accepts all, outlook takes one RCPT per "
            "transaction, a gateway is a gateway, others and none have none") {
    auto none = smtp::habits_of(nullptr);
    CHECK_FALSE(none.accepts_all);
    CHECK_FALSE(none.one_rcpt_per_transaction);
    CHECK_FALSE(none.gateway);
    CHECK(smtp::habits_of(&yahoo).accepts_all);
    CHECK_FALSE(smtp::habits_of(&yahoo).gateway);
    CHECK(smtp::habits_of(&outlook).one_rcpt_per_transaction);
    CHECK_FALSE(smtp::habits_of(&outlook).accepts_all);
    CHECK(smtp::habits_of(&mimecast).gateway);
    CHECK_FALSE(smtp::habits_of(&mimecast).accepts_all);
    auto m365 = smtp::habits_of(&microsoft365);
    CHECK_FALSE(m365.accepts_all);
    CHECK_FALSE(m365.one_rcpt_per_transaction);
    CHECK_FALSE(m365.gateway);
    const provider_ref stranger{"zz-new", provider_kind::mailbox};
    CHECK_FALSE(smtp::habits_of(&stranger).accepts_all);
  }

  TEST_CASE("each provider's reply reads as documented") {
    struct row {
      const char* what;
      const provider_ref* provider;
      const char* reply;
      std::optional<bool> catch_all;
      reading want;
    };
    const row rows[] = {
        {"Microsoft 365 directory-based edge blocking",
         &microsoft365,
         "550 5.4.1 Recipient address rejected: Access denied. "
         "[DB5PEPF00000001.eurprd03.prod.outlook.com 2024-01-01T00:00:00.000Z]"
         " AS(201806281)",
         std::nullopt,
         {"invalid", "rejected_email", std::nullopt, ""}},
        {"Microsoft 365 accepting a mailbox, random address refused",
         &microsoft365,
         "250 2.1.5 Recipient OK",
         false,
         {"valid", "accepted_email", false, ""}},
        {"a Microsoft 365 domain that accepts every recipient",
         &microsoft365,
         "250 2.1.5 Recipient OK",
         true,
         {"risky", "catch_all", true, ""}},
        {"Microsoft 365 banned sending IP",
         &microsoft365,
         "550 5.7.606 Access denied, banned sending IP [192.0.2.1]. To request"
         " removal from this list please visit https://sender.office.com/",
         std::nullopt,
         {"unknown", "smtp_error", std::nullopt, "policy_refused"}},
        {"consumer Outlook's unknown mailbox",
         &outlook,
         "550 5.5.0 Requested action not taken: mailbox unavailable "
         "(S2017062302)",
         std::nullopt,
         {"invalid", "rejected_email", std::nullopt, ""}},
        {"consumer Outlook's mailbox",
         &outlook,
         "250 2.1.5 Recipient OK",
         false,
         {"valid", "accepted_email", false, ""}},
        {"Yahoo accepts every address",
         &yahoo,
         "250 recipient <ann@d.test> ok",
         std::nullopt,
         {"risky", "catch_all", true, ""}},
        {"Yahoo's unknown user (older answer) is still invalid",
         &yahoo,
         "554 delivery error: dd This user doesn't have a yahoo.com account "
         "(ann@d.test) [0] - mta1234.mail.bf1.yahoo.com",
         std::nullopt,
         {"invalid", "rejected_email", std::nullopt, ""}},
        {"Yahoo's volume deferral",
         &yahoo,
         "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due "
         "to unexpected volume or user complaints",
         std::nullopt,
         {"unknown", "smtp_error", std::nullopt, "rate_limited"}},
        {"a gateway that accepts every RCPT",
         &proofpoint,
         "250 2.1.5 Ok",
         true,
         {"risky", "catch_all", true, ""}},
        {"a gateway whose catch-all probe got no answer",
         &proofpoint,
         "250 2.1.5 Ok",
         std::nullopt,
         {"risky", "accept_all", std::nullopt, ""}},
        {"a gateway that refused a random address",
         &proofpoint,
         "250 2.1.5 Ok",
         false,
         {"valid", "accepted_email", false, ""}},
        {"Mimecast's unknown recipient, no enhanced code",
         &mimecast,
         "550 Invalid Recipient - https://community.mimecast.com/docs/"
         "DOC-1369#550",
         std::nullopt,
         {"invalid", "rejected_email", std::nullopt, ""}},
        {"a blocklist refusal",
         &google,
         "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked "
         "using zen.spamhaus.org",
         std::nullopt,
         {"unknown", "smtp_error", std::nullopt, "policy_refused"}},
        {"Gmail's unusual rate",
         &google,
         "421 4.7.28 Gmail has detected an unusual rate of unsolicited mail "
         "originating from your IP address.",
         std::nullopt,
         {"unknown", "smtp_error", std::nullopt, "rate_limited"}},
        // A host of no known provider reads as before: an acceptance
        // without a catch-all verdict is valid.
        {"no provider: accepted",
         nullptr,
         "250 recipient <ann@d.test> ok",
         std::nullopt,
         {"valid", "accepted_email", std::nullopt, ""}},
        {"no provider: 550 5.4.1 Access denied",
         nullptr,
         "550 5.4.1 Recipient address rejected: Access denied",
         std::nullopt,
         {"invalid", "rejected_email", std::nullopt, ""}},
        {"no provider: 5.7.606",
         nullptr,
         "550 5.7.606 Access denied, banned sending IP [192.0.2.1]",
         std::nullopt,
         {"unknown", "smtp_error", std::nullopt, "policy_refused"}},
    };
    for (const auto& r : rows) {
      CAPTURE(r.what);
      auto got = read(r.provider, r.reply, r.catch_all);
      CHECK(got.status == r.want.status);
      CHECK(got.reason == r.want.reason);
      CHECK(got.catch_all == r.want.catch_all);
      CHECK(got.failure == r.want.failure);
    }
  }

  TEST_CASE("a policy refusal is never invalid, at any provider") {
    for (const auto* p : {&microsoft365, &outlook, &yahoo, &google, &mimecast,
                          static_cast<const provider_ref*>(nullptr)})
      for (const char* reply :
           {"554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked "
            "using b.barracudacentral.org",
            "550 5.7.606 Access denied, banned sending IP [192.0.2.1]",
            "421 4.7.28 Gmail has detected an unusual rate of unsolicited "
            "mail"}) {
        CAPTURE(reply);
        auto got = read(p, reply, std::nullopt);
        CHECK(got.status == "unknown");
        CHECK_FALSE(got.failure.empty());
      }
  }
}
