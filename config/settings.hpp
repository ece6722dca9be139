#pragma once

#include "config/live.hpp"
#include "core/base/expected.hpp"
#include "core/smtp/session.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mailassay::config {

// The section structs below are repetitive by design: plain members with
// their defaults, one per setting, mirroring the registry
// (config/registry_*.cpp); two sections with members alike in shape are
// different settings, not repeated logic. A member a running server changes
// on a reload (SIGHUP) is a `live<T>` (config/live.hpp); its type alone makes
// it reloadable.

/// `[http]`: the listening socket and request limits.
struct http_settings {
  std::string address = "0.0.0.0";
  std::uint16_t port = 3000;
  int io_threads = 1;
  std::int64_t max_body_bytes = 1024 * 1024; ///< JSON bodies; larger -> 413.
  std::vector<std::string> trusted_proxies;  ///< Peers whose XFF we trust.
  std::int64_t request_timeout_ms = 40000;
  /// How long a request may take to arrive once the server waits for it;
  /// a request partly received by then gets 408.
  std::int64_t read_timeout_ms = 60000;
  /// Largest request head (request line and fields); larger -> 414/431.
  std::int64_t max_head_bytes = 65536;
  /// Most header fields in a request; more -> 431.
  std::int64_t max_header_fields = 100;
  /// Open client connections at most; 0: the open-file limit less 256.
  std::int64_t max_connections = 0;
  /// Requests waiting for an answer (storage, Redis, the validation
  /// pipeline, SMTP) at most; a new one beyond gets 503 + Retry-After at
  /// once. 0: no bound.
  std::int64_t max_waiting_requests = 4096;
};

/// `[database]`: where rows live.
struct database_settings {
  std::string url = "sqlite://data/mailassay.db";
};

/// `[auth]`: tokens and sign-up.
struct auth_settings {
  /// Empty: the deployment's key held in the database (docs/deployment.md).
  std::string jwt_secret;
  /// No longer read (the key lives in the database); accepted so that
  /// existing files and environments still load.
  std::string jwt_secret_file = "data/jwt.secret";
  bool signup_enabled = true;
  std::int64_t access_ttl_seconds = 900;
  std::int64_t refresh_ttl_seconds = 30 * 24 * 3600;
  std::int64_t key_cache_seconds = 5; ///< How stale another process may be.
  /// Marks the dashboard's refresh-token cookie `Secure` (sent over HTTPS
  /// only; browsers also accept it from http://localhost and 127.0.0.1).
  bool cookie_secure = true;
};

/// `[credits]`.
struct credits_settings {
  std::int64_t signup_grant = 100;
};

/// `[log]`.
struct log_settings {
  live<std::string> level = "info"; ///< Changes on a reload (SIGHUP).
};

/// `[limits]`: rate limits (docs/rate-limits.md).
/// Every limit but `enabled` changes on a reload (SIGHUP).
struct limits_settings {
  live_int ip_per_minute = 100;
  /// Limits a new key gets when its creation names none; 0 = unlimited.
  live_int key_per_minute = 0;
  live_int key_per_hour = 0;
  live_int key_per_day = 0;
  /// Widget anti-abuse windows per minute; 0 = unlimited.
  live_int widget_device_per_minute = 10;
  live_int widget_ip_per_minute = 60;
  /// Login attempts per minute per client IP; 0 = unlimited.
  live_int login_ip_per_minute = 30;
  /// Failed logins per hour per account (the email given); 0 = unlimited.
  live_int login_account_per_hour = 10;
  /// Sign-ups per hour per client IP; 0 = unlimited.
  live_int signup_ip_per_hour = 10;
  /// false (benchmarks only): no rate limiter and no usage recording.
  bool enabled = true;
};

/// `[redis]`: state shared by several processes (docs/deployment.md).
struct redis_settings {
  /// redis://[[user]:password@]host[:port][/db]; empty: everything stays in
  /// this process (the embedded default).
  std::string url;
  /// A reply later than this counts Redis as unreachable (local fallback).
  std::int64_t timeout_ms = 250;
  /// Prepended to every key, so deployments can share one Redis.
  std::string prefix = "mailassay:";
};

/// `[actors]`: pool sizes.
struct actors_settings {
  int scheduler_threads = 2;
  int storage_workers = 4;
  /// Requests' storage jobs waiting for a worker at most; beyond it a
  /// request gets 503 + Retry-After at once. 0: no bound.
  std::int64_t storage_queue_limit = 1024;
  /// Real-time validations waiting in the pipeline's mailboxes at most;
  /// beyond it a validation gets 503 + Retry-After at once. 0: no bound.
  std::int64_t validation_queue_limit = 2048;
};

/// `[dns]`: the resolver and its cache (see docs/dns.md).
struct dns_settings {
  std::vector<std::string> servers; ///< Empty: /etc/resolv.conf.
  std::int64_t timeout_ms = 2000;
  int tries = 2;
  std::int64_t max_inflight = 256;
  std::int64_t cache_size = 100000;
  std::int64_t min_ttl = 0;
  std::int64_t max_ttl = 86400;
  std::int64_t negative_ttl = 300;
  std::int64_t error_ttl = 5;
};

