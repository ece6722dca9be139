#pragma once

// Webhook endpoints as use cases (docs/webhooks.md): run by storage
// workers, like use_cases/accounts/. Users only (the handlers refuse API
// keys); owners and admins manage, members read.

#include "core/batch/job.hpp"
#include "core/webhooks/records.hpp"
#include "use_cases/accounts/types.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mailassay::use_cases::webhooks {

namespace wh = core::webhooks;
using accounts::account_env;
using accounts::principal;
using core::expected;
using core::unit;

/// Fields of a new endpoint, already type-checked by http/.
struct new_endpoint_input {
  std::string url;
  std::vector<wh::event_type> events;
  std::string description;
  /// nullopt: webhooks.credits_low_threshold.
  std::optional<std::int64_t> credits_low_threshold;
};

/// Fields a PATCH names; the others keep their value.
struct endpoint_patch {
  std::optional<std::string> url;
  std::optional<std::vector<wh::event_type>> events;
  std::optional<std::string> description;
  std::optional<wh::endpoint_status> status;
  std::optional<std::int64_t> credits_low_threshold;
};

/// An endpoint and its signing secret in clear: the answer of a creation
/// or a rotation, the only times the secret is shown.
struct endpoint_with_secret {
  wh::endpoint endpoint;
  std::string secret;
};

/// Creates an endpoint (owner/admin): URL rules (https unless allowed,
/// address policy), at most webhooks.max_endpoints per organization, a new
/// secret sealed with the server key.
expected<endpoint_with_secret> create_endpoint(account_env& env,
                                               const principal& who,
                                               const new_endpoint_input& in);

/// Lists the organization's endpoints (any role; a member reads each URL
/// with its query values hidden, core/webhooks/url_redaction.hpp).
expected<std::vector<wh::endpoint>> list_endpoints(account_env& env,
                                                   const principal& who);

/// Reads one endpoint (any role; a member reads the URL redacted).
expected<wh::endpoint> get_endpoint(account_env& env, const principal& who,
                                    const std::string& id);

/// Changes an endpoint (owner/admin); a new URL passes the same rules.
expected<wh::endpoint> update_endpoint(account_env& env, const principal& who,
                                       const std::string& id,
                                       const endpoint_patch& patch);

/// Deletes an endpoint and its deliveries (owner/admin).
expected<unit> delete_endpoint(account_env& env, const principal& who,
                               const std::string& id);

/// Replaces the signing secret (owner/admin); the old one still signs for
/// webhooks.rotation_grace_seconds.
expected<endpoint_with_secret>
rotate_secret(account_env& env, const principal& who, const std::string& id);

/// Queues a `ping` delivery (owner/admin); `now_ms` Unix milliseconds.
/// Past the test limits or the pending cap (webhooks.test_*,
/// webhooks.max_pending_per_organization) -> errc::rate_limited with the
/// seconds to wait.
expected<wh::delivery> send_test(account_env& env, const principal& who,
                                 const std::string& id, std::int64_t now_ms);

/// An endpoint's latest deliveries with their attempts (any role).
expected<std::vector<wh::delivery>> list_deliveries(account_env& env,
                                                    const principal& who,
                                                    const std::string& id,
                                                    std::int64_t limit);

/// What an event's body shows besides the delivery itself, read when the
/// body is written: the job of a batch.* event, the key of key.revoked.
/// Absent when it was deleted meanwhile (the body then names its id).
struct event_subject {
  std::optional<core::batch::job> job;
  std::optional<core::account::api_key> key;
};

/// Reads the subject of delivery `d` from `db`. A job that ended is not
/// written again, so the record read is the one of the event, on every
/// attempt.
expected<event_subject> subject_of(storage::store& db, const wh::delivery& d);

/// Seals `secret` for endpoint `id` with the configured server key (hex).
/// An unusable key -> errc::internal.
expected<std::string> seal_secret(const config::webhooks_settings& cfg,
                                  const std::string& id,
                                  const std::string& secret);

} // namespace mailassay::use_cases::webhooks
