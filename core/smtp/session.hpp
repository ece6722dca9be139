#pragma once

// One SMTP probing session with one MX host, as a sans-I/O state machine
// (RFC 5321 §3, §4.1; RFC 3207 STARTTLS; RFC 6531 SMTPUTF8). The driver
// owns the socket: it reports events (connected, bytes received, TLS up or
// failed, timeout, connection closed) and performs the returned action.
// Never DATA: each address gets its own transaction, RSET between.
//
//   connected
//      |
//      v
//  [greeting] --220--> send EHLO --> [ehlo]
//      | other: 421/4xx close, 5xx QUIT (greeting_rejected)
//      |
//  [ehlo] --250--> capabilities --+--> STARTTLS offered, policy != never
//      |                          |        send STARTTLS --> [starttls]
//      | 5xx: send HELO           |    not offered, policy required
//      v                          |        QUIT (tls_unavailable)
//  [helo] --250--> (no extensions)+--> otherwise: next address
//      | other: QUIT (helo_rejected)
//
//  [starttls] --220--> start_tls --> [tls_handshake]
//      | other: required: QUIT; opportunistic: next address in clear
//  [tls_handshake] --tls_established--> send EHLO --> [ehlo_tls]
//      | tls_failed: close (tls_failed)
//  [ehlo_tls] --250--> next address
//
//  next address: skip (and mark) those needing SMTPUTF8 when it is not
//  offered; none left: QUIT --> [quit], or for an open-ended session
//  need_more --> [idle] --give(address)--> RSET (after a transaction) or
//  MAIL FROM; --finish--> QUIT
//      |
//      v
//  [mail] --250--> send RCPT TO:<address> --> [rcpt]
//      | 4xx: greylisted_or_throttled, 5xx: blocked_by_policy for every
//      | address left; QUIT (sender_rejected)
//  [rcpt] --reply--> classify the address
//      | 452 / x.5.3: QUIT; the rest not_attempted (retry in a new session)
//      | probe 452 with probe_alone_after_452: RSET, MAIL FROM, RCPT probe
//      |     in a transaction of its own (once), then go on
//      | 550 5.1.1 (no_such_user): catch_all = false, final for the session
//      | first accepted address, a catch-all probe given, catch_all unknown:
//      |     send RCPT TO:<probe> --> [rcpt_probe] --reply--> catch_all
//      v
//  more addresses: send RSET --> [rset] --250--> send MAIL FROM --> [mail]
//  none left:      send QUIT --> [quit] --any reply / closed--> close
//
//  Anywhere: a 421 reply, a garbled reply, a reply when none is due, a
//  timeout or a closed connection ends the session (close); the address in
//  flight keeps what is known, the rest stay not_attempted.

#include "core/base/expected.hpp"
#include "core/smtp/capabilities.hpp"
#include "core/smtp/classify.hpp"
#include "core/smtp/reply.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::smtp {

/// Whether to upgrade the session with STARTTLS (RFC 3207).
enum class tls_policy {
  never,         ///< Never send STARTTLS.
  opportunistic, ///< STARTTLS when offered; continue in clear otherwise.
  required,      ///< STARTTLS or give up on the host.
};

/// Returns "never", "opportunistic" or "required": the policy's name in the
/// configuration (`smtp.tls`).
std::string_view to_string(tls_policy p);

/// Parses a policy's name; nullopt for anything else.
std::optional<tls_policy> parse_tls_policy(std::string_view text);

/// Who we are and how we talk; the same for every session.
struct session_config {
  /// The MX host talked to, copied into the result.
  std::string host;
  /// The FQDN sent in EHLO/HELO.
  std::string helo;
  /// The reverse-path for MAIL FROM; empty for the null sender `<>`.
  std::string mail_from;
  /// STARTTLS policy.
  tls_policy tls = tls_policy::opportunistic;
  /// Bounds on the replies read.
  reply_limits limits;
  /// A 452 / x.5.3 to the catch-all probe (the second RCPT of its
  /// transaction) is retried once in a transaction of its own (RSET,
  /// MAIL FROM, RCPT TO:<probe>) instead of ending the session: for a
  /// server that takes one RCPT per transaction (consumer Outlook.com,
  /// core/smtp/provider_habits.hpp). False: the session ends (QUIT).
  bool probe_alone_after_452 = false;
};

