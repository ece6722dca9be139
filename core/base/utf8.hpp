#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mailassay::core {

/// What RFC 3629 §4 lets follow the lead byte of a multi-byte sequence:
/// `need` continuation bytes, the first in [`low`, `high`] (that range keeps
/// out overlong forms, UTF-16 surrogates and values above U+10FFFF), the
/// others in [0x80, 0xBF].
struct utf8_lead_rule {
  int need = 0; ///< 0: the byte starts no multi-byte sequence.
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
};

/// Returns the rule of lead byte `c`; `need` is 0 for an ASCII byte, a
/// continuation byte, C0, C1 and F5-FF. The one copy of RFC 3629's table of
/// lead bytes (the decoder here, the CSV reader's streaming check); defined
/// here so both inline it.
constexpr utf8_lead_rule utf8_lead(unsigned char c) noexcept {
  // One branch per row of RFC 3629 §4's table, written out by design: the
  // branches alike in shape are different rows.
  if (c >= 0xC2 && c <= 0xDF)
    return {1};
  if (c >= 0xE0 && c <= 0xEF) {
    if (c == 0xE0)
      return {2, 0xA0}; // no overlong forms
    if (c == 0xED)
      return {2, 0x80, 0x9F}; // no UTF-16 surrogates
    return {2};
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (c == 0xF0)
      return {3, 0x90}; // no overlong forms
    if (c == 0xF4)
      return {3, 0x80, 0x8F}; // nothing above U+10FFFF
    return {3};
  }
  return {};
}

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
