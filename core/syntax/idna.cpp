#include "core/syntax/idna.hpp"

#include <idn2.h>

namespace mailassay::core::syntax {

namespace {

std::string_view idn_error(int rc) {
  switch (rc) {
    case IDN2_PUNYCODE_BAD_INPUT:
    case IDN2_PUNYCODE_BIG_OUTPUT:
    case IDN2_PUNYCODE_OVERFLOW: return "invalid punycode in an xn-- label";
    case IDN2_DISALLOWED:
      return "domain has a character IDNA2008 disallows (fullwidth, "
             "symbol, emoji or upper-case form)";
    case IDN2_CONTEXTJ:
    case IDN2_CONTEXTO:
    case IDN2_CONTEXTJ_NO_RULE:
    case IDN2_CONTEXTO_NO_RULE:
      return "domain has a character outside its IDNA2008 context (e.g. "
             "a zero-width joiner)";
    case IDN2_BIDI: return "domain breaks the IDNA bidi rule (RFC 5893)";
    case IDN2_UNASSIGNED: return "domain has an unassigned code point";
    case IDN2_TOO_BIG_LABEL: return "label longer than 63 octets";
    case IDN2_TOO_BIG_DOMAIN: return "domain longer than 253 octets";
    case IDN2_2HYPHEN: return "label has -- in the 3rd and 4th positions";
    case IDN2_LEADING_COMBINING: return "label starts with a combining mark";
    case IDN2_NOT_NFC: return "xn-- label does not decode to NFC text";
    default: return "invalid internationalized domain name";
  }
}

} // namespace

// IDNA2008 without UTS #46 mapping (RFC 5891 §4, §5.4): only NFC is applied,
// so fullwidth and invisible characters fail rather than being mapped away.
std::string_view a_labels_of(const std::string& domain, bool has_xn,
                             std::string& ascii_domain) {
  constexpr int flags = IDN2_NFC_INPUT | IDN2_NO_TR46;
  char* ascii = nullptr;
  int rc = idn2_to_ascii_8z(domain.c_str(), &ascii, flags);
  if (rc != IDN2_OK)
    return idn_error(rc);
  ascii_domain.assign(ascii);
  idn2_free(ascii);
  if (!has_xn)
    return {};
  // RFC 5891 §5.4: an A-label must survive decode + re-encode unchanged.
  char* unicode = nullptr;
  rc = idn2_to_unicode_8z8z(ascii_domain.c_str(), &unicode, 0);
  if (rc != IDN2_OK)
    return idn_error(rc);
  char* again = nullptr;
  rc = idn2_to_ascii_8z(unicode, &again, flags);
  idn2_free(unicode);
  if (rc != IDN2_OK)
    return idn_error(rc);
  bool same = ascii_domain == again;
  idn2_free(again);
  if (!same)
    return "xn-- label is not a canonical A-label";
  return {};
}

} // namespace mailassay::core::syntax
