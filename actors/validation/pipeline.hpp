#pragma once

// The SMTP stage of the validation pipeline: one address forward.
//
//   smtp_job ─> prepare (syntax, free checks) ─> mail route (DNS cache, or
//   the resolver ─job_routed─>) ─> plan_smtp ──not probe──> verdict, answer
//                                      │ probe
//                     hold_for: reserve ─reserve_credit─> ledger ─refused─> 402
//                               prepaid       │ held
//                                      v      v
//              probe_address ─> SMTP scheduler (shared sessions, joined
//                               probes, result cache) ─> address_outcome
//                                      │ facts_of
//                                      v
//                     settle: commit ─commit_credit─> ledger ─> verdict, answer
//                             refund ─refund_credit─> ledger ─stored─> verdict,
//                                                                      answer
//
// Every decision is a pure function of core/validation/smtp_stage.hpp; the
// actor only carries the address between them, so a reader follows one
// address from the handler to its answer in this file and the next.

#include "actors/messages.hpp"
#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace mailassay::actors::validation {

/// What a pipeline actor works with.
struct pipeline_env {
  /// The free part (syntax, checks, DNS, verdict); outlives the actor.
  const validator* free = nullptr;
  /// The credit ledger.
  credits::ledger_actor ledger;
  /// The SMTP scheduler; null: probing is off (`smtp_plan::off`).
  smtp::scheduler_actor scheduler;
  /// Occupancy counters of the validation pool.
  std::shared_ptr<pool_gauges> gauges;
};

/// Spawns one pipeline actor.
pipeline_actor spawn_pipeline(caf::actor_system& sys, pipeline_env env);

} // namespace mailassay::actors::validation
