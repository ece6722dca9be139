#include "core/syntax/address.hpp"

#include "core/base/ascii.hpp"
#include "core/base/utf8.hpp"
#include "core/syntax/address_literal.hpp"
#include "core/syntax/code_points.hpp"
#include "core/syntax/domain_kind.hpp"
#include "core/syntax/idna.hpp"
#include "core/syntax/nfc.hpp"

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

bool parse_literal(parsed_address& out, std::string_view d) {
  std::string_view address;
  if (auto problem = literal_problem(d, address); !problem.empty())
    return fail(out, std::string{problem});
  out.literal_address.assign(address);
  out.domain.assign(d);
  out.ascii_domain.assign(d);
  out.ip_literal = true;
  return true;
}

// IDNA2008 (core/syntax/idna.hpp) into `out.ascii_domain`.
bool to_a_labels(parsed_address& out, bool has_xn) {
  if (auto problem = a_labels_of(out.domain, has_xn, out.ascii_domain);
      !problem.empty())
    return fail(out, std::string{problem});
  return true;
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

// `domain_as_given`: `out.domain` is the domain part of `text` (the input
// in NFC) unchanged, so the normalized form of an ordinary address is `text`.
void normalize(parsed_address& out, std::string_view text,
               bool domain_as_given) {
  auto kind = out.quoted_local || out.ip_literal ? mailbox_rules::other
                                                 : mailbox_rules_of(out.domain);
  auto& n = out.normalized;
  if (kind == mailbox_rules::other && domain_as_given) {
    // Constructed, then moved in (`n` is empty here): GCC inlines this into
    // one allocation and a copy, where `assign` went through the generic
    // replace-and-grow path (~100 instructions more per validation).
    n = std::string{text};
    return;
  }
  if (kind == mailbox_rules::other) {
    n.reserve(out.local_part.size() + 1 + out.domain.size());
    n += out.local_part;
  } else {
    std::string_view local = out.local_part;
    auto plus = local.find('+');
    if (kind != mailbox_rules::case_only && plus != 0 && plus != local.npos)
      local = local.substr(0, plus);
    for (char ch : local) {
      if (kind == mailbox_rules::gmail && ch == '.')
        continue;
      auto c = static_cast<unsigned char>(ch);
      n += static_cast<char>(has(c, cls_upper) ? c | 0x20 : c);
    }
  }
  n += '@';
  n += kind == mailbox_rules::gmail ? std::string_view{"gmail.com"}
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
