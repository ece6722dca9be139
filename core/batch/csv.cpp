#include "core/batch/csv.hpp"

#include "core/base/utf8.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace mailassay::core::batch {

namespace {

constexpr std::string_view bom = "\xEF\xBB\xBF";

std::string line_prefix(std::size_t line) {
  return "line " + std::to_string(line) + ": ";
}

// How a byte is named in a message.
std::string describe(char c) {
  auto u = static_cast<unsigned char>(c);
  if (c == '\t')
    return "tab character";
  if (u >= 0x20 && u < 0x7F)
    return std::string{"character '"} + c + "'";
  constexpr char hex[] = "0123456789ABCDEF";
  return std::string{"byte 0x"} + hex[u >> 4] + hex[u & 0xF];
}

// Whether any of the 8 bytes of `w` is 0 or has its high bit set.
bool not_plain_ascii(std::uint64_t w) {
  constexpr std::uint64_t ones = 0x0101010101010101ull;
  constexpr std::uint64_t highs = 0x8080808080808080ull;
  return ((w | ((w - ones) & ~w)) & highs) != 0;
}

} // namespace

char sniff_delimiter(std::string_view first_line) {
  std::size_t comma = 0;
  std::size_t semicolon = 0;
  std::size_t tab = 0;
  bool in_quotes = false;
  for (char c : first_line) {
    // A doubled quote toggles twice: the count stays right without knowing
    // where fields start.
    if (c == '"')
      in_quotes = !in_quotes;
    else if (in_quotes)
      continue;
    else if (c == ',')
      ++comma;
    else if (c == ';')
      ++semicolon;
    else if (c == '\t')
      ++tab;
  }
  if (semicolon > comma && semicolon >= tab)
    return ';';
  if (tab > comma && tab > semicolon)
    return '\t';
  return ',';
}

csv_reader::csv_reader(csv_sink sink, csv_options opts)
    : sink_(std::move(sink)), opts_(opts) {
  if (opts_.delimiter == '"' || opts_.delimiter == '\r' ||
      opts_.delimiter == '\n')
    opts_.delimiter = 0;
}

bool csv_reader::fail(std::string message) {
  failed_ = true;
  error_ = make_error(errc::bad_request, std::move(message));
  return false;
}

void csv_reader::choose_delimiter(char d) {
  delimiter_ = d;
  stop_[static_cast<unsigned char>(d)] = true;
  stop_[static_cast<unsigned char>('\r')] = true;
  stop_[static_cast<unsigned char>('\n')] = true;
  sniffed_ = true;
}

// Holds the first bytes back until the BOM and the delimiter are known:
// the first non-blank line has ended outside quotes, `csv_sniff_bytes` are
// held, or `force` (end of input, or binary data ahead). Decides only from
// the first `csv_sniff_bytes` so that every chunking decides alike.
bool csv_reader::sniff_and_flush(bool force) {
  std::string_view held{pending_};
  std::size_t start = 0;
  if (held.substr(0, bom.size()) == bom)
    start = bom.size();
  else if (!force && held.size() < bom.size() && bom.starts_with(held))
    return true;
  char d = opts_.delimiter;
  if (d == 0) {
    auto window = held.substr(0, csv_sniff_bytes);
    auto first = window.find_first_not_of("\r\n", start);
    std::size_t end = std::string_view::npos;
    bool in_quotes = false;
    if (first != std::string_view::npos)
      for (std::size_t i = first; i < window.size(); ++i) {
        char c = window[i];
        if (c == '"')
          in_quotes = !in_quotes;
        else if (!in_quotes && (c == '\r' || c == '\n')) {
          end = i;
          break;
        }
      }
    if (end == std::string_view::npos && !force &&
        held.size() < csv_sniff_bytes)
      return true;
    d = first == std::string_view::npos
            ? ','
            : sniff_delimiter(window.substr(first, end == std::string_view::npos
                                                       ? std::string_view::npos
                                                       : end - first));
  }
  choose_delimiter(d);
  auto data = std::move(pending_);
  pending_ = std::string{};
  return parse(std::string_view{data}.substr(start));
}

// RFC 3629 §4: returns where in `chunk` the first byte that makes the input
// not UTF-8 text (or a NUL) was seen, npos when there is none;
// `seq_start_` is where its sequence began.
std::size_t csv_reader::check_text(std::string_view chunk) {
  auto* p = reinterpret_cast<const unsigned char*>(chunk.data());
  std::size_t n = chunk.size();
  std::size_t i = 0;
  while (i < n) {
    if (need_ > 0) {
      auto c = p[i];
      if (c < low_ || c > high_)
        return i;
      low_ = 0x80;
      high_ = 0xBF;
      --need_;
      ++i;
      continue;
    }
    for (std::uint64_t w; i + 8 <= n; i += 8) {
      std::memcpy(&w, p + i, 8);
      if (not_plain_ascii(w))
        break;
    }
    if (i == n)
      break;
    auto c = p[i];
    if (c >= 0x01 && c < 0x80) {
      ++i;
      continue;
    }
    seq_start_ = offset_ + i;
    auto rule = utf8_lead(c);
    if (rule.need == 0)
      return i; // NUL, a stray continuation or a byte UTF-8 never has
    need_ = rule.need;
    low_ = rule.low;
    high_ = rule.high;
    ++i;
  }
  offset_ += n;
  return std::string_view::npos;
}

