#pragma once

// The messages and typed actor handles of the validation pipeline's SMTP
// stage, in one place (docs/architecture.md, "One address through the
// pipeline"):
//
//   pipeline  (actors/validation/pipeline.hpp)  smtp_job, job_routed
//   ledger    (actors/credits/ledger.hpp)       reserve_credit, commit_credit,
//                                               refund_credit
//   scheduler (actors/smtp/scheduler.hpp)       probe_address ->
//   address_outcome
//
// Local-only types (closures, shared routes) travel as CAF "unsafe" message
// types: they never leave the process.

#include "actors/validation/result.hpp"
#include "core/base/expected.hpp"
#include "core/dns/route.hpp"
#include "core/smtp/outcome.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mailassay::actors {

// -- credits ----------------------------------------------------------------

namespace credits {

/// One credit held for one validation until it is settled.
struct reservation {
  /// Who pays.
  std::string organization_id;
  /// What the ledger entry names (e.g. "validate").
  std::string reference;
  /// The credit was taken from the balance (false: nothing to settle).
  bool held = false;
};

/// Asks to take one credit from an organization.
struct reserve_credit {
  std::string organization_id;
  std::string reference;
};

/// The answer to `reserve_credit`: the reservation, or why none was made
/// (errc::insufficient_credits: 402 with the spec's message).
struct reserve_outcome {
  reservation held;
  std::optional<core::error> refused;
};

/// Keeps a reserved credit: a server answered for the address.
struct commit_credit {
  reservation held;
};

/// Gives a reserved credit back: no server answered. Replies true once the
/// refund is stored (false: it failed, logged), so an answer never precedes
/// the balance it implies.
struct refund_credit {
  reservation held;
};

/// A store write finished (internal to the ledger).
struct ledger_write_done {
  std::uint64_t id = 0;
  std::optional<core::error> failure;
};

/// The ledger's typed interface.
using ledger_actor =
    caf::typed_actor<caf::replies_to<reserve_credit>::with<reserve_outcome>,
                     caf::reacts_to<commit_credit>,
                     caf::replies_to<refund_credit>::with<bool>,
                     caf::reacts_to<ledger_write_done>>;

} // namespace credits

// -- validation pipeline ------------------------------------------------------

namespace validation {

/// Validations with SMTP at one domain, for a pipeline actor: one real-time
/// request, or a batch group (prepaid). `done` gets each request's index
/// and result, once each, on the pipeline's thread.
struct smtp_job {
  std::vector<request> requests;
  group_callback done;
  /// A batch group: not counted among the real-time validations the pool
  /// reports (the batch runner paces itself on those).
  bool batch = false;
};

/// The mail route of a job's domain arrived (internal to the pipeline).
struct job_routed {
  std::uint64_t job = 0;
  std::shared_ptr<const core::dns::mail_route> route;
};

/// The SMTP answers of some of a job's requests (internal to the pipeline).
struct job_probed {
  std::uint64_t job = 0;
  /// Indexes into the job's requests, in the order of `answers`.
  std::vector<std::size_t> requests;
  std::vector<core::smtp::address_outcome> answers;
};

/// A pipeline actor's typed interface.
using pipeline_actor =
    caf::typed_actor<caf::reacts_to<smtp_job>, caf::reacts_to<job_routed>,
                     caf::reacts_to<job_probed>>;

} // namespace validation

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::reserve_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::reserve_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::commit_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::refund_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::ledger_write_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validation::smtp_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validation::job_routed)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validation::job_probed)
