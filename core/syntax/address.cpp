#include "core/syntax/address.hpp"

#include "core/base/ascii.hpp"
#include "core/base/utf8.hpp"
#include "core/syntax/nfc.hpp"

#include <idn2.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

namespace mailassay::core::syntax {

namespace {

// RFC 5321 §4.5.3.1.1 (local part), §4.5.3.1.3 via the 256-octet path minus
// the angle brackets (address), RFC 1035 §2.3.4 (label, name).
constexpr std::size_t max_local = 64;
constexpr std::size_t max_address = 254;
constexpr std::size_t max_domain = 253;
constexpr std::size_t max_label = 63;

enum char_class : std::uint8_t {
  cls_atext = 1,
  cls_ldh = 2,
  cls_digit = 4,
  cls_hex = 8,
  cls_upper = 16,
  cls_qtext = 32,
  cls_alpha = 64,
  cls_hyphen = 128,
};

constexpr std::array<std::uint8_t, 256> make_classes() {
  std::array<std::uint8_t, 256> t{};
  for (int c = 'a'; c <= 'z'; ++c)
    t[c] |= cls_atext | cls_ldh | cls_alpha;
  for (int c = 'A'; c <= 'Z'; ++c)
    t[c] |= cls_atext | cls_ldh | cls_alpha | cls_upper;
  for (int c = '0'; c <= '9'; ++c)
    t[c] |= cls_atext | cls_ldh | cls_digit | cls_hex;
  for (int c = 'a'; c <= 'f'; ++c)
    t[c] |= cls_hex;
  for (int c = 'A'; c <= 'F'; ++c)
    t[c] |= cls_hex;
  t['-'] |= cls_ldh | cls_hyphen;
  // RFC 5322 §3.2.3 atext specials.
  for (char c : std::string_view{"!#$%&'*+-/=?^_`{|}~"})
    t[static_cast<unsigned char>(c)] |= cls_atext;
  // RFC 5321 qtextSMTP %d32-33 / %d35-91 / %d93-126: a space is allowed
  // inside a quoted string (`"john doe"@example.com`), a tab is not.
  for (int c = 32; c <= 126; ++c)
    if (c != '"' && c != '\\')
      t[c] |= cls_qtext;
  return t;
}

constexpr auto classes = make_classes();

bool has(unsigned char c, std::uint8_t cls) {
  return (classes[c] & cls) != 0;
}

struct code_point_range {
  char32_t first;
  char32_t last;
};

struct case_run {
  char32_t first;
  char32_t last;
  int delta;
  int stride;
};

#include "core/syntax/unicode_tables.inc"

bool is_forbidden(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(forbidden_ranges), std::end(forbidden_ranges), cp,
      [](char32_t v, const code_point_range& r) { return v < r.first; });
  return it != std::begin(forbidden_ranges) && cp <= std::prev(it)->last;
}

bool is_mark(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(mark_ranges), std::end(mark_ranges), cp,
      [](char32_t v, const code_point_range& r) { return v < r.first; });
  return it != std::begin(mark_ranges) && cp <= std::prev(it)->last;
}

// The Private Use Areas (The Unicode Standard §23.5): the BMP's and planes
// 15 and 16 (their last two code points are noncharacters, refused anyway).
bool is_private_use(char32_t cp) {
  return (cp >= 0xE000 && cp <= 0xF8FF) || cp >= 0xF0000;
}

bool is_joiner(char32_t cp) {
  return cp == 0x200C || cp == 0x200D;
}

char32_t to_lower(char32_t cp) {
  auto it = std::upper_bound(
      std::begin(lower_runs), std::end(lower_runs), cp,
      [](char32_t v, const case_run& r) { return v < r.first; });
  if (it == std::begin(lower_runs))
    return cp;
  const auto& r = *std::prev(it);
  if (cp > r.last || (cp - r.first) % r.stride != 0)
    return cp;
  return static_cast<char32_t>(static_cast<std::int32_t>(cp) + r.delta);
}

