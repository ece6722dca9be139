#include "core/smtp/session.hpp"

#include <utility>

namespace mailassay::core::smtp {

namespace {

bool ascii(std::string_view text) {
  for (char c : text)
    if (static_cast<unsigned char>(c) >= 0x80)
      return false;
  return true;
}

classification verdict_only(rcpt_verdict verdict, std::string_view why) {
  return without_reply(verdict, why, "session");
}

} // namespace

std::string_view to_string(tls_policy p) {
  switch (p) {
    case tls_policy::never: return "never";
    case tls_policy::opportunistic: return "opportunistic";
    case tls_policy::required: return "required";
  }
  return "opportunistic";
}

std::optional<tls_policy> parse_tls_policy(std::string_view text) {
  for (auto p :
       {tls_policy::never, tls_policy::opportunistic, tls_policy::required})
    if (to_string(p) == text)
      return p;
  return std::nullopt;
}

std::string_view to_string(session_state s) {
  switch (s) {
    case session_state::connecting: return "connecting";
    case session_state::greeting: return "greeting";
    case session_state::ehlo: return "ehlo";
    case session_state::helo: return "helo";
    case session_state::starttls: return "starttls";
    case session_state::tls_handshake: return "tls_handshake";
    case session_state::ehlo_tls: return "ehlo_tls";
    case session_state::mail: return "mail";
    case session_state::rcpt: return "rcpt";
    case session_state::rcpt_probe: return "rcpt_probe";
    case session_state::rset: return "rset";
    case session_state::idle: return "idle";
    case session_state::quit: return "quit";
    case session_state::closed: return "closed";
  }
  return "unknown";
}

std::string_view to_string(session_failure f) {
  switch (f) {
    case session_failure::none: return "none";
    case session_failure::greeting_rejected: return "greeting_rejected";
    case session_failure::helo_rejected: return "helo_rejected";
    case session_failure::tls_unavailable: return "tls_unavailable";
    case session_failure::tls_failed: return "tls_failed";
    case session_failure::sender_rejected: return "sender_rejected";
    case session_failure::server_closing: return "server_closing";
    case session_failure::unexpected_reply: return "unexpected_reply";
    case session_failure::protocol_error: return "protocol_error";
    case session_failure::timeout: return "timeout";
    case session_failure::connection_closed: return "connection_closed";
  }
  return "unknown";
}

bool safe_argument(std::string_view text) {
  if (text.size() > 320)
    return false;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    // CR/LF would let input inject commands (RFC 5321 §2.3.8 forbids bare
    // ones anyway); angle brackets would end the path early.
    if (u < 0x20 || u == 0x7f || c == '<' || c == '>')
      return false;
  }
  return true;
}

expected<session> session::make(session_config config,
                                session_request request) {
  auto bad_name = [](std::string_view s) {
    return s.empty() || !safe_argument(s) || !ascii(s) ||
           s.find(' ') != std::string_view::npos;
  };
  if (bad_name(config.helo))
    return make_error(errc::validation_failed,
                      "smtp: HELO name is empty or holds unsafe characters");
  if (!config.mail_from.empty() && bad_name(config.mail_from))
    return make_error(errc::validation_failed,
                      "smtp: MAIL FROM address holds unsafe characters");
  return session{std::move(config), std::move(request)};
}

session::session(session_config config, session_request request)
    : config_(std::move(config)), parser_(config_.limits),
      open_ended_(request.open_ended) {
  result_.host = config_.host;
  if (!request.catch_all_probe.empty() &&
      safe_argument(request.catch_all_probe) && ascii(request.catch_all_probe))
    probe_ = std::move(request.catch_all_probe);
  for (auto& address : request.addresses) {
    address_result r;
    r.address = std::move(address);
    if (r.address.empty() || !safe_argument(r.address))
      r.rcpt = verdict_only(rcpt_verdict::protocol_error,
                            "refused: empty address or unsafe characters");
    else
      queue_.push_back(result_.addresses.size());
    result_.addresses.push_back(std::move(r));
  }
}

action session::send(session_state next, std::string line) {
  state_ = next;
  line += "\r\n";
  return action{action_kind::send, std::move(line)};
}

action session::quit() {
  return send(session_state::quit, "QUIT");
}

action session::close() {
  state_ = session_state::closed;
  for (auto& a : result_.addresses)
    a.catch_all = result_.catch_all;
  return action{action_kind::close, {}};
}

action session::fail(session_failure f, const reply* r, std::string why,
                     bool send_quit) {
  if (result_.failure == session_failure::none) {
    result_.failure = f;
    result_.failure_code = r != nullptr ? r->code : 0;
    result_.failure_message =
        r != nullptr ? bounded_message(r->text()) : std::move(why);
  }
  // A 421 means the server is closing (RFC 5321 §3.8): no QUIT.
  if (send_quit && (r == nullptr || r->code != 421))
    return quit();
  return close();
}

