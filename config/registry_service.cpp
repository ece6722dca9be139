// The service's own settings: [http], [control], [database], [auth],
// [credits], [log], [limits], [redis], [actors], [dns], [validation] and
// [risk].
// Repetitive by design: one entry per setting, each spelling out its
// section, key, documentation, bounds and how it shows, so that a setting
// reads (and is reviewed) in one place. Whether it reloads is not written
// here: it follows from its field's type (config/live.hpp).
#include "config/registry.hpp"
#include "config/value_checks.hpp"

namespace mailassay::config::keys {

std::vector<key_spec> service_keys() {
  return {
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
  };
}

} // namespace mailassay::config::keys