std::string code_point_name(char32_t cp) {
  constexpr char digits[] = "0123456789ABCDEF";
  std::string hex;
  for (int shift = 20; shift >= 0; shift -= 4)
    if ((cp >> shift) != 0 || shift < 16)
      hex += digits[(cp >> shift) & 0xF];
  return "U+" + hex;
}

bool fail(parsed_address& out, std::string detail) {
  out.valid = false;
  out.reason = reason_invalid_syntax;
  out.detail = std::move(detail);
  return false;
}

bool fail_code_point(parsed_address& out, char32_t cp) {
  if (cp == 0x00A0 || cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) ||
      cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
      cp == 0x3000)
    return fail(out, "contains whitespace (" + code_point_name(cp) + ")");
  if (cp < 0xA0)
    return fail(out,
                "contains a control character (" + code_point_name(cp) + ")");
  return fail(out, "contains an invisible or format character (" +
                       code_point_name(cp) + ")");
}

// Explains an ASCII byte that has no place where it was found; `where` names
// the part ("an unquoted local part", "a domain").
bool fail_ascii(parsed_address& out, unsigned char c, std::string_view input,
                std::string_view where) {
  if (c == '<' || c == '>' ||
      ((c == ' ' || c == '\t') && input.find('<') != input.npos))
    return fail(out, "display names and angle brackets are not part of an "
                     "address");
  if (c == ' ' || c == '\t' || c == '\r' || c == '\n')
    return fail(out, "contains whitespace");
  if (c < 0x20 || c == 0x7F)
    return fail(out, "contains a control character (" +
                         code_point_name(char32_t{c}) + ")");
  if (c == '(' || c == ')')
    return fail(out, "comments (CFWS) are not allowed");
  std::string detail = "character '";
  detail += static_cast<char>(c);
  detail += "' is not allowed in ";
  detail += where;
  return fail(out, std::move(detail));
}

// Where a character stands: the first of an unquoted local part, elsewhere
// in a local part, or in a domain.
enum class part { local_start, local, domain };

// Checks a non-ASCII character at input[i]; sets `len` to its length. A
// domain's characters are left to IDNA2008 beyond the invisible ones.
// Out of line: the callers' ASCII loops are the hot path and stay lean.
[[gnu::noinline]] bool check_non_ascii(parsed_address& out, std::string_view s,
                                       std::size_t i, std::size_t& len,
                                       part where) {
  char32_t cp = 0;
  len = utf8_decode(s, i, cp);
  if (len == 0)
    return fail(out, "invalid UTF-8");
  if (is_forbidden(cp))
    return fail_code_point(out, cp);
  if (where == part::domain)
    return true;
  if (is_joiner(cp))
    return fail(out, "contains a zero-width joiner or non-joiner (" +
                         code_point_name(cp) + ") outside a domain label");
  // A private-use character means something only by a private agreement
  // (The Unicode Standard §23.5), never one a mail system can know about.
  if (is_private_use(cp))
    return fail(out, "local part has a private-use character (" +
                         code_point_name(cp) + ")");
  // A mark has nothing to combine with at the start (The Unicode Standard
  // §2.11, §3.6 D52: it follows a base character); written first, it
  // would be drawn on whatever text precedes the address.
  if (where == part::local_start && is_mark(cp))
    return fail(out, "local part starts with a combining mark (" +
                         code_point_name(cp) + ")");
  return true;
}

// RFC 5321 §4.1.2 Quoted-string; `end` receives the index after the closing
// quote.
bool parse_quoted(parsed_address& out, std::string_view s, std::size_t& end) {
  std::size_t i = 1;
  while (i < s.size()) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"') {
      // `""@example.com` is allowed: Quoted-string is DQUOTE
      // *QcontentSMTP DQUOTE (RFC 5321 §4.1.2).
      end = i + 1;
      return true;
    }
    if (c == '\\') {
      if (i + 1 >= s.size())
        break;
      auto n = static_cast<unsigned char>(s[i + 1]);
      // quoted-pairSMTP is %d92 %d32-126: ASCII only, even under RFC 6531.
      if (n >= 0x80)
        return fail(out, "backslash before a non-ASCII character");
      if (n == '"' || n == '\\' || has(n, cls_qtext)) {
        i += 2;
        continue;
      }
      return fail_ascii(out, n, s, "a quoted local part");
    }
    if (c < 0x80) {
      if (!has(c, cls_qtext))
        return fail_ascii(out, c, s, "a quoted local part");
      ++i;
      continue;
    }
    std::size_t len = 0;
    if (!check_non_ascii(out, s, i, len, part::local))
      return false;
    out.needs_smtputf8 = true;
    i += len;
  }
  return fail(out, "unterminated quoted local part");
}