/// `[validation]`.
struct validation_settings {
  bool allow_test_domains = false; ///< Accept RFC 6761 special-use domains.
  int workers = 2;                 ///< Validation actors.
};

/// `[risk]`: where the risk lists come from.
struct risk_settings {
  std::string data_dir = "data/risk";
  std::string extra_disposable_file;
  std::string extra_free_file;
  std::string extra_roles_file;
  /// The MX provider table (issue #30); empty: `<data_dir>/providers.txt`.
  std::string providers_file;
};

/// `[batch]`: batch jobs (docs/batch.md).
struct batch_settings {
  std::int64_t max_file_bytes = 10 * 1024 * 1024; ///< Larger upload -> 413.
  std::int64_t max_addresses = 200000; ///< After de-duplication; more -> 422.
  int concurrency = 64;                ///< Validations in flight per job.
  int max_jobs = 2;                    ///< Jobs one process works on at once.
  std::int64_t lease_seconds = 15; ///< A dead owner's job is taken over after.
  std::int64_t poll_ms = 2000;     ///< How often idle processes look for jobs.
  /// Times in a row a job may be taken over from a dead owner without
  /// progress before it fails (JOB_KEPT_STOPPING); 0: never.
  std::int64_t max_restarts = 3;
  int checkpoint_rows = 2000; ///< Results written per checkpoint (at most).
  int nice = 19; ///< Niceness of the threads running batch work (0-19).
  /// Addresses/s per job while real-time validations arrive; 0: no cap.
  /// Changes on a reload (SIGHUP).
  live_int rate_under_load = 10000;
  /// Waits before a greylisted address of an SMTP job is probed again.
  std::vector<std::int64_t> greylist_retry_ms{60000, 240000, 600000};
  /// The rows, results and export of a finished job are erased this long
  /// after it finished (docs/privacy.md); 0: kept forever. An organization's
  /// owner may set a shorter one. Changes on a reload (SIGHUP).
  live_int retention_seconds = 2592000;
  /// How often every process sweeps for results past their retention (and
  /// expired SMTP result-cache answers).
  std::int64_t retention_sweep_seconds = 30;
  /// Uploads whose body is being read at once, per organization and per
  /// client address (issue #28); more get 429 before their body is read.
  std::int64_t max_concurrent_uploads_per_organization = 2;
  std::int64_t max_concurrent_uploads_per_ip = 4;
};

/// `[smtp]`: the SMTP prober (docs/smtp.md).
struct smtp_settings {
  std::string helo;      ///< EHLO name; empty: the host name if a public FQDN.
  std::string mail_from; ///< MAIL FROM; empty: the null sender <>.
  bool force_identity = false; ///< Skip the HELO / sender sanity checks.
  int port = 25;               ///< TCP port of every MX host.
  /// STARTTLS policy; `never`, `opportunistic` or `required` in the file.
  core::smtp::tls_policy tls = core::smtp::tls_policy::opportunistic;
  bool tls_verify = false;                        ///< Verify MX certificates.
  std::vector<std::string> allow_private_targets; ///< CIDRs besides public.
  std::vector<std::int64_t> retry_delays_ms{5000, 15000, 45000};
  // The politeness below changes on a reload (SIGHUP): the reload hands it
  // to the scheduler (actors/smtp/scheduler.hpp, reconfigure).
  live<int> max_sessions_per_host = 4;
  live<int> connections_per_second_per_host = 2; ///< 0: unlimited.
  live<int> max_rcpts_per_session = 20;          ///< RCPTs per session.
  /// Per-provider limits, "name=sessions[/per_second[/rcpts]]" (issue #30).
  live<std::vector<std::string>> provider_limits;
  bool share_sessions = true; ///< Callers of one domain share sessions.
  std::int64_t session_linger_ms = 1000;   ///< Idle session waits for work.
  std::int64_t result_cache_seconds = 300; ///< 0: no result cache.
  std::int64_t catch_all_ttl_seconds = 86400;
  std::string socks5_proxy; ///< "ip:port"; empty: direct.
  /// Local IP address probes bind to; empty: the kernel's choice.
  std::string source_address;
  int io_threads = 1;
  /// An MX host's /metrics series stay this long after its last session.
  std::int64_t host_metrics_idle_seconds = 300;
  /// MX hosts with /metrics series at most.
  std::int64_t host_metrics_max_hosts = 1000;
};

/// `[egress]`: the egress self-audit (`mailassay doctor`, and the
/// service's own at start and periodically; docs/operations.md).
struct egress_settings {
  /// Domains whose MX hosts the port 25 and greeting checks try.
  std::vector<std::string> reference_domains{"gmail.com", "outlook.com",
                                             "yahoo.com"};
  /// DNS blocklist zones asked about the egress address.
  std::vector<std::string> dnsbl{"zen.spamhaus.org", "b.barracudacentral.org",
                                 "bl.spamcop.net"};
  bool at_start = true; ///< The service audits once when it starts.
  /// Seconds between the service's audits; 0: none after the first.
  std::int64_t interval_seconds = 3600;
};

