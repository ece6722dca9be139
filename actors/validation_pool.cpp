#include "actors/validation_pool.hpp"

#include "actors/validation/pipeline.hpp"

#include <caf/all.hpp>

#include <map>
#include <string>
#include <utility>

namespace mailassay::actors {

namespace {

// What a real-time validation gets once the pool has stopped (the server is
// shutting down): 503, as the HTTP server answers then, not the 500 of a
// request dropped unanswered.
validation::result shutting_down() {
  validation::result r;
  r.refused =
      core::make_error(core::errc::unavailable, "The server is shutting down");
  return r;
}

// A real-time job's answer, owed until given. A job can be dropped without
// one: sent to a pipeline actor that has just quit (CAF drops the message),
// or held by one when it quits (its state goes). Its last copy going away
// then answers for it, so no caller waits for an answer that never comes.
class owed_answer {
public:
  explicit owed_answer(validation::result_callback done)
      : done_(std::move(done)) {}

  owed_answer(const owed_answer&) = delete;
  owed_answer& operator=(const owed_answer&) = delete;

  ~owed_answer() {
    if (done_)
      done_(shutting_down());
  }

  void operator()(validation::result&& r) {
    std::exchange(done_, nullptr)(std::move(r));
  }

private:
  validation::result_callback done_;
};

} // namespace

validation_pool::validation_pool(caf::actor_system& sys,
                                 std::shared_ptr<validation::validator> v,
                                 int workers, credits::ledger_actor ledger,
                                 smtp::scheduler_actor scheduler)
    : validator_(std::move(v)), gauges_(std::make_shared<pool_gauges>()) {
  for (int i = 0; i < std::max(1, workers); ++i)
    actors_.push_back(validation::spawn_pipeline(
        sys, {validator_.get(), ledger, scheduler, gauges_}));
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
  if (stopped_.load()) {
    job.done(shutting_down());
    return;
  }
  gauges_->queued++;
  std::vector<validation::request> one;
  one.push_back(std::move(job.req));
  auto owed = std::make_shared<owed_answer>(std::move(job.done));
  send(validation::smtp_job{
      std::move(one),
      [owed = std::move(owed)](std::size_t, validation::result&& r) {
        (*owed)(std::move(r));
      },
      false});
}

void validation_pool::submit_group(std::vector<validation::request> reqs,
                                   validation::group_callback done) {
  using validation::validator;
  auto started = validator::clock_type::now();
  // Requests asking for SMTP: one pipeline job per domain, so that the
  // scheduler sees the group's addresses together. The sandbox never
  // probes.
  std::map<std::string, std::pair<std::vector<std::size_t>,
                                  std::vector<validation::request>>>
      smtp_jobs;
  std::vector<std::size_t> free_index;
  std::vector<validation::request> free;
  for (std::size_t i = 0; i < reqs.size(); ++i) {
    if (reqs[i].smtp && !reqs[i].sandbox) {
      validation::result r;
      validator_->prepare(reqs[i], r);
      if (!validator::routable(r)) {
        validator::conclude(r, started);
        done(i, std::move(r));
        continue;
      }
      auto& job = smtp_jobs[r.address.ascii_domain];
      job.first.push_back(i);
      job.second.push_back(std::move(reqs[i]));
      continue;
    }
    free_index.push_back(i);
    free.push_back(std::move(reqs[i]));
  }
  for (auto& [domain, job] : smtp_jobs) {
    auto index =
        std::make_shared<std::vector<std::size_t>>(std::move(job.first));
    send({std::move(job.second),
          [index, done](std::size_t k, validation::result&& r) {
            done((*index)[k], std::move(r));
          },
          true});
  }
  if (free.empty())
    return;
  auto index =
      std::make_shared<std::vector<std::size_t>>(std::move(free_index));
  validator_->validate_group(
      std::move(free), [index, done](std::size_t k, validation::result&& r) {
        done((*index)[k], std::move(r));
      });
}

void validation_pool::send(validation::smtp_job job) {
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
  if (stopped_.exchange(true))
    return;
  for (auto& a : actors_)
    caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
}

} // namespace mailassay::actors
