#pragma once

// How far a batch job is and how long it has left, as its record shows
// them (GET /v2/batch/{jobId}, the webhook events).

#include "core/batch/job.hpp"

#include <cstdint>
#include <optional>

namespace mailassay::core::batch {

/// Items done in percent, rounded down to a tenth; 100 for a job of no
/// items.
double progress_percent(const job& j);

/// Seconds left at the average speed since the job started (`now` in Unix
/// seconds, rounded up); 0 once the job ended; nullopt while there is
/// nothing to measure (queued, or no address validated yet).
std::optional<std::int64_t> eta_seconds(const job& j, std::int64_t now);

} // namespace mailassay::core::batch
