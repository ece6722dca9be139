#include "core/egress/decide.hpp"

#include "core/base/ascii.hpp"
#include "core/egress/names.hpp"
#include "core/limits/client_ip.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace mailassay::core::egress {

namespace {

using dns::rcode;

check make(std::string name, status s, std::string detail) {
  return {std::move(name), s, std::move(detail)};
}

std::string join(const std::vector<std::string>& xs, std::string_view sep) {
  std::string out;
  for (const auto& x : xs)
    out += (out.empty() ? "" : std::string{sep}) + x;
  return out;
}

// One spelling per address, so "::1" and "0::1" compare equal.
std::string canonical(const std::string& ip) {
  auto parsed = limits::parse_ip(ip);
  return parsed ? limits::to_string(*parsed) : ip;
}

bool same_name(std::string_view a, std::string_view b) {
  return dns::normalize_name(a) == dns::normalize_name(b);
}

// "no record (nxdomain)", "the lookup failed (timeout)".
std::string describe(const dns::lookup_result& r) {
  auto code = std::string{dns::to_string(r.code)};
  return dns::is_failure(r.code) ? "the lookup failed (" + code + ")"
                                 : "no record (" + code + ")";
}

} // namespace

check decide_helo_dns(const std::string& helo,
                      const std::optional<dns::lookup_result>& a,
                      const std::optional<dns::lookup_result>& aaaa) {
  const std::string name = "helo_dns";
  if (helo.empty())
    return make(name, status::fail,
                "smtp.helo is empty: set it to a public FQDN of this host "
                "(MAILASSAY_SMTP_HELO)");
  if (!is_fqdn(helo))
    return make(name, status::fail,
                "smtp.helo \"" + helo +
                    "\" is not a fully qualified domain name; receivers "
                    "refuse such EHLO names");
  std::vector<std::string> found;
  for (const auto* r : {&a, &aaaa})
    if (*r && (*r)->code == rcode::ok)
      found.insert(found.end(), (*r)->addresses.begin(), (*r)->addresses.end());
  if (!found.empty())
    return make(name, status::ok, helo + " has address " + join(found, ", "));
  for (const auto* r : {&a, &aaaa})
    if (*r && dns::is_failure((*r)->code))
      return make(name, status::warn,
                  "could not resolve " + helo + ": " + describe(**r));
  return make(name, status::fail,
              helo + " has no A or AAAA record: publish one pointing at "
                     "this host's egress address");
}

check decide_egress_ptr(const ptr_observation& o) {
  const std::string name = "egress_ptr";
  if (o.address.empty())
    return make(name, status::warn,
                "the egress address is unknown (" + o.address_error +
                    "); set smtp.source_address");
  const auto& ptr = o.ptr;
  if (dns::is_failure(ptr.code))
    return make(name, status::warn,
                "PTR of " + o.address + ": " + describe(ptr));
  if (ptr.texts.empty()) {
    if (!o.routable)
      return make(name, status::warn,
                  o.address +
                      " is a private address without PTR: the host is "
                      "behind NAT, and receivers see the NAT's public "
                      "address, whose PTR must name " +
                      o.helo);
    return make(name, status::fail,
                o.address +
                    " has no PTR record: ask the owner of the "
                    "address (the hosting provider) to set its "
                    "reverse DNS to " +
                    o.helo);
  }
  auto names = join(ptr.texts, ", ");
  auto named = std::any_of(ptr.texts.begin(), ptr.texts.end(),
                           [&](const auto& n) { return same_name(n, o.helo); });
  if (!named)
    return make(name, status::fail,
                "PTR of " + o.address + " names " + names + ", not smtp.helo " +
                    o.helo + ": set the reverse DNS to " + o.helo +
                    " or smtp.helo to the PTR name");
  auto want = canonical(o.address);
  auto confirmed =
      std::any_of(o.helo_addresses.begin(), o.helo_addresses.end(),
                  [&](const auto& a) { return canonical(a) == want; });
  if (!confirmed)
    return make(name, status::fail,
                "PTR of " + o.address + " names " + o.helo + ", but " + o.helo +
                    " resolves to " +
                    (o.helo_addresses.empty() ? std::string{"nothing"}
                                              : join(o.helo_addresses, ", ")) +
                    ", not " + o.address +
                    " (not forward-confirmed): add an A/AAAA record");
  return make(name, status::ok,
              o.address + " -> " + o.helo + " -> " + o.address +
                  " (forward-confirmed)");
}

