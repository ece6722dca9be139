#pragma once

// A running server that probes the project's SMTP peer: the black-box
// fixture of the api.smtp and api.batch_scheduling suites.

#include "tests/http/fixtures.hpp"
#include "tests/peers/dns_peer.hpp"
#include "tests/peers/smtp_peer.hpp"

#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace mailassay::testing {

/// The DNS peer, the SMTP peer `mx` on 127.0.0.1, the server and an
/// account whose key may probe over SMTP.
struct smtp_service {
  tests::peers::dns_peer dns;
  tests::peers::smtp_peer mx;
  std::unique_ptr<server_process> srv;
  std::unique_ptr<api> a;
  std::string jwt;
  std::string key;

  /// Loads `zone` into the DNS peer, starts the server with
  /// `smtp_server_env` and `settings`, `extra` over them, and signs up
  /// organization `org` (the account's token and key in `jwt`, `key`).
  void start(const char* zone, std::map<std::string, std::string> settings,
             const std::map<std::string, std::string>& extra,
             const std::string& org) {
    dns.load_zone(zone);
    for (auto& [k, v] : extra)
      settings[k] = v;
    srv = std::make_unique<server_process>(
        smtp_server_env(dns.server(), std::to_string(mx.port()), settings));
    a = std::make_unique<api>(api{*srv});
    std::tie(jwt, key) = smtp_account(*a, org);
  }
};

} // namespace mailassay::testing
