#pragma once

// What each egress check concludes from what the audit observed: pure
// functions of DNS answers, connection outcomes and SMTP replies, so every
// branch is a table test. The I/O that gathers the observations is
// net/egress_audit.

#include "core/dns/records.hpp"
#include "core/egress/report.hpp"

#include <optional>
#include <string>
#include <vector>

namespace mailassay::core::egress {

/// helo_dns: `smtp.helo` is an FQDN with an A or AAAA record. `a` and
/// `aaaa` are the answers for it (absent when not asked: not an FQDN).
check decide_helo_dns(const std::string& helo,
                      const std::optional<dns::lookup_result>& a,
                      const std::optional<dns::lookup_result>& aaaa);

/// What the audit saw of the egress address's reverse DNS.
struct ptr_observation {
  /// The egress address; empty when it could not be found out.
  std::string address;
  /// Why the address is unknown (when `address` is empty).
  std::string address_error;
  /// Whether receivers see this address: public, or inside
  /// `smtp.allow_private_targets` (the operator's test networks). A private
  /// address is behind NAT, and the address receivers see is not known.
  bool routable = true;
  /// `smtp.helo`.
  std::string helo;
  /// The PTR answer for the address's reverse name.
  dns::lookup_result ptr;
  /// The A and AAAA addresses of `helo` (asked when a PTR names it).
  std::vector<std::string> helo_addresses;
};

/// egress_ptr: forward-confirmed reverse DNS. The PTR of the egress address
/// names `smtp.helo`, and its A/AAAA give the address back (receivers
/// compare the three; a mismatch is a common reason to refuse).
check decide_egress_ptr(const ptr_observation& o);

/// One blocklist's answers about the egress address.
struct dnsbl_observation {
  /// The list's zone, e.g. "zen.spamhaus.org".
  std::string zone;
  /// The A answer for the address inside the zone.
  dns::lookup_result a;
  /// The TXT answer (asked when listed): the list's reason.
  dns::lookup_result txt;
};

/// dnsbl: the egress address is on none of the lists (RFC 5782 §2.1: an
/// A record in 127.0.0.0/8 lists the address; Spamhaus answers
/// 127.255.255.x to queries it refuses, e.g. from a public resolver).
/// `routable` as in `ptr_observation`; an unknown or unroutable address
/// skips the check.
check decide_dnsbl(const std::string& address, bool routable,
                   const std::vector<dnsbl_observation>& lists);

/// One TCP connection attempt to a reference MX host.
struct connect_observation {
  /// The MX host name.
  std::string host;
  /// The address tried.
  std::string address;
  /// Whether the connection opened within the time allowed.
  bool opened = false;
  /// Why not ("timeout", "refused", "address policy: loopback" ...).
  std::string error;
};

/// port25: TCP connections to `port` of the reference MX hosts open.
/// `resolution_error` says which reference domains or hosts did not
/// resolve; with no host to try it fails (the resolver is then the likely
/// fault), and skips when no reference domain is configured.
check decide_port25(int port, const std::vector<connect_observation>& tries,
                    const std::string& resolution_error);

/// One EHLO dialogue with a reference MX host.
struct greeting_observation {
  /// Whether a host was tried at all.
  bool attempted = false;
  /// Why no dialogue was started although a host was there (e.g. no valid
  /// HELO name); makes the check a skip.
  std::string not_started;
  /// The host and address.
  std::string host;
  std::string address;
  /// Whether it went through the SOCKS5 proxy.
  bool via_proxy = false;
  /// Why the connection failed; empty when it opened.
  std::string connect_error;
  /// The greeting's code and text (0 and empty when none arrived).
  int greeting_code = 0;
  std::string greeting_text;
  /// The session's failure name ("none", "greeting_rejected",
  /// "helo_rejected", "timeout" ...), its reply code and text.
  std::string failure = "none";
  int failure_code = 0;
  std::string failure_text;
  /// The name the EHLO reply gave and the extensions it listed.
  std::string ehlo_name;
  std::vector<std::string> extensions;
};

/// smtp_greeting: a reference host greets and accepts EHLO. A 5xx greeting
/// or a refusal naming a policy (blocklist, reputation, reverse DNS) fails;
/// a 4xx without one warns (busy, try later).
check decide_smtp_greeting(const greeting_observation& o);

/// Returns whether a refusal's text blames the client rather than the
/// moment: a blocklist, a ban, reputation, reverse DNS.
bool is_policy_text(const std::string& text);

/// mail_from: the domain of `smtp.mail_from` has an MX or an A record, so
/// bounces and receivers' call-backs reach it. `mx` and `a` are its
/// answers (absent when not asked: the null sender or no domain).
check decide_mail_from(const std::string& mail_from,
                       const std::optional<dns::lookup_result>& mx,
                       const std::optional<dns::lookup_result>& a);

} // namespace mailassay::core::egress