expected<unit> csv_reader::feed(std::string_view chunk) {
  if (failed_)
    return error_;
  if (stopped_)
    return unit{};
  auto bad = check_text(chunk);
  // Parse what precedes the bad byte first: an earlier CSV error wins, as
  // it would have had the file come in smaller chunks.
  auto good = chunk.substr(0, bad);
  if (!sniffed_) {
    // At most `csv_sniff_bytes` are held; past them the choice is made.
    auto take = std::min(good.size(), csv_sniff_bytes - pending_.size());
    pending_.append(good.substr(0, take));
    good.remove_prefix(take);
    sniff_and_flush(bad != std::string_view::npos || !good.empty());
  }
  if (sniffed_ && !failed_ && !stopped_)
    parse(good);
  if (failed_)
    return error_;
  if (bad != std::string_view::npos && !stopped_) {
    fail("the file is not text (binary data at byte " +
         std::to_string(seq_start_ + 1) + ")");
    return error_;
  }
  return unit{};
}

expected<unit> csv_reader::finish() {
  if (failed_)
    return error_;
  if (!stopped_ && !sniffed_)
    sniff_and_flush(true);
  if (failed_)
    return error_;
  if (stopped_)
    return unit{};
  if (need_ > 0) {
    fail("the file is not text (binary data at byte " +
         std::to_string(seq_start_ + 1) + ")");
    return error_;
  }
  switch (state_) {
    case state::quoted:
      fail(line_prefix(quote_line_) +
           "unterminated quoted field (the end of the file was reached "
           "before its closing quote)");
      return error_;
    case state::field_start:
    case state::unquoted:
    case state::quote_in_quoted:
      state_ = state::record_start;
      end_record();
      if (failed_)
        return error_;
      break;
    case state::record_start:
    case state::after_cr: state_ = state::record_start; break;
  }
  return unit{};
}

bool csv_reader::append(const char* first, std::size_t n) {
  auto begin = ends_.empty() ? 0 : ends_.back();
  if (buf_.size() - begin + n > csv_max_field_bytes) {
    auto message = line_prefix(line_) + "field " +
                   std::to_string(ends_.size() + 1) + " is longer than " +
                   std::to_string(csv_max_field_bytes) + " bytes";
    if (state_ == state::quoted)
      message += " (it is quoted from line " + std::to_string(quote_line_) +
                 " on: is its closing quote missing?)";
    return fail(std::move(message));
  }
  buf_.append(first, n);
  return true;
}

bool csv_reader::end_field() {
  ends_.push_back(buf_.size());
  if (ends_.size() >= csv_max_fields)
    return fail(line_prefix(line_) + "the record has more than " +
                std::to_string(csv_max_fields) + " fields");
  return true;
}

bool csv_reader::end_record() {
  ends_.push_back(buf_.size());
  views_.clear();
  std::size_t begin = 0;
  for (auto end : ends_) {
    views_.emplace_back(buf_.data() + begin, end - begin);
    begin = end;
  }
  bool go_on = sink_(csv_record{views_, record_line_});
  buf_.clear();
  ends_.clear();
  if (!go_on)
    stopped_ = true;
  return go_on;
}

bool csv_reader::parse(std::string_view data) {
  const char* p = data.data();
  std::size_t n = data.size();
  std::size_t i = 0;
  while (i < n) {
    switch (state_) {
      case state::record_start: {
        char c = p[i];
        if (c == '\n' || c == '\r') {
          // A blank line.
          ++line_;
          ++i;
          state_ = c == '\r' ? state::after_cr : state::record_start;
          continue;
        }
        record_line_ = line_;
        state_ = state::field_start;
        continue;
      }
      case state::after_cr:
        if (p[i] == '\n')
          ++i;
        state_ = state::record_start;
        continue;
      case state::field_start:
        if (p[i] == '"') {
          quote_line_ = line_;
          quoted_cr_ = false;
          state_ = state::quoted;
          ++i;
        } else {
          state_ = state::unquoted;
        }
        continue;
      case state::unquoted: {
        std::size_t j = i;
        while (j < n && !stop_[static_cast<unsigned char>(p[j])])
          ++j;
        if (j > i && !append(p + i, j - i))
          return false;
        i = j;
        if (i == n)
          continue;
        char c = p[i++];
        if (c == delimiter_) {
          if (!end_field())
            return false;
          state_ = state::field_start;
        } else {
          ++line_;
          state_ = c == '\r' ? state::after_cr : state::record_start;
          if (!end_record())
            return false;
        }
        continue;
      }
      case state::quoted: {
        std::size_t j = i;
        while (j < n && p[j] != '"' && p[j] != '\r' && p[j] != '\n')
          ++j;
        if (j > i) {
          quoted_cr_ = false;
          if (!append(p + i, j - i))
            return false;
        }
        i = j;
        if (i == n)
          continue;
        char c = p[i++];
        if (c == '"') {
          state_ = state::quote_in_quoted;
          continue;
        }
        // CRLF, LF and lone CR inside quotes are kept as written; CRLF
        // counts as one line even when split between chunks.
        if (c == '\r' || !quoted_cr_)
          ++line_;
        quoted_cr_ = c == '\r';
        if (!append(&c, 1))
          return false;
        continue;
      }
      case state::quote_in_quoted: {
        char c = p[i];
        if (c == '"') {
          ++i;
          quoted_cr_ = false;
          state_ = state::quoted;
          if (!append(&c, 1))
            return false;
        } else if (c == delimiter_) {
          ++i;
          if (!end_field())
            return false;
          state_ = state::field_start;
        } else if (c == '\r' || c == '\n') {
          ++i;
          ++line_;
          state_ = c == '\r' ? state::after_cr : state::record_start;
          if (!end_record())
            return false;
        } else {
          return fail(line_prefix(line_) + "unexpected " + describe(c) +
                      " after the closing quote of field " +
                      std::to_string(ends_.size() + 1) +
                      " (a quote inside a quoted field must be doubled)");
        }
        continue;
      }
    }
  }
  return true;
}

} // namespace mailassay::core::batch