/// What to ask one host in one session.
struct session_request {
  /// Addresses at one domain, ASCII domain (A-labels); a non-ASCII byte
  /// anywhere makes the address need SMTPUTF8.
  std::vector<std::string> addresses;
  /// A random address at the same domain for the catch-all probe (the core
  /// has no randomness); empty: no probe.
  std::string catch_all_probe;
  /// When the addresses run out, ask the driver for more (`need_more`)
  /// instead of sending QUIT: a session shared by the callers of one mail
  /// route takes their addresses one at a time (actors/smtp/scheduler).
  bool open_ended = false;
};

/// Where the session is.
enum class session_state {
  connecting,    ///< Waiting for the connection.
  greeting,      ///< Waiting for the 220 greeting.
  ehlo,          ///< EHLO sent.
  helo,          ///< HELO sent after EHLO was refused.
  starttls,      ///< STARTTLS sent.
  tls_handshake, ///< Waiting for the driver's TLS handshake.
  ehlo_tls,      ///< EHLO sent again over TLS.
  mail,          ///< MAIL FROM sent.
  rcpt,          ///< RCPT TO sent for an address.
  rcpt_probe,    ///< RCPT TO sent for the catch-all probe.
  rset,          ///< RSET sent.
  idle,          ///< Open-ended: every address answered, waiting for
                 ///< `give` or `finish`.
  quit,          ///< QUIT sent.
  closed,        ///< Finished; `result()` is final.
};

/// Returns the lower-case name of `s`, e.g. "rcpt_probe".
std::string_view to_string(session_state s);

/// Why a session ended before every address was asked.
enum class session_failure {
  none,              ///< Every address was asked (or skipped by rule).
  greeting_rejected, ///< The greeting was not 220 (e.g. 421 busy).
  helo_rejected,     ///< Neither EHLO nor HELO was accepted.
  tls_unavailable,   ///< TLS required but not offered or refused.
  tls_failed,        ///< The TLS handshake failed.
  sender_rejected,   ///< MAIL FROM was refused.
  server_closing,    ///< The server sent 421 mid-session.
  unexpected_reply,  ///< A reply code not allowed at that step (e.g. RSET).
  protocol_error,    ///< Garbled replies, or a reply when none was due.
  timeout,           ///< The driver's timer fired.
  connection_closed, ///< The connection closed before QUIT.
};

/// Returns the lower-case name of `f`, e.g. "greeting_rejected".
std::string_view to_string(session_failure f);

/// What the driver must do next.
enum class action_kind {
  wait,      ///< Nothing: wait for bytes, an event or the timer.
  send,      ///< Write `action::line` (a full command with CRLF).
  start_tls, ///< Run the TLS client handshake, then report it.
  close,     ///< Close the connection; `session::result()` is final.
  need_more, ///< Open-ended: every address given so far is answered
             ///< (`result()`); call `give` or `finish`. Keep reading: the
             ///< server may close meanwhile.
};

/// One step for the driver.
struct action {
  /// What to do.
  action_kind kind = action_kind::wait;
  /// For `send`: the command line, CRLF included.
  std::string line;
};

/// The outcome for one address.
struct address_result {
  /// The address as requested.
  std::string address;
  /// The verdict on its RCPT reply (not_attempted when never asked).
  classification rcpt;
  /// The domain's catch-all probe: true accepted, false a random address is
  /// refused as unknown, null when not probed or the probe was inconclusive.
  std::optional<bool> catch_all;

  /// Returns whether the address is to be asked again in a new session
  /// (too many recipients, or the session ended before it).
  bool retry_in_new_session() const {
    return rcpt.verdict == rcpt_verdict::too_many_recipients ||
           rcpt.verdict == rcpt_verdict::not_attempted;
  }
};

/// Everything one session learnt.
struct session_result {
  /// The host talked to (from the config).
  std::string host;
  /// Why the session ended early; `none` when it ran its course.
  session_failure failure = session_failure::none;
  /// The reply that caused `failure`, when one did (code 0 otherwise).
  int failure_code = 0;
  /// Its text (bounded), or a description of the fault.
  std::string failure_message;
  /// The greeting's reply code (0 until one arrived) and text (bounded):
  /// what `mailassay doctor` shows of a host.
  int greeting_code = 0;
  std::string greeting;
  /// Whether the session ran over TLS.
  bool tls = false;
  /// The server's extensions (all false after a HELO fallback).
  capabilities caps;
  /// The domain's catch-all verdict (see `address_result::catch_all`). A
  /// mailbox refused as unknown makes it false, and no later reply in the
  /// session changes a false.
  std::optional<bool> catch_all;
  /// One entry per requested address, in request order.
  std::vector<address_result> addresses;
  /// Number of RCPT commands sent, probe included.
  std::size_t rcpt_sent = 0;
};

