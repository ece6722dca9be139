#pragma once

// CSV output (RFC 4180) for result exports, with cells defused against
// formula injection (OWASP "CSV Injection").

#include <initializer_list>
#include <span>
#include <string>
#include <string_view>

namespace mailassay::core::batch {

/// Appends `value` as one CSV cell: prefixed with `'` when it starts with
/// `=` `+` `-` `@` TAB or CR (a spreadsheet would run it as a formula), then
/// quoted, quotes doubled, when it holds `,` `"` CR or LF.
void append_cell(std::string& out, std::string_view value);

/// Appends `cells` as one row, separated by commas and ended by CRLF.
void append_row(std::string& out, std::span<const std::string> cells);

/// Appends `cells` as one row, separated by commas and ended by CRLF.
void append_row(std::string& out, std::span<const std::string_view> cells);

/// Appends `cells` as one row, separated by commas and ended by CRLF.
void append_row(std::string& out,
                std::initializer_list<std::string_view> cells);

} // namespace mailassay::core::batch
