#pragma once

// The sandbox of test keys (`svc_test_`, docs/api.md "Test keys"): a
// validation made with one never sends a DNS query, opens an SMTP
// connection or spends a credit. Its DNS and SMTP facts come from the
// address's local part instead, so that every outcome can be produced on
// purpose against any domain:
//
//   local part   status   reason             facts
//   valid        valid    accepted_email     MX, SMTP 250 2.1.5
//   invalid      invalid  rejected_email     SMTP 550 5.1.1
//   catchall     risky    catch_all          SMTP 250, catch-all domain
//   full         risky    mailbox_full       SMTP 552 5.2.2
//   disabled     invalid  mailbox_disabled   SMTP 550 5.2.1
//   greylisted   valid    accepted_email     450 4.7.1, then 250: 2 passes
//   timeout      unknown  timeout            no SMTP answer in time
//   nomx         invalid  no_mx              no MX, no A/AAAA
//   (any other)  as valid
//
// The statuses and reasons are not decided here: the verdict
// (core/validation/verdict.hpp) decides them from these facts, as it does
// from real ones, so the free checks (disposable, role, random, typo) still
// count.

#include "core/dns/route.hpp"
#include "core/validation/verdict.hpp"

#include <cstddef>
#include <string_view>

namespace mailassay::core::validation {

/// The outcomes a sandbox answer can simulate.
enum class sandbox_case {
  valid,      ///< Accepted mailbox on a domain that is not catch-all.
  invalid,    ///< Mailbox rejected (5.1.1).
  catch_all,  ///< The domain accepts any address.
  full,       ///< Mailbox full (5.2.2).
  disabled,   ///< Mailbox disabled (5.2.1).
  greylisted, ///< Greylisted once, accepted on the second pass.
  timeout,    ///< No SMTP answer within the time-out.
  no_mx,      ///< The domain has no MX and no address.
};

/// Returns the local part that selects `c`: "valid", "invalid",
/// "catchall", "full", "disabled", "greylisted", "timeout" or "nomx".
std::string_view to_string(sandbox_case c);

/// Picks the case of an address from its local part: the part before the
/// first `+` (a sub-address tag is ignored), compared without regard to
/// ASCII case; anything that names no case is `valid`.
sandbox_case sandbox_case_of(std::string_view local_part);

/// The SMTP reply a sandbox answer reports (texts are constants).
struct sandbox_reply {
  std::string_view host;     ///< MX host that "answered"; empty: none.
  std::size_t attempts = 0;  ///< `RCPT TO` passes.
  int code = 0;              ///< Reply code; 0: no reply.
  std::string_view enhanced; ///< Enhanced status code; empty: none.
  std::string_view message;  ///< Reply text; empty: none.
};

/// The DNS and SMTP facts of one sandbox answer.
struct sandbox_answer {
  dns::mail_route route; ///< The simulated mail route.
  smtp_facts smtp;       ///< The simulated SMTP stage (never charged).
  sandbox_reply reply;   ///< The simulated final reply.
};

/// The MX host every simulated route names (the reserved `.invalid` top
/// level domain, RFC 2606: it can never be a real host).
inline constexpr std::string_view sandbox_mx_host = "mx.sandbox.invalid";

/// Returns the facts a sandbox answer of case `c` reports. The SMTP facts
/// are given whether or not the request asked for SMTP: a sandbox shows
/// every outcome, also to the widget, which never asks.
sandbox_answer sandbox_answer_of(sandbox_case c);

} // namespace mailassay::core::validation
