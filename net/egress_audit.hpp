#pragma once

// Gathers what the egress self-audit needs (core/egress decides on it):
// DNS answers through the service's resolver, TCP connections to port 25 of
// the reference MX hosts, one EHLO through the SMTP client (and its SOCKS5
// proxy). Blocking: run it on a thread of its own (the command line, or the
// service's audit thread), never on an actor's.
//
//   run()
//     1. DNS: A/AAAA of smtp.helo, MX/A of smtp.mail_from's domain, the mail
//        route of each reference domain            (all at once)
//     2. DNS: the addresses of each domain's first MX host
//     3. egress address: smtp.source_address, else the local address of a
//        UDP socket connected to the first reference host (no packet sent)
//     4. DNS: its PTR, its A and TXT in each blocklist zone; meanwhile TCP
//        connections to every reference host (at most connect_timeout)
//     5. one EHLO with the first host that took a connection
//     -> core::egress::report
//
// `cancel()` (from another thread) makes a running `run()` return soon with
// what it has; every wait is bounded anyway (the resolver's time-outs, the
// connect time-out, the SMTP step time-out).

#include "core/egress/report.hpp"
#include "core/smtp/address_policy.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace mailassay::net {

class dns_resolver;

/// What the audit checks and how.
struct egress_audit_config {
  /// The EHLO name probes send (smtp.helo, or the host name it defaults to).
  std::string helo;
  /// smtp.mail_from; empty: the null sender.
  std::string mail_from;
  /// smtp.port: the port of the reference hosts.
  std::uint16_t port = 25;
  /// smtp.source_address; empty: the kernel's choice.
  std::string source_address;
  /// egress.reference_domains.
  std::vector<std::string> reference_domains;
  /// egress.dnsbl.
  std::vector<std::string> dnsbl;
  /// smtp.allow_private_targets: which addresses may be connected to, and
  /// which private egress addresses count as seen by receivers.
  core::smtp::target_policy policy;
  /// smtp.socks5_proxy; empty: direct.
  std::string socks5_proxy;
  /// Longest wait for one TCP connection.
  std::chrono::milliseconds connect_timeout{5000};
  /// Longest wait for each step of the EHLO dialogue.
  std::chrono::milliseconds step_timeout{10000};
};

/// One audit at a time; see the diagram at the top of this header.
class egress_audit {
public:
  /// Prepares an audit asking `resolver` (shared with the service).
  egress_audit(egress_audit_config config,
               std::shared_ptr<dns_resolver> resolver);

  /// Cancels a run in progress (see `cancel`).
  ~egress_audit();

  egress_audit(const egress_audit&) = delete;
  egress_audit& operator=(const egress_audit&) = delete;

  /// Runs every check and returns the report; blocks up to about a minute
  /// in the worst case (every server silent). Not for two threads at once.
  core::egress::report run();

  /// Makes a `run()` in progress, or the next one, return at once with what
  /// it has (the checks not reached are skipped). Thread-safe.
  void cancel();

private:
  struct impl;
  std::shared_ptr<impl> impl_;
};

} // namespace mailassay::net
