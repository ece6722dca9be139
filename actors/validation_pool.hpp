#pragma once

#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include <atomic>
#include <functional>
#include <memory>

namespace mailassay::actors {

/// One validation for a validation actor: the request and where the result
/// goes (a closure built by http/ or the CLI).
struct validate_job {
  validation::request req;
  validation::result_callback done;
};

/// Runs the validation pipeline, on the calling thread when it is cheap and
/// on event-based actors otherwise. Neither ever blocks: syntax and free
/// checks take microseconds, a cached route is a lookup, DNS completes on
/// the resolver thread, credits are reserved by a storage job and SMTP
/// probes run in the prober's actors.
class validation_pool {
public:
  /// Spawns `workers` actors sharing `v`.
  validation_pool(caf::actor_system& sys,
                  std::shared_ptr<validation::validator> v, int workers);

  /// Starts a validation. One without SMTP runs on the calling thread (an
  /// HTTP I/O thread): it answers at once for a syntax failure or a cached
  /// route, else later from the resolver thread, so a hop to an actor would
  /// only add two cross-thread wake-ups (docs/performance.md). One with
  /// SMTP goes to an actor: the credit reservation and the probe set-up stay
  /// off the I/O thread.
  void submit(validate_job job);

  /// Validates `req` into `r` on the calling thread when it needs no
  /// waiting (validator::validate_now); else returns false and the caller
  /// submits it.
  bool validate_now(const validation::request& req, validation::result& r);

  /// Occupancy counters for /metrics: `queued` counts jobs waiting in an
  /// actor's mailbox, `busy` the validations whose synchronous part is
  /// running (on an actor or a calling thread), `done` those that finished
  /// it (their answer may still come from the resolver or the prober).
  const pool_gauges& gauges() const { return *gauges_; }

  /// Number of actors.
  int size() const { return size_; }

  /// Stops the actors.
  void stop();

private:
  std::shared_ptr<validation::validator> validator_;
  std::shared_ptr<pool_gauges> gauges_;
  caf::actor pool_;
  int size_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validate_job)
