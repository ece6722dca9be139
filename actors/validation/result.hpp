#pragma once

// One validation's request and result, as http/, the batch runner, the CLI
// and the pipeline's actors hand them on.

#include "core/base/expected.hpp"
#include "core/dns/route.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/free_checks.hpp"
#include "core/validation/verdict.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace mailassay::actors::validation {

/// One address to validate, with what the caller's key allows.
struct request {
  std::string email;
  bool smtp = false;               ///< SMTP probe asked for (and allowed).
  std::int64_t timeout_ms = 10000; ///< SMTP budget.
  core::validation::toggles toggles;
  /// Who pays for the probe (one credit, reserved before it).
  std::string organization_id;
  /// The credit was reserved already (batch jobs reserve at upload): no
  /// reservation, no refund; `result::credits_used` says what was used.
  bool credits_prepaid = false;
  /// Wait for and retry 4xx deferrals (greylisting, throttling) inside the
  /// probe. False: a deferred address comes back at once as greylisted
  /// (unknown, one attempt), for a batch that parks and re-submits it.
  bool smtp_retry_deferrals = true;
  /// A test key's sandbox: the local part gives the DNS and SMTP facts
  /// (core/validation/sandbox.hpp); no DNS query, no SMTP connection, no
  /// credit, whatever `smtp` says.
  bool sandbox = false;
  /// Set by the caller once nobody waits for the answer any more (an HTTP
  /// request answered by its deadline, its client gone): no credit is taken
  /// and no probe starts for it afterwards, and a credit already taken is
  /// settled by the caller (`result::settle_credit`). Null: the caller
  /// always takes the answer (a batch, the CLI).
  std::shared_ptr<const std::atomic<bool>> answered;
  /// When the caller stops waiting (an HTTP request's deadline): the probe
  /// ends by then, whatever `timeout_ms` says. Null: `timeout_ms` alone.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  /// When the caller's request arrived (an HTTP request): `durationMs`
  /// counts from then, admission and queueing included, and the validation
  /// reads no clock to start. Null: from when the validation starts (a batch
  /// row, the CLI).
  std::optional<std::chrono::steady_clock::time_point> received;
};

/// What the SMTP probe reported beyond the verdict's facts.
struct smtp_detail {
  std::string host; ///< MX host whose reply decided; empty: none.
  /// Passes: RCPT TO commands sent for it (greylisting retries
  /// included); those of the probe that answered when it was shared or
  /// cached.
  std::size_t attempts = 0;
  int code = 0;         ///< RCPT reply code; 0: none.
  std::string enhanced; ///< e.g. "5.1.1"; empty: none.
  std::string message;  ///< Reply text (bounded).
};

/// Everything found about one address; http/ and the CLI render it.
struct result {
  core::syntax::parsed_address address;
  /// Null: DNS not asked. Shared with the DNS cache (never changed).
  std::shared_ptr<const core::dns::mail_route> route;
  core::validation::free_checks checks;
  bool enrichment = false; ///< The key asked for enrichment.
  core::validation::smtp_facts smtp;
  smtp_detail smtp_reply;
  core::validation::verdict verdict;
  /// Set when the request cannot be served (e.g. insufficient credits):
  /// the caller answers this error instead of the result.
  std::optional<core::error> refused;
  std::int64_t credits_used = 0;
  double duration_ms = 0;
  /// Answered by the sandbox: its DNS and SMTP facts are simulated.
  bool sandbox = false;
  /// A request with an `answered` flag whose probe used its credit: the
  /// caller calls this once, with whether the answer reached its client
  /// (true keeps the credit, false gives it back), so a credit is never
  /// kept for an answer nobody got. Null: nothing to settle.
  std::function<void(bool delivered)> settle_credit;
};

/// Where a result goes. Taken as an rvalue so that a result (two dozen
/// strings) is handed on, not moved at every hop of the pipeline.
using result_callback = std::function<void(result&&)>;

/// Where the results of a group go: the request's index and its result.
using group_callback = std::function<void(std::size_t, result&&)>;

} // namespace mailassay::actors::validation
