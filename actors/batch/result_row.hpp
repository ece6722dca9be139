#pragma once

// One validation result as a batch item: its stored columns, shared by the
// batch supervisor and `mailassay batch`. The stored form of its flags is
// the codec's (http/codec/batch_results.hpp), handed in as a
// `detail_writer`; the export reads it back there.

#include "actors/validation/validator.hpp"
#include "core/batch/job.hpp"

#include <cstdint>
#include <functional>
#include <string>

namespace mailassay::actors::batch {

/// Writes an item's flags in their stored form (`core::batch::item::detail`).
using detail_writer =
    std::function<std::string(const core::batch::item_flags&)>;

/// Returns `r`'s flags as a batch item shows them.
core::batch::item_flags flags_of(const validation::result& r);

/// Returns the item `seq` holding `r`'s status, reason, score, credits and
/// its flags, written by `write` into `detail`.
core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r,
                                   const detail_writer& write);

} // namespace mailassay::actors::batch
