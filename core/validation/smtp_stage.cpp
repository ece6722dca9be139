#include "core/validation/smtp_stage.hpp"

#include "core/base/ascii.hpp"

#include <string>

namespace mailassay::core::validation {

using smtp::rcpt_verdict;

std::string_view to_string(smtp_plan p) {
  switch (p) {
    case smtp_plan::not_asked: return "not_asked";
    case smtp_plan::off: return "off";
    case smtp_plan::no_route: return "no_route";
    case smtp_plan::probe: return "probe";
  }
  return "not_asked";
}

smtp_plan plan_smtp(bool asked, bool probing_on,
                    const syntax::parsed_address& address,
                    const dns::mail_route* route) {
  if (!asked)
    return smtp_plan::not_asked;
  if (!probing_on)
    return smtp_plan::off;
  // An IP literal is never looked up in DNS, and probing one would let a
  // caller aim us at any address: no route.
  if (!address.valid || address.ip_literal || route == nullptr)
    return smtp_plan::no_route;
  switch (route->kind) {
    case dns::route_kind::mx:
    case dns::route_kind::implicit_mx: return smtp_plan::probe;
    default: return smtp_plan::no_route;
  }
}

credit_hold hold_for(smtp_plan plan, bool prepaid) {
  if (plan != smtp_plan::probe)
    return credit_hold::none;
  return prepaid ? credit_hold::prepaid : credit_hold::reserve;
}

namespace {

// Deferrals that speak of our volume rather than of greylisting, e.g.
// "421 4.7.28 Gmail has detected an unusual rate of unsolicited mail",
// "450 4.7.1 Too many connections from your IP", "451 4.7.650 The mail
// server [192.0.2.1] has been temporarily rate limited due to IP
// reputation" (Microsoft), "421 4.7.0 [TSS04] Messages from 192.0.2.1
// temporarily deferred due to unexpected volume" (Yahoo).
bool speaks_of_rate(std::string_view message) {
  auto text = ascii_lower(message);
  for (std::string_view w : {"rate limit", "ratelimit", "unusual rate",
                             "too many", "volume", "throttl", "exceeded"})
    if (text.find(w) != std::string::npos)
      return true;
  return false;
}

} // namespace

std::optional<smtp_failure> failure_of(const smtp::address_outcome& o) {
  const auto& c = o.rcpt;
  if (c.verdict == rcpt_verdict::blocked_by_policy)
    return smtp_failure::policy_refused;
  if (c.verdict == rcpt_verdict::greylisted_or_throttled)
    return speaks_of_rate(c.message) ? smtp_failure::rate_limited
                                     : smtp_failure::tempfail;
  if (o.unroutable)
    return std::nullopt; // reason unroutable_mx says it already
  if (o.timed_out)
    return smtp_failure::timeout;
  if (c.why_unasked == smtp::unasked_reason::all_hosts_failed)
    return smtp_failure::connect_failed;
  if (c.why_unasked == smtp::unasked_reason::budget)
    return smtp_failure::timeout;
  if (c.verdict == rcpt_verdict::other_temporary ||
      c.verdict == rcpt_verdict::too_many_recipients)
    return smtp_failure::tempfail;
  return std::nullopt;
}

smtp_facts facts_of(const smtp::address_outcome& o,
                    const smtp::provider_habits& habits) {
  smtp_facts f;
  f.attempted = true;
  f.checked = o.answered;
  f.catch_all = o.catch_all;
  switch (o.rcpt.verdict) {
    case rcpt_verdict::accepted: f.deliverable = true; break;
    case rcpt_verdict::no_such_user: f.deliverable = false; break;
    case rcpt_verdict::disabled:
      f.deliverable = false;
      f.disabled = true;
      break;
    case rcpt_verdict::mailbox_full:
      f.deliverable = false;
      f.full_inbox = true;
      break;
    case rcpt_verdict::greylisted_or_throttled: f.deferred = true; break;
    default: break;
  }
  // Only a reply decides: a verdict without one (refused before sending,
  // not asked) leaves the mailbox unknown.
  if (!o.answered) {
    f.deliverable.reset();
    f.disabled = false;
    f.full_inbox = false;
  }
  // Provider knowledge only ever takes `valid` away from an acceptance.
  if (f.deliverable == true) {
    if (habits.accepts_all)
      f.catch_all = true;
    else if (habits.gateway && f.catch_all != false)
      f.unverified_accept = true;
  }
  f.greylisted = f.deferred || o.deferrals > 0;
  f.timed_out = o.timed_out;
  f.unroutable = o.unroutable;
  f.failure = failure_of(o);
  return f;
}

settlement settle(credit_hold hold, const smtp_facts& facts) {
  if (hold != credit_hold::reserve)
    return settlement::none;
  return facts.checked ? settlement::commit : settlement::refund;
}

std::int64_t credits_used(credit_hold hold, const smtp_facts& facts) {
  return hold != credit_hold::none && facts.checked ? 1 : 0;
}

bool recheck_later(const smtp_facts& facts) {
  return facts.attempted && facts.deferred;
}

} // namespace mailassay::core::validation
