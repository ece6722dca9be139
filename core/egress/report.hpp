#pragma once

// The egress self-audit's verdicts (`mailassay doctor`, the service's
// periodic audit): one check per way the network of the prober can make
// every SMTP answer `unknown`, each ok, warn, fail or skip with a detail for
// the operator.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::egress {

/// How one check came out.
enum class status {
  ok,   ///< Nothing to do.
  warn, ///< Probing may suffer; look at the detail.
  fail, ///< Probing is likely refused or impossible until this is fixed.
  skip, ///< Nothing to check (e.g. the null sender).
};

/// Returns "ok", "warn", "fail" or "skip".
std::string_view to_string(status s);

/// The /metrics value of `s`: 1 ok, 0.5 warn, 0 fail; none for skip.
std::optional<double> gauge_value(status s);

/// One check's outcome.
struct check {
  /// helo_dns, egress_ptr, dnsbl, port25, smtp_greeting or mail_from.
  std::string name;
  /// The verdict.
  status result = status::skip;
  /// What was seen, and for a warn or fail what is wrong.
  std::string detail;
};

/// One run of the audit.
struct report {
  /// The local address probes leave from; empty when it is unknown.
  std::string egress_address;
  /// The checks in their fixed order.
  std::vector<check> checks;

  /// Returns whether no check failed (the doctor's exit code 0).
  bool ok() const;

  /// Returns the names of the failed checks, in order.
  std::vector<std::string> failed() const;
};

} // namespace mailassay::core::egress
