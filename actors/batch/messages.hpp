#pragma once

// Messages between the batch runner and its job supervisors
// (docs/batch.md); storage answers come back through `storage_call`.

#include "actors/storage_call.hpp"

#include <caf/all.hpp>

namespace mailassay::actors::batch {

/// Ticks of the runner (look for work) and of a supervisor (checkpoint,
/// renew the lease, wake parked addresses).
using tick_atom = caf::atom_constant<caf::atom("btch_tick")>;
/// A job was queued: the runner looks for work now.
using wake_atom = caf::atom_constant<caf::atom("btch_wake")>;
/// Shutdown: checkpoint, release the lease, stop.
using stop_atom = caf::atom_constant<caf::atom("btch_stop")>;
/// The job was cancelled: stop without releasing the lease.
using cancel_atom = caf::atom_constant<caf::atom("btch_cncl")>;
/// A supervisor's paced wake-up: the next address is due.
using pace_atom = caf::atom_constant<caf::atom("btch_pace")>;

} // namespace mailassay::actors::batch
