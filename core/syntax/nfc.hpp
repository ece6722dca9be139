#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mailassay::core::syntax {

/// The Unicode version the normalization data (and the syntax tables of
/// address.cpp) come from, e.g. "14.0.0".
std::string_view unicode_version();

/// Whether `s` is certainly in Normalization Form C without normalizing it:
/// every code point has combining class 0 and NFC_Quick_Check=Yes (UAX #15
/// §9), as in all ASCII text. False for text that may need normalizing and
/// for text that is not UTF-8; `to_nfc` then decides.
bool nfc_quick_yes(std::string_view s);

/// Writes the NFC form of `s` (UAX #15: canonical decomposition, canonical
/// ordering, canonical composition) into `out`; returns false, leaving `out`
/// unspecified, when `s` is not well-formed UTF-8 (RFC 3629).
bool to_nfc(std::string_view s, std::string& out);

/// Whether `cp` never occurs in NFC text (NFC_Quick_Check=No: a singleton
/// such as the Kelvin sign U+212A, or a composition exclusion): normalizing
/// always replaces it.
bool nfc_never(char32_t cp);

/// The Canonical_Combining_Class of `cp` (0 for starters).
std::uint8_t combining_class(char32_t cp);

} // namespace mailassay::core::syntax
