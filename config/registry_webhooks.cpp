// The settings of [webhooks] deliveries.
// Repetitive by design: one entry per setting, each spelling out its
// section, key, documentation, bounds and how it shows, so that a setting
// reads (and is reviewed) in one place. Whether it reloads is not written
// here: it follows from its field's type (config/live.hpp).
#include "config/registry.hpp"
#include "config/value_checks.hpp"

namespace mailassay::config::keys {

std::vector<key_spec> webhook_keys() {
  return {
      {"webhooks", "allow_private_targets",
       "Comma-separated CIDRs webhook endpoints may point at besides public "
       "addresses (loopback, private, link-local ... are refused otherwise).",
       cidr_list(MAILASSAY_FIELD(webhooks.allow_private_targets)),
       MAILASSAY_SHOW(webhooks.allow_private_targets)},
      {"webhooks", "allow_http",
       "Accept http:// endpoint URLs (https is required otherwise).",
       boolean(MAILASSAY_FIELD(webhooks.allow_http)),
       MAILASSAY_SHOW(webhooks.allow_http)},
      {"webhooks", "allowed_ports",
       "Comma-separated endpoint ports accepted besides 443 (and 80 with "
       "webhooks.allow_http); others are refused with 422.",
       integer_list(MAILASSAY_FIELD(webhooks.allowed_ports), 1, 65535),
       MAILASSAY_SHOW(webhooks.allowed_ports)},
      {"webhooks", "allow_any_port",
       "Accept endpoint URLs on any port (tests, labs); off in production.",
       boolean(MAILASSAY_FIELD(webhooks.allow_any_port)),
       MAILASSAY_SHOW(webhooks.allow_any_port)},
      {"webhooks", "secret_key",
       "Server key (64 hex digits) sealing the secrets the service must read "
       "back (the webhook endpoints' signing secrets and the access-token "
       "signing keys) in the database; every process sharing the database "
       "needs the same. Unset: generated once and kept in "
       "webhooks.secret_key_file.",
       text(MAILASSAY_FIELD(webhooks.secret_key), check_hex_key),
       [](const settings&) { return std::string{"(generated)"}; }},
      {"webhooks", "secret_key_file",
       "File holding the generated server key (mode 0600, a missing folder "
       "made 0700); back it up with the database: without it nothing sealed "
       "opens.",
       text(MAILASSAY_FIELD(webhooks.secret_key_file)),
       MAILASSAY_SHOW(webhooks.secret_key_file)},
      {"webhooks", "timeout_ms",
       "Longest time of one delivery attempt (resolution, connection, TLS, "
       "answer), ms.",
       integer(MAILASSAY_FIELD(webhooks.timeout_ms), 100, 60000),
       MAILASSAY_SHOW(webhooks.timeout_ms)},
      {"webhooks", "retry_first_ms",
       "Wait after a delivery's first failed attempt, ms; it doubles at each "
       "failure up to webhooks.retry_max_ms.",
       integer(MAILASSAY_FIELD(webhooks.retry_first_ms), 10, 86400000),
       MAILASSAY_SHOW(webhooks.retry_first_ms)},
      {"webhooks", "retry_max_ms", "Longest wait between two attempts, ms.",
       integer(MAILASSAY_FIELD(webhooks.retry_max_ms), 10, 86400000),
       MAILASSAY_SHOW(webhooks.retry_max_ms)},
      {"webhooks", "retry_window_seconds",
       "A delivery is given up when its next attempt would fall this long "
       "after the event.",
       integer(MAILASSAY_FIELD(webhooks.retry_window_seconds), 1, 30 * 86400),
       MAILASSAY_SHOW(webhooks.retry_window_seconds)},
      {"webhooks", "poll_ms",
       "How often each process looks for due deliveries, ms.",
       integer(MAILASSAY_FIELD(webhooks.poll_ms), 20, 60000),
       MAILASSAY_SHOW(webhooks.poll_ms)},
      {"webhooks", "concurrency", "Delivery attempts in flight per process.",
       integer(MAILASSAY_FIELD(webhooks.concurrency), 1, 1024),
       MAILASSAY_SHOW(webhooks.concurrency)},
      {"webhooks", "organization_concurrency",
       "Delivery attempts in flight per organization and process, at most; "
       "with several organizations waiting each gets an equal share of "
       "webhooks.concurrency.",
       integer(MAILASSAY_FIELD(webhooks.organization_concurrency), 1, 1024),
       MAILASSAY_SHOW(webhooks.organization_concurrency)},
      {"webhooks", "test_per_endpoint",
       "POST /v2/webhooks/{id}/test calls per endpoint per "
       "webhooks.test_window_seconds (0: no limit); more get 429.",
       integer(MAILASSAY_FIELD(webhooks.test_per_endpoint), 0, 1000000),
       MAILASSAY_SHOW(webhooks.test_per_endpoint)},
      {"webhooks", "test_per_organization",
       "POST /v2/webhooks/{id}/test calls per organization per "
       "webhooks.test_window_seconds (0: no limit); more get 429.",
       integer(MAILASSAY_FIELD(webhooks.test_per_organization), 0, 1000000),
       MAILASSAY_SHOW(webhooks.test_per_organization)},
      {"webhooks", "test_window_seconds",
       "The sliding window of the test limits, seconds.",
       integer(MAILASSAY_FIELD(webhooks.test_window_seconds), 1, 86400),
       MAILASSAY_SHOW(webhooks.test_window_seconds)},
      {"webhooks", "max_pending_per_organization",
       "Pending deliveries an organization may have; at the cap "
       "POST /v2/webhooks/{id}/test answers 429 (events are still queued).",
       integer(MAILASSAY_FIELD(webhooks.max_pending_per_organization), 0,
               100000000),
       MAILASSAY_SHOW(webhooks.max_pending_per_organization)},
      {"webhooks", "max_response_head_bytes",
       "Most bytes of an endpoint's answer read (its status line and header "
       "fields; the body is never read).",
       integer(MAILASSAY_FIELD(webhooks.max_response_head_bytes), 256,
               1024 * 1024),
       MAILASSAY_SHOW(webhooks.max_response_head_bytes)},
      {"webhooks", "credits_low_threshold",
       "Balance below which credits.low fires, for endpoints created without "
       "their own creditsLowThreshold.",
       integer(MAILASSAY_FIELD(webhooks.credits_low_threshold), 0, 1LL << 40),
       MAILASSAY_SHOW(webhooks.credits_low_threshold)},
      {"webhooks", "public_url",
       "The service's public base URL (https://mail.example.com), used for "
       "the export URL in batch events; empty: the path alone.",
       text(MAILASSAY_FIELD(webhooks.public_url), check_base_url),
       MAILASSAY_SHOW(webhooks.public_url)},
      {"webhooks", "ca_file",
       "PEM file of extra trust anchors for https endpoints (a private CA); "
       "the system's store is always used.",
       text(MAILASSAY_FIELD(webhooks.ca_file)),
       MAILASSAY_SHOW(webhooks.ca_file)},
      {"webhooks", "max_endpoints", "Webhook endpoints per organization.",
       integer(MAILASSAY_FIELD(webhooks.max_endpoints), 1, 1000),
       MAILASSAY_SHOW(webhooks.max_endpoints)},
      {"webhooks", "retention_days",
       "Days delivered and failed deliveries are kept for their log.",
       integer(MAILASSAY_FIELD(webhooks.retention_days), 1, 3650),
       MAILASSAY_SHOW(webhooks.retention_days)},
      {"webhooks", "rotation_grace_seconds",
       "After a secret rotation, how long deliveries are also signed with the "
       "old secret (0: not at all).",
       integer(MAILASSAY_FIELD(webhooks.rotation_grace_seconds), 0, 30 * 86400),
       MAILASSAY_SHOW(webhooks.rotation_grace_seconds)},
  };
}

} // namespace mailassay::config::keys
