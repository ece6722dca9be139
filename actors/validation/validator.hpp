#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>

#include "core/dns/route.hpp"
#include "core/risk/lists.hpp"
#include "core/syntax/address.hpp"
#include "core/validation/free_checks.hpp"
#include "core/validation/verdict.hpp"

namespace mailassay::net {
class dns_resolver;
} // namespace mailassay::net

namespace mailassay::actors::validation {

/// One address to validate, with what the caller's key allows.
struct request {
  std::string email;
  bool smtp = false;              ///< SMTP probe asked for (and allowed).
  std::int64_t timeout_ms = 10000; ///< SMTP budget.
  core::validation::toggles toggles;
};

/// Everything found about one address; http/ and the CLI render it.
struct result {
  core::syntax::parsed_address address;
  std::optional<core::dns::mail_route> route; ///< Absent: DNS not asked.
  core::validation::free_checks checks;
  bool enrichment = false; ///< The key asked for enrichment.
  core::validation::smtp_facts smtp;
  core::validation::verdict verdict;
  std::int64_t credits_used = 0;
  double duration_ms = 0;
};

/// The validation pipeline: syntax -> free checks -> DNS -> verdict. Shared
/// by the validation actors and `mailassay check`; thread-safe.
class validator {
public:
  validator(std::shared_ptr<const core::risk::lists> lists,
            std::shared_ptr<net::dns_resolver> resolver,
            core::syntax::options syntax);

  /// Validates `req` and calls `done` exactly once: at once when the domain's
  /// route is cached (or DNS is not needed), else on the resolver thread.
  void validate(request req, std::function<void(result)> done) const;

  /// The resolver, for metrics.
  const net::dns_resolver& resolver() const { return *resolver_; }

private:
  std::shared_ptr<const core::risk::lists> lists_;
  std::shared_ptr<net::dns_resolver> resolver_;
  core::syntax::options syntax_;
};

} // namespace mailassay::actors::validation