// RFC 5321 §4.1.2 Dot-string (+ RFC 6531 UTF8-non-ascii); `at` receives the
// index of the '@'.
bool parse_dot_string(parsed_address& out, std::string_view s,
                      std::size_t& at) {
  bool after_dot = true;
  std::size_t i = 0;
  for (; i < s.size(); ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (has(c, cls_atext)) {
        after_dot = false;
        continue;
      }
      if (c == '@')
        break;
      if (c == '.') {
        if (i == 0)
          return fail(out, "local part starts with a dot");
        if (after_dot)
          return fail(out, "consecutive dots in the local part");
        after_dot = true;
        continue;
      }
      if (c == '"')
        return fail(out, "a quoted string must be the whole local part");
      return fail_ascii(out, c, s, "an unquoted local part");
    }
    std::size_t len = 0;
    if (!check_non_ascii(out, s, i, len,
                         i == 0 ? part::local_start : part::local))
      return false;
    out.needs_smtputf8 = true;
    after_dot = false;
    i += len - 1;
  }
  if (i == s.size())
    return fail(out, "missing @");
  if (i == 0)
    return fail(out, "empty local part");
  if (after_dot)
    return fail(out, "local part ends with a dot");
  at = i;
  return true;
}

// RFC 5321 §4.1.3 Snum 3("." Snum), Snum = 1*3DIGIT in 0..255.
bool is_ipv4(std::string_view s) {
  int parts = 0;
  std::size_t i = 0;
  while (true) {
    std::size_t digits = 0;
    int value = 0;
    while (i < s.size() && has(static_cast<unsigned char>(s[i]), cls_digit)) {
      value = value * 10 + (s[i] - '0');
      ++i;
      if (++digits > 3)
        return false;
    }
    if (digits == 0 || value > 255)
      return false;
    if (++parts == 4)
      return i == s.size();
    if (i >= s.size() || s[i] != '.')
      return false;
    ++i;
  }
}

// 1*4HEXDIG *(":" 1*4HEXDIG), possibly empty; counts the groups.
bool hex_groups(std::string_view s, int& count) {
  count = 0;
  if (s.empty())
    return true;
  std::size_t i = 0;
  while (true) {
    std::size_t digits = 0;
    while (i < s.size() && has(static_cast<unsigned char>(s[i]), cls_hex)) {
      ++i;
      if (++digits > 4)
        return false;
    }
    if (digits == 0)
      return false;
    ++count;
    if (i == s.size())
      return true;
    if (s[i] != ':')
      return false;
    ++i;
  }
}

// RFC 5321 §4.1.3 IPv6-addr: full, compressed ("::" standing for at least two
// groups), and the same with a trailing IPv4 address.
bool is_ipv6(std::string_view s) {
  std::string_view groups = s;
  int wanted = 8;
  auto last_colon = s.rfind(':');
  if (last_colon == s.npos)
    return false;
  if (s.find('.', last_colon) != s.npos) {
    if (!is_ipv4(s.substr(last_colon + 1)))
      return false;
    groups = s.substr(0, last_colon + 1);
    if (groups.size() < 2 || groups.substr(groups.size() - 2) != "::")
      groups.remove_suffix(1);
    wanted = 6;
  }
  auto gap = groups.find("::");
  int left = 0;
  if (gap == groups.npos)
    return hex_groups(groups, left) && left == wanted;
  if (groups.find("::", gap + 1) != groups.npos)
    return false;
  int right = 0;
  return hex_groups(groups.substr(0, gap), left) &&
         hex_groups(groups.substr(gap + 2), right) &&
         left + right <= wanted - 2;
}

