#pragma once

// What a mailbox provider or a gateway is known to answer to RCPT TO, where
// that changes how an answer is read (issue #30, docs/smtp.md "What each
// provider answers"). Pure: the provider comes from the MX host names
// (core/provider/table.hpp); a host that matches no provider has no habits
// and every answer is read as before.

#include "core/provider/table.hpp"

namespace mailassay::core::smtp {

/// How a provider's RCPT answers are to be read.
struct provider_habits {
  /// It answers 250 to every RCPT, whether the mailbox exists or not, and
  /// bounces later (Yahoo and AOL: `250 recipient <x> ok`). An accepted
  /// address there is never `valid`: the domain is a catch-all by
  /// knowledge, and no catch-all probe is spent on it.
  bool accepts_all = false;
  /// It takes one RCPT per transaction from an unknown sender and answers
  /// the second with `452 4.5.3 Too many recipients` (consumer
  /// Outlook.com): a 452 to the catch-all probe, which rides in the
  /// address's transaction, is retried in a transaction of its own and is
  /// never a verdict.
  bool one_rcpt_per_transaction = false;
  /// A gateway (Proofpoint, Mimecast ...) accepts mail for a mailbox it
  /// does not host: an accepted address is `valid` only once the gateway
  /// has refused a random address as unknown (catch-all false).
  bool gateway = false;
};

/// Returns the habits of `provider` from a table keyed by provider name
/// (habits.cpp lists each with the reply it was written for); all false for
/// nullptr and for a provider the table does not list, except `gateway`,
/// which follows the provider's kind.
provider_habits habits_of(const provider::provider_ref* provider);

} // namespace mailassay::core::smtp
