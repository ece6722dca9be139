#include "core/validation/verdict.hpp"

#include <algorithm>

namespace mailassay::core::validation {

namespace {

// Penalties in points (of 100) for each signal; see docs/scoring.md.
constexpr int disposable_points = 60;
constexpr int ip_literal_points = 40;
constexpr int typo_points = 35;
constexpr int mailbox_full_points = 35;
constexpr int catch_all_points = 30;
constexpr int random_points = 25;
constexpr int role_points = 20;
constexpr int dns_error_points = 50;
constexpr int smtp_unknown_points = 30;
constexpr int implicit_mx_points = 10;
constexpr int no_smtp_points = 10;
constexpr int free_provider_points = 0;

struct band {
  int low, high;
};

// Each status owns a score band, so a score alone tells its status.
band band_of(status s) {
  switch (s) {
    case status::valid: return {80, 100};
    case status::risky: return {40, 79};
    case status::unknown: return {20, 39};
    case status::invalid: return {0, 19};
  }
  return {0, 0};
}

} // namespace

std::string_view to_string(status s) {
  switch (s) {
    case status::valid: return "valid";
    case status::invalid: return "invalid";
    case status::risky: return "risky";
    case status::unknown: return "unknown";
  }
  return "unknown";
}

std::string_view to_string(smtp_failure f) {
  switch (f) {
    case smtp_failure::policy_refused: return "policy_refused";
    case smtp_failure::rate_limited: return "rate_limited";
    case smtp_failure::connect_failed: return "connect_failed";
    case smtp_failure::timeout: return "timeout";
    case smtp_failure::tempfail: return "tempfail";
  }
  return "tempfail";
}

std::optional<status> parse_status(std::string_view text) {
  for (auto s :
       {status::valid, status::invalid, status::risky, status::unknown})
    if (to_string(s) == text)
      return s;
  return std::nullopt;
}

verdict decide(const facts& f) {
  verdict v;
  auto penalise = [&](const char* signal, int points) {
    v.signals.push_back({signal, -points});
  };
  auto finish = [&](status s, std::string reason) {
    v.state = s;
    v.reason = std::move(reason);
    int penalty = 0;
    for (auto& c : v.signals)
      penalty -= c.points;
    auto b = band_of(s);
    auto quality = std::clamp(100 - penalty, 0, 100);
    v.score = b.low + (b.high - b.low) * quality / 100;
    // Every `finish` is a return of decide: hand the signals on.
    return std::move(v);
  };
  const auto& a = *f.address;
  // 1. Hard facts that make the address undeliverable.
  if (!a.valid) {
    penalise(a.reason == syntax::reason_special_use_domain
                 ? "special_use_domain"
                 : "invalid_syntax",
             100);
    return finish(status::invalid, a.reason == syntax::reason_special_use_domain
                                       ? "invalid_domain"
                                       : "invalid_syntax");
  }
  if (f.route) {
    switch (*f.route) {
      case dns::route_kind::invalid_domain:
        penalise("invalid_domain", 100);
        return finish(status::invalid, "invalid_domain");
      case dns::route_kind::null_mx:
        penalise("null_mx", 100);
        return finish(status::invalid, "null_mx");
      case dns::route_kind::no_mx:
        penalise("no_mx", 100);
        return finish(status::invalid, "no_mx");
      default: break;
    }
  }
  const auto& smtp = f.smtp;
  if (smtp.checked && smtp.disabled) {
    penalise("mailbox_disabled", 100);
    return finish(status::invalid, "mailbox_disabled");
  }
  if (smtp.checked && smtp.deliverable == false && !smtp.full_inbox) {
    penalise("rejected_email", 100);
    return finish(status::invalid, "rejected_email");
  }
  // 2. Every remaining signal lowers the score.
  bool disposable = f.disposable.value_or(false);
  bool role = f.role_account.value_or(false);
  bool random = f.random && f.random->is_random;
  bool dns_error = f.route && *f.route == dns::route_kind::dns_error;
  // Asked over SMTP without a definitive answer: timed out, deferred,
  // refused by policy, or no server answered at all.
  bool smtp_unknown =
      smtp.attempted && !smtp.deliverable.has_value() && !smtp.full_inbox;
  bool catch_all = smtp.attempted && smtp.catch_all.value_or(false);
  bool accept_all = smtp.attempted && smtp.unverified_accept && !catch_all &&
                    smtp.deliverable == true;
  if (disposable)
    penalise("disposable", disposable_points);
  if (a.ip_literal)
    penalise("ip_literal", ip_literal_points);
  if (f.typo)
    penalise("typo", typo_points);
  if (f.smtp.full_inbox)
    penalise("mailbox_full", mailbox_full_points);
  if (catch_all)
    penalise("catch_all", catch_all_points);
  if (accept_all)
    penalise("accept_all", catch_all_points);
  if (random)
    penalise("random", random_points);
  if (role)
    penalise("role_account", role_points);
  if (dns_error)
    penalise("dns_error", dns_error_points);
  if (smtp_unknown)
    penalise(smtp.unroutable
                 ? "unroutable_mx"
                 : (smtp.deferred
                        ? "greylisted"
                        : (smtp.timed_out ? "timeout" : "smtp_error")),
             smtp_unknown_points);
  if (f.route && *f.route == dns::route_kind::implicit_mx)
    penalise("implicit_mx", implicit_mx_points);
  if (!smtp.attempted)
    penalise("no_smtp_check", no_smtp_points);
  if (f.free_provider && free_provider_points > 0)
    penalise("free_provider", free_provider_points);
  // 3. The status: known risks first (they hold whatever DNS says), then
  //    what we could not find out, then the softer risks.
  // A likely typo is the most useful thing to tell a person filling a form;
  // typo-squatting domains are often on the disposable list too.
  if (f.typo)
    return finish(status::risky, "typo");
  if (disposable)
    return finish(status::risky, "disposable");
  if (dns_error)
    return finish(status::unknown, "dns_error");
  if (smtp_unknown)
    return finish(status::unknown,
                  f.smtp.unroutable
                      ? "unroutable_mx"
                      : (f.smtp.timed_out ? "timeout" : "smtp_error"));
  if (f.smtp.full_inbox)
    return finish(status::risky, "mailbox_full");
  if (a.ip_literal)
    return finish(status::risky, "ip_literal");
  if (catch_all)
    return finish(status::risky, "catch_all");
  if (accept_all)
    return finish(status::risky, "accept_all");
  if (role)
    return finish(status::risky, "role_account");
  if (random)
    return finish(status::risky, "random");
  return finish(status::valid, "accepted_email");
}

} // namespace mailassay::core::validation
