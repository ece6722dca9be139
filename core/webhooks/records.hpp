#pragma once

// The stored records of webhooks (docs/webhooks.md, docs/storage.md).

#include "core/webhooks/events.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mailassay::core::webhooks {

/// Whether an endpoint receives deliveries.
enum class endpoint_status { active, disabled };

/// Returns "active" or "disabled".
std::string_view to_string(endpoint_status s);

/// Parses "active" or "disabled".
std::optional<endpoint_status> parse_endpoint_status(std::string_view s);

/// One webhook endpoint of an organization.
struct endpoint {
  std::string id;
  std::string organization_id;
  std::string url;
  std::string description;
  std::vector<event_type> events; ///< Subscribed, canonical order.
  endpoint_status status = endpoint_status::active;
  /// The signing secret, sealed with the server key (security/secret_box,
  /// bound to `id`); never shown after creation or rotation.
  std::string sealed_secret;
  /// The secret before the last rotation, still signed with until
  /// `previous_secret_expires_at` (Unix seconds); "" when none.
  std::string sealed_previous_secret;
  std::int64_t previous_secret_expires_at = 0;
  /// credits.low fires when the balance falls below this (0: never).
  std::int64_t credits_low_threshold = 0;
  std::int64_t created_at = 0; ///< Unix seconds.
  std::int64_t updated_at = 0; ///< Unix seconds.

  /// Compares every field.
  friend bool operator==(const endpoint&, const endpoint&) = default;
};

/// Where a delivery stands.
enum class delivery_status {
  pending,   ///< Waiting for its first or next attempt.
  delivered, ///< An attempt got a 2xx answer.
  failed,    ///< Given up after the retry window.
};

/// Returns "pending", "delivered" or "failed".
std::string_view to_string(delivery_status s);

/// Parses "pending", "delivered" or "failed".
std::optional<delivery_status> parse_delivery_status(std::string_view s);

/// One attempt of a delivery.
struct attempt {
  int number = 0;               ///< 1 for the first.
  std::int64_t at_ms = 0;       ///< When it started, Unix milliseconds.
  std::int64_t duration_ms = 0; ///< How long it took.
  int status_code = 0;          ///< The answer's status; 0: none.
  std::string error;            ///< Why there was no answer; "" if one.
};

/// One event for one endpoint: the outbox row. Its id is the
/// `Mailassay-Delivery` header, the same on every attempt.
struct delivery {
  std::string id;
  std::string webhook_id;
  std::string organization_id;
  event_type event = event_type::ping;
  /// What the event is about: the job id (batch.*), the key id
  /// (key.revoked), the webhook id (ping); "" for credits.low.
  std::string subject_id;
  /// credits.low: the balance after the debit and the threshold crossed.
  std::int64_t balance = 0;
  std::int64_t threshold = 0;
  std::int64_t created_ms = 0; ///< When the event happened.
  delivery_status status = delivery_status::pending;
  int attempts = 0;                 ///< Attempts made so far.
  std::int64_t next_attempt_ms = 0; ///< Due time while pending.
  int last_status_code = 0;
  std::string last_error;
  std::int64_t delivered_ms = 0; ///< 0 until delivered.
  /// The attempts, oldest first (filled by listings only).
  std::vector<attempt> log;
};

} // namespace mailassay::core::webhooks
