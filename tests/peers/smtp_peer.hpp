#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::tests::peers {

/// What the peer answers to `RCPT TO` for a matching address.
enum class smtp_rcpt_behaviour {
  accept,       ///< 250 2.1.5 Ok (a catch-all is a default of accept).
  no_such_user, ///< 550 5.1.1 User unknown.
  too_many,     ///< 452 4.5.3 Too many recipients.
  mailbox_full, ///< 552 5.2.2 Mailbox full.
  disabled,     ///< 550 5.2.1 Mailbox disabled.
  greylist,     ///< 450 4.2.0 Greylisted until the same (sender, recipient)
                ///< comes back after `greylist_delay`, then 250.
  policy_block, ///< 554 5.7.1 blocked by policy.
  drop,         ///< Close the connection without a reply.
  garbage,      ///< Reply with non-SMTP bytes.
  tarpit,       ///< Never reply (until the client or the peer closes).
  custom,       ///< Reply with `smtp_rcpt_rule::reply` verbatim.
  held,         ///< 250 2.1.5 Ok once `smtp_peer::release_held` was called;
                ///< until then the reply waits (a test decides when).
};

/// A per-recipient behaviour for the addresses `pattern` matches.
struct smtp_rcpt_rule {
  /// Case-insensitive glob (`*`, `?`) over the whole address when it holds
  /// an `@`, else over the local part: "alice@x.test", "*@catchall.test",
  /// "grey-*".
  std::string pattern;
  /// What to answer.
  smtp_rcpt_behaviour behaviour = smtp_rcpt_behaviour::accept;
  /// For `greylist`: how long a retry must wait to be accepted.
  std::chrono::milliseconds greylist_delay{1000};
  /// For `custom`: the reply line(s) without the final CRLF, e.g.
  /// "550 Unrouteable address".
  std::string reply;
};

/// How the peer greets a new connection.
enum class smtp_greeting {
  normal,  ///< 220 <hostname> ESMTP.
  busy,    ///< 421 4.3.2 busy, then close.
  reject,  ///< 554 5.7.1 no service, then wait for QUIT.
  tarpit,  ///< Accept the connection and never send a greeting.
  garbage, ///< Send non-SMTP bytes, then close.
};

/// Session-wide behaviour of the peer.
struct smtp_peer_options {
  /// Loopback IPv4 address to bind (127.0.0.x); anything else is refused.
  std::string address = "127.0.0.1";
  /// Port; 0 picks a free one (see `port()`).
  std::uint16_t port = 0;
  /// The name in the greeting and the EHLO reply.
  std::string hostname = "mx.peer.test";
  /// Greeting behaviour.
  smtp_greeting greeting = smtp_greeting::normal;
  /// Whether EHLO is understood (false: 502, the client must use HELO).
  bool ehlo = true;
  /// Whether STARTTLS is offered (self-signed certificate made at start).
  bool starttls = false;
  /// Whether MAIL is refused (530 5.7.0) before STARTTLS.
  bool require_tls = false;
  /// Whether SMTPUTF8 is advertised.
  bool smtputf8 = true;
  /// RCPT commands accepted per connection before 452 4.5.3; 0: no limit.
  std::size_t max_rcpts_per_session = 0;
  /// RCPT commands accepted per transaction (from MAIL FROM) before
  /// "452 4.5.3 Too many recipients", as consumer Outlook.com answers an
  /// unknown sender's second RCPT; 0: no limit.
  std::size_t max_rcpts_per_transaction = 0;
  /// Reply to MAIL FROM instead of 250 (e.g. "550 5.7.1 Sender rejected").
  std::string mail_reply;
  /// A verb ("EHLO", "MAIL" ...) the peer never answers, holding the
  /// connection instead (a tarpit after the greeting); empty: none.
  std::string tarpit_verb;
  /// Wait before each reply.
  std::chrono::milliseconds reply_delay{0};
  /// When non-zero, every reply is sent one byte at a time with this pause.
  std::chrono::milliseconds drip_delay{0};
};