/// `[webhooks]`: event deliveries to customers' endpoints (docs/webhooks.md).
struct webhooks_settings {
  /// CIDRs endpoints may point at besides public addresses.
  std::vector<std::string> allow_private_targets;
  bool allow_http = false; ///< Accept http:// endpoint URLs.
  /// Endpoint ports accepted besides 443 (and 80 with allow_http).
  std::vector<std::int64_t> allowed_ports;
  bool allow_any_port = false; ///< Accept every port (tests, labs).
  /// Server key sealing the signing secrets, 64 hex digits; empty: read
  /// from (or generated into) `secret_key_file`.
  std::string secret_key;
  std::string secret_key_file = "data/webhooks.key";
  std::int64_t timeout_ms = 10000;           ///< One attempt, at most.
  std::int64_t retry_first_ms = 60000;       ///< Wait after a first failure.
  std::int64_t retry_max_ms = 3600000;       ///< Longest wait.
  std::int64_t retry_window_seconds = 86400; ///< Give up after.
  std::int64_t poll_ms = 1000; ///< How often due deliveries are looked for.
  int concurrency = 16;        ///< Attempts in flight per process.
  /// Attempts in flight per organization and process, at most (the fair
  /// share may be smaller: core/webhooks/fair_share.hpp).
  int organization_concurrency = 4;
  /// `POST /v2/webhooks/{id}/test` per endpoint per test window.
  std::int64_t test_per_endpoint = 5;
  /// `POST /v2/webhooks/{id}/test` per organization per test window.
  std::int64_t test_per_organization = 30;
  std::int64_t test_window_seconds = 60; ///< The sliding window of both.
  /// Pending deliveries of an organization beyond which /test answers 429.
  std::int64_t max_pending_per_organization = 1000;
  std::int64_t max_response_head_bytes = 16384;
  /// Threshold of endpoints subscribing to credits.low without one.
  std::int64_t credits_low_threshold = 100;
  /// Base URL of the service in event payloads (export URLs); empty:
  /// paths only.
  std::string public_url;
  std::string ca_file;    ///< Extra trust anchors (PEM) for https endpoints.
  int max_endpoints = 20; ///< Per organization.
  std::int64_t retention_days = 30; ///< Finished deliveries are kept for.
  /// How long a rotated-out secret still signs (a second v1 signature).
  std::int64_t rotation_grace_seconds = 86400;
};

/// `[control]`: the operator's channel to a running server.
struct control_settings {
  /// Unix-domain socket `mailassay admin reload` talks to (mode 0600);
  /// empty: none.
  std::string socket = "data/mailassay.sock";
};

/// All settings, loaded once at start-up and passed by section.
struct settings {
  http_settings http;
  database_settings database;
  auth_settings auth;
  credits_settings credits;
  log_settings log;
  limits_settings limits;
  redis_settings redis;
  actors_settings actors;
  dns_settings dns;
  validation_settings validation;
  risk_settings risk;
  batch_settings batch;
  smtp_settings smtp;
  egress_settings egress;
  webhooks_settings webhooks;
  control_settings control;
};

/// Environment variables as name -> value.
using environment = std::map<std::string, std::string>;

/// Reads the process environment.
environment process_environment();

/// Loads defaults, then the file at `path` (if given), then every
/// `MAILASSAY_<SECTION>_<KEY>` variable of `env`. Any unknown key or bad value
/// -> errc::bad_request with a message naming the key and what is wrong.
core::expected<settings> load(const std::optional<std::string>& path,
                              const environment& env);

/// The configuration file a process reads: `given` (`--config`), else
/// MAILASSAY_CONFIG of `env`, else none.
std::optional<std::string> file_of(const std::optional<std::string>& given,
                                   const environment& env);

/// Copies into `live` every setting of `next` a running server applies on
/// a reload (the `[reload]` ones of `mailassay config`); the others keep
/// their values. `next` comes from `load`, so it passed the start-up checks.
void apply_reloadable(settings& live, const settings& next);

/// Describes one setting for documentation and `--help`.
struct key_doc {
  std::string section;
  std::string key;
  std::string env_name;
  std::string default_value;
  std::string description;
  /// Applied by a running server on a reload (SIGHUP); false: the setting
  /// takes a restart (pool sizes, sockets, storage, ...).
  bool reloadable = false;
};

/// Lists every setting with its default and variable.
std::vector<key_doc> describe();

/// A setting whose value differs between two loads.
struct key_change {
  /// "section.key".
  std::string name;
  /// The value before, as `mailassay config` shows it (reloadable
  /// settings only: the others may hold secrets, a database URL's password).
  std::string before;
  /// The value after (reloadable settings only).
  std::string after;
  /// Whether a running server applies it on a reload (SIGHUP); otherwise
  /// it takes a restart.
  bool reloadable = false;
};

/// Returns the settings whose values differ from `before` to `after`, in
/// the registry's order.
std::vector<key_change> changes(const settings& before, const settings& after);

} // namespace mailassay::config
