#pragma once

// How an actor runs blocking storage work without blocking: the job goes to
// a storage worker, its answer comes back as a message the actor runs.

#include "actors/storage_pool.hpp"

#include <caf/all.hpp>

#include <functional>
#include <utility>

namespace mailassay::actors {

/// A closure run inside an actor: the answer of a storage job. An actor
/// using `storage_call` handles it with `[](in_actor& f) { f.run(); }`.
struct in_actor {
  std::function<void()> run;
};

/// Runs `work(db)` on a storage worker of `pool` and `then(result)` back
/// inside `self`, so the actor never blocks on storage. A worker without a
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

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::in_actor)
