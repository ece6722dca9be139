#include "actors/validation_pool.hpp"

#include "actors/validation/pipeline.hpp"

#include <caf/all.hpp>

namespace mailassay::actors {

validation_pool::validation_pool(caf::actor_system& sys,
                                 std::shared_ptr<validation::validator> v,
                                 int workers, credits::ledger_actor ledger,
                                 smtp::scheduler_actor scheduler)
    : validator_(std::move(v)), gauges_(std::make_shared<pool_gauges>()) {
  for (int i = 0; i < std::max(1, workers); ++i)
    actors_.push_back(validation::spawn_pipeline(
        sys, {validator_.get(), ledger, scheduler, gauges_}));
  validator_->enable_smtp(this);
}

validation_pool::~validation_pool() {
  stop();
}

void validation_pool::submit(validate_job job) {
  // The sandbox never probes: it is answered where the free part is.
  if (!job.req.smtp || job.req.sandbox) {
    gauges_->busy++;
    validator_->validate(std::move(job.req), std::move(job.done));
    gauges_->busy--;
    gauges_->done++;
    return;
  }
  gauges_->queued++;
  std::vector<validation::request> one;
  one.push_back(std::move(job.req));
  submit(validation::smtp_job{
      std::move(one),
      [done = std::move(job.done)](std::size_t, validation::result&& r) {
        done(std::move(r));
      },
      false});
}

void validation_pool::submit(validation::smtp_job job) {
  auto i = next_.fetch_add(1, std::memory_order_relaxed) % actors_.size();
  caf::anon_send(actors_[i], std::move(job));
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
  if (stopped_)
    return;
  stopped_ = true;
  validator_->enable_smtp(nullptr);
  for (auto& a : actors_)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
