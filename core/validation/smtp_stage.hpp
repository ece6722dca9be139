#pragma once

// The decisions of the SMTP stage of the validation pipeline, as pure
// functions (docs/architecture.md walks one address through them):
//
//   plan_smtp      does this address get the SMTP stage?
//   hold_for       what happens to a credit before the probe?
//   facts_of       what did the probe (or the cache) say, honestly?
//   settle         keep the credit or give it back?
//   credits_used   what the result reports as charged
//   recheck_later  should a batch park the address and ask again?
//
// The actors only carry messages between these answers. A test key's
// sandbox never reaches this stage: its facts come from
// core/validation/sandbox.hpp.

#include "core/dns/route.hpp"
#include "core/smtp/outcome.hpp"
#include "core/smtp/provider_habits.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/verdict.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace mailassay::core::validation {

/// Whether the SMTP stage runs for one address, and why not.
enum class smtp_plan {
  not_asked, ///< The request did not ask for SMTP.
  off,       ///< Probing is off in this service (no usable identity).
  no_route,  ///< Nothing to probe: bad syntax, an IP literal, no MX, null
             ///< MX, NXDOMAIN or a DNS failure. Free.
  probe,     ///< Probe the MX hosts (or take the cached answer); one credit.
};

/// Returns "not_asked", "off", "no_route" or "probe".
std::string_view to_string(smtp_plan p);

/// Decides whether the SMTP stage runs: asked, probing on, a parsed
/// domain name (not an IP literal) and a mail route with MX hosts or an
/// implicit MX. `route` is null when DNS was not asked.
smtp_plan plan_smtp(bool asked, bool probing_on,
                    const syntax::parsed_address& address,
                    const dns::mail_route* route);

/// What happens to a credit before the probe.
enum class credit_hold {
  none,    ///< Nothing to pay: the stage does not run.
  reserve, ///< Take one credit now (a refusal answers 402 before any
           ///< probe), settle it after the answer.
  prepaid, ///< Paid beforehand (a batch reserved at upload): only report
           ///< whether it was used.
};

/// Returns the credit hold of a validation planned `plan`.
credit_hold hold_for(smtp_plan plan, bool prepaid);

/// Returns the SMTP facts of one answer of the SMTP stage, honestly:
/// `checked` only when a server answered for this address; `greylisted`
/// when any pass met a 4xx deferral, even if a later pass decided;
/// `deferred` when the last pass was one. `habits` are those of the
/// domain's provider (none: read as any host): an address accepted by a
/// provider that accepts every address is a catch-all's (`catch_all`
/// true), one accepted by a gateway without a catch-all false is an
/// `unverified_accept`; refusals read as at any host.
smtp_facts facts_of(const smtp::address_outcome& answer,
                    const smtp::provider_habits& habits = {});

/// Returns why `answer` says nothing about the mailbox when our client or
/// the path is the likely cause: a policy refusal (`blocked_by_policy`),
/// a 4xx deferral whose text speaks of rate or volume (rate_limited) or
/// any other (tempfail), every MX host failing (connect_failed), a
/// time-out; empty for an answer about the mailbox, an unroutable route or
/// any other verdict.
std::optional<smtp_failure> failure_of(const smtp::address_outcome& answer);

/// What happens to a held credit once the answer is known.
enum class settlement {
  none,   ///< No credit was held, or it was prepaid.
  commit, ///< Keep it: a server answered for this address, whether the
          ///< answer came from a probe, a joined probe or the cache.
  refund, ///< Give it back: no server answered (unroutable, every host
          ///< down, time-out before any reply).
};

/// Decides what happens to the credit held as `hold` after `facts`.
settlement settle(credit_hold hold, const smtp_facts& facts);

/// Returns the credits the result reports (`creditsUsed`): 1 when a credit
/// was held (reserved or prepaid) and a server answered, else 0.
std::int64_t credits_used(credit_hold hold, const smtp_facts& facts);

/// Returns whether a batch should park the address and ask again later:
/// the stage ran and its last pass was deferred (greylisting, throttling).
bool recheck_later(const smtp_facts& facts);

} // namespace mailassay::core::validation
