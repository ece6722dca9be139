#pragma once

#include "core/smtp/reply.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace mailassay::core::smtp {

/// What a reply to `RCPT TO` says about the mailbox.
enum class rcpt_verdict {
  accepted,                ///< 2xx: the server takes mail for it.
  no_such_user,            ///< 5xx: the mailbox does not exist (x.1.1 ...).
  mailbox_full,            ///< x.2.2, or 552 without an enhanced code.
  disabled,                ///< 5.2.1: the mailbox exists but is disabled.
  greylisted_or_throttled, ///< 4xx: ask again later.
  blocked_by_policy,       ///< 5.7.x, blocklists, refused sender or relay:
                           ///< says nothing about the mailbox, never invalid.
  too_many_recipients,     ///< 452, x.5.3: retry in a new session.
  protocol_error,          ///< Unparseable stream, unexpected reply, or an
                           ///< input refused before anything was sent.
  other_permanent,         ///< Another 5xx.
  other_temporary,         ///< Another failure that may pass (e.g. timeout).
  smtputf8_unsupported,    ///< The address needs SMTPUTF8 (RFC 6531) and
                           ///< the server does not offer it: unknown.
  not_attempted,           ///< Not asked in this session (the session ended
                           ///< first): retry in a new session.
};

/// Returns the lower-case name of `v`, e.g. "no_such_user".
std::string_view to_string(rcpt_verdict v);

/// Why an address was never asked (its verdict stays `not_attempted`): the
/// route or the scheduler gave up on it before any `RCPT TO`.
enum class unasked_reason {
  budget,           ///< The caller's deadline passed first.
  stopped,          ///< The scheduler stopped (shutdown) with it in flight.
  unroutable_mx,    ///< Every MX address was refused by the address policy.
  no_mx_address,    ///< The mail route has no address to connect to.
  all_hosts_failed, ///< Every MX host failed (connect, greeting, TLS ...).
};

/// Returns the reason's name, e.g. "budget": the reply message the result
/// shows (`smtp.reply.message` on the wire).
std::string_view to_string(unasked_reason why);

/// Parses a reason's name; nullopt for anything else.
std::optional<unasked_reason> parse_unasked_reason(std::string_view text);

/// The verdict on one reply with its evidence.
struct classification {
  /// What the reply means.
  rcpt_verdict verdict = rcpt_verdict::not_attempted;
  /// The reply code, 0 when no reply was received.
  int code = 0;
  /// The enhanced status code, when the reply carried one.
  std::optional<enhanced_code> enhanced;
  /// The reply text, trimmed, control characters blanked, bytes that are not
  /// UTF-8 as U+FFFD, at most `max_message` octets.
  std::string message;
  /// Which rule decided: "code 2xx", "enhanced 5.1.1", or the text pattern;
  /// for logs and tests.
  std::string_view rule;
  /// Why the address was never asked; set only by `unasked` (then the
  /// verdict is `not_attempted` and the message the reason's name).
  std::optional<unasked_reason> why_unasked;
};

/// A classification made without a reply (a refused input, a time-out, a
/// closed connection): `verdict`, no reply code, `why` as message, `rule`
/// naming who decided ("session", "route" ...).
classification without_reply(rcpt_verdict verdict, std::string_view why,
                             std::string_view rule);

/// The classification of an address never asked because of `why`: verdict
/// `not_attempted`, no reply code, the reason's name as message, rule
/// "unasked".
classification unasked(unasked_reason why);

/// Longest message kept in a classification.
inline constexpr std::size_t max_message = 300;

/// Returns `text` trimmed, with control characters replaced by spaces, bytes
/// that are not UTF-8 by U+FFFD, and cut to `max_message` octets between
/// characters.
std::string bounded_message(std::string_view text);

/// Classifies a reply to `RCPT TO`: 2xx accepted; then the RFC 3463
/// enhanced code when it decides (x.5.3, 5.7.x, 5.1.{0,1,3,6}, x.2.2, 5.2.1,
/// 4.x.x); then the annotated text patterns of classify.cpp for servers that
/// send none or a vague one (5.0.0, 5.5.0 ...); then the basic code (452 too
/// many recipients, 4xx temporary, 552 full, other 5xx other_permanent). A
/// 550 is never no_such_user by its code alone.
classification classify_rcpt(const reply& r);

} // namespace mailassay::core::smtp
