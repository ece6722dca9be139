#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mailassay::core {

/// Returns whether `s` is well-formed UTF-8 (RFC 3629).
bool utf8_valid(std::string_view s);

/// Decodes the well-formed UTF-8 sequence (RFC 3629) at `s[i]` into `cp`;
/// returns its length in bytes, or 0 (and leaves `cp`) when the bytes there
/// are not one (stray continuation, overlong form, surrogate, above
/// U+10FFFF, cut short, or `i` at the end).
std::size_t utf8_decode(std::string_view s, std::size_t i, char32_t& cp);

/// Appends the UTF-8 form of the scalar value `cp` (at most U+10FFFF, not a
/// surrogate) to `out`.
void utf8_append(std::string& out, char32_t cp);

/// Returns `s` as well-formed UTF-8 (RFC 3629): each byte that does not
/// belong to a well-formed sequence (stray continuation, overlong form,
/// surrogate, above U+10FFFF, cut short) becomes U+FFFD. The result holds at
/// most `max_bytes` bytes and never ends inside a sequence. For text a client
/// names freely that is stored and later written as JSON (a file name).
std::string utf8_scrub(std::string_view s,
                       std::size_t max_bytes = std::string::npos);

} // namespace mailassay::core
