#pragma once

// Messages between the batch runner, its job supervisors and the storage
// workers that answer them (docs/batch.md).

#include "actors/storage_pool.hpp"

#include <caf/all.hpp>

#include <functional>
#include <utility>

namespace mailassay::actors::batch {

/// A closure run inside an actor: the answer of a storage job.
struct in_actor {
  std::function<void()> run;
};

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

/// Runs `work(db)` on a storage worker and `then(result)` back inside
/// `self`, so the actor never blocks on storage. A worker without a
/// database reports its open error.
template <class Work, class Then>
void storage_call(caf::local_actor* self, storage_pool& pool, Work work,
                  Then then) {
  auto me = caf::actor_cast<caf::actor>(self);
  pool.submit(storage_job{[me, work = std::move(work),
                           then = std::move(then)](job_context& ctx) mutable {
    using result_t = decltype(work(*ctx.db));
    auto r = ctx.db ? work(*ctx.db) : result_t{ctx.open_error};
    caf::anon_send(me, in_actor{[then = std::move(then),
                                 r = std::move(r)]() mutable { then(r); }});
  }});
}

} // namespace mailassay::actors::batch

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::batch::in_actor)
