#include "core/batch/export.hpp"

namespace mailassay::core::batch {

namespace {

template <class Cells>
void append_cells(std::string& out, const Cells& cells) {
  bool first = true;
  for (const auto& cell : cells) {
    if (!first)
      out += ',';
    first = false;
    append_cell(out, cell);
  }
  out += "\r\n";
}

} // namespace

void append_cell(std::string& out, std::string_view value) {
  bool defuse =
      !value.empty() &&
      (value.front() == '=' || value.front() == '+' || value.front() == '-' ||
       value.front() == '@' || value.front() == '\t' || value.front() == '\r');
  bool quote = value.find_first_of(",\"\r\n") != value.npos;
  if (quote)
    out += '"';
  if (defuse)
    out += '\'';
  if (!quote) {
    out += value;
    return;
  }
  for (char c : value) {
    if (c == '"')
      out += '"';
    out += c;
  }
  out += '"';
}

void append_row(std::string& out, std::span<const std::string> cells) {
  append_cells(out, cells);
}

void append_row(std::string& out, std::span<const std::string_view> cells) {
  append_cells(out, cells);
}

void append_row(std::string& out,
                std::initializer_list<std::string_view> cells) {
  append_cells(out, cells);
}

} // namespace mailassay::core::batch
