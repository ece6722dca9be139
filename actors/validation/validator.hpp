#pragma once

#include "core/base/expected.hpp"
#include "core/dns/route.hpp"
#include "core/risk/lists.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/free_checks.hpp"
#include "core/validation/verdict.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

namespace mailassay::net {
class dns_resolver;
} // namespace mailassay::net

namespace mailassay::actors::smtp {
class prober;
} // namespace mailassay::actors::smtp

namespace mailassay::actors::validation {

/// One address to validate, with what the caller's key allows.
struct request {
  std::string email;
  bool smtp = false;               ///< SMTP probe asked for (and allowed).
  std::int64_t timeout_ms = 10000; ///< SMTP budget.
  core::validation::toggles toggles;
  /// Who pays for the probe (one credit, reserved before it).
  std::string organization_id;
  /// The credit was reserved already (batch jobs reserve at upload): no
  /// reservation, no refund; `result::credits_used` says what was used.
  bool credits_prepaid = false;
  /// Wait for and retry 4xx deferrals (greylisting, throttling) inside the
  /// probe. False: a deferred address comes back at once as greylisted
  /// (unknown, one attempt), for a batch that parks and re-submits it.
  bool smtp_retry_deferrals = true;
};

/// What the SMTP probe reported beyond the verdict's facts.
struct smtp_detail {
  std::string host; ///< MX host whose reply decided; empty: none.
  std::size_t attempts = 0;
  int code = 0;         ///< RCPT reply code; 0: none.
  std::string enhanced; ///< e.g. "5.1.1"; empty: none.
  std::string message;  ///< Reply text (bounded).
};

/// Everything found about one address; http/ and the CLI render it.
struct result {
  core::syntax::parsed_address address;
  /// Null: DNS not asked. Shared with the DNS cache (never changed).
  std::shared_ptr<const core::dns::mail_route> route;
  core::validation::free_checks checks;
  bool enrichment = false; ///< The key asked for enrichment.
  core::validation::smtp_facts smtp;
  smtp_detail smtp_reply;
  core::validation::verdict verdict;
  /// Set when the request cannot be served (e.g. insufficient credits):
  /// the caller answers this error instead of the result.
  std::optional<core::error> refused;
  std::int64_t credits_used = 0;
  double duration_ms = 0;
};

/// Where a result goes. Taken as an rvalue so that a result (two dozen
/// strings) is handed on, not moved at every hop of the pipeline.
using result_callback = std::function<void(result&&)>;

/// How the validator probes mailboxes and charges for it.
struct smtp_stage {
  std::shared_ptr<smtp::prober> prober;
  /// Takes one credit from `organization_id` (conditional: never below
  /// zero), then calls back: ok, errc::insufficient_credits, or another
  /// error.
  std::function<void(const std::string& organization_id,
                     std::function<void(core::expected<core::unit>)>)>
      reserve;
  /// Gives a reserved credit back (no SMTP server was reached).
  /// Calls `then` once the refund is stored (or failed, logged), so the
  /// answer never precedes the balance it reports.
  std::function<void(const std::string& organization_id,
                     std::function<void()> then)>
      refund;
};

/// The validation pipeline: syntax -> free checks -> DNS -> SMTP -> verdict.
/// Shared by the validation actors and `mailassay check`; thread-safe.
class validator {
public:
  validator(std::shared_ptr<const core::risk::lists> lists,
            std::shared_ptr<net::dns_resolver> resolver,
            core::syntax::options syntax);

  /// Validates `req` and calls `done` exactly once: at once when the domain's
  /// route is cached (or DNS is not needed), else on the resolver thread.
  void validate(request req, result_callback done) const;

  /// Validates `req` into `r` (a new result) and returns true when nothing
  /// needs waiting for: no SMTP asked, and no route needed (bad syntax, an
  /// IP literal) or the route cached. Else returns false, `r` half done;
  /// `validate` then does it all again (microseconds beside a DNS lookup).
  /// Spares the caller a callback on the common path.
  bool validate_now(const request& req, result& r) const;

  /// Validates addresses at one domain whose SMTP credits are prepaid (a
  /// batch group): one DNS lookup and, when SMTP is asked, one probe whose
  /// sessions carry several RCPTs (one probe per `smtp_retry_deferrals`
  /// value). Calls `done(index, result)` once per request; requests whose
  /// domain differs from the first valid one are validated one by one.
  void validate_group(std::vector<request> reqs,
                      std::function<void(std::size_t, result&&)> done) const;

  /// Turns SMTP probing on; call before the first `validate`.
  void enable_smtp(smtp_stage stage) { smtp_ = std::move(stage); }

  /// Whether SMTP probing is on.
  bool smtp_enabled() const { return smtp_.prober != nullptr; }

  /// The risk lists.
  const core::risk::lists& lists() const { return *lists_; }

  /// The resolver, for metrics.
  const std::shared_ptr<net::dns_resolver>& shared_resolver() const {
    return resolver_;
  }

  /// The resolver, for metrics.
  const net::dns_resolver& resolver() const { return *resolver_; }

private:
  /// Syntax and the free checks, into `r`.
  void check(const request& req, result& r) const;

  /// After DNS: the SMTP probe (when asked and possible), then the verdict.
  void finish(request req, result&& r,
              std::chrono::steady_clock::time_point started,
              result_callback done) const;

  std::shared_ptr<const core::risk::lists> lists_;
  std::shared_ptr<net::dns_resolver> resolver_;
  core::syntax::options syntax_;
  smtp_stage smtp_;
};

} // namespace mailassay::actors::validation
