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
#include "core/smtp/host_limits.hpp"
#include "core/smtp/outcome.hpp"
#include "core/smtp/session.hpp"
#include "core/smtp/target.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include <chrono>
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

// -- SMTP scheduler -----------------------------------------------------------

namespace smtp {

/// Asks about one address at one domain. Answered with what is known by
/// the address's deadline (`budget` from now): a probe's answer, the answer
/// of a probe already in flight for the same address (`source` joined), or
/// the result cache's.
struct probe_address {
  /// The domain, ASCII (A-labels).
  std::string domain;
  /// The full address at `domain`.
  std::string address;
  /// The domain's mail route (MX hosts, or the implicit MX).
  std::shared_ptr<const core::dns::mail_route> route;
  /// How long the caller waits for the answer.
  std::chrono::milliseconds budget{10000};
  /// Wait for greylisting retries; false: a deferral is the answer at once
  /// (a batch parks the address and asks again later).
  bool retry_deferrals = true;
  /// A batch's address: asked after the real-time ones.
  bool batch = false;
};

/// A session of the scheduler is ready for work: after its greeting, or
/// after its last address was answered. `so_far` is its result up to now,
/// its `addresses` only from the `first`th given (those not sent before).
struct session_idle {
  std::uint64_t session = 0;
  core::smtp::session_result so_far;
  std::size_t first = 0;
};

/// A session of the scheduler ended.
struct session_ended {
  std::uint64_t session = 0;
  core::smtp::session_report report;
};

/// The addresses of one MX host of a route (from the resolver's host
/// cache: an implicit_mx route carries them, A first).
struct mx_addresses {
  std::string route;
  std::size_t host = 0;
  core::dns::mail_route answer;
};

/// A route's timer: a retry, a deadline or a linger is due (`gen` tells
/// stale timers).
struct route_wake {
  std::string route;
  std::uint64_t gen = 0;
};

/// A host's connection rate allows another session.
struct host_wake {
  std::string host;
};

/// Answers every caller and ends the scheduler; replies true.
struct scheduler_stop {};

/// New politeness towards each MX host (a configuration reload, SIGHUP):
/// the next session follows it, sessions already open stay open; routes
/// planned from now on cap their sessions at `max_rcpts_per_session`.
/// Replies true once it is in force.
struct scheduler_politeness {
  /// Sessions open at once per MX host (0: unlimited).
  std::size_t max_sessions_per_host = 4;
  /// New connections per second per MX host (0: unlimited).
  std::int64_t connections_per_second_per_host = 2;
  /// RCPT commands per session.
  std::size_t max_rcpts_per_session = 20;
  /// Per-provider limits, keyed "provider:<name>" (issue #30).
  std::map<std::string, core::smtp::budget_override, std::less<>>
      provider_limits;
};

/// Drops the result cache's answers whose TTL passed (the retention
/// sweeper's tick, so an idle process keeps no address past its time;
/// docs/privacy.md). Replies with the number of addresses still held.
struct scheduler_forget_expired {};

/// The scheduler's typed interface.
using scheduler_actor = caf::typed_actor<
    caf::replies_to<probe_address>::with<core::smtp::address_outcome>,
    caf::reacts_to<session_idle>, caf::reacts_to<session_ended>,
    caf::reacts_to<mx_addresses>, caf::reacts_to<route_wake>,
    caf::reacts_to<host_wake>, caf::replies_to<scheduler_stop>::with<bool>,
    caf::replies_to<scheduler_politeness>::with<bool>,
    caf::replies_to<scheduler_forget_expired>::with<std::size_t>>;

} // namespace smtp

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

/// A pipeline actor's typed interface.
using pipeline_actor =
    caf::typed_actor<caf::reacts_to<smtp_job>, caf::reacts_to<job_routed>>;

} // namespace validation

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::reserve_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::reserve_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::commit_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::refund_credit)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::credits::ledger_write_done)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::probe_address)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::core::smtp::address_outcome)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::session_idle)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::session_ended)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::mx_addresses)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::route_wake)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::host_wake)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::scheduler_stop)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::scheduler_politeness)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::smtp::scheduler_forget_expired)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validation::smtp_job)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validation::job_routed)
