#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::smtp {

/// An RFC 3463 enhanced status code `class.subject.detail`, e.g. 5.1.1.
struct enhanced_code {
  /// 2 (success), 4 (persistent transient) or 5 (permanent).
  int klass = 0;
  /// Subject, 0-999 (1 addressing, 2 mailbox, 5 protocol, 7 policy ...).
  int subject = 0;
  /// Detail, 0-999.
  int detail = 0;

  /// Returns "class.subject.detail".
  std::string to_string() const;

  /// Compares all three parts.
  friend bool operator==(const enhanced_code&, const enhanced_code&) = default;
};

/// Parses an enhanced status code at the start of `text` (RFC 3463 §2:
/// class 2, 4 or 5, subject and detail of 1-3 digits), followed by a space
/// or the end; returns the code and the number of characters it spans
/// (without the space), or nothing.
std::optional<std::pair<enhanced_code, std::size_t>>
parse_enhanced_code(std::string_view text);

/// One complete SMTP reply (RFC 5321 §4.2), possibly multi-line.
struct reply {
  /// The three-digit reply code, e.g. 250.
  int code = 0;
  /// The text of each line after the code and separator, without CRLF.
  std::vector<std::string> lines;
  /// The enhanced status code of the first line carrying one whose class
  /// matches the reply code's first digit; absent otherwise.
  std::optional<enhanced_code> enhanced;
  /// Whether a line exceeded RFC 5321 §4.5.3.1.5's 512 octets (tolerated
  /// up to the parser's limit).
  bool long_lines = false;

  /// Returns the first digit of the code: 2, 3, 4 or 5.
  int klass() const { return code / 100; }
  /// Returns whether the code is 2xx.
  bool positive() const { return klass() == 2; }
  /// Returns the lines joined by a space, each without its leading enhanced
  /// code.
  std::string text() const;
};

/// Why the reply stream cannot be trusted any more.
enum class parse_error {
  none,            ///< No error.
  bad_code,        ///< A line does not start with a reply code 2xx-5xx.
  bad_separator,   ///< The code is followed by neither ' ', '-' nor the end.
  mismatched_code, ///< A continuation line carries another code.
  line_too_long,   ///< A line exceeds `reply_limits::max_line`.
  reply_too_large, ///< A reply exceeds `reply_limits::max_reply`.
  too_many_lines,  ///< A reply has more than `reply_limits::max_lines`.
};

/// Returns a stable lower-case name of `e`, e.g. "line_too_long".
std::string_view to_string(parse_error e);

/// Bounds on what the parser buffers (design §4: bounded line length and
/// reply size).
struct reply_limits {
  /// Longest accepted line in octets without CRLF; RFC 5321 §4.5.3.1.5
  /// says 512 but real servers exceed it, so be lenient up to this.
  std::size_t max_line = 4096;
  /// Largest accepted reply, all lines together.
  std::size_t max_reply = 64 * 1024;
  /// Most lines in one reply.
  std::size_t max_lines = 200;
};

/// What one `reply_parser::feed` produced.
struct feed_result {
  /// The replies completed by the bytes, in order.
  std::vector<reply> replies;
  /// Set once the stream is broken; replies before the fault are kept.
  parse_error error = parse_error::none;
};

/// Incremental SMTP reply parser: feed it bytes as they arrive, in pieces
/// of any size, and it returns each reply once its last line is complete.
/// Lines end in CRLF; a bare LF is tolerated. After an error it stays
/// failed and returns that error on every feed.
class reply_parser {
public:
  /// Creates a parser with `limits`.
  explicit reply_parser(reply_limits limits = {});

  /// Consumes `bytes` and returns the replies they complete.
  feed_result feed(std::string_view bytes);

  /// Returns whether bytes of an unfinished reply are buffered.
  bool has_partial() const { return !line_.empty() || current_.code != 0; }

  /// Returns the error the parser stopped at, or `parse_error::none`.
  parse_error error() const { return error_; }

  /// Forgets buffered bytes and any error (e.g. after the TLS handshake,
  /// RFC 3207 §4.2: nothing received in clear text may be kept).
  void reset();

private:
  /// Takes the complete line in `line_`; appends a finished reply to `out`.
  parse_error end_line(std::vector<reply>& out);

  /// Bounds.
  reply_limits limits_;
  /// The line being read, without its LF.
  std::string line_;
  /// The reply being assembled.
  reply current_;
  /// Octets of `current_` so far, CRLFs included.
  std::size_t current_size_ = 0;
  /// The error the parser stopped at.
  parse_error error_ = parse_error::none;
};

} // namespace mailassay::core::smtp
