#include "actors/validation_pool.hpp"

#include <caf/all.hpp>

namespace mailassay::actors {

namespace {

caf::behavior validation_worker(caf::event_based_actor*,
                                std::shared_ptr<validation::validator> v,
                                std::shared_ptr<pool_gauges> gauges) {
  return {
      [v, gauges](validate_job& job) {
        gauges->queued--;
        gauges->busy++;
        // `done` may run later on the resolver thread: count this actor's part
        // only, the exchange tracks the rest.
        v->validate(std::move(job.req), std::move(job.done));
        gauges->busy--;
        gauges->done++;
      },
  };
}

} // namespace

validation_pool::validation_pool(caf::actor_system& sys,
                                 std::shared_ptr<validation::validator> v,
                                 int workers)
    : validator_(v), gauges_(std::make_shared<pool_gauges>()), size_(workers) {
  auto gauges = gauges_;
  pool_ = caf::actor_pool::make(
      sys.dummy_execution_unit(), static_cast<size_t>(workers),
      [&sys, v, gauges] { return sys.spawn(validation_worker, v, gauges); },
      caf::actor_pool::round_robin());
}

void validation_pool::submit(validate_job job) {
  if (!job.req.smtp) {
    gauges_->busy++;
    validator_->validate(std::move(job.req), std::move(job.done));
    gauges_->busy--;
    gauges_->done++;
    return;
  }
  gauges_->queued++;
  caf::anon_send(pool_, std::move(job));
}

bool validation_pool::validate_now(const validation::request& req,
                                   validation::result& r) {
  gauges_->busy++;
  bool done = validator_->validate_now(req, r);
  gauges_->busy--;
  if (done)
    gauges_->done++;
  return done;
}

void validation_pool::stop() {
  caf::anon_send_exit(pool_, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
