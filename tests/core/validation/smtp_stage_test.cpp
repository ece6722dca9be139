// The SMTP stage's decisions, as tables: whether it runs, what happens to
// the credit, and which facts an answer gives.
#include "core/validation/smtp_stage.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>
#include <vector>

using namespace mailassay::core;
using validation::credit_hold;
using validation::settlement;
using validation::smtp_plan;

namespace {

syntax::parsed_address parsed(const std::string& input) {
  syntax::options opts;
  opts.allow_test_domains = true;
  return syntax::parse(input, opts);
}

dns::mail_route route_of(dns::route_kind k) {
  dns::mail_route r;
  r.kind = k;
  return r;
}

smtp::address_outcome answer(smtp::rcpt_verdict v, int code) {
  smtp::address_outcome o;
  o.address = "ann@d.test";
  o.rcpt.verdict = v;
  o.rcpt.code = code;
  o.answered = code != 0;
  o.host = code != 0 ? "mx.d.test" : "";
  o.attempts = code != 0 ? 1 : 0;
  return o;
}

} // namespace

TEST_SUITE("core.validation.smtp_stage") {
  TEST_CASE("runs the SMTP stage only when asked, on, and routable") {
    auto good = parsed("ann@d.test");
    auto literal = parsed("ann@[192.0.2.1]");
    auto bad = parsed("ann@@d.test");
    auto mx = route_of(dns::route_kind::mx);
    auto implicit = route_of(dns::route_kind::implicit_mx);
    struct row {
      const char* what;
      bool asked, on;
      const syntax::parsed_address* a;
      const dns::mail_route* route;
      smtp_plan want;
    };
    auto null_mx = route_of(dns::route_kind::null_mx);
    auto no_mx = route_of(dns::route_kind::no_mx);
    auto nx = route_of(dns::route_kind::invalid_domain);
    auto err = route_of(dns::route_kind::dns_error);
    const row rows[] = {
        {"not asked", false, true, &good, &mx, smtp_plan::not_asked},
        {"probing off", true, false, &good, &mx, smtp_plan::off},
        {"MX", true, true, &good, &mx, smtp_plan::probe},
        {"implicit MX", true, true, &good, &implicit, smtp_plan::probe},
        {"null MX", true, true, &good, &null_mx, smtp_plan::no_route},
        {"no MX", true, true, &good, &no_mx, smtp_plan::no_route},
        {"NXDOMAIN", true, true, &good, &nx, smtp_plan::no_route},
        {"DNS error", true, true, &good, &err, smtp_plan::no_route},
        {"no DNS answer", true, true, &good, nullptr, smtp_plan::no_route},
        {"bad syntax", true, true, &bad, &mx, smtp_plan::no_route},
        {"IP literal", true, true, &literal, &mx, smtp_plan::no_route},
    };
    for (const auto& r : rows) {
      CAPTURE(r.what);
      CHECK(validation::plan_smtp(r.asked, r.on, *r.a, r.route) == r.want);
    }
    CHECK(validation::to_string(smtp_plan::probe) == "probe");
    CHECK(validation::to_string(smtp_plan::no_route) == "no_route");
  }

  TEST_CASE("holds a credit only for a probe: reserved, or prepaid") {
    CHECK(validation::hold_for(smtp_plan::probe, false) ==
          credit_hold::reserve);
    CHECK(validation::hold_for(smtp_plan::probe, true) == credit_hold::prepaid);
    for (auto p : {smtp_plan::not_asked, smtp_plan::off, smtp_plan::no_route})
      for (bool prepaid : {false, true})
        CHECK(validation::hold_for(p, prepaid) == credit_hold::none);
  }

  TEST_CASE("keeps the credit when a server answered for the address, "
            "whatever served it") {
    using smtp::answer_source;
    using smtp::rcpt_verdict;
    for (auto source :
         {answer_source::probe, answer_source::joined, answer_source::cache}) {
      CAPTURE(smtp::to_string(source));
      for (auto v : {rcpt_verdict::accepted, rcpt_verdict::no_such_user,
                     rcpt_verdict::mailbox_full, rcpt_verdict::disabled,
                     rcpt_verdict::blocked_by_policy,
                     rcpt_verdict::greylisted_or_throttled}) {
        auto o = answer(v, v == rcpt_verdict::accepted ? 250 : 550);
        o.source = source;
        auto f = validation::facts_of(o);
        CHECK(f.checked);
        CHECK(validation::settle(credit_hold::reserve, f) ==
              settlement::commit);
        CHECK(validation::credits_used(credit_hold::reserve, f) == 1);
        CHECK(validation::credits_used(credit_hold::prepaid, f) == 1);
        CHECK(validation::settle(credit_hold::prepaid, f) == settlement::none);
      }
    }
  }

  TEST_CASE("gives the credit back when no server answered") {
    using smtp::rcpt_verdict;
    struct row {
      const char* what;
      smtp::address_outcome o;
    };
    auto timed_out = answer(rcpt_verdict::not_attempted, 0);
    timed_out.timed_out = true;
    auto unroutable = answer(rcpt_verdict::not_attempted, 0);
    unroutable.unroutable = true;
    // MAIL FROM refused: a reply, but not about the mailbox.
    auto sender = answer(rcpt_verdict::blocked_by_policy, 550);
    sender.answered = false;
    auto dropped = answer(rcpt_verdict::other_temporary, 0);
    dropped.attempts = 1;
    for (const auto& r :
         {row{"time-out", timed_out}, row{"unroutable", unroutable},
          row{"sender refused", sender}, row{"dropped in flight", dropped}}) {
      CAPTURE(r.what);
      auto f = validation::facts_of(r.o);
      CHECK(f.attempted);
      CHECK_FALSE(f.checked);
      CHECK_FALSE(f.deliverable.has_value());
      CHECK(validation::settle(credit_hold::reserve, f) == settlement::refund);
      CHECK(validation::credits_used(credit_hold::reserve, f) == 0);
      CHECK(validation::credits_used(credit_hold::prepaid, f) == 0);
    }
    CHECK(validation::settle(credit_hold::none, {}) == settlement::none);
    CHECK(validation::credits_used(credit_hold::none, {}) == 0);
  }

  TEST_CASE("reports each RCPT verdict as facts") {
    using smtp::rcpt_verdict;
    auto ok = validation::facts_of(answer(rcpt_verdict::accepted, 250));
    CHECK(ok.deliverable == true);
    auto gone = validation::facts_of(answer(rcpt_verdict::no_such_user, 550));
    CHECK(gone.deliverable == false);
    auto full = validation::facts_of(answer(rcpt_verdict::mailbox_full, 552));
    CHECK(full.deliverable == false);
    CHECK(full.full_inbox);
    auto off = validation::facts_of(answer(rcpt_verdict::disabled, 550));
    CHECK(off.deliverable == false);
    CHECK(off.disabled);
    auto policy =
        validation::facts_of(answer(rcpt_verdict::blocked_by_policy, 554));
    CHECK_FALSE(policy.deliverable.has_value());
    CHECK(policy.checked);
    auto o = answer(rcpt_verdict::accepted, 250);
    o.catch_all = true;
    CHECK(validation::facts_of(o).catch_all == true);
  }

  TEST_CASE("greylisting shows even when a later pass decided") {
    using smtp::rcpt_verdict;
    auto o = answer(rcpt_verdict::accepted, 250);
    o.deferrals = 1;
    o.attempts = 2;
    auto f = validation::facts_of(o);
    CHECK(f.greylisted);
    CHECK_FALSE(f.deferred);
    CHECK(f.deliverable == true);
    CHECK_FALSE(validation::recheck_later(f));
    // Still deferred at the end: greylisted, deferred, worth a later pass.
    auto grey = answer(rcpt_verdict::greylisted_or_throttled, 450);
    grey.deferrals = 1;
    auto g = validation::facts_of(grey);
    CHECK(g.greylisted);
    CHECK(g.deferred);
    CHECK(g.checked);
    CHECK(validation::recheck_later(g));
    CHECK_FALSE(validation::recheck_later({}));
    // Never deferred.
    CHECK_FALSE(
        validation::facts_of(answer(rcpt_verdict::accepted, 250)).greylisted);
  }

  TEST_CASE("names the failure when our side, not the mailbox, is the cause") {
    using smtp::rcpt_verdict;
    using validation::smtp_failure;
    auto with = [](rcpt_verdict v, int code, std::string message) {
      auto o = answer(v, code);
      o.rcpt.message = std::move(message);
      return o;
    };
    auto timed_out = answer(rcpt_verdict::other_temporary, 0);
    timed_out.timed_out = true;
    auto all_failed = answer(rcpt_verdict::not_attempted, 0);
    all_failed.rcpt = smtp::unasked(smtp::unasked_reason::all_hosts_failed);
    auto budget = answer(rcpt_verdict::not_attempted, 0);
    budget.rcpt = smtp::unasked(smtp::unasked_reason::budget);
    auto unroutable = answer(rcpt_verdict::not_attempted, 0);
    unroutable.rcpt = smtp::unasked(smtp::unasked_reason::unroutable_mx);
    unroutable.unroutable = true;
    struct row {
      smtp::address_outcome o;
      std::optional<smtp_failure> want;
    };
    std::vector<row> rows{
        {with(rcpt_verdict::blocked_by_policy, 554,
              "Client host [192.0.2.1] blocked using zen.spamhaus.org"),
         smtp_failure::policy_refused},
        {with(rcpt_verdict::greylisted_or_throttled, 421,
              "Gmail has detected an unusual rate of unsolicited mail"),
         smtp_failure::rate_limited},
        {with(rcpt_verdict::greylisted_or_throttled, 450,
              "Too many connections from your IP"),
         smtp_failure::rate_limited},
        {with(rcpt_verdict::greylisted_or_throttled, 421,
              "[TSS04] Messages temporarily deferred due to unexpected "
              "volume"),
         smtp_failure::rate_limited},
        {with(rcpt_verdict::greylisted_or_throttled, 450,
              "Greylisted, please try again later"),
         smtp_failure::tempfail},
        {with(rcpt_verdict::other_temporary, 451, "local error"),
         smtp_failure::tempfail},
        {timed_out, smtp_failure::timeout},
        {budget, smtp_failure::timeout},
        {all_failed, smtp_failure::connect_failed},
        {unroutable, std::nullopt},
        {answer(rcpt_verdict::accepted, 250), std::nullopt},
        {answer(rcpt_verdict::no_such_user, 550), std::nullopt},
        {answer(rcpt_verdict::mailbox_full, 552), std::nullopt},
    };
    for (auto& r : rows) {
      CAPTURE(r.o.rcpt.message);
      CHECK(validation::failure_of(r.o) == r.want);
      CHECK(validation::facts_of(r.o).failure == r.want);
    }
    CHECK(validation::to_string(smtp_failure::policy_refused) ==
          "policy_refused");
    CHECK(validation::to_string(smtp_failure::connect_failed) ==
          "connect_failed");
  }
}
