#pragma once

#include "actors/validation/result.hpp"
#include "core/risk/lists.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

namespace mailassay::net {
class dns_resolver;
} // namespace mailassay::net

namespace mailassay::actors::validation {

/// The validation pipeline's free part -- syntax -> free checks -> DNS ->
/// verdict. It knows nothing of SMTP: the validation pool
/// (actors/validation_pool.hpp) is the way into the pipeline, and hands
/// what asks for SMTP to the pipeline's actors, the rest to this. Shared by
/// the pool, the pipeline's actors and `mailassay check`; thread-safe.
class validator {
public:
  /// The clock of `duration_ms`.
  using clock_type = std::chrono::steady_clock;

  validator(std::shared_ptr<const core::risk::lists> lists,
            std::shared_ptr<net::dns_resolver> resolver,
            core::syntax::options syntax);

  /// Validates `req` without SMTP (`req.smtp` is not looked at: the result
  /// says `smtp.checked: false`, nothing is charged) and calls `done`
  /// exactly once: at once when the domain's route is cached (or DNS is not
  /// needed) or `req.sandbox`, else on the resolver thread.
  void validate(request req, result_callback done) const;

  /// Validates `req` into `r` (a new result) and returns true when nothing
  /// needs waiting for: a sandbox request, or no SMTP asked and no route
  /// needed (bad syntax, an IP literal) or the route cached. Else returns
  /// false, `r` half done; `validate` then does it all again (microseconds
  /// beside a DNS lookup). Spares the caller a callback on the common path.
  bool validate_now(const request& req, result& r) const;

  /// Validates a group of requests (a batch's neighbours, mostly at one
  /// domain) as `validate` does, with one route lookup per domain. Calls
  /// `done(index, result)` once per request.
  void validate_group(std::vector<request> reqs, group_callback done) const;

  /// Syntax and the free checks of `req`, into `r`.
  void prepare(const request& req, result& r) const;

  /// Returns whether `r`'s address has a domain to look up (valid syntax,
  /// not an IP literal).
  static bool routable(const result& r);

  /// Decides status, reason and score of `r` from its facts, and its
  /// duration since `started`.
  static void conclude(result& r, clock_type::time_point started);

  /// Where `req`'s duration starts: when it was received, else now.
  static clock_type::time_point start_of(const request& req) {
    return req.received ? *req.received : clock_type::now();
  }

  /// Completes `r` (prepared) as the sandbox answers it: the DNS and SMTP
  /// facts its local part picks when it has a domain to route, nothing
  /// looked up, nothing charged; then concludes it.
  static void answer_sandbox(result& r, clock_type::time_point started);

  /// The risk lists.
  const core::risk::lists& lists() const { return *lists_; }

  /// The resolver, for the pipeline and the SMTP scheduler.
  const std::shared_ptr<net::dns_resolver>& shared_resolver() const {
    return resolver_;
  }

  /// The resolver, for metrics.
  const net::dns_resolver& resolver() const { return *resolver_; }

private:
  /// The free part after `prepare`: route (cached or looked up), verdict.
  void finish_free(result&& r, clock_type::time_point started,
                   result_callback done) const;

  std::shared_ptr<const core::risk::lists> lists_;
  std::shared_ptr<net::dns_resolver> resolver_;
  core::syntax::options syntax_;
};

} // namespace mailassay::actors::validation
