#pragma once

// From the bytes of an uploaded CSV to the items of a batch job
// (docs/batch-csv.md): header detection, the column of addresses, the
// syntax check of each cell, de-duplication and the address limit.

#include "core/base/expected.hpp"
#include "core/batch/csv.hpp"
#include "core/batch/job.hpp"
#include "core/batch/key_set.hpp"
#include "core/syntax/address.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::batch {

/// The most addresses one batch job may hold (after de-duplication).
inline constexpr std::size_t default_max_addresses = 200000;

/// How an upload is read.
struct intake_options {
  /// Drops rows whose mailbox was seen before (`syntax::mailbox_key`: the
  /// domain's case always, the local part only as its provider folds it);
  /// the first occurrence stays.
  bool deduplicate = true;
  /// The header name of the column of addresses (case-insensitive, trimmed);
  /// "" picks it (see docs/batch-csv.md).
  std::string email_column;
  /// More unique addresses than this fail with `errc::validation_failed`.
  std::size_t max_addresses = default_max_addresses;
  /// The syntax switches of the service (special-use domains...).
  syntax::options syntax;
  /// The field separator; 0 picks `,` `;` or TAB from the first line.
  char delimiter = 0;
};

/// The job's items and the counts for its record.
struct intake_result {
  /// One item per unique address and per invalid row, `seq` 0..n-1 in file
  /// order; invalid rows come done (status "invalid", score 0).
  std::vector<item> items;
  /// Data rows read (header and blank lines excluded).
  std::int64_t total_rows = 0;
  /// Items that hold an address to validate.
  std::int64_t unique_emails = 0;
  /// Rows dropped because their address came earlier.
  std::int64_t duplicates_removed = 0;
  /// Rows kept as invalid (empty cell, or not an address).
  std::int64_t invalid_rows = 0;
  /// The header name of the column read ("" when the file has no header).
  std::string email_column;
  /// The 0-based index of the column read.
  std::size_t column = 0;
  /// Whether the first record was taken as a header.
  bool has_header = false;
  /// The field separator used.
  char delimiter = ',';
};

/// Copies the counts and the column of `r` into the job record `j`.
void fill_job(job& j, const intake_result& r);

/// Reads an upload chunk by chunk; one instance per file. Every error is
/// `errc::bad_request` but the address limit (`errc::validation_failed`).
/// A file whose rows are all invalid is read (its items say why); only a
/// column with no '@' in any cell is refused.
class intake {
public:
  /// Prepares to read one file with `opts`.
  explicit intake(intake_options opts);

  /// Not copied nor moved: the reader's sink refers to this object.
  intake(const intake&) = delete;
  /// Not assigned, as it is not copied.
  intake& operator=(const intake&) = delete;

  /// Makes room for about `rows` data rows (a hint: reading never depends
  /// on it); at most `max_addresses` are reserved.
  void reserve(std::size_t rows);

  /// Reads `chunk`; returns the first error found so far (and keeps
  /// returning it).
  expected<unit> feed(std::string_view chunk);

  /// Ends the file and returns its items and counts, or why it is refused.
  expected<intake_result> finish();

private:
  bool on_record(const csv_record& record);
  bool choose_column(const csv_record& first);
  void add_row(std::string_view cell);
  bool stop(error e);

  intake_options opts_;
  csv_reader reader_;
  intake_result result_;
  bool started_ = false;
  std::optional<error> error_;
  /// Some cell of the column holds an '@' (an address, good or bad).
  bool looks_like_address_ = false;
  syntax::parsed_address parsed_;
  std::string key_;
  key_set seen_;
};

/// Reads a whole upload held in memory (a single `intake` feed, room
/// reserved from its count of line ends).
expected<intake_result> read_csv(std::string_view bytes,
                                 const intake_options& opts);

} // namespace mailassay::core::batch
