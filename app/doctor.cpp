#include "app/app.hpp"
#include "core/smtp/identity.hpp"
#include "http/codec/egress.hpp"
#include "net/dns_resolver.hpp"

#include <iomanip>
#include <iostream>
#include <unistd.h>

namespace mailassay::app {

net::egress_audit_config egress_config(const config::settings& cfg) {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0)
    host[0] = '\0';
  net::egress_audit_config c;
  c.helo = core::smtp::choose_helo(cfg.smtp.helo, host);
  c.mail_from = cfg.smtp.mail_from;
  c.port = static_cast<std::uint16_t>(cfg.smtp.port);
  c.source_address = cfg.smtp.source_address;
  c.reference_domains = cfg.egress.reference_domains;
  c.dnsbl = cfg.egress.dnsbl;
  c.socks5_proxy = cfg.smtp.socks5_proxy;
  auto policy =
      core::smtp::target_policy::parse(cfg.smtp.allow_private_targets);
  if (!policy) {
    std::cerr << "mailassay: invalid configuration: "
                 "MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS "
              << policy.error_value().message << "\n";
    std::exit(2);
  }
  c.policy = std::move(*policy);
  return c;
}

int doctor(const config::settings& cfg, bool json) {
  auto resolver = resolver_or_exit(cfg);
  net::egress_audit audit{egress_config(cfg), resolver};
  auto report = audit.run();
  if (json) {
    std::cout << http::codec::text_of(http::codec::egress_report(report))
              << "\n";
  } else {
    std::cout << "egress address: "
              << (report.egress_address.empty() ? "(unknown)"
                                                : report.egress_address)
              << "\n";
    for (const auto& c : report.checks)
      std::cout << std::left << std::setw(6)
                << core::egress::to_string(c.result) << std::setw(15) << c.name
                << c.detail << "\n";
    std::cout << (report.ok() ? "no check failed\n"
                              : "failed: see docs/operations.md, \"Why is "
                                "every answer unknown?\"\n");
  }
  resolver->shutdown();
  return report.ok() ? 0 : 1;
}

} // namespace mailassay::app