action session::on_connected() {
  if (state_ != session_state::connecting)
    return fail(session_failure::protocol_error, nullptr,
                "connected event out of order", false);
  state_ = session_state::greeting;
  return {};
}

action session::on_data(std::string_view bytes) {
  if (state_ == session_state::closed)
    return close();
  auto fed = parser_.feed(bytes);
  // After QUIT any reply, even a garbled one, only ends the session.
  if (state_ == session_state::quit)
    return fed.replies.empty() && fed.error == parse_error::none ? action{}
                                                                 : close();
  if (fed.replies.size() > 1) {
    // Commands are never pipelined, so one reply at most is due.
    if (state_ == session_state::rcpt)
      current().rcpt = verdict_only(rcpt_verdict::protocol_error,
                                    "more replies than commands");
    return fail(session_failure::protocol_error, nullptr,
                "more replies than commands", false);
  }
  if (fed.replies.size() == 1) {
    auto next = on_reply(fed.replies.front());
    if (fed.error == parse_error::none || done())
      return next;
  }
  if (fed.error != parse_error::none) {
    if (state_ == session_state::rcpt)
      current().rcpt = verdict_only(rcpt_verdict::protocol_error,
                                    std::string{to_string(fed.error)});
    return fail(session_failure::protocol_error, nullptr,
                "garbled reply: " + std::string{to_string(fed.error)}, false);
  }
  return {};
}

action session::on_reply(const reply& r) {
  switch (state_) {
    case session_state::greeting:
      result_.greeting_code = r.code;
      result_.greeting = bounded_message(r.text());
      if (r.code != 220)
        // RFC 5321 §3.1: after a 554 greeting the client should QUIT.
        return fail(session_failure::greeting_rejected, &r, {}, r.klass() == 5);
      return send(session_state::ehlo, "EHLO " + config_.helo);
    case session_state::ehlo:
      if (r.code == 250) {
        result_.caps = parse_ehlo(r);
        return after_hello(r);
      }
      // RFC 5321 §4.1.4: fall back to HELO when EHLO is not understood.
      if (r.klass() == 5)
        return send(session_state::helo, "HELO " + config_.helo);
      return fail(session_failure::helo_rejected, &r, {}, true);
    case session_state::helo:
      if (r.code != 250)
        return fail(session_failure::helo_rejected, &r, {}, true);
      result_.caps = capabilities{};
      return after_hello(r);
    case session_state::starttls:
      if (r.code == 220) {
        // RFC 3207 §4.2 / CVE-2011-0411: bytes sent before the handshake
        // must not be read as replies after it.
        if (parser_.has_partial())
          return fail(session_failure::protocol_error, nullptr,
                      "data after STARTTLS reply", false);
        state_ = session_state::tls_handshake;
        return action{action_kind::start_tls, {}};
      }
      if (config_.tls == tls_policy::required)
        return fail(session_failure::tls_unavailable, &r, {}, true);
      return next_address(false);
    case session_state::ehlo_tls:
      if (r.code != 250)
        return fail(session_failure::helo_rejected, &r, {}, true);
      result_.caps = parse_ehlo(r);
      return next_address(false);
    case session_state::mail: return on_mail(r);
    case session_state::rcpt: return on_rcpt(r);
    case session_state::rcpt_probe: return on_probe(r);
    case session_state::rset:
      if (r.code != 250)
        return fail(r.code == 421 ? session_failure::server_closing
                                  : session_failure::unexpected_reply,
                    &r, {}, true);
      return start_transaction();
    case session_state::quit: return close();
    case session_state::connecting:
    case session_state::tls_handshake:
    case session_state::idle:
    case session_state::closed: break;
  }
  return fail(session_failure::protocol_error, &r, "reply when none was due",
              false);
}

action session::after_hello(const reply& r) {
  if (config_.tls != tls_policy::never && result_.caps.starttls)
    return send(session_state::starttls, "STARTTLS");
  if (config_.tls == tls_policy::required)
    return fail(session_failure::tls_unavailable, nullptr,
                "STARTTLS required but not offered", true);
  return next_address(false);
}

action session::on_tls_established() {
  if (state_ != session_state::tls_handshake)
    return fail(session_failure::protocol_error, nullptr,
                "TLS event out of order", false);
  result_.tls = true;
  parser_.reset();
  return send(session_state::ehlo_tls, "EHLO " + config_.helo);
}

action session::on_tls_failed() {
  return fail(session_failure::tls_failed, nullptr, "TLS handshake failed",
              false);
}

action session::next_address(bool need_rset) {
  if (need_rset)
    ++pos_;
  rset_due_ = rset_due_ || need_rset;
  // RFC 6531 §3.4: without SMTPUTF8 a non-ASCII address cannot be asked.
  while (pos_ < queue_.size() && !ascii(current().address) &&
         !result_.caps.smtputf8) {
    current().rcpt = verdict_only(rcpt_verdict::smtputf8_unsupported,
                                  "server does not offer SMTPUTF8");
    ++pos_;
  }
  if (pos_ >= queue_.size()) {
    if (!open_ended_)
      return quit();
    state_ = session_state::idle;
    return action{action_kind::need_more, {}};
  }
  // RFC 5321 §4.1.1.5: RSET ends the previous transaction.
  if (rset_due_) {
    rset_due_ = false;
    return send(session_state::rset, "RSET");
  }
  return start_transaction();
}

