#pragma once

// The reference mapping of a validation result: the nlohmann tree the
// service wrote before its direct writer (http/codec/validation.cpp).
// codec_test.cpp checks that the writer's bytes are this tree's `dump()`.

#include "actors/validation/result.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <optional>

namespace mailassay::testing {

using nlohmann::json;

/// `v` as JSON, null when absent.
template <class T>
json or_null(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

/// The validation result as the reference tree.
inline json validation_result(const actors::validation::result& r) {
  const auto& a = r.address;
  const auto& c = r.checks;
  json out;
  out["email"] = a.input;
  out["normalized"] = a.valid ? json(a.normalized) : json(nullptr);
  if (r.route && r.route->provider)
    out["provider"] = {
        {"name", r.route->provider->name},
        {"kind", core::provider::to_string(r.route->provider->kind)}};
  else
    out["provider"] = nullptr;
  out["status"] = core::validation::to_string(r.verdict.state);
  out["reason"] = r.verdict.reason;
  out["score"] = r.verdict.score;
  out["syntax"] = {
      {"valid", a.valid},
      {"localPart", a.local_part},
      {"domain", a.domain},
      {"asciiDomain", a.ascii_domain},
      {"ipLiteral", a.ip_literal},
      {"smtputf8", a.needs_smtputf8},
      {"detail", a.detail.empty() ? json(nullptr) : json(a.detail)}};
  if (r.route) {
    using core::dns::route_kind;
    auto mx = json::array();
    for (auto& h : r.route->hosts)
      mx.push_back({{"host", h.host}, {"priority", h.priority}});
    auto kind = r.route->kind;
    out["dns"] = {{"hasMx", kind == route_kind::mx},
                  {"mx", mx},
                  {"implicitMx", kind == route_kind::implicit_mx},
                  {"nullMx", kind == route_kind::null_mx},
                  {"result", core::dns::to_string(kind)}};
    if (kind == route_kind::dns_error)
      out["dns"]["error"] = core::dns::to_string(r.route->cause);
  } else {
    out["dns"] = nullptr;
  }
  const auto& s = r.smtp;
  out["smtp"] = {
      {"checked", s.checked},
      {"deliverable", or_null(s.deliverable)},
      {"catchAll", or_null(s.catch_all)},
      {"greylisted", s.greylisted},
      {"fullInbox", s.full_inbox},
      {"disabled", s.disabled},
      {"timedOut", s.timed_out},
      {"failure", s.failure ? json(core::validation::to_string(*s.failure))
                            : json(nullptr)},
      {"code", r.smtp_reply.code ? json(r.smtp_reply.code) : json(nullptr)},
      {"enhancedCode", r.smtp_reply.enhanced.empty()
                           ? json(nullptr)
                           : json(r.smtp_reply.enhanced)},
      {"message", r.smtp_reply.message.empty() ? json(nullptr)
                                               : json(r.smtp_reply.message)},
      {"host",
       r.smtp_reply.host.empty() ? json(nullptr) : json(r.smtp_reply.host)},
      {"attempts", r.smtp_reply.attempts}};
  out["disposable"] = {{"isDisposable", or_null(c.disposable)}};
  out["roleAccount"] = {
      {"isRoleAccount", or_null(c.role_account)},
      {"role", c.role_account.value_or(false) ? json(c.role) : json(nullptr)}};
  out["freeProvider"] = {{"isFree", c.free_provider}};
  if (c.random)
    out["random"] = {{"isRandom", c.random->is_random},
                     {"score", std::round(c.random->score * 1000) / 1000}};
  else
    out["random"] = {{"isRandom", nullptr}, {"score", nullptr}};
  out["typo"] = {{"hasTypo", c.suggested_domain.has_value()},
                 {"suggestion", or_null(c.suggested_domain)}};
  auto suggestions = json::array();
  if (c.suggested_domain)
    suggestions.push_back(a.local_part + "@" + *c.suggested_domain);
  out["suggestions"] = suggestions;
  if (r.enrichment)
    out["enrichment"] = {{"firstName", or_null(c.first_name)}};
  auto signals = json::array();
  for (auto& sig : r.verdict.signals)
    signals.push_back({{"signal", sig.signal}, {"points", sig.points}});
  out["signals"] = signals;
  out["creditsUsed"] = r.credits_used;
  out["durationMs"] = std::round(r.duration_ms * 1000) / 1000;
  // Only in a test key's answers: live answers keep their bytes.
  if (r.sandbox)
    out["sandbox"] = true;
  return out;
}

} // namespace mailassay::testing
