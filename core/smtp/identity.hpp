#pragma once

// Who the prober says it is: the EHLO/HELO name and the MAIL FROM sender.
// Receiving servers judge probes by them (RFC 5321 §4.1.1.1: the EHLO
// argument is the client's FQDN), so a value that is obviously not ours or
// not resolvable gets us blocklisted: "localhost", "host.localdomain", a
// bare word, or a sender at a free-mail provider we do not control.

#include "core/base/expected.hpp"

#include <functional>
#include <string>
#include <string_view>

namespace mailassay::core::smtp {

/// The prober's identity on the wire.
struct identity {
  /// EHLO/HELO argument, an FQDN.
  std::string helo;
  /// MAIL FROM reverse-path; empty for the null sender `<>`.
  std::string mail_from;
};

/// Returns whether `name` is a syntactically valid FQDN: at least two
/// labels of letters, digits and inner hyphens (1-63 octets each, 253 in
/// all), a final label that is not all digits, no trailing dot.
bool is_fqdn(std::string_view name);

/// Returns whether `name` names no host on the Internet: "localhost",
/// "localhost.localdomain", and names under the special-use or private
/// suffixes .localhost, .localdomain, .local, .lan, .home, .internal,
/// .intranet, .corp, .home.arpa, .test, .example, .invalid, .onion (and
/// example.com/.net/.org).
bool is_local_name(std::string_view name);

/// Picks the HELO name: `configured` when set, else `hostname` (the
/// machine's name) when it is an FQDN and not local; empty when neither.
std::string choose_helo(std::string_view configured, std::string_view hostname);

/// Tells whether a domain is a free mailbox provider (gmail.com ...), e.g.
/// backed by the risk lists.
using free_mail_predicate = std::function<bool(std::string_view domain)>;

/// Checks the identity at start-up: the HELO name must be a non-local FQDN;
/// the sender must be empty or local@domain with a non-local FQDN domain
/// that `is_free_mail` does not list. With `force` only the wire-safety
/// rules remain (ASCII, no spaces or control characters, not empty).
/// Failures are `errc::validation_failed` naming the setting.
expected<unit> check_identity(const identity& id, bool force,
                              const free_mail_predicate& is_free_mail = {});

} // namespace mailassay::core::smtp
