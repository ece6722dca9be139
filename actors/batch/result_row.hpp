#pragma once

// One validation result as a batch item: its stored form, shared by the
// batch supervisor and `mailassay batch`. The export reads it back
// (http/codec/batch_results.cpp).

#include "actors/validation/validator.hpp"
#include "core/batch/job.hpp"

#include <cstdint>
#include <string>

namespace mailassay::actors::batch {

/// Returns the item `seq` holding `r`'s status, reason, score, credits and
/// its flags as compact JSON in `detail`.
core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r);

} // namespace mailassay::actors::batch
