#pragma once

// The records of a batch job (docs/batch.md). Plain data shared by storage,
// the batch supervisor, http/ and the CLI.
//
//   queued --claim--> processing --all items done--> completed
//      \                  |  \--its process kept dying--> failed
//       \--cancel-->  cancelled <--cancel--/
//
// Active = queued or processing; the database admits one active job per
// organization.

#include "core/provider/table.hpp"
#include "core/validation/verdict.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::batch {

/// Where a job is in its life.
enum class job_status { queued, processing, completed, cancelled, failed };

/// Returns "queued", "processing", "completed", "cancelled" or "failed".
std::string_view to_string(job_status s);

/// Parses a status name; nullopt for anything else.
std::optional<job_status> parse_job_status(std::string_view text);

/// Returns whether `s` is queued or processing.
bool is_active(job_status s);

/// Results per status so far.
struct status_counts {
  std::int64_t valid = 0;
  std::int64_t invalid = 0;
  std::int64_t risky = 0;
  std::int64_t unknown = 0;

  /// Counts one result whose status is `s`.
  void add(validation::status s);
};

/// Why a job failed, as its record shows it.
struct job_error {
  std::string code;    ///< Upper-case word, e.g. `JOB_KEPT_STOPPING`.
  std::string message; ///< One sentence for people.
};

/// The error of a job whose process died `restarts` times in a row without
/// checkpointing a row (docs/batch.md, "Poison jobs").
job_error kept_stopping_error(std::int64_t restarts);

/// Returns whether a job taken over from a dead owner for the `restarts`-th
/// time in a row without progress is failed instead of started again; a
/// `max_restarts` of 0 never fails a job.
bool restarts_exhausted(std::int64_t restarts, std::int64_t max_restarts);

/// One batch job (the design's job record, plus the lease).
struct job {
  std::string id;
  std::string organization_id;
  job_status status = job_status::queued;
  std::string file_name;
  bool smtp = false;
  bool deduplicate = true;
  /// Uploaded with a test key: validated by the sandbox (no DNS, no SMTP,
  /// no credits reserved or used).
  bool sandbox = false;
  /// The CSV column the addresses were read from (header name, or "" when
  /// the file has no header and the first column was used).
  std::string email_column;
  /// Data rows in the file (header excluded).
  std::int64_t total_rows = 0;
  /// Distinct addresses to validate (after de-duplication when asked).
  std::int64_t unique_emails = 0;
  /// Rows dropped as duplicates of an earlier row.
  std::int64_t duplicates_removed = 0;
  /// Rows whose cell holds no usable address; exported as invalid.
  std::int64_t invalid_rows = 0;
  /// Items finished (addresses validated plus invalid rows).
  std::int64_t processed = 0;
  status_counts counts;
  std::int64_t credits_reserved = 0;
  std::int64_t credits_used = 0;
  /// Unix seconds.
  std::int64_t created_at = 0;
  std::optional<std::int64_t> started_at;
  std::optional<std::int64_t> finished_at;
  /// The process holding the job while processing ("" when none) and when
  /// its lease runs out (Unix seconds).
  std::string lease_owner;
  std::int64_t lease_expires_at = 0;
  /// Times in a row the job was taken over from a dead owner with no row
  /// checkpointed in between (a checkpoint that finishes rows resets it).
  std::int64_t restarts = 0;
  /// Why the job failed; set only when its status is failed.
  std::optional<job_error> error;
  /// When its rows, results and export were erased after the retention
  /// (Unix seconds; core/batch/retention.hpp); nullopt while they are kept.
  /// The record stays, with its counts.
  std::optional<std::int64_t> results_erased_at;

  /// Returns the number of items (addresses + invalid rows).
  std::int64_t items() const { return unique_emails + invalid_rows; }
};

/// The flags and details of a done item beyond its status, reason and score:
/// what its stored `detail` holds and the export shows (docs/batch.md). A
/// nullopt is not known (null in the export, an empty CSV cell).
struct item_flags {
  std::optional<std::string> normalized; ///< The address as normalized.
  std::optional<bool> mx;                ///< Whether mail has a route.
  std::optional<bool> disposable;
  std::optional<bool> role; ///< A role account (info@, sales@).
  bool free = false;        ///< At a free mailbox provider.
  std::optional<bool> random;
  std::optional<bool> catch_all;
  bool smtp_checked = false;
  /// The address with the likely intended domain (`anna@gmail.com`).
  std::optional<std::string> suggestion;
  /// Who runs the mail route's hosts.
  std::optional<core::provider::provider_ref> provider;
};

/// One row of work: an address to validate, or an invalid row kept for the
/// export. `seq` orders items as the file did (0-based, dense).
struct item {
  std::int64_t seq = 0;
  /// The cell as read (trimmed); for invalid rows possibly empty.
  std::string email;
  /// Whether the item has its result.
  bool done = false;
  /// The result, once done (a pending item stores no status: "" in the
  /// database).
  validation::status status = validation::status::unknown;
  std::string reason;
  int score = 0;
  /// The result's `item_flags` in their stored form (compact JSON,
  /// http/codec/batch_results.hpp's `batch_item_detail`), as the supervisor
  /// wrote it (stored verbatim).
  std::string detail;
  /// Credits this item cost (1 when checked over SMTP, else 0).
  std::int64_t credits = 0;
};

/// Returns the item's status as the database and the exports hold it: the
/// result status's name once done, "" while pending.
std::string_view status_text(const item& it);

} // namespace mailassay::core::batch