check decide_dnsbl(const std::string& address, bool routable,
                   const std::vector<dnsbl_observation>& lists) {
  const std::string name = "dnsbl";
  if (lists.empty())
    return make(name, status::skip, "no blocklist configured (egress.dnsbl)");
  if (address.empty())
    return make(name, status::skip, "the egress address is unknown");
  if (!routable)
    return make(name, status::skip,
                address + " is a private address; blocklists list the public "
                          "address receivers see");
  std::vector<std::string> listed, trouble, clean;
  for (const auto& l : lists) {
    if (l.a.code != rcode::ok) {
      if (dns::is_failure(l.a.code))
        trouble.push_back(l.zone + ": " + describe(l.a));
      else
        clean.push_back(l.zone);
      continue;
    }
    std::vector<std::string> codes, odd, refused;
    for (const auto& a : l.a.addresses) {
      auto ip = limits::parse_ip(a);
      if (!ip || !ip->v4 || ip->bytes[0] != 127)
        odd.push_back(a);
      else if (ip->bytes[1] == 255 && ip->bytes[2] == 255)
        refused.push_back(a);
      else
        codes.push_back(a);
    }
    if (!codes.empty()) {
      auto reason = l.txt.texts.empty() ? std::string{"no reason given"}
                                        : join(l.txt.texts, "; ");
      listed.push_back(l.zone + " (" + join(codes, ", ") + ": " + reason + ")");
    } else if (!refused.empty()) {
      trouble.push_back(l.zone + " refused the query (" + join(refused, ", ") +
                        "; lists refuse public and open resolvers: set "
                        "dns.servers to a resolver of your own)");
    } else {
      trouble.push_back(l.zone + " answered " + join(odd, ", ") +
                        ", not a blocklist code (a lapsed list?)");
    }
  }
  if (!listed.empty()) {
    auto detail = address + " is listed on " + join(listed, "; ") +
                  ": follow the list's delisting procedure";
    if (!trouble.empty())
      detail += "; also " + join(trouble, "; ");
    return make(name, status::fail, detail);
  }
  if (!trouble.empty())
    return make(name, status::warn,
                join(trouble, "; ") +
                    (clean.empty() ? std::string{}
                                   : "; not listed on " + join(clean, ", ")));
  return make(name, status::ok,
              address + " is not listed on " + join(clean, ", "));
}

check decide_port25(int port, const std::vector<connect_observation>& tries,
                    const std::string& resolution_error) {
  const std::string name = "port25";
  auto p = std::to_string(port);
  if (tries.empty() && resolution_error.empty())
    return make(name, status::skip,
                "no reference domain configured (egress.reference_domains)");
  // Without the reference hosts' addresses the resolver is the likely
  // fault, and probes cannot find MX hosts either.
  if (tries.empty())
    return make(name, status::fail,
                "no reference MX host could be resolved (" + resolution_error +
                    "): check dns.servers; probes need it to find MX hosts "
                    "too");
  std::vector<std::string> opened, closed;
  for (const auto& t : tries) {
    auto where = t.host + " (" + t.address + ")";
    if (t.opened)
      opened.push_back(where);
    else
      closed.push_back(where + ": " + t.error);
  }
  if (opened.empty())
    return make(name, status::fail,
                "outbound port " + p + " looks blocked: no connection to " +
                    join(closed, ", ") +
                    "; ask the provider to open it, or set "
                    "smtp.socks5_proxy to a host where it is open");
  if (!closed.empty())
    return make(name, status::warn,
                std::to_string(opened.size()) + " of " +
                    std::to_string(tries.size()) +
                    " reference hosts took a "
                    "connection on port " +
                    p + "; no connection to " + join(closed, ", "));
  return make(name, status::ok,
              "port " + p + " opens to " + join(opened, ", "));
}