action session::give(std::string address, std::string catch_all_probe) {
  if (state_ != session_state::idle)
    return {};
  address_result r;
  r.address = std::move(address);
  probe_.clear();
  probed_ = false;
  probe_alone_ = false;
  if (!catch_all_probe.empty() && safe_argument(catch_all_probe) &&
      ascii(catch_all_probe))
    probe_ = std::move(catch_all_probe);
  if (r.address.empty() || !safe_argument(r.address)) {
    r.rcpt = verdict_only(rcpt_verdict::protocol_error,
                          "refused: empty address or unsafe characters");
    result_.addresses.push_back(std::move(r));
    return action{action_kind::need_more, {}};
  }
  queue_.push_back(result_.addresses.size());
  result_.addresses.push_back(std::move(r));
  return next_address(false);
}

action session::finish() {
  if (state_ != session_state::idle)
    return {};
  return quit();
}

action session::start_transaction() {
  std::string line = "MAIL FROM:<" + config_.mail_from + ">";
  if (!probe_alone_ && !ascii(current().address))
    line += " SMTPUTF8";
  return send(session_state::mail, std::move(line));
}

action session::on_mail(const reply& r) {
  if (r.code == 250) {
    ++result_.rcpt_sent;
    if (probe_alone_)
      return send(session_state::rcpt_probe, "RCPT TO:<" + probe_ + ">");
    return send(session_state::rcpt, "RCPT TO:<" + current().address + ">");
  }
  if (r.code == 421)
    return fail(session_failure::server_closing, &r, {}, false);
  // The address of the probe's own transaction is answered already.
  if (probe_alone_) {
    probe_alone_ = false;
    ++pos_;
  }
  // A refused sender says nothing about the mailboxes.
  auto c = classify_rcpt(r);
  c.verdict = r.klass() == 4 ? rcpt_verdict::greylisted_or_throttled
                             : rcpt_verdict::blocked_by_policy;
  c.rule = "MAIL FROM refused";
  for (; pos_ < queue_.size(); ++pos_)
    current().rcpt = c;
  return fail(session_failure::sender_rejected, &r, {}, true);
}

action session::on_rcpt(const reply& r) {
  auto c = classify_rcpt(r);
  auto verdict = c.verdict;
  current().rcpt = std::move(c);
  if (r.code == 421)
    return fail(session_failure::server_closing, &r, {}, false);
  if (verdict == rcpt_verdict::too_many_recipients)
    return quit();
  if (verdict == rcpt_verdict::no_such_user)
    // The domain refuses a real mailbox as unknown: not a catch-all,
    // whatever a random address got.
    result_.catch_all = false;
  // A definitive false needs no probe, and a probe must not overwrite it.
  if (verdict == rcpt_verdict::accepted && !probed_ && !probe_.empty() &&
      !result_.catch_all.has_value()) {
    probed_ = true;
    ++result_.rcpt_sent;
    return send(session_state::rcpt_probe, "RCPT TO:<" + probe_ + ">");
  }
  return next_address(true);
}

action session::on_probe(const reply& r) {
  auto c = classify_rcpt(r);
  // Only a probe with no verdict before it decides (see on_rcpt): a known
  // false is never turned into true or null.
  if (!result_.catch_all.has_value()) {
    if (c.verdict == rcpt_verdict::accepted)
      result_.catch_all = true;
    else if (c.verdict == rcpt_verdict::no_such_user)
      result_.catch_all = false;
  }
  if (r.code == 421)
    return fail(session_failure::server_closing, &r, {}, false);
  if (c.verdict == rcpt_verdict::too_many_recipients) {
    // The server takes one RCPT per transaction: the probe is asked again
    // alone; the address it rode with keeps its answer.
    if (config_.probe_alone_after_452 && !probe_alone_) {
      probe_alone_ = true;
      return send(session_state::rset, "RSET");
    }
    ++pos_;
    return quit();
  }
  probe_alone_ = false;
  return next_address(true);
}

action session::on_timeout() {
  if (state_ == session_state::quit || state_ == session_state::closed)
    return close();
  if (state_ == session_state::rcpt)
    current().rcpt =
        verdict_only(rcpt_verdict::other_temporary, "no reply in time");
  return fail(session_failure::timeout, nullptr, "no reply in time", false);
}

action session::on_connection_closed() {
  if (state_ == session_state::quit || state_ == session_state::closed)
    return close();
  if (state_ == session_state::rcpt)
    current().rcpt =
        verdict_only(rcpt_verdict::other_temporary, "connection closed");
  return fail(session_failure::connection_closed, nullptr, "connection closed",
              false);
}

} // namespace mailassay::core::smtp
