#pragma once

// What SMTP probing learnt about one address, as the probe plan, the
// scheduler and the result cache hand it on (core/validation turns it into
// the facts a verdict is built from).

#include "core/smtp/classify.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::smtp {

/// Where an address's answer came from.
enum class answer_source {
  probe,  ///< A probe made for this caller.
  joined, ///< A probe of the same address already in flight for another
          ///< caller (identical addresses in flight are asked once).
  cache,  ///< The result cache: a definitive answer of a recent probe.
};

/// Returns "probe", "joined" or "cache".
std::string_view to_string(answer_source s);

/// The final outcome of one address.
struct address_outcome {
  /// The address as requested.
  std::string address;
  /// The last verdict; `not_attempted` when it was never asked.
  classification rcpt;
  /// The domain's catch-all verdict (cached or probed); null when unknown.
  std::optional<bool> catch_all;
  /// The MX host whose reply decided `rcpt`; empty when none replied.
  std::string host;
  /// A server replied to `RCPT TO` for this address (a refused MAIL FROM
  /// is not a reply about the mailbox): what `smtp.checked` reports and
  /// what a credit is charged for.
  bool answered = false;
  /// RCPT TO commands sent for it (retries included): one per pass.
  std::size_t attempts = 0;
  /// Times a 4xx deferred it (greylisting, throttling), whatever the last
  /// pass said.
  std::size_t deferrals = 0;
  /// A time-out (connect, reply or the budget) left it undecided.
  bool timed_out = false;
  /// Every address of every MX host was refused by the address policy.
  bool unroutable = false;
  /// Where this answer came from.
  answer_source source = answer_source::probe;

  /// Returns whether it ended deferred: greylisted through every retry.
  bool greylisted() const {
    return rcpt.verdict == rcpt_verdict::greylisted_or_throttled;
  }
};

/// Returns whether `v` says what the mailbox is (accepted, unknown user,
/// full, disabled): an answer worth keeping in the result cache. A policy
/// block, a deferral or a failure says nothing about the mailbox.
bool definitive(rcpt_verdict v);

} // namespace mailassay::core::smtp