bool parse_literal(parsed_address& out, std::string_view d) {
  if (d.size() < 2 || d.back() != ']')
    return fail(out, "unterminated domain literal");
  auto body = d.substr(1, d.size() - 2);
  for (char ch : body) {
    auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 || c <= 0x20 || c == 0x7F || c == '[' || c == ']' ||
        c == '\\')
      return fail(out, "invalid character in a domain literal");
  }
  if (ascii_istarts_with(body, "ipv6:")) {
    if (!is_ipv6(body.substr(5)))
      return fail(out, "invalid IPv6 address literal");
    out.literal_address.assign(body.substr(5));
  } else if (is_ipv4(body)) {
    out.literal_address.assign(body);
  } else if (body.find(':') != body.npos) {
    // General-address-literal tags must be IANA-registered; only IPv6 is.
    return fail(out, "unknown address literal tag (only IPv6: is defined)");
  } else {
    return fail(out, "invalid IPv4 address literal");
  }
  out.domain.assign(d);
  out.ascii_domain.assign(d);
  out.ip_literal = true;
  return true;
}

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

// IDNA2008 without UTS #46 mapping (RFC 5891 §4, §5.4): only NFC is applied,
// so fullwidth and invisible characters fail rather than being mapped away.
bool to_a_labels(parsed_address& out, bool has_xn) {
  constexpr int flags = IDN2_NFC_INPUT | IDN2_NO_TR46;
  char* ascii = nullptr;
  int rc = idn2_to_ascii_8z(out.domain.c_str(), &ascii, flags);
  if (rc != IDN2_OK)
    return fail(out, std::string{idn_error(rc)});
  out.ascii_domain.assign(ascii);
  idn2_free(ascii);
  if (!has_xn)
    return true;
  // RFC 5891 §5.4: an A-label must survive decode + re-encode unchanged.
  char* unicode = nullptr;
  rc = idn2_to_unicode_8z8z(out.ascii_domain.c_str(), &unicode, 0);
  if (rc != IDN2_OK)
    return fail(out, std::string{idn_error(rc)});
  char* again = nullptr;
  rc = idn2_to_ascii_8z(unicode, &again, flags);
  idn2_free(unicode);
  if (rc != IDN2_OK)
    return fail(out, std::string{idn_error(rc)});
  bool same = out.ascii_domain == again;
  idn2_free(again);
  if (!same)
    return fail(out, "xn-- label is not a canonical A-label");
  return true;
}

void lower_unicode(std::string& domain) {
  std::string lowered;
  lowered.reserve(domain.size());
  for (std::size_t i = 0; i < domain.size();) {
    auto c = static_cast<unsigned char>(domain[i]);
    if (c < 0x80) {
      lowered += static_cast<char>(has(c, cls_upper) ? c | 0x20 : c);
      ++i;
      continue;
    }
    char32_t cp = 0;
    std::size_t len = utf8_decode(domain, i, cp);
    utf8_append(lowered, to_lower(cp));
    i += len;
  }
  domain.swap(lowered);
}

