#pragma once

// How long the results of a finished batch job are kept (docs/privacy.md,
// "Retention"): the server's `batch.retention_seconds`, or an
// organization's own shorter one. Pure: the time is passed in.
//
//   finished_at ........ finished_at + retention ....... now
//                         ^ due: rows, results and export erased by the
//                           retention sweeper, the record kept with
//                           results_erased_at

#include <cstdint>
#include <optional>
#include <string>

namespace mailassay::core::batch {

/// The longest retention a server or an organization may set: ten years
/// (in seconds). Longer is refused as a mistake; 0 (the server's "keep
/// forever") is the way to never erase.
inline constexpr std::int64_t max_retention_seconds = 10LL * 365 * 86400;

/// The retention that applies to an organization, in seconds; nullopt:
/// results are kept forever. `server_seconds` is the server's setting (0:
/// forever); `organization_seconds` the organization's own (nullopt: none
/// set). The shorter of the two wins: a server lowered below an
/// organization's earlier choice lowers it too.
std::optional<std::int64_t>
effective_retention(std::int64_t server_seconds,
                    std::optional<std::int64_t> organization_seconds);

/// The latest finish time (Unix seconds) whose results are due for erasure
/// at `now`: a finished job with finished_at <= the cutoff is erased.
/// nullopt when the retention is forever.
std::optional<std::int64_t>
retention_cutoff(std::int64_t now, std::int64_t server_seconds,
                 std::optional<std::int64_t> organization_seconds);

/// Why an owner's `requested` retention is refused under the server's
/// `server_seconds` (a sentence naming the field and the bound), or
/// nullopt when it is accepted: 0 < requested <= the server's retention
/// (<= max_retention_seconds when the server keeps forever).
std::optional<std::string>
organization_retention_refusal(std::int64_t requested,
                               std::int64_t server_seconds);

} // namespace mailassay::core::batch
