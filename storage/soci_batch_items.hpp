#pragma once

// Batch items written in bulk, one way per backend (soci_batch_items.cpp);
// storage/soci_batch.cpp runs them inside its transactions.

#include "core/batch/job.hpp"

#include <soci/soci.h>

#include <cstdint>
#include <string>
#include <vector>

namespace mailassay::storage::batch_items {

/// Results newly stored by a checkpoint, to be added to the job's counters.
struct tally {
  std::int64_t processed = 0;
  core::batch::status_counts counts;
  std::int64_t credits = 0;

  /// Counts one newly stored result of `status` costing `item_credits`.
  void add(core::validation::status status, std::int64_t item_credits) {
    ++processed;
    credits += item_credits;
    counts.add(status);
  }
};

/// Inserts the items of a new job `job_id` on SQLite (bound in bulk).
void insert_items_sqlite(soci::session& sql, const std::string& job_id,
                         const std::vector<core::batch::item>& items);

/// Inserts the items of a new job `job_id` on PostgreSQL (arrays, unnest()).
void insert_items_postgresql(soci::session& sql, const std::string& job_id,
                             const std::vector<core::batch::item>& items);

/// Stores the results of `results` on SQLite; items stored by an earlier try
/// of the same checkpoint are skipped and not counted.
tally store_results_sqlite(soci::session& sql, const std::string& job_id,
                           const std::vector<core::batch::item>& results);

/// The same on PostgreSQL, a chunk of rows per round trip.
tally store_results_postgresql(soci::session& sql, const std::string& job_id,
                               const std::vector<core::batch::item>& results);

} // namespace mailassay::storage::batch_items