// RFC 5321 §4.1.2 Domain (sub-domain *("." sub-domain), LDH labels) with
// RFC 6531 U-labels. `as_given` tells whether `out.domain` is `d` unchanged
// (ASCII, no capitals), which lets `normalize` copy the input whole.
// `non_ascii` tells whether it holds a non-ASCII character.
bool parse_domain(parsed_address& out, std::string_view d, bool& as_given,
                  bool& non_ascii) {
  if (d.empty())
    return fail(out, "missing domain");
  std::size_t label_start = 0;
  std::size_t labels = 0;
  bool label_ascii = true;
  // The classes met in the current label, all ASCII ones so far (the
  // non-ASCII ones count as letters); their union in `seen`.
  std::uint8_t label_seen = 0;
  bool any_non_ascii = false;
  bool has_xn = false;
  std::uint8_t seen = 0;
  auto end_label = [&](std::size_t end) {
    std::size_t len = end - label_start;
    if (len == 0) {
      if (end == 0)
        return fail(out, "domain starts with a dot");
      if (end == d.size())
        return fail(out, "domain ends with a dot");
      return fail(out, "consecutive dots in the domain");
    }
    if (d[label_start] == '-')
      return fail(out, "domain label starts with a hyphen");
    if (d[end - 1] == '-')
      return fail(out, "domain label ends with a hyphen");
    if (label_ascii && len > max_label)
      return fail(out, "domain label longer than 63 octets");
    // RFC 5891 §4.2.3.1, RFC 5890 §2.3.1: "--" in the third and fourth
    // positions marks a reserved LDH label; xn-- (an A-label) is the only
    // prefix defined, so any other (`ab--cd`) names nothing.
    // (U-labels: libidn2 checks them, counting characters, not bytes.)
    if (len >= 4 && d[label_start + 2] == '-' && d[label_start + 3] == '-') {
      if (ascii_istarts_with(d.substr(label_start), "xn--"))
        has_xn = true;
      else if (label_ascii)
        return fail(out, "label has -- in the 3rd and 4th positions "
                         "(reserved by IDNA2008; only xn-- labels may)");
    }
    ++labels;
    return true;
  };
  // Scans and lower-cases in one pass; the hot path for ASCII domains.
  out.domain.resize(d.size());
  char* lowered = out.domain.data();
  for (std::size_t i = 0; i < d.size(); ++i) {
    auto c = static_cast<unsigned char>(d[i]);
    auto cls = classes[c];
    if (cls & cls_ldh) {
      lowered[i] = static_cast<char>(cls & cls_upper ? c | 0x20 : c);
      label_seen |= cls;
      continue;
    }
    if (c == '.') {
      if (!end_label(i))
        return false;
      lowered[i] = '.';
      label_start = i + 1;
      label_ascii = true;
      seen |= label_seen;
      label_seen = 0;
      continue;
    }
    if (c < 0x80) {
      if (c == '@')
        return fail(out, "more than one @ (an @ in the local part must be "
                         "quoted)");
      if (c == '_')
        return fail(out, "underscore is not allowed in a host name");
      if (c == '[' || c == ']')
        return fail(out, "a domain literal must be the whole domain");
      return fail_ascii(out, c, d, "a domain");
    }
    std::size_t len = 0;
    if (!check_non_ascii(out, d, i, len, part::domain))
      return false;
    std::copy_n(d.data() + i, len, lowered + i);
    label_ascii = false;
    label_seen |= cls_alpha;
    any_non_ascii = true;
    i += len - 1;
  }
  if (!end_label(d.size()))
    return false;
  seen |= label_seen; // the TLD's
  if (labels < 2)
    return fail(out, "domain has a single label (no top-level domain)");
  if ((label_seen & (cls_alpha | cls_hyphen)) == 0)
    return fail(out, "top-level domain is all-numeric");
  // No one-letter TLD exists, and the root zone's policy reserves them
  // (a letter on its own is an unfinished address: `anna@gmail.c`).
  if (d.size() - label_start == 1)
    return fail(out, "top-level domain has a single letter (no such TLD "
                     "exists)");
  // RFC 1123 §2.1 and the root zone's rules: a TLD is alphabetic, or an IDN
  // TLD, which travels as an A-label (xn--, checked by libidn2 below) and is
  // written either way. Hyphens and digits otherwise mark a typo or a
  // made-up name (`x@yahoo.mu-seum`, `me@bad.tld-2`).
  if (label_ascii && (label_seen & (cls_digit | cls_hyphen)) != 0 &&
      !ascii_istarts_with(d.substr(label_start), "xn--"))
    return fail(out, "top-level domain is not letters only (nor an xn-- "
                     "A-label)");
  as_given = !any_non_ascii && (seen & cls_upper) == 0;
  non_ascii = any_non_ascii;
  if (any_non_ascii)
    lower_unicode(out.domain);
  if (!any_non_ascii && !has_xn) {
    if (d.size() > max_domain)
      return fail(out, "domain longer than 253 octets");
    out.ascii_domain = out.domain;
    return true;
  }
  if (!to_a_labels(out, has_xn))
    return false;
  if (out.ascii_domain.size() > max_domain)
    return fail(out, "domain longer than 253 octets in A-label form");
  std::size_t start = 0;
  for (std::size_t i = 0; i <= out.ascii_domain.size(); ++i) {
    if (i == out.ascii_domain.size() || out.ascii_domain[i] == '.') {
      if (i - start > max_label)
        return fail(out, "domain label longer than 63 octets in A-label form");
      start = i + 1;
    }
  }
  return true;
}

