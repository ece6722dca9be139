#pragma once

// What the parser asks of a Unicode code point (tables generated from the
// Unicode data by gen_unicode_tables.py): forbidden, a combining mark,
// private use, a joiner; its lower case; its U+ name. Off the ASCII path.

#include <string>

namespace mailassay::core::syntax {

/// Whether `cp` (>= U+0080) may never appear in an address: a control, a
/// format character, a separator, an invisible filler or a noncharacter
/// (ZWNJ and ZWJ are left to the IDNA CONTEXTJ rules).
bool is_forbidden(char32_t cp);

/// Whether `cp` is a combining mark (may not start a local part).
bool is_mark(char32_t cp);

/// Whether `cp` is in a Private Use Area (The Unicode Standard §23.5): the
/// BMP's and planes 15 and 16.
bool is_private_use(char32_t cp);

/// Whether `cp` is ZERO WIDTH (NON-)JOINER.
bool is_joiner(char32_t cp);

/// The simple lower case of `cp` (itself when it has none).
char32_t to_lower(char32_t cp);

/// "U+XXXX" (at least four hex digits).
std::string code_point_name(char32_t cp);

/// Lower-cases a UTF-8 domain in place, code point by code point.
void lower_unicode(std::string& domain);

} // namespace mailassay::core::syntax
