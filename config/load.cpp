#include "config/key_spec.hpp"
#include "config/settings.hpp"
#include "core/batch/retention.hpp"
#include "core/limits/client_ip.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <fstream>

extern char** environ;

namespace mailassay::config {

namespace {

using core::errc;
using core::make_error;
using namespace keys;

std::string upper(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

std::string check_database_url(const std::string& v) {
  if (v.rfind("sqlite://", 0) == 0 && v.size() > 9)
    return {};
  if (v.rfind("postgresql://", 0) == 0 || v.rfind("postgres://", 0) == 0)
    return {};
  return "expected sqlite:///absolute/path.db, sqlite://relative/path.db or "
         "postgresql://user:password@host:port/dbname, got \"" +
         v + "\"";
}

// sockaddr_un holds 108 bytes with the terminating NUL.
std::string check_socket_path(const std::string& v) {
  if (v.size() > 107)
    return "must be at most 107 characters (a Unix socket path)";
  return {};
}

std::string check_level(const std::string& v) {
  for (auto l : {"trace", "debug", "info", "warn", "error", "off"})
    if (v == l)
      return {};
  return "expected one of trace, debug, info, warn, error, off";
}

std::string check_secret(const std::string& v) {
  if (!v.empty() && v.size() < 32)
    return "must be at least 32 characters (or unset to generate one)";
  return {};
}

// The full parse (host, port, db) runs at start-up (app/serve.cpp).
std::string check_redis_url(const std::string& v) {
  if (v.empty() || (v.rfind("redis://", 0) == 0 && v.size() > 8))
    return {};
  return "expected redis://[[user]:password@]host[:port][/db] or nothing";
}

std::string check_redis_prefix(const std::string& v) {
  if (v.size() > 64)
    return "must be at most 64 characters";
  for (unsigned char c : v)
    if (c <= 0x20 || c >= 0x7f)
      return "must be visible ASCII characters";
  return {};
}

// "ip:port" or "[v6]:port": the proxy is reached without any resolver.
std::string check_socks5(const std::string& v) {
  if (v.empty())
    return {};
  auto colon = v.rfind(':');
  auto host = colon == std::string::npos ? v : v.substr(0, colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned port = 0;
  auto rest = colon == std::string::npos ? std::string{} : v.substr(colon + 1);
  auto [ptr, ec] =
      std::from_chars(rest.data(), rest.data() + rest.size(), port);
  if (!core::limits::parse_ip(host) || rest.empty() || ec != std::errc{} ||
      ptr != rest.data() + rest.size() || port == 0 || port > 65535)
    return "expected ip:port or [v6]:port (an IP address, no host name), "
           "got \"" +
           v + "\"";
  return {};
}

std::string check_ip_or_empty(const std::string& v) {
  if (v.empty() || core::limits::parse_ip(v))
    return {};
  return "expected an IP address (or nothing), got \"" + v + "\"";
}

std::string check_hex_key(const std::string& v) {
  if (v.empty())
    return {};
  if (v.size() != 64 || !std::all_of(v.begin(), v.end(), [](unsigned char c) {
        return std::isxdigit(c) != 0;
      }))
    return "must be 64 hex digits (32 bytes), or unset to generate one";
  return {};
}

std::string check_base_url(const std::string& v) {
  if (v.empty() || v.rfind("https://", 0) == 0 || v.rfind("http://", 0) == 0)
    return {};
  return "expected an absolute http(s) URL such as https://mail.example.com";
}

// Repetitive by design: one entry per setting, each spelling out its
// section, key, documentation, bounds and how it shows, so that a setting
// reads (and is reviewed) in one place and the table is the one source of
// start-up, reload and `mailassay config`. Entries alike in shape are
// different settings, not repeated logic. Whether a setting reloads is not
// written here: it follows from its field's type (config/key_spec.hpp).
const std::vector<key_spec>& registry() {
  static const std::vector<key_spec> keys = {
      {"http", "address", "Address the HTTP server listens on.",
       text(MAILASSAY_FIELD(http.address)), MAILASSAY_SHOW(http.address)},
      {"http", "port", "TCP port of the HTTP server.",
       integer(MAILASSAY_FIELD(http.port), 1, 65535),
       MAILASSAY_SHOW(http.port)},
      {"http", "io_threads",
       "HTTP event loops: one thread each, each with its own listening socket "
       "on the port (SO_REUSEPORT).",
       integer(MAILASSAY_FIELD(http.io_threads), 1, 64),
       MAILASSAY_SHOW(http.io_threads)},
      {"http", "max_body_bytes",
       "Largest accepted JSON request body in bytes; larger bodies get 413.",
       integer(MAILASSAY_FIELD(http.max_body_bytes), 1024, 64LL << 20),
       MAILASSAY_SHOW(http.max_body_bytes)},
      {"http", "trusted_proxies",
       "Comma-separated peer IPs whose X-Forwarded-For first hop is trusted.",
       list(MAILASSAY_FIELD(http.trusted_proxies)),
       MAILASSAY_SHOW(http.trusted_proxies)},
      {"http", "request_timeout_ms",
       "Longest time a request may take before the server answers 503.",
       integer(MAILASSAY_FIELD(http.request_timeout_ms), 1000, 600000),
       MAILASSAY_SHOW(http.request_timeout_ms)},
      {"http", "read_timeout_ms",
       "How long a request may take to arrive once the server waits for it; "
       "a request partly received by then gets 408 and the connection "
       "closes (an idle connection closes 5 s later without an answer).",
       integer(MAILASSAY_FIELD(http.read_timeout_ms), 1000, 600000),
       MAILASSAY_SHOW(http.read_timeout_ms)},
      {"http", "max_head_bytes",
       "Largest request head in bytes (request line and header fields); a "
       "longer request line gets 414, a longer head 431.",
       integer(MAILASSAY_FIELD(http.max_head_bytes), 4096, 65536),
       MAILASSAY_SHOW(http.max_head_bytes)},
      {"http", "max_header_fields",
       "Most header fields in a request; more get 431.",
       integer(MAILASSAY_FIELD(http.max_header_fields), 8, 1000),
       MAILASSAY_SHOW(http.max_header_fields)},
      {"http", "max_connections",
       "Open client connections at most (more wait in the kernel's queue "
       "until one closes); 0: the process's open-file limit less 256.",
       integer(MAILASSAY_FIELD(http.max_connections), 0, 1000000),
       MAILASSAY_SHOW(http.max_connections)},
      {"http", "max_waiting_requests",
       "Requests waiting for an answer (on storage, Redis, the validation "
       "pipeline or SMTP) at most; a new request beyond it gets 503 with "
       "Retry-After at once instead of waiting for its deadline; 0: no "
       "bound.",
       integer(MAILASSAY_FIELD(http.max_waiting_requests), 0, 10000000),
       MAILASSAY_SHOW(http.max_waiting_requests)},
      {"control", "socket",
       "Unix-domain socket (mode 0600) on which a running server answers "
       "`mailassay admin reload`; the server's user or root may use it. "
       "Empty: none.",
       text(MAILASSAY_FIELD(control.socket), check_socket_path),
       MAILASSAY_SHOW(control.socket)},
      {"database", "url",
       "sqlite:///absolute/path.db, sqlite://relative/path.db or "
       "postgresql://user:password@host:port/dbname.",
       text(MAILASSAY_FIELD(database.url), check_database_url),
       MAILASSAY_SHOW(database.url)},
      {"auth", "jwt_secret",
       "HS256 secret for access tokens (>= 32 characters); wins over the "
       "database's key. Unset: the deployment's key, generated once and held "
       "in the database, shared by every process (rotate with `mailassay "
       "admin rotate-jwt-key`).",
       text(MAILASSAY_FIELD(auth.jwt_secret), check_secret),
       [](const settings&) { return std::string{"(database key)"}; }},
      {"auth", "jwt_secret_file",
       "No longer read: the generated key is held in the database. Accepted "
       "so that existing configurations still load.",
       text(MAILASSAY_FIELD(auth.jwt_secret_file)),
       MAILASSAY_SHOW(auth.jwt_secret_file)},
      {"auth", "signup_enabled", "Whether POST /v2/auth/signup is open.",
       boolean(MAILASSAY_FIELD(auth.signup_enabled)),
       MAILASSAY_SHOW(auth.signup_enabled)},
      {"auth", "access_ttl_seconds", "Lifetime of access tokens (expiresIn).",
       integer(MAILASSAY_FIELD(auth.access_ttl_seconds), 1, 86400),
       MAILASSAY_SHOW(auth.access_ttl_seconds)},
      {"auth", "refresh_ttl_seconds", "Lifetime of refresh tokens.",
       integer(MAILASSAY_FIELD(auth.refresh_ttl_seconds), 60, 366LL * 86400),
       MAILASSAY_SHOW(auth.refresh_ttl_seconds)},
      {"auth", "key_cache_seconds",
       "How long a process trusts its cached API-key lookup. On PostgreSQL "
       "other processes' changes arrive at once (LISTEN/NOTIFY); this bounds "
       "how late one is seen if a notification is lost.",
       integer(MAILASSAY_FIELD(auth.key_cache_seconds), 0, 3600),
       MAILASSAY_SHOW(auth.key_cache_seconds)},
      {"auth", "cookie_secure",
       "Mark the dashboard's refresh-token cookie Secure (HTTPS only; browsers "
       "also take it from http://localhost and 127.0.0.1). Turn off only to "
       "serve the dashboard over plain HTTP under another name.",
       boolean(MAILASSAY_FIELD(auth.cookie_secure)),
       MAILASSAY_SHOW(auth.cookie_secure)},
      {"credits", "signup_grant", "Credits a new organization starts with.",
       integer(MAILASSAY_FIELD(credits.signup_grant), 0, 1LL << 40),
       MAILASSAY_SHOW(credits.signup_grant)},
      {"log", "level", "trace, debug, info, warn, error or off.",
       text(MAILASSAY_FIELD(log.level), check_level),
       MAILASSAY_SHOW(log.level)},
      {"limits", "ip_per_minute",
       "Validation requests per minute per client IP.",
       integer(MAILASSAY_FIELD(limits.ip_per_minute), 1, 1LL << 40),
       MAILASSAY_SHOW(limits.ip_per_minute)},
      {"limits", "key_per_minute",
       "Default per-minute limit of new API keys (0: unlimited).",
       integer(MAILASSAY_FIELD(limits.key_per_minute), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.key_per_minute)},
      {"limits", "key_per_hour",
       "Default per-hour limit of new API keys (0: unlimited).",
       integer(MAILASSAY_FIELD(limits.key_per_hour), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.key_per_hour)},
      {"limits", "key_per_day",
       "Default per-day limit of new API keys (0: unlimited).",
       integer(MAILASSAY_FIELD(limits.key_per_day), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.key_per_day)},
      {"limits", "widget_device_per_minute",
       "Widget validations per minute per device id (0: unlimited).",
       integer(MAILASSAY_FIELD(limits.widget_device_per_minute), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.widget_device_per_minute)},
      {"limits", "widget_ip_per_minute",
       "Widget validations per minute per client IP (0: unlimited).",
       integer(MAILASSAY_FIELD(limits.widget_ip_per_minute), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.widget_ip_per_minute)},
      {"limits", "login_ip_per_minute",
       "Login attempts per minute per client IP, right or wrong (0: "
       "unlimited); more get 429 with Retry-After.",
       integer(MAILASSAY_FIELD(limits.login_ip_per_minute), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.login_ip_per_minute)},
      {"limits", "login_account_per_hour",
       "Failed logins per hour per account email (0: unlimited); then every "
       "login to it gets 429 with Retry-After until the window refills.",
       integer(MAILASSAY_FIELD(limits.login_account_per_hour), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.login_account_per_hour)},
      {"limits", "signup_ip_per_hour",
       "Sign-ups per hour per client IP (0: unlimited); more get 429 with "
       "Retry-After.",
       integer(MAILASSAY_FIELD(limits.signup_ip_per_hour), 0, 1LL << 40),
       MAILASSAY_SHOW(limits.signup_ip_per_hour)},
      {"limits", "enabled",
       "Benchmarks only: false turns off the rate limiter and usage recording "
       "(no 429, no key stats).",
       boolean(MAILASSAY_FIELD(limits.enabled)),
       MAILASSAY_SHOW(limits.enabled)},
      {"redis", "url",
       "redis://[[user]:password@]host[:port][/db] of the Redis shared by "
       "every process (rate limits; docs/deployment.md); empty: kept in this "
       "process.",
       text(MAILASSAY_FIELD(redis.url), check_redis_url),
       [](const settings& s) {
         return s.redis.url.empty() ? std::string{} : std::string{"(set)"};
       }},
      {"redis", "timeout_ms",
       "A Redis reply later than this (ms) counts Redis as unreachable: the "
       "request is decided by this process's limits and Redis is reconnected "
       "in the background.",
       integer(MAILASSAY_FIELD(redis.timeout_ms), 10, 10000),
       MAILASSAY_SHOW(redis.timeout_ms)},
      {"redis", "prefix",
       "Prefix of every Redis key, so deployments can share one Redis.",
       text(MAILASSAY_FIELD(redis.prefix), check_redis_prefix),
       MAILASSAY_SHOW(redis.prefix)},
      {"actors", "scheduler_threads", "CAF scheduler threads.",
       integer(MAILASSAY_FIELD(actors.scheduler_threads), 1, 64),
       MAILASSAY_SHOW(actors.scheduler_threads)},
      {"actors", "storage_workers",
       "Detached workers running storage calls (each holds one connection).",
       integer(MAILASSAY_FIELD(actors.storage_workers), 1, 64),
       MAILASSAY_SHOW(actors.storage_workers)},
      {"actors", "storage_queue_limit",
       "Requests' storage jobs waiting for a worker at most; a request "
       "beyond it gets 503 with Retry-After at once; 0: no bound.",
       integer(MAILASSAY_FIELD(actors.storage_queue_limit), 0, 10000000),
       MAILASSAY_SHOW(actors.storage_queue_limit)},
      {"actors", "validation_queue_limit",
       "Real-time validations waiting in the validation pipeline at most; a "
       "validation beyond it gets 503 with Retry-After at once; 0: no "
       "bound.",
       integer(MAILASSAY_FIELD(actors.validation_queue_limit), 0, 10000000),
       MAILASSAY_SHOW(actors.validation_queue_limit)},
      {"dns", "servers",
       "Comma-separated resolvers as host:port ([v6]:port); empty uses "
       "/etc/resolv.conf.",
       list(MAILASSAY_FIELD(dns.servers)), MAILASSAY_SHOW(dns.servers)},
      {"dns", "timeout_ms",
       "Time-out of a query's first try in ms (c-ares doubles it per round).",
       integer(MAILASSAY_FIELD(dns.timeout_ms), 50, 60000),
       MAILASSAY_SHOW(dns.timeout_ms)},
      {"dns", "tries", "Tries per DNS query.",
       integer(MAILASSAY_FIELD(dns.tries), 1, 10), MAILASSAY_SHOW(dns.tries)},
      {"dns", "max_inflight", "DNS queries in flight at once; more wait.",
       integer(MAILASSAY_FIELD(dns.max_inflight), 1, 65536),
       MAILASSAY_SHOW(dns.max_inflight)},
      {"dns", "cache_size", "Domains kept in the DNS cache (0: none).",
       integer(MAILASSAY_FIELD(dns.cache_size), 0, 10000000),
       MAILASSAY_SHOW(dns.cache_size)},
      {"dns", "min_ttl", "Lower clamp of cached TTLs, seconds.",
       integer(MAILASSAY_FIELD(dns.min_ttl), 0, 86400),
       MAILASSAY_SHOW(dns.min_ttl)},
      {"dns", "max_ttl", "Upper clamp of cached TTLs, seconds.",
       integer(MAILASSAY_FIELD(dns.max_ttl), 0, 7 * 86400),
       MAILASSAY_SHOW(dns.max_ttl)},
      {"dns", "negative_ttl",
       "Seconds a negative answer without SOA is cached.",
       integer(MAILASSAY_FIELD(dns.negative_ttl), 0, 86400),
       MAILASSAY_SHOW(dns.negative_ttl)},
      {"dns", "error_ttl",
       "Seconds a DNS failure (SERVFAIL, time-out) is cached.",
       integer(MAILASSAY_FIELD(dns.error_ttl), 0, 3600),
       MAILASSAY_SHOW(dns.error_ttl)},
      {"validation", "allow_test_domains",
       "Accept special-use domains (.test, .invalid, .localhost, .local, "
       ".onion, .arpa); example names are ordinary either way; for tests.",
       boolean(MAILASSAY_FIELD(validation.allow_test_domains)),
       MAILASSAY_SHOW(validation.allow_test_domains)},
      {"validation", "workers", "Validation actors.",
       integer(MAILASSAY_FIELD(validation.workers), 1, 64),
       MAILASSAY_SHOW(validation.workers)},
      {"risk", "data_dir",
       "Folder with the shipped risk lists (disposable.txt, roles.txt ...).",
       text(MAILASSAY_FIELD(risk.data_dir)), MAILASSAY_SHOW(risk.data_dir)},
      {"risk", "extra_disposable_file",
       "Operator file of extra disposable domains, one per line.",
       text(MAILASSAY_FIELD(risk.extra_disposable_file)),
       MAILASSAY_SHOW(risk.extra_disposable_file)},
      {"risk", "extra_free_file",
       "Operator file of extra free-provider domains, one per line.",
       text(MAILASSAY_FIELD(risk.extra_free_file)),
       MAILASSAY_SHOW(risk.extra_free_file)},
      {"risk", "extra_roles_file",
       "Operator file of extra role local parts, one per line.",
       text(MAILASSAY_FIELD(risk.extra_roles_file)),
       MAILASSAY_SHOW(risk.extra_roles_file)},
      {"risk", "providers_file",
       "MX host suffix -> provider table (docs/provider-data.md); empty: "
       "providers.txt in risk.data_dir.",
       text(MAILASSAY_FIELD(risk.providers_file)),
       MAILASSAY_SHOW(risk.providers_file)},
      {"batch", "max_file_bytes", "Largest batch upload in bytes (413 above).",
       integer(MAILASSAY_FIELD(batch.max_file_bytes), 1024, 30 * 1024 * 1024),
       MAILASSAY_SHOW(batch.max_file_bytes)},
      {"batch", "max_addresses",
       "Most addresses a batch may hold after de-duplication (422 above).",
       integer(MAILASSAY_FIELD(batch.max_addresses), 1, 1000000),
       MAILASSAY_SHOW(batch.max_addresses)},
      {"batch", "concurrency", "Validations in flight per running batch job.",
       integer(MAILASSAY_FIELD(batch.concurrency), 1, 4096),
       MAILASSAY_SHOW(batch.concurrency)},
      {"batch", "max_jobs", "Batch jobs one process works on at the same time.",
       integer(MAILASSAY_FIELD(batch.max_jobs), 1, 64),
       MAILASSAY_SHOW(batch.max_jobs)},
      {"batch", "lease_seconds",
       "Seconds a process holds a job without renewing; after that another "
       "process takes it over.",
       integer(MAILASSAY_FIELD(batch.lease_seconds), 3, 3600),
       MAILASSAY_SHOW(batch.lease_seconds)},
      {"batch", "poll_ms",
       "How often an idle process looks for queued jobs, ms.",
       integer(MAILASSAY_FIELD(batch.poll_ms), 50, 60000),
       MAILASSAY_SHOW(batch.poll_ms)},
      {"batch", "max_restarts",
       "Times in a row a job may be taken over from a process that died "
       "holding it without saving a result; at that many it fails "
       "(JOB_KEPT_STOPPING, unused credits refunded) instead of taking the "
       "next process down too. 0: never.",
       integer(MAILASSAY_FIELD(batch.max_restarts), 0, 1000),
       MAILASSAY_SHOW(batch.max_restarts)},
      {"batch", "checkpoint_rows",
       "Most results written to storage in one checkpoint.",
       integer(MAILASSAY_FIELD(batch.checkpoint_rows), 1, 100000),
       MAILASSAY_SHOW(batch.checkpoint_rows)},
      {"batch", "nice",
       "Niceness (0-19) of the threads that run batch work: the higher, the "
       "more CPU real-time requests get while a batch runs.",
       integer(MAILASSAY_FIELD(batch.nice), 0, 19), MAILASSAY_SHOW(batch.nice)},
      {"batch", "rate_under_load",
       "Most addresses per second one batch job validates while real-time "
       "validations are arriving (0: no cap); without them it runs at full "
       "speed.",
       integer(MAILASSAY_FIELD(batch.rate_under_load), 0, 10000000),
       MAILASSAY_SHOW(batch.rate_under_load)},
      {"batch", "greylist_retry_ms",
       "Comma-separated waits before a greylisted address of an SMTP batch is "
       "probed again, ms; the others go on meanwhile.",
       integer_list(MAILASSAY_FIELD(batch.greylist_retry_ms), 1, 86400000),
       MAILASSAY_SHOW(batch.greylist_retry_ms)},
      {"batch", "retention_seconds",
       "Seconds after a batch job finished (completed, failed or cancelled) "
       "when its uploaded rows, results and export are erased; the job's "
       "record stays with its counts (0: kept forever; at most ten years). An "
       "organization's owner may set a shorter one (docs/privacy.md).",
       integer(MAILASSAY_FIELD(batch.retention_seconds), 0,
               core::batch::max_retention_seconds),
       MAILASSAY_SHOW(batch.retention_seconds)},
      {"batch", "retention_sweep_seconds",
       "How often every process looks for batch results past their retention "
       "(and drops expired SMTP result-cache answers), in seconds.",
       integer(MAILASSAY_FIELD(batch.retention_sweep_seconds), 1, 60),
       MAILASSAY_SHOW(batch.retention_sweep_seconds)},
      {"batch", "max_concurrent_uploads_per_organization",
       "Batch uploads of one organization whose body is read at once (by "
       "this process); another is answered 429 before its body is read.",
       integer(MAILASSAY_FIELD(batch.max_concurrent_uploads_per_organization),
               1, 1000),
       MAILASSAY_SHOW(batch.max_concurrent_uploads_per_organization)},
      {"batch", "max_concurrent_uploads_per_ip",
       "Batch uploads from one client address whose body is read at once (by "
       "this process); another is answered 429 before its body is read.",
       integer(MAILASSAY_FIELD(batch.max_concurrent_uploads_per_ip), 1, 1000),
       MAILASSAY_SHOW(batch.max_concurrent_uploads_per_ip)},
      {"smtp", "helo",
       "EHLO/HELO name of the prober, a public FQDN whose A/PTR point at this "
       "host; empty: the machine's host name when it is one (else the prober "
       "refuses to start).",
       text(MAILASSAY_FIELD(smtp.helo)), MAILASSAY_SHOW(smtp.helo)},
      {"smtp", "mail_from",
       "MAIL FROM address of probes, at a domain you control; empty: the null "
       "sender <>.",
       text(MAILASSAY_FIELD(smtp.mail_from)), MAILASSAY_SHOW(smtp.mail_from)},
      {"smtp", "force_identity",
       "Use smtp.helo and smtp.mail_from even when they look local "
       "(localhost, .localdomain) or the sender is at a free-mail provider.",
       boolean(MAILASSAY_FIELD(smtp.force_identity)),
       MAILASSAY_SHOW(smtp.force_identity)},
      {"smtp", "port", "TCP port of the MX hosts probed.",
       integer(MAILASSAY_FIELD(smtp.port), 1, 65535),
       MAILASSAY_SHOW(smtp.port)},
      {"smtp", "tls",
       "STARTTLS policy: never, opportunistic (when offered; a failed "
       "handshake is retried in clear) or required.",
       tls_policy(MAILASSAY_FIELD(smtp.tls)), MAILASSAY_SHOW(smtp.tls)},
      {"smtp", "tls_verify",
       "Verify MX certificates and names (off: opportunistic TLS, as MTAs do).",
       boolean(MAILASSAY_FIELD(smtp.tls_verify)),
       MAILASSAY_SHOW(smtp.tls_verify)},
      {"smtp", "allow_private_targets",
       "Comma-separated CIDRs probes may connect to besides public addresses "
       "(loopback, private, link-local ... are refused otherwise).",
       cidr_list(MAILASSAY_FIELD(smtp.allow_private_targets)),
       MAILASSAY_SHOW(smtp.allow_private_targets)},
      {"smtp", "retry_delays_ms",
       "Comma-separated waits before asking a greylisted address again, ms; "
       "each retry only while the request's budget allows.",
       integer_list(MAILASSAY_FIELD(smtp.retry_delays_ms), 1, 3600000),
       MAILASSAY_SHOW(smtp.retry_delays_ms)},
      {"smtp", "max_sessions_per_host",
       "SMTP sessions open at once per MX host (0: unlimited).",
       integer(MAILASSAY_FIELD(smtp.max_sessions_per_host), 0, 10000),
       MAILASSAY_SHOW(smtp.max_sessions_per_host)},
      {"smtp", "connections_per_second_per_host",
       "New SMTP connections per second per MX host (0: unlimited).",
       integer(MAILASSAY_FIELD(smtp.connections_per_second_per_host), 0, 10000),
       MAILASSAY_SHOW(smtp.connections_per_second_per_host)},
      {"smtp", "max_rcpts_per_session",
       "RCPT commands per SMTP session (catch-all probes included); a 452 "
       "from the server lowers it for that domain.",
       integer(MAILASSAY_FIELD(smtp.max_rcpts_per_session), 1, 1000),
       MAILASSAY_SHOW(smtp.max_rcpts_per_session)},
      {"smtp", "provider_limits",
       "Comma-separated per-provider limits, "
       "name=sessions[/per_second[/rcpts_per_session]] (e.g. "
       "google=2/5,yahoo=1,outlook=//5): all MX hosts of a provider share "
       "one budget, by default the per-host values (docs/smtp.md).",
       provider_limit_list(MAILASSAY_FIELD(smtp.provider_limits)),
       MAILASSAY_SHOW(smtp.provider_limits)},
      {"smtp", "share_sessions",
       "Concurrent validations of one domain share its SMTP sessions and "
       "identical addresses in flight are probed once (false: one probe and "
       "its own sessions per validation).",
       boolean(MAILASSAY_FIELD(smtp.share_sessions)),
       MAILASSAY_SHOW(smtp.share_sessions)},
      {"smtp", "session_linger_ms",
       "How long an idle shared SMTP session waits for another address before "
       "QUIT, ms (it gives its slot up when another domain needs the host).",
       integer(MAILASSAY_FIELD(smtp.session_linger_ms), 0, 60000),
       MAILASSAY_SHOW(smtp.session_linger_ms)},
      {"smtp", "result_cache_seconds",
       "Seconds a definitive SMTP answer (accepted, unknown user, full, "
       "disabled) is reused per address (0: no result cache; time-outs and "
       "deferrals are never cached).",
       integer(MAILASSAY_FIELD(smtp.result_cache_seconds), 0, 86400),
       MAILASSAY_SHOW(smtp.result_cache_seconds)},
      {"smtp", "catch_all_ttl_seconds",
       "Seconds a domain's catch-all verdict is reused (0: probe every time).",
       integer(MAILASSAY_FIELD(smtp.catch_all_ttl_seconds), 0, 30LL * 86400),
       MAILASSAY_SHOW(smtp.catch_all_ttl_seconds)},
      {"smtp", "socks5_proxy",
       "SOCKS5 proxy (no authentication) for probes as ip:port; empty: "
       "connect directly.",
       text(MAILASSAY_FIELD(smtp.socks5_proxy), check_socks5),
       MAILASSAY_SHOW(smtp.socks5_proxy)},
      {"smtp", "source_address",
       "Local IP address probes (and `mailassay doctor`) bind to, the egress "
       "address receivers see; empty: the kernel's choice.",
       text(MAILASSAY_FIELD(smtp.source_address), check_ip_or_empty),
       MAILASSAY_SHOW(smtp.source_address)},
      {"smtp", "io_threads", "Threads running the SMTP client's I/O.",
       integer(MAILASSAY_FIELD(smtp.io_threads), 1, 64),
       MAILASSAY_SHOW(smtp.io_threads)},
      {"smtp", "host_metrics_idle_seconds",
       "Seconds an MX host's /metrics series (sessions open, connections "
       "opened, peak) stay after its last session ended; then they are "
       "dropped until the host is used again.",
       integer(MAILASSAY_FIELD(smtp.host_metrics_idle_seconds), 1, 86400),
       MAILASSAY_SHOW(smtp.host_metrics_idle_seconds)},
      {"smtp", "host_metrics_max_hosts",
       "MX hosts with /metrics series at most; a new host takes the place of "
       "the one idle the longest.",
       integer(MAILASSAY_FIELD(smtp.host_metrics_max_hosts), 1, 100000),
       MAILASSAY_SHOW(smtp.host_metrics_max_hosts)},
      {"egress", "reference_domains",
       "Comma-separated domains whose MX hosts the egress audit connects to "
       "(port 25, one EHLO); the first one's first host also finds the egress "
       "address when smtp.source_address is empty.",
       list(MAILASSAY_FIELD(egress.reference_domains)),
       MAILASSAY_SHOW(egress.reference_domains)},
      {"egress", "dnsbl",
       "Comma-separated DNS blocklist zones the egress audit asks about the "
       "egress address; empty: no blocklist check.",
       list(MAILASSAY_FIELD(egress.dnsbl)), MAILASSAY_SHOW(egress.dnsbl)},
      {"egress", "at_start",
       "The service audits its egress once when it starts (with SMTP "
       "probing on).",
       boolean(MAILASSAY_FIELD(egress.at_start)),
       MAILASSAY_SHOW(egress.at_start)},
      {"egress", "interval_seconds",
       "Seconds between the service's egress audits (0: none after the one "
       "at start).",
       integer(MAILASSAY_FIELD(egress.interval_seconds), 0, 7LL * 86400),
       MAILASSAY_SHOW(egress.interval_seconds)},
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
  return keys;
}

std::string env_prefix(const std::string& section) {
  return "MAILASSAY_" + upper(section) + "_";
}

std::string env_name(const key_spec& k) {
  return env_prefix(k.section) + upper(k.key);
}

const key_spec* find_key(const std::string& section, const std::string& key) {
  for (auto& k : registry())
    if (k.section == section && k.key == key)
      return &k;
  return nullptr;
}

// Unquotes a TOML-ish value: "text", 'text', [ "a", "b" ], or a bare word.
std::string file_value(std::string v) {
  v = trim(v);
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') &&
      v.back() == v.front())
    return v.substr(1, v.size() - 2);
  if (v.size() >= 2 && v.front() == '[' && v.back() == ']') {
    std::string out;
    for (char c : v.substr(1, v.size() - 2))
      if (c != '"' && c != '\'')
        out += c;
    return out;
  }
  return v;
}

core::error bad(std::string message) {
  return make_error(errc::bad_request, std::move(message));
}

} // namespace

environment process_environment() {
  environment env;
  for (char** e = environ; e && *e; ++e) {
    std::string entry{*e};
    auto eq = entry.find('=');
    if (eq != std::string::npos && entry.rfind("MAILASSAY_", 0) == 0)
      env.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return env;
}

core::expected<settings> load(const std::optional<std::string>& path,
                              const environment& env) {
  settings s;
  if (path) {
    std::ifstream in(*path);
    if (!in)
      return bad("cannot read configuration file " + *path);
    std::string line, section;
    for (int number = 1; std::getline(in, line); ++number) {
      auto hash = line.find('#');
      if (hash != std::string::npos && line.find('"') > hash)
        line.erase(hash);
      line = trim(line);
      if (line.empty())
        continue;
      auto where = *path + ":" + std::to_string(number) + ": ";
      if (line.front() == '[') {
        if (line.back() != ']')
          return bad(where + "malformed section header");
        section = trim(line.substr(1, line.size() - 2));
        continue;
      }
      auto eq = line.find('=');
      if (eq == std::string::npos)
        return bad(where + "expected key = value");
      auto key = trim(line.substr(0, eq));
      auto* spec = find_key(section, key);
      if (!spec)
        return bad(where + "unknown setting " + section + "." + key);
      if (auto err = spec->io.apply(s, file_value(line.substr(eq + 1)));
          !err.empty())
        return bad(where + section + "." + key + " " + err);
    }
  }
  for (auto& [name, value] : env) {
    if (name.rfind("MAILASSAY_", 0) != 0 || name == "MAILASSAY_CONFIG")
      continue;
    const key_spec* spec = nullptr;
    for (auto& k : registry())
      if (env_name(k) == name)
        spec = &k;
    if (!spec) {
      // Only names inside a known section are ours to refuse: tests and
      // tools use other MAILASSAY_ variables (MAILASSAY_TEST_PG_URL ...).
      for (auto& k : registry())
        if (name.rfind(env_prefix(k.section), 0) == 0)
          return bad("unknown setting in environment: " + name);
      continue;
    }
    if (auto err = spec->io.apply(s, trim(value)); !err.empty())
      return bad(name + " " + err);
  }
  return s;
}

std::optional<std::string> file_of(const std::optional<std::string>& given,
                                   const environment& env) {
  if (given)
    return given;
  if (auto i = env.find("MAILASSAY_CONFIG"); i != env.end())
    return i->second;
  return std::nullopt;
}

void apply_reloadable(settings& live, const settings& next) {
  // Only live<T> fields have a reload copy (config/key_spec.hpp); each
  // takes the value `next` holds under its own atomic or lock.
  for (auto& k : registry())
    k.io.reload(live, next);
}

std::vector<key_doc> describe() {
  std::vector<key_doc> out;
  settings defaults;
  for (auto& k : registry())
    out.push_back({k.section, k.key, env_name(k), k.show(defaults),
                   k.description, k.io.reloadable()});
  return out;
}

std::vector<key_change> changes(const settings& before, const settings& after) {
  std::vector<key_change> out;
  for (auto& k : registry()) {
    auto was = k.show(before), now = k.show(after);
    // The JWT secret shows as "(generated)" either way.
    bool differs = k.section == "auth" && k.key == "jwt_secret"
                       ? before.auth.jwt_secret != after.auth.jwt_secret
                       : was != now;
    if (!differs)
      continue;
    key_change c{k.section + "." + k.key, {}, {}, k.io.reloadable()};
    if (c.reloadable) {
      c.before = std::move(was);
      c.after = std::move(now);
    }
    out.push_back(std::move(c));
  }
  return out;
}

} // namespace mailassay::config
