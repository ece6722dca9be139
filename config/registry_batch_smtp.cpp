// The settings of the work behind requests: [batch] jobs, the [smtp]
// prober and the [egress] self-audit.
// Repetitive by design: one entry per setting, each spelling out its
// section, key, documentation, bounds and how it shows, so that a setting
// reads (and is reviewed) in one place. Whether it reloads is not written
// here: it follows from its field's type (config/live.hpp).
#include "config/registry.hpp"
#include "config/value_checks.hpp"
#include "core/batch/retention.hpp"

namespace mailassay::config::keys {

std::vector<key_spec> batch_smtp_keys() {
  return {
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
  };
}

} // namespace mailassay::config::keys