bool is_policy_text(const std::string& text) {
  // Words of real refusals of a client, e.g.
  // "554 5.7.1 Service unavailable; Client host [192.0.2.1] blocked using
  //  zen.spamhaus.org", "550 5.7.1 [192.0.2.1] Our system has detected an
  //  unusual rate ... IP reputation", "550 5.7.25 The IP address sending
  //  this message does not have a PTR record setup",
  // "421 4.7.0 [TSS04] Messages from 192.0.2.1 temporarily deferred due to
  //  unexpected volume or user complaints", "554 IP in blacklist",
  // "550 5.7.606 Access denied, banned sending IP [192.0.2.1]".
  static constexpr std::array<std::string_view, 16> words = {
      "spamhaus",   "blocklist",  "blacklist",  "block list",
      "black list", "blocked",    "dnsbl",      "rbl",
      "reputation", "banned",     "ptr record", "reverse dns",
      "rdns",       "complaints", "listed",     "access denied"};
  auto t = ascii_lower(text);
  return std::any_of(words.begin(), words.end(), [&](std::string_view w) {
    return t.find(w) != std::string::npos;
  });
}

check decide_smtp_greeting(const greeting_observation& o) {
  const std::string name = "smtp_greeting";
  if (!o.attempted)
    return make(name, status::skip, "no reference MX host to greet");
  if (!o.not_started.empty())
    return make(name, status::skip, o.not_started);
  auto who = o.host + " (" + o.address + ")" +
             (o.via_proxy ? " through the SOCKS5 proxy" : "");
  if (!o.connect_error.empty())
    return make(name, status::fail,
                "no connection to " + who + ": " + o.connect_error);
  auto reply = [](int code, const std::string& text) {
    return std::to_string(code) + " " + text;
  };
  if (o.failure == "greeting_rejected") {
    auto r = reply(o.failure_code, o.failure_text);
    if (o.failure_code / 100 == 5 || is_policy_text(o.failure_text))
      return make(name, status::fail, who + " refused us: " + r);
    return make(name, status::warn, who + " did not greet (try later): " + r);
  }
  if (o.greeting_code == 0)
    return make(name, status::warn,
                who + " sent no greeting (" + o.failure + ")");
  auto greeting = "greeting " + reply(o.greeting_code, o.greeting_text);
  if (o.failure == "helo_rejected")
    return make(name, status::fail,
                who + " refused EHLO: " +
                    reply(o.failure_code, o.failure_text) + "; " + greeting);
  if (o.failure != "none" && o.ehlo_name.empty())
    return make(name, status::warn,
                who + ": " + greeting + "; then " + o.failure + " " +
                    (o.failure_code ? reply(o.failure_code, o.failure_text)
                                    : o.failure_text));
  return make(name, status::ok,
              who + ": " + greeting + "; EHLO answered by " + o.ehlo_name +
                  (o.extensions.empty()
                       ? std::string{}
                       : " (" + join(o.extensions, " ") + ")"));
}

check decide_mail_from(const std::string& mail_from,
                       const std::optional<dns::lookup_result>& mx,
                       const std::optional<dns::lookup_result>& a) {
  const std::string name = "mail_from";
  if (mail_from.empty())
    return make(name, status::skip,
                "the null sender <> has no domain to check");
  auto at = mail_from.rfind('@');
  if (at == std::string::npos || at + 1 >= mail_from.size())
    return make(name, status::warn,
                "smtp.mail_from has no domain: receivers may refuse it");
  auto domain = mail_from.substr(at + 1);
  if (mx && mx->code == rcode::ok) {
    bool null_mx = std::all_of(mx->mx.begin(), mx->mx.end(),
                               [](const auto& r) { return r.host == "."; });
    if (null_mx)
      return make(name, status::warn,
                  domain + " has a null MX (takes no mail): bounces and "
                           "call-backs cannot reach smtp.mail_from");
    std::vector<std::string> hosts;
    for (const auto& r : mx->mx)
      hosts.push_back(r.host);
    return make(name, status::ok, domain + " has MX " + join(hosts, ", "));
  }
  if (a && a->code == rcode::ok)
    return make(name, status::ok,
                domain + " has no MX but an address (" +
                    join(a->addresses, ", ") + ")");
  for (const auto* r : {&mx, &a})
    if (*r && dns::is_failure((*r)->code))
      return make(name, status::warn,
                  "could not resolve " + domain + ": " + describe(**r));
  return make(name, status::warn,
              domain + " has neither MX nor A record: bounces and "
                       "receivers' call-backs cannot reach smtp.mail_from");
}

} // namespace mailassay::core::egress
