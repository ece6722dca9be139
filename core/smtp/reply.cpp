#include "core/smtp/reply.hpp"

#include "core/base/ascii.hpp"

#include <utility>

namespace mailassay::core::smtp {

namespace {

// Reads 1-3 digits at `pos`; returns the value or -1.
int read_number(std::string_view text, std::size_t& pos) {
  int value = 0;
  std::size_t start = pos;
  while (pos < text.size() && is_ascii_digit(text[pos]) && pos - start < 3)
    value = value * 10 + (text[pos++] - '0');
  if (pos == start || (pos < text.size() && is_ascii_digit(text[pos])))
    return -1;
  return value;
}

} // namespace

std::string enhanced_code::to_string() const {
  return std::to_string(klass) + "." + std::to_string(subject) + "." +
         std::to_string(detail);
}

std::optional<std::pair<enhanced_code, std::size_t>>
parse_enhanced_code(std::string_view text) {
  if (text.size() < 5 || (text[0] != '2' && text[0] != '4' && text[0] != '5') ||
      text[1] != '.')
    return std::nullopt;
  std::size_t pos = 2;
  int subject = read_number(text, pos);
  if (subject < 0 || pos >= text.size() || text[pos] != '.')
    return std::nullopt;
  ++pos;
  int detail = read_number(text, pos);
  if (detail < 0 || (pos < text.size() && text[pos] != ' '))
    return std::nullopt;
  return std::pair{enhanced_code{text[0] - '0', subject, detail}, pos};
}

std::string reply::text() const {
  std::string out;
  for (const auto& line : lines) {
    std::string_view t = line;
    if (auto e = parse_enhanced_code(t)) {
      t.remove_prefix(e->second);
      while (!t.empty() && t.front() == ' ')
        t.remove_prefix(1);
    }
    if (t.empty())
      continue;
    if (!out.empty())
      out.push_back(' ');
    out.append(t);
  }
  return out;
}

std::string_view to_string(parse_error e) {
  switch (e) {
    case parse_error::none: return "none";
    case parse_error::bad_code: return "bad_code";
    case parse_error::bad_separator: return "bad_separator";
    case parse_error::mismatched_code: return "mismatched_code";
    case parse_error::line_too_long: return "line_too_long";
    case parse_error::reply_too_large: return "reply_too_large";
    case parse_error::too_many_lines: return "too_many_lines";
  }
  return "unknown";
}

reply_parser::reply_parser(reply_limits limits) : limits_(limits) {}

void reply_parser::reset() {
  line_.clear();
  current_ = reply{};
  current_size_ = 0;
  error_ = parse_error::none;
}

feed_result reply_parser::feed(std::string_view bytes) {
  feed_result out;
  for (std::size_t i = 0; i < bytes.size() && error_ == parse_error::none;
       ++i) {
    char c = bytes[i];
    if (c == '\n') {
      if (!line_.empty() && line_.back() == '\r')
        line_.pop_back();
      error_ = end_line(out.replies);
      line_.clear();
      continue;
    }
    line_.push_back(c);
    // +1: the CR of the CRLF may still be in the buffer.
    if (line_.size() > limits_.max_line + 1)
      error_ = parse_error::line_too_long;
  }
  out.error = error_;
  return out;
}

parse_error reply_parser::end_line(std::vector<reply>& out) {
  std::string_view line = line_;
  if (line.size() > limits_.max_line)
    return parse_error::line_too_long;
  // RFC 5321 §4.2: Reply-code = %x32-35 %x30-35 %x30-39.
  if (line.size() < 3 || line[0] < '2' || line[0] > '5' || line[1] < '0' ||
      line[1] > '5' || !is_ascii_digit(line[2]))
    return parse_error::bad_code;
  int code = (line[0] - '0') * 100 + (line[1] - '0') * 10 + (line[2] - '0');
  bool last = true;
  if (line.size() > 3) {
    if (line[3] == '-')
      last = false;
    else if (line[3] != ' ')
      return parse_error::bad_separator;
  }
  if (current_.code != 0 && current_.code != code)
    return parse_error::mismatched_code;
  current_size_ += line.size() + 2;
  if (current_size_ > limits_.max_reply)
    return parse_error::reply_too_large;
  if (current_.lines.size() + 1 > limits_.max_lines)
    return parse_error::too_many_lines;
  current_.code = code;
  if (line.size() > 512)
    current_.long_lines = true;
  std::string_view text = line.size() > 4 ? line.substr(4) : "";
  if (!current_.enhanced)
    if (auto e = parse_enhanced_code(text); e && e->first.klass == code / 100)
      current_.enhanced = e->first;
  current_.lines.emplace_back(text);
  if (last) {
    out.push_back(std::move(current_));
    current_ = reply{};
    current_size_ = 0;
  }
  return parse_error::none;
}

} // namespace mailassay::core::smtp
