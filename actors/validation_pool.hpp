#pragma once

#include <atomic>
#include <functional>
#include <memory>

#include <caf/actor.hpp>
#include <caf/allowed_unsafe_message_type.hpp>
#include <caf/fwd.hpp>

#include "actors/storage_pool.hpp"
#include "actors/validation/validator.hpp"

namespace mailassay::actors {

/// One validation for a validation actor: the request and where the result
/// goes (a closure built by http/ or the CLI).
struct validate_job {
  validation::request req;
  std::function<void(validation::result)> done;
};

/// Event-based actors running the validation pipeline. They never block:
/// syntax and free checks take microseconds, DNS completes on the resolver
/// thread, and (with the SMTP issue) probes run in session actors.
class validation_pool {
public:
  /// Spawns `workers` actors sharing `v`.
  validation_pool(caf::actor_system& sys, std::shared_ptr<validation::validator> v,
                  int workers);

  /// Queues a validation.
  void submit(validate_job job);

  /// Occupancy counters for /metrics.
  const pool_gauges& gauges() const { return *gauges_; }

  /// Number of actors.
  int size() const { return size_; }

  /// Stops the actors.
  void stop();

private:
  std::shared_ptr<pool_gauges> gauges_;
  caf::actor pool_;
  int size_;
};

} // namespace mailassay::actors

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(mailassay::actors::validate_job)
