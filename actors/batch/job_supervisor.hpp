#pragma once

// One batch job's supervisor (docs/batch.md): reads the job's pending items
// page by page, sorted by domain so DNS answers are reused, keeps at most
// `concurrency` validations in flight, parks greylisted addresses, paces
// itself while real-time validations arrive, and checkpoints results with
// the job's counters and lease in one transaction per group of rows.

#include "actors/batch/runner.hpp"
#include "core/batch/job.hpp"

#include <caf/fwd.hpp>

#include <memory>

namespace mailassay::actors::batch {

/// Spawns the supervisor of `j` on a detached thread of lowered priority
/// (`batch.nice`); `parent` monitors it. It answers `cancel_atom` (stop,
/// keep nothing leased) and `stop_atom` (checkpoint, release the lease).
caf::actor spawn_job_supervisor(caf::event_based_actor* parent,
                                std::shared_ptr<batch_runner_env> env,
                                std::shared_ptr<batch_gauges> gauges,
                                core::batch::job j);

} // namespace mailassay::actors::batch