// The last label of a domain. Forward, one memchr per dot: a byte loop
// backwards from the end (rfind) mispredicts its exit on every address.
std::string_view last_label(std::string_view d) {
  while (const void* p =
             d.empty() ? nullptr : std::memchr(d.data(), '.', d.size()))
    d.remove_prefix(static_cast<const char*>(p) - d.data() + 1);
  return d;
}

// RFC 6761 §6.2-6.4 (test, localhost, invalid), RFC 6762 (local), RFC 7686
// (onion), RFC 3172 (arpa, infrastructure; home.arpa is RFC 8375); returns
// the reserved TLD matched. The example names (RFC 6761 §6.5: example,
// example.com/net/org) are not here: "applications SHOULD NOT treat them
// specially", so they parse as ordinary names and DNS decides (the real
// example.com publishes a null MX).
std::string_view special_use(std::string_view ascii_domain) {
  auto tld = last_label(ascii_domain);
  // By length first: almost every TLD is two or three letters long and
  // leaves after one comparison of sizes.
  switch (tld.size()) {
    case 4: return tld == "test" || tld == "arpa" ? tld : std::string_view{};
    case 5: return tld == "local" || tld == "onion" ? tld : std::string_view{};
    case 7: return tld == "invalid" ? tld : std::string_view{};
    case 9: return tld == "localhost" ? tld : std::string_view{};
    default: return {};
  }
}

// Whether `ascii_domain` (under .arpa) is a reverse-mapping name (RFC 1035
// §3.5 in-addr.arpa, RFC 3596 §2.5 ip6.arpa): names of addresses, which
// never receive mail whatever the configuration allows.
bool reverse_mapping(std::string_view ascii_domain) {
  auto ends_with = [&](std::string_view zone) {
    if (ascii_domain.size() < zone.size() ||
        ascii_domain.substr(ascii_domain.size() - zone.size()) != zone)
      return false;
    return ascii_domain.size() == zone.size() ||
           ascii_domain[ascii_domain.size() - zone.size() - 1] == '.';
  };
  return ends_with("in-addr.arpa") || ends_with("ip6.arpa");
}

enum class provider { other, gmail, plus_tags, case_only };

provider provider_of(std::string_view domain) {
  // Plus-tag providers per their documentation; Yahoo's disposable addresses
  // use '-' with a chosen base name, so only its case is folded. Grouped by
  // length, so that most domains are told apart by one comparison of sizes
  // rather than fourteen string comparisons.
  switch (domain.size()) {
    case 5: return domain == "pm.me" ? provider::plus_tags : provider::other;
    case 6: return domain == "me.com" ? provider::plus_tags : provider::other;
    case 7: return domain == "mac.com" ? provider::plus_tags : provider::other;
    case 8: return domain == "live.com" ? provider::plus_tags : provider::other;
    case 9:
      if (domain == "gmail.com")
        return provider::gmail;
      if (domain == "proton.me")
        return provider::plus_tags;
      return domain == "yahoo.com" ? provider::case_only : provider::other;
    case 10:
      return domain == "icloud.com" ? provider::plus_tags : provider::other;
    case 11:
      return domain == "outlook.com" || domain == "hotmail.com"
                 ? provider::plus_tags
                 : provider::other;
    case 12:
      return domain == "fastmail.com" ? provider::plus_tags : provider::other;
    case 13:
      return domain == "protonmail.ch" ? provider::plus_tags : provider::other;
    case 14:
      if (domain == "googlemail.com")
        return provider::gmail;
      return domain == "protonmail.com" ? provider::plus_tags : provider::other;
    default: return provider::other;
  }
}

