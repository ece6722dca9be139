#pragma once

#include "actors/messages.hpp"
#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"

#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <functional>
#include <memory>
#include <vector>

namespace mailassay::actors {

/// One real-time validation: the request and where the result goes (a
/// closure built by http/ or the CLI).
struct validate_job {
  validation::request req;
  validation::result_callback done;
};

/// The one way into the validation pipeline, for real-time requests and
/// batch groups alike: runs a validation on the calling thread when nothing
/// needs waiting, on the pipeline's actors when SMTP is asked
/// (actors/validation/pipeline.hpp). Neither ever blocks: syntax and free
/// checks take microseconds, a cached route is a lookup, DNS completes on
/// the resolver thread, credits are held by the ledger (storage workers)
/// and probes run in the SMTP actors.
class validation_pool final {
public:
  /// Spawns `workers` pipeline actors sharing `v` (the free part), the
  /// credit `ledger` and the SMTP `scheduler` (null: probing is off).
  validation_pool(caf::actor_system& sys,
                  std::shared_ptr<validation::validator> v, int workers,
                  credits::ledger_actor ledger,
                  smtp::scheduler_actor scheduler);

  /// Stops the actors (see `stop`).
  ~validation_pool();

  validation_pool(const validation_pool&) = delete;
  validation_pool& operator=(const validation_pool&) = delete;

  /// Starts a validation. One without SMTP runs on the calling thread (an
  /// HTTP I/O thread): it answers at once for a syntax failure or a cached
  /// route, else later from the resolver thread, so a hop to an actor would
  /// only add two cross-thread wake-ups (docs/performance.md). One with
  /// SMTP goes to a pipeline actor: the credit and the probe stay off the
  /// I/O thread. One with SMTP that arrives after `stop`, or that a
  /// stopping pipeline actor drops, is answered `refused` with
  /// `errc::unavailable` ("The server is shutting down": 503).
  void submit(validate_job job);

  /// Validates a batch group (`validation::validator::validate_group`): its
  /// requests asking for SMTP go to the pipeline's actors as one job per
  /// domain, whose addresses share the SMTP scheduler's sessions; the
  /// others get the free part with one route lookup per domain. Calls
  /// `done(index, result)` once per request; not counted in `gauges`.
  void submit_group(std::vector<validation::request> reqs,
                    validation::group_callback done);

  /// Validates `req` into `r` on the calling thread when it needs no
  /// waiting (validator::validate_now); else returns false and the caller
  /// submits it.
  bool validate_now(const validation::request& req, validation::result& r);

  /// Occupancy counters for /metrics: `queued` counts real-time jobs
  /// waiting in a pipeline actor's mailbox, `busy` the real-time
  /// validations whose synchronous part is running (on an actor or a
  /// calling thread), `done` those that finished it (their answer may
  /// still come from the resolver, the ledger or the SMTP actors). Batch
  /// groups are not counted: the batch runner paces itself on `done`.
  const pool_gauges& gauges() const { return *gauges_; }

  /// Number of pipeline actors.
  int size() const { return static_cast<int>(actors_.size()); }

  /// Stops the actors; SMTP validations then get 503 (see `submit`).
  void stop();

private:
  /// Hands SMTP validations at one domain to a pipeline actor (round robin).
  void send(validation::smtp_job job);

  std::shared_ptr<validation::validator> validator_;
  std::shared_ptr<pool_gauges> gauges_;
  std::vector<validation::pipeline_actor> actors_;
  std::atomic<std::size_t> next_{0};
  std::atomic<bool> stopped_{false};
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validate_job)
