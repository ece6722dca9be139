#pragma once

#include <string>
#include <string_view>

namespace mailassay::core::syntax {

/// Switches that change what `parse` accepts.
struct options {
  /// Accepts the special-use domains (.test, .invalid, .localhost, .local,
  /// .onion, .arpa; never reverse-mapping names under in-addr.arpa and
  /// ip6.arpa); turned on by `MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS` and
  /// by tests. Example names (example.com, .example) are ordinary names
  /// either way (RFC 6761 §6.5).
  bool allow_test_domains = false;
};

/// Reason reported for an address that breaks RFC 5321/6531 syntax.
inline constexpr std::string_view reason_invalid_syntax = "invalid_syntax";

/// Reason reported for a well-formed address whose domain is a literal
/// (`[192.0.2.1]`, `[IPv6:...]`); the parse is valid, the scorer says risky.
inline constexpr std::string_view reason_ip_literal = "ip_literal";

/// Reason reported for a well-formed address on a special-use domain
/// (.test, .invalid, .localhost, .local, .onion, .arpa).
inline constexpr std::string_view reason_special_use_domain =
    "special_use_domain";

/// The outcome of parsing one address: the verdict and its parts.
struct parsed_address {
  /// Whether the address may be used (an ip literal is valid, but risky).
  bool valid = false;
  /// "" when valid and ordinary, else one of the `reason_*` constants.
  std::string reason;
  /// Short human explanation, e.g. "local part longer than 64 octets".
  std::string detail;
  /// The input, as given.
  std::string input;
  /// The local part in NFC, as written otherwise (a quoted local part keeps
  /// its quotes).
  std::string local_part;
  /// The domain lower-cased, in Unicode (NFC) if it was given in Unicode; a
  /// domain literal as written, brackets included.
  std::string domain;
  /// The domain in A-label (punycode) form for DNS and SMTP; a domain literal
  /// as written, brackets included.
  std::string ascii_domain;
  /// For a domain literal, the bare address: "192.0.2.1" or "2001:db8::1".
  std::string literal_address;
  /// Whether the domain is an address literal.
  bool ip_literal = false;
  /// Whether the local part is a quoted string.
  bool quoted_local = false;
  /// Whether the local part holds non-ASCII characters (RFC 6531 SMTPUTF8).
  bool needs_smtputf8 = false;
  /// Provider-aware normalized address (Gmail dots, `+tag`s, case) of the
  /// address in NFC; empty when the address could not be parsed. The
  /// provider folding never changes the verdict.
  std::string normalized;
};

/// Parses and checks one address per RFC 5321 §4.1.2/§4.1.3, RFC 6531/6532
/// and IDNA2008, in Unicode normalization form C (UAX #15): every check and
/// every part of the answer but `input` see the address in NFC. Pure, no I/O.
parsed_address parse(std::string_view input, const options& opts);

/// Same as `parse(input, opts)`, reusing the buffers of `out` (for hot loops).
void parse(std::string_view input, const options& opts, parsed_address& out);

/// Writes into `out` the key naming the mailbox of a valid address: the
/// local part as its provider folds it (the local part of `normalized`:
/// case, Gmail dots and `+tag`s only where the provider documents them;
/// as written anywhere else) and the domain in lower-case A-labels
/// (googlemail.com as gmail.com). Two addresses with one key reach one
/// mailbox; batch de-duplication compares these keys. Empty for an invalid
/// address.
void mailbox_key(const parsed_address& a, std::string& out);

} // namespace mailassay::core::syntax