// `domain_as_given`: `out.domain` is the domain part of `text` (the input
// in NFC) unchanged, so the normalized form of an ordinary address is `text`.
void normalize(parsed_address& out, std::string_view text,
               bool domain_as_given) {
  auto kind = out.quoted_local || out.ip_literal ? provider::other
                                                 : provider_of(out.domain);
  auto& n = out.normalized;
  if (kind == provider::other && domain_as_given) {
    n.assign(text);
    return;
  }
  if (kind == provider::other) {
    n.reserve(out.local_part.size() + 1 + out.domain.size());
    n += out.local_part;
  } else {
    std::string_view local = out.local_part;
    auto plus = local.find('+');
    if (kind != provider::case_only && plus != 0 && plus != local.npos)
      local = local.substr(0, plus);
    for (char ch : local) {
      if (kind == provider::gmail && ch == '.')
        continue;
      auto c = static_cast<unsigned char>(ch);
      n += static_cast<char>(has(c, cls_upper) ? c | 0x20 : c);
    }
  }
  n += '@';
  n += kind == provider::gmail ? std::string_view{"gmail.com"}
                               : std::string_view{out.domain};
}

void reset(parsed_address& out) {
  out.valid = false;
  out.reason.clear();
  out.detail.clear();
  out.input.clear();
  out.local_part.clear();
  out.domain.clear();
  out.ascii_domain.clear();
  out.literal_address.clear();
  out.ip_literal = false;
  out.quoted_local = false;
  out.needs_smtputf8 = false;
  out.normalized.clear();
}

// A character of the domain as given that normalization replaces (the
// Kelvin sign by K, U+2126 OHM SIGN by omega), or 0. IDNA2008 disallows
// every such character (RFC 5892 §2.2: not stable under NFKC_Casefold), and
// normalizing must not rescue a look-alike the way mapping would not.
char32_t replaced_in_domain(std::string_view given) {
  // NFC neither makes nor removes an '@', so the last one ends the local part.
  auto domain = given.substr(given.rfind('@') + 1);
  for (std::size_t i = 0; i < domain.size();) {
    char32_t cp = 0;
    auto len = utf8_decode(domain, i, cp);
    if (len == 0)
      return 0;
    if (cp >= 0x80 && nfc_never(cp))
      return cp;
    i += len;
  }
  return 0;
}

// Whether the domain of `given` (the address as given, not in NFC) has no
// character that normalization replaces; says which when it has one.
[[gnu::noinline]] bool domain_keeps_nfc(parsed_address& out,
                                        std::string_view given) {
  auto cp = replaced_in_domain(given);
  return cp == 0 || fail(out, "domain has a character IDNA2008 disallows (" +
                                  code_point_name(cp) +
                                  ", which normalization would replace)");
}