/// Returns whether `text` may go on the wire inside a command: no CR, LF,
/// NUL, other control characters or angle brackets, and at most 320 octets.
bool safe_argument(std::string_view text);

/// One SMTP probing session; see the diagram at the top of this header.
/// Each event returns the single action to perform.
class session {
public:
  /// Checks the inputs and prepares a session. Fails (validation_failed)
  /// when the HELO name or the sender is empty/unsafe/non-ASCII; an unsafe
  /// address only gets a protocol_error verdict and is never sent; an unsafe
  /// probe address disables the probe.
  static expected<session> make(session_config config, session_request request);

  /// The TCP connection is up: wait for the greeting.
  action on_connected();

  /// Bytes arrived (decrypted, once TLS is up).
  action on_data(std::string_view bytes);

  /// One parsed reply arrived (what `on_data` does per complete reply).
  action on_reply(const reply& r);

  /// The TLS handshake requested by `start_tls` succeeded.
  action on_tls_established();

  /// The TLS handshake failed.
  action on_tls_failed();

  /// The driver's timer for the current step fired.
  action on_timeout();

  /// The peer closed the connection (or it broke).
  action on_connection_closed();

  /// Open-ended, after `need_more`: asks `address` next (RSET first when a
  /// transaction ran), with `catch_all_probe` (a random address at the same
  /// domain; empty: none) sent after it if it is accepted and the domain's
  /// catch-all verdict is still unknown in this session. An address that
  /// cannot go on the wire gets `protocol_error` and `need_more` again.
  /// Ignored (wait) in any other state.
  action give(std::string address, std::string catch_all_probe = {});

  /// Open-ended, after `need_more`: no more addresses, QUIT. Ignored (wait)
  /// in any other state.
  action finish();

  /// Returns the current state.
  session_state state() const { return state_; }

  /// Returns whether the session is over.
  bool done() const { return state_ == session_state::closed; }

  /// Returns what was learnt so far; final once `done()`.
  const session_result& result() const { return result_; }

private:
  /// Prepares a session from checked inputs (see `make`).
  session(session_config config, session_request request);

  /// Moves to `next` and returns the command `line` to send.
  action send(session_state next, std::string line);
  /// Sends QUIT.
  action quit();
  /// Finishes: copies the catch-all outcome into every address result.
  action close();
  /// Records the first failure, then QUITs (unless 421) or closes.
  action fail(session_failure f, const reply* r, std::string why,
              bool send_quit);
  /// Decides on STARTTLS after a 250 to EHLO/HELO.
  action after_hello(const reply& r);
  /// Skips addresses that cannot be asked; RSET, MAIL or QUIT next.
  action next_address(bool need_rset);
  /// Sends MAIL FROM for the current address.
  action start_transaction();
  /// Handles the reply to MAIL FROM.
  action on_mail(const reply& r);
  /// Handles the reply to RCPT TO for the current address.
  action on_rcpt(const reply& r);
  /// Handles the reply to the catch-all probe.
  action on_probe(const reply& r);
  /// Returns the result of the address being asked.
  address_result& current() { return result_.addresses[queue_[pos_]]; }

  /// Who we are and how we talk.
  session_config config_;
  /// The catch-all probe address; empty: no probe.
  std::string probe_;
  /// Where the dialogue is.
  session_state state_ = session_state::connecting;
  /// Reads the server's bytes.
  reply_parser parser_;
  /// What was learnt.
  session_result result_;
  /// Indexes into `result_.addresses` of the addresses to ask, in order.
  std::vector<std::size_t> queue_;
  /// Position in `queue_` of the address being asked.
  std::size_t pos_ = 0;
  /// Whether the catch-all probe was sent.
  bool probed_ = false;
  /// The probe got 452 and is being asked in a transaction of its own.
  bool probe_alone_ = false;
  /// Open-ended: ask for more addresses instead of QUIT.
  bool open_ended_ = false;
  /// A transaction ran since the last RSET: the next address needs one.
  bool rset_due_ = false;
};

} // namespace mailassay::core::smtp
