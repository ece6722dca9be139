#pragma once

#include "core/dns/route.hpp"
#include "core/risk/random.hpp"
#include "core/syntax/address.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::validation {

/// The business status of one validation (spec: always HTTP 200).
enum class status { valid, invalid, risky, unknown };

/// Returns "valid", "invalid", "risky" or "unknown": the status's name in
/// the result JSON, the batch CSV export and the batch_items table.
std::string_view to_string(status s);

/// Parses a status name; nullopt for anything else.
std::optional<status> parse_status(std::string_view text);

/// Why a probe said nothing about the mailbox when the likely cause is our
/// client or the path to the server, not the mailbox (`smtp.failure`,
/// docs/smtp.md "Failures"); the status stays unknown and no credit is
/// used for it.
enum class smtp_failure {
  policy_refused, ///< The server refused us by policy (5.7.x, a blocklist,
                  ///< our address, reverse DNS, reputation).
  rate_limited,   ///< A 4xx saying we send too much or too fast.
  connect_failed, ///< No MX host could be talked to (connect, greeting).
  timeout,        ///< No answer within the time allowed.
  tempfail,       ///< Another temporary failure (greylisting, 4xx).
};

/// Returns the failure's name: "policy_refused", "rate_limited",
/// "connect_failed", "timeout" or "tempfail".
std::string_view to_string(smtp_failure f);

/// What the SMTP stage found (core/validation/smtp_stage.hpp builds it).
struct smtp_facts {
  /// The SMTP stage ran for this address: a probe, a probe shared with
  /// another caller, or the result cache. False: not asked, probing off, or
  /// nothing to probe (no mail route) -- the `no_smtp_check` signal.
  bool attempted = false;
  /// A server answered `RCPT TO` for this address (now, in a shared probe,
  /// or recently: the cache): `smtp.checked`, and what a credit pays for.
  bool checked = false;
  std::optional<bool> deliverable; ///< Mailbox accepted (null: unknown).
  std::optional<bool> catch_all;   ///< Domain accepts anything (null: unknown).
  /// Some pass met greylisting or throttling (4xx), even when a later pass
  /// gave the definitive answer.
  bool greylisted = false;
  /// The last pass was deferred (4xx): no definitive answer, greylisted
  /// through every retry the budget allowed.
  bool deferred = false;
  bool full_inbox = false; ///< x.2.2 / 552.
  bool disabled = false;   ///< x.2.1.
  bool timed_out = false;  ///< No answer within the budget.
  bool unroutable = false; ///< Every MX address refused by the outbound
                           ///< address policy: reason `unroutable_mx`.
  /// Accepted by a gateway (Proofpoint, Mimecast ...) not shown to refuse
  /// unknown recipients (no catch-all false): it may accept every address
  /// (core/smtp/provider_habits.hpp). Never `valid`: risky, `accept_all`.
  bool unverified_accept = false;
  /// Why no answer about the mailbox came, when our side is the likely
  /// cause; empty when the mailbox was answered for (or for a reason
  /// that is not one of these).
  std::optional<smtp_failure> failure;
};

/// Every signal the verdict is built from. `std::nullopt` means the check was
/// switched off by the key's config (reported as null, never as false).
struct facts {
  const syntax::parsed_address* address = nullptr;
  std::optional<dns::route_kind> route; ///< Absent when DNS was not asked.
  std::optional<bool> disposable;
  std::optional<bool> role_account;
  std::optional<risk::random_verdict> random;
  bool free_provider = false;
  bool typo = false; ///< A suggestion exists.
  smtp_facts smtp;
};

/// One signal's effect on the score, for the `signals` list of the result.
struct contribution {
  std::string signal; ///< e.g. "disposable", "no_smtp_check".
  int points = 0;     ///< Negative: lowers the score.
};

/// Status, machine reason, score 0-100 and what made it.
struct verdict {
  status state = status::unknown;
  std::string reason;
  int score = 0;
  std::vector<contribution> signals;
};

/// Decides status, reason and score; deterministic (docs/scoring.md).
verdict decide(const facts& f);

} // namespace mailassay::core::validation
