#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/dns/route.hpp"
#include "core/risk/random.hpp"
#include "core/syntax/address.hpp"

namespace mailassay::core::validation {

/// The business status of one validation (spec: always HTTP 200).
enum class status { valid, invalid, risky, unknown };

/// Returns "valid", "invalid", "risky" or "unknown".
std::string_view to_string(status s);

/// What the SMTP probe found; `checked == false` when it did not run.
struct smtp_facts {
  bool checked = false;
  std::optional<bool> deliverable; ///< Mailbox accepted (null: unknown).
  std::optional<bool> catch_all;   ///< Domain accepts anything (null: unknown).
  bool greylisted = false;         ///< Deferred through every retry.
  bool full_inbox = false;         ///< x.2.2 / 552.
  bool disabled = false;           ///< x.2.1.
  bool timed_out = false;          ///< No answer within the budget.
  bool unroutable = false; ///< Every MX address refused by the outbound
                           ///< address policy: reason `unroutable_mx`.
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