/// A parsed peer script: options plus rules (see `parse_smtp_peer_script`).
struct smtp_peer_script {
  /// Session-wide options.
  smtp_peer_options options;
  /// Rules in match order.
  std::vector<smtp_rcpt_rule> rules;
  /// Behaviour for addresses no rule matches.
  smtp_rcpt_rule fallback;
};

/// Parses a peer script, one directive per line (`#` starts a comment):
/// `listen ADDR:PORT`, `hostname NAME`, `greeting normal|busy|reject|tarpit|
/// garbage`, `ehlo on|off`, `starttls off|on|required`, `smtputf8 on|off`,
/// `max-rcpts N`, `mail-reply TEXT...`, `tarpit-on VERB`, `reply-delay MS`,
/// `drip MS`, `max-rcpts-per-transaction N`,
/// `rcpt PATTERN BEHAVIOUR [MS | TEXT...]` and `default BEHAVIOUR [MS]`,
/// BEHAVIOUR one of accept, reject, too-many, full, disabled, greylist,
/// block, drop, garbage, tarpit, custom. Throws std::runtime_error naming the
/// line on a malformed directive.
smtp_peer_script parse_smtp_peer_script(std::string_view text);

/// A scriptable SMTP server for tests and benchmarks: one loopback address
/// and port, a thread per connection, per-recipient behaviours, STARTTLS
/// with a self-signed certificate, counters. Never accepts DATA. Thread-safe:
/// rules and counts may be changed and read while it serves. Serves from
/// construction until `stop()` or destruction.
class smtp_peer {
public:
  /// Binds and starts serving; throws std::runtime_error when the address
  /// is not loopback or cannot be bound.
  explicit smtp_peer(smtp_peer_options opts);

  /// Binds 127.0.0.1 on a free port with default options.
  smtp_peer();

  /// Stops serving.
  ~smtp_peer();

  smtp_peer(const smtp_peer&) = delete;
  smtp_peer& operator=(const smtp_peer&) = delete;

  /// Returns the bound address.
  std::string address() const;

  /// Returns the bound port.
  std::uint16_t port() const;

  /// Appends a rule (rules are tried in the order added).
  void add_rule(smtp_rcpt_rule rule);

  /// Shorthand for `add_rule({pattern, behaviour})`.
  void add_rule(std::string pattern, smtp_rcpt_behaviour behaviour);

  /// Removes every rule.
  void clear_rules();

  /// Sets the behaviour for addresses no rule matches (default: accept).
  void set_default(smtp_rcpt_rule rule);

  /// Returns the number of TCP connections accepted.
  std::size_t connections() const;

  /// Returns the source address of each connection accepted, oldest first
  /// (at most 10000; kept over `reset_counts`).
  std::vector<std::string> client_addresses() const;

  /// Returns the number of connections open now.
  std::size_t active_connections() const;

  /// Returns the most connections that were in a dialogue at once, each
  /// counted from accept until QUIT or close (since the start or
  /// `reset_counts`): a client that waits for 221 before connecting again
  /// never overlaps.
  std::size_t peak_dialogues() const;

  /// Returns the number of sessions (EHLO or HELO accepted).
  std::size_t sessions() const;

  /// Returns the number of command lines received.
  std::size_t commands() const;

  /// Returns the number of commands received with verb `verb` ("RCPT").
  std::size_t commands(std::string_view verb) const;

  /// Returns the number of completed TLS handshakes.
  std::size_t tls_sessions() const;

  /// Returns the command lines received, oldest first (at most 10000).
  std::vector<std::string> received() const;

  /// Returns how many `held` RCPT replies wait now.
  std::size_t held_waiting() const;

  /// Lets every `held` reply go, now and later.
  void release_held();

  /// Sets every count to zero and forgets received lines and greylist state.
  void reset_counts();

  /// Stops serving and closes every connection; idempotent.
  void stop();

private:
  struct impl;
  std::unique_ptr<impl> impl_;
};

} // namespace mailassay::tests::peers
