#pragma once

// A streaming CSV reader (RFC 4180, tolerant of what spreadsheets write).
//
//   bytes --feed()--> BOM + delimiter sniffing --> state machine --> sink
//   finish() ends the last record, or reports the quote left open.
//
// The state machine (d = the delimiter, EOL = CRLF, LF or a lone CR):
//
//   record_start --EOL--> (blank line, skipped)
//        | else
//        v
//   field_start --"--> quoted --"--> quote_in_quoted --"--> quoted (adds ")
//        | else        (other bytes,    | d: next field, EOL: end record
//        v              EOL included)   | else: error
//   unquoted --d--> field_start
//        | EOL: end of record (a quote in here is kept as written)
//
// A CRLF may be split between chunks. Memory stays bounded by the current
// record: at most `csv_max_fields` fields of `csv_max_field_bytes` each.

#include "core/base/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::batch {

/// The longest field the reader accepts, in bytes.
inline constexpr std::size_t csv_max_field_bytes = 4096;

/// The most fields one record may hold.
inline constexpr std::size_t csv_max_fields = 1000;

/// The bytes read before the delimiter is chosen when the first line has
/// not ended yet.
inline constexpr std::size_t csv_sniff_bytes = 64 * 1024;

/// Switches of the reader.
struct csv_options {
  /// The field separator; 0 picks `,` `;` or TAB from the first line (so
  /// do `"`, CR and LF, which cannot separate fields).
  char delimiter = 0;
};

/// One record, valid only during the callback that receives it.
struct csv_record {
  /// The fields, quotes removed and doubled quotes undoubled.
  std::span<const std::string_view> fields;
  /// The line the record starts on (1-based; lines inside quoted fields
  /// count).
  std::size_t line = 0;
};

/// Receives each record in file order; returns false to stop reading.
using csv_sink = std::function<bool(const csv_record&)>;

/// Returns the delimiter the first non-blank line suggests: the most frequent
/// of `,` `;` TAB outside quotes (ties in that order), `,` when none occurs.
char sniff_delimiter(std::string_view first_line);

/// A push parser: give it the file in chunks of any size, then `finish()`.
class csv_reader {
public:
  /// Creates a reader that hands every record to `sink`.
  explicit csv_reader(csv_sink sink, csv_options opts = {});

  /// Parses `chunk`; returns the first error found so far (and keeps
  /// returning it). After the sink returned false, input is ignored.
  expected<unit> feed(std::string_view chunk);

  /// Ends the input: emits the last record or reports what was left open.
  expected<unit> finish();

  /// Returns the delimiter in use (0 until it is known).
  char delimiter() const noexcept { return delimiter_; }

  /// Returns whether the sink asked to stop.
  bool stopped() const noexcept { return stopped_; }

private:
  enum class state : std::uint8_t {
    record_start,
    field_start,
    unquoted,
    quoted,
    quote_in_quoted,
    after_cr,
  };

  bool fail(std::string message);
  void choose_delimiter(char d);
  bool sniff_and_flush(bool force);
  bool parse(std::string_view data);
  bool append(const char* first, std::size_t n);
  bool end_field();
  bool end_record();
  std::size_t check_text(std::string_view chunk);

  csv_sink sink_;
  csv_options opts_;
  char delimiter_ = 0;
  // Bytes `parse` stops at in unquoted fields: the delimiter, CR, LF.
  bool stop_[256] = {};
  bool sniffed_ = false;
  std::string pending_;
  state state_ = state::record_start;
  bool stopped_ = false;
  bool failed_ = false;
  error error_;
  // The record being read: its fields' bytes back to back, where each ends.
  std::string buf_;
  std::vector<std::size_t> ends_;
  std::vector<std::string_view> views_;
  std::size_t line_ = 1;
  std::size_t record_line_ = 1;
  std::size_t quote_line_ = 1;
  bool quoted_cr_ = false;
  // UTF-8 check across chunks: bytes consumed so far, continuation bytes
  // still expected, the allowed range of the next one, where the sequence
  // began (RFC 3629 §4).
  std::uint64_t offset_ = 0;
  int need_ = 0;
  unsigned char low_ = 0x80;
  unsigned char high_ = 0xBF;
  std::uint64_t seq_start_ = 0;
};

} // namespace mailassay::core::batch
