#pragma once

// The events a webhook endpoint may subscribe to, and the decisions about
// when one is emitted (docs/webhooks.md). Pure: storage calls these inside
// the transaction that changes the state the event reports.

#include "core/account/records.hpp"
#include "core/base/expected.hpp"
#include "core/batch/job.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::webhooks {

/// What happened. `ping` is sent only by `POST /v2/webhooks/{id}/test`; it
/// cannot be subscribed to.
enum class event_type {
  batch_completed, ///< A batch job ended with every row done.
  batch_failed,    ///< A batch job ended without finishing.
  batch_cancelled, ///< A batch job was cancelled.
  credits_low,     ///< The balance fell below the endpoint's threshold.
  key_revoked,     ///< An API key went from active to revoked.
  ping,            ///< A test delivery.
};

/// Returns the wire name: "batch.completed", ..., "ping".
std::string_view to_string(event_type e);

/// Parses a wire name (exact, case-sensitive); nullopt when unknown.
std::optional<event_type> parse_event_type(std::string_view name);

/// Every event an endpoint may subscribe to, in documentation order.
std::span<const event_type> subscribable_events();

/// Reads the `events` list of a request: known names of subscribable
/// events, each at most once, at least one. Returns them in the order of
/// `subscribable_events()`, or the 422 messages (one per problem, naming
/// the offending entry).
expected<std::vector<event_type>>
parse_subscription(std::span<const std::string> names);

/// The stored form of a subscription: names joined by commas.
std::string join_events(std::span<const event_type> events);

/// Reads the stored form; unknown names are skipped (a newer version may
/// have written them).
std::vector<event_type> split_events(std::string_view stored);

/// The event a batch job's end emits; nullopt while the job is active.
std::optional<event_type> batch_end_event(batch::job_status s);

/// Whether a debit that took the balance from `before` to `after` crossed
/// below `threshold`: before >= threshold > after. A threshold of 0 never
/// fires (a balance cannot go below zero).
bool crossed_below(std::int64_t before, std::int64_t after,
                   std::int64_t threshold);

/// Whether a role may create, change, delete, test or rotate endpoints
/// (owners and admins); members may read them and their deliveries.
bool may_manage(account::role r);

} // namespace mailassay::core::webhooks