// Checks `input`, the address in NFC (Unicode normalization comes before the
// checks); `given` is the address as given, the same text when it already
// was in NFC. `non_ascii` is set once both parts are read (whether they are
// valid or not) and tells whether either holds a non-ASCII character.
bool parse_into(std::string_view input, std::string_view given,
                const options& opts, parsed_address& out, bool& non_ascii) {
  if (input.empty())
    return fail(out, "empty address");
  std::size_t at = 0;
  if (input.front() == '"') {
    std::size_t end = 0;
    if (!parse_quoted(out, input, end))
      return false;
    if (end == input.size() || input[end] != '@')
      return fail(out, "a quoted local part must be followed by @");
    out.quoted_local = true;
    at = end;
  } else if (!parse_dot_string(out, input, at)) {
    return false;
  }
  auto domain = input.substr(at + 1);
  bool normalized = input.data() != given.data();
  if (normalized && !domain_keeps_nfc(out, given))
    return false;
  bool as_given = true; // a literal is kept as written
  bool domain_non_ascii = false;
  bool ok = !domain.empty() && domain.front() == '['
                ? parse_literal(out, domain)
                : parse_domain(out, domain, as_given, domain_non_ascii);
  if (!ok)
    return false;
  non_ascii = out.needs_smtputf8 || domain_non_ascii;
  // The limits hold for the NFC form, which may be longer than the input
  // (U+0958 DEVANAGARI QA has 3 octets, its NFC form 6).
  if (at > max_local)
    return fail(out, normalized ? "local part longer than 64 octets in NFC"
                                : "local part longer than 64 octets");
  if (input.size() > max_address ||
      at + 1 + out.ascii_domain.size() > max_address)
    return fail(out, normalized ? "address longer than 254 octets in NFC"
                                : "address longer than 254 octets");
  out.local_part.assign(input.substr(0, at));
  normalize(out, input, as_given);
  if (out.ip_literal) {
    out.valid = true;
    out.reason = reason_ip_literal;
    out.detail = "domain is an address literal; mail to it bypasses DNS";
    return true;
  }
  auto reserved = special_use(out.ascii_domain);
  if (reserved.empty()) {
    out.valid = true;
    return true;
  }
  if (reserved == "arpa" && reverse_mapping(out.ascii_domain))
    return fail(out, "a reverse-DNS name (in-addr.arpa, ip6.arpa) is not a "
                     "mail domain");
  if (!opts.allow_test_domains) {
    out.valid = false;
    out.reason = reason_special_use_domain;
    out.detail = "domain is special-use (RFC 6761, 6762, 7686, 3172): ";
    out.detail += reserved;
    return false;
  }
  out.valid = true;
  return true;
}

// The check of an address that holds non-ASCII text, which `ok` says the
// address as given passed or not: when NFC changes it, the check again on
// the NFC form. Out of line, to keep its buffer off the ASCII path.
[[gnu::noinline]] bool parse_non_ascii(std::string_view input,
                                       const options& opts, parsed_address& out,
                                       bool ok) {
  std::string nfc;
  // Text that is not UTF-8 has already been refused for it.
  if (nfc_quick_yes(input) || !to_nfc(input, nfc) || nfc == input)
    return ok;
  reset(out);
  out.input.assign(input);
  bool non_ascii = false;
  return parse_into(nfc, input, opts, out, non_ascii);
}

// Unicode normalization comes before the checks (UAX #15; RFC 5198 §2:
// network text SHOULD be in NFC). It changes nothing in ASCII text, which
// nearly every address is, so the address is first checked as given: when
// that check read all of it (it passed, or only its domain's special use
// refused it) and met no non-ASCII character, it was NFC; when it stopped
// early, a scan tells. Only non-ASCII text is normalized, and checked again
// when normalizing changed it.
bool parse_nfc(std::string_view input, const options& opts,
               parsed_address& out) {
  bool non_ascii = false;
  bool ok = parse_into(input, input, opts, out, non_ascii);
  bool read_all = ok || out.reason != reason_invalid_syntax;
  if (read_all ? !non_ascii : all_ascii(input))
    return ok;
  return parse_non_ascii(input, opts, out, ok);
}

} // namespace

void parse(std::string_view input, const options& opts, parsed_address& out) {
  reset(out);
  out.input.assign(input);
  if (parse_nfc(input, opts, out) || out.reason != reason_invalid_syntax)
    return;
  // Parts filled before the error was found would describe a non-address.
  out.local_part.clear();
  out.domain.clear();
  out.ascii_domain.clear();
  out.literal_address.clear();
  out.normalized.clear();
}

void mailbox_key(const parsed_address& a, std::string& out) {
  out.clear();
  if (!a.valid || a.normalized.empty())
    return;
  std::string_view n = a.normalized;
  // The domain holds no '@': the last one ends the local part.
  auto at = n.rfind('@');
  auto domain = n.substr(at + 1);
  out.reserve(at + 1 + a.ascii_domain.size());
  out.append(n.substr(0, at + 1));
  // `normalized` keeps the domain in the Unicode form it was given in, or
  // names the provider's main domain (gmail.com for googlemail.com).
  out.append(domain == a.domain ? std::string_view{a.ascii_domain} : domain);
}

parsed_address parse(std::string_view input, const options& opts) {
  parsed_address out;
  parse(input, opts, out);
  return out;
}

} // namespace mailassay::core::syntax
