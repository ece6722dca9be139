#pragma once

// One validation result as a batch item, and items as export rows. Shared
// by the batch supervisor, the results endpoint and `mailassay batch`, so a
// job's export and the CLI's output have the same columns.

#include "actors/validation/validator.hpp"
#include "core/batch/job.hpp"

#include <cstdint>
#include <string>

namespace mailassay::actors::batch {

/// Returns the item `seq` holding `r`'s status, reason, score, credits and
/// its flags as compact JSON in `detail`.
core::batch::item item_from_result(std::int64_t seq, std::string email,
                                   const validation::result& r);

/// Appends the CSV header row (email, status, reason, score, then the
/// flags; see docs/batch.md) with CRLF.
void append_csv_header(std::string& out);

/// Appends `it` as one CSV row (cells escaped against formula injection).
void append_csv_row(std::string& out, const core::batch::item& it);

/// Appends `it` as one JSON object (no separator).
void append_json_row(std::string& out, const core::batch::item& it);

} // namespace mailassay::actors::batch
