// Operations (owners and admins): /status, and from /metrics the actor
// pools (size, busy, queued), the DNS cache, SMTP sessions and batch work,
// each with the setting that sizes it (docs/configuration.md); from
// /health the SMTP egress audit, each check with what to do about it.
import {
  html,
  useState,
  useLoad,
  usePolling,
  PageTitle,
  ErrorNote,
  Loading,
  StatusBadge,
  TableScroll,
  num,
  percent,
  duration,
} from "../ui.js";
import * as api from "../api.js";
import { parseMetrics, metric, labelValues } from "../lib/metrics.js";

// pool label -> [what it does, the setting that sizes it]
const POOLS = {
  storage: ["Storage workers: sign-in, keys, credits, statistics", "actors.storage_workers"],
  batch_storage: ["Storage workers of batch jobs (low priority)", "batch.max_jobs"],
  validation: ["Validation actors (SMTP requests)", "validation.workers"],
};

const envName = (setting) => "MAILASSAY_" + setting.replace(".", "_").toUpperCase();

function Setting({ name }) {
  return html`<code>${name}</code> <small class="muted">(${envName(name)})</small>`;
}

function Pools({ m }) {
  const pools = labelValues(m, "mailassay_pool_workers", "pool");
  return html`<${TableScroll} label="Actor pools">
    <table>
      <caption class="muted">Actor pools: a queue that stays above zero means
        the pool is too small for the load.</caption>
      <thead><tr><th scope="col">Pool</th><th scope="col" class="num">Size</th>
        <th scope="col" class="num">Busy</th><th scope="col">Occupancy</th>
        <th scope="col" class="num">Queued</th><th scope="col" class="num">Done</th>
        <th scope="col">Setting</th></tr></thead>
      <tbody>
        ${pools.map((p) => {
          const size = metric(m, "mailassay_pool_workers", { pool: p });
          const busy = metric(m, "mailassay_pool_busy", { pool: p });
          const [what, setting] = POOLS[p] || [p, null];
          return html`<tr>
            <th scope="row"><code>${p}</code><br /><small class="muted">${what}</small></th>
            <td class="num">${num(size)}</td>
            <td class="num">${num(busy)}</td>
            <td><meter min="0" max=${size || 1} value=${busy || 0}
              aria-label=${`${p}: ${busy} of ${size} busy`}></meter></td>
            <td class="num">${num(metric(m, "mailassay_pool_queued", { pool: p }))}</td>
            <td class="num">${num(metric(m, "mailassay_pool_done", { pool: p }))}</td>
            <td>${setting ? html`<${Setting} name=${setting} />` : "—"}</td>
          </tr>`;
        })}
      </tbody>
    </table>
  <//>`;
}

function Figure({ label, value, setting }) {
  return html`<div><dt>${label}</dt><dd>${value}</dd>
    ${setting && html`<dd class="setting muted">set by <code>${setting}</code></dd>`}</div>`;
}

function Dns({ m }) {
  const hits = metric(m, "mailassay_dns_cache_hits") || 0;
  const misses = metric(m, "mailassay_dns_cache_misses") || 0;
  return html`<section aria-labelledby="dns-title">
    <h2 id="dns-title">DNS</h2>
    <dl class="figures">
      <${Figure} label="Cache hit rate" value=${hits + misses ? percent(hits / (hits + misses)) : "—"} />
      <${Figure} label="Domains cached" value=${num(metric(m, "mailassay_dns_cache_size"))}
        setting="dns.cache_size" />
      <${Figure} label="Queries in flight" value=${num(metric(m, "mailassay_dns_in_flight"))}
        setting="dns.max_inflight" />
      <${Figure} label="Queries waiting" value=${num(metric(m, "mailassay_dns_queued"))} />
    </dl>
    <p class="muted">${num(hits)} routes from the cache, ${num(misses)} looked up,${" "}
      ${num(metric(m, "mailassay_dns_queries_sent"))} queries sent since start.</p>
  </section>`;
}

function Smtp({ m }) {
  const on = metric(m, "mailassay_smtp_sessions") != null;
  return html`<section aria-labelledby="smtp-title">
    <h2 id="smtp-title">SMTP</h2>
    ${on
      ? html`<dl class="figures">
          <${Figure} label="Probes in flight" value=${num(metric(m, "mailassay_smtp_probes_active"))}
            setting="smtp.io_threads" />
          <${Figure} label="Waiting for a host slot" value=${num(metric(m, "mailassay_smtp_queued"))}
            setting="smtp.max_sessions_per_host" />
          <${Figure} label="Sessions since start" value=${num(metric(m, "mailassay_smtp_sessions"))}
            setting="smtp.connections_per_second_per_host" />
          <${Figure} label="Greylisting waits" value=${num(metric(m, "mailassay_smtp_retries"))}
            setting="smtp.retry_delays_ms" />
        </dl>`
      : html`<p class="note">SMTP probing is off on this server: it has no sender
          identity (<code>smtp.helo</code>, <code>smtp.mail_from</code>; see
          docs/smtp.md). Requests with <code>smtp: true</code> are answered
          without a probe, free.</p>`}
  </section>`;
}

// check name -> [what it checks, what to do when it warns or fails]
const EGRESS_CHECKS = {
  helo_dns: ["smtp.helo is a public FQDN with an A or AAAA record",
    "Set smtp.helo to a name of this host and publish its A record (the egress address)."],
  egress_ptr: ["The egress address's PTR names smtp.helo, which resolves back to it",
    "Ask the owner of the address (the hosting provider's panel) to set its reverse DNS to smtp.helo, or set smtp.helo to the PTR name; then add the matching A record."],
  dnsbl: ["The egress address is on none of the DNS blocklists",
    "Follow each list's delisting procedure, or probe from another address (smtp.source_address, smtp.socks5_proxy). A refused query means the resolver is public: use your own in dns.servers."],
  port25: ["TCP port 25 of the reference MX hosts opens",
    "Most clouds block outbound port 25: ask the provider to open it, or probe through smtp.socks5_proxy on a host where it is open."],
  smtp_greeting: ["A reference MX host greets us and accepts EHLO",
    "A 5xx greeting or a policy text names why the host refuses us: usually the blocklist or reverse-DNS check above; fix that first."],
  mail_from: ["The domain of smtp.mail_from has an MX or an A record",
    "Use a sender at a domain you control that receives mail, or the null sender."],
};

function Egress({ health }) {
  const d = health && health.details;
  const state = d ? d.smtp : null;
  const e = d && d.egress;
  return html`<section aria-labelledby="egress-title">
    <h2 id="egress-title">SMTP egress</h2>
    ${!d
      ? html`<${Loading} />`
      : state === "off"
        ? html`<p class="note">SMTP probing is off on this server, so its egress is
            not audited.</p>`
        : !e
          ? html`<p class="note">The first egress audit has not finished yet; run${" "}
              <code>mailassay doctor</code> on the server to see it now.</p>`
          : html`<p>From <a href="/health">/health</a>: <${StatusBadge} status=${state} />
                · egress address <code>${e.egressAddress || "unknown"}</code> · audited${" "}
                ${new Date(e.checkedAt).toLocaleString()}. The same checks as${" "}
                <code>mailassay doctor</code>; docs/operations.md, “Why is every answer
                unknown?”.</p>
              <${TableScroll} label="Egress checks">
                <table>
                  <caption class="muted">Egress checks: a failed one makes receiving servers
                    refuse the probes, so SMTP answers come back unknown.</caption>
                  <thead><tr><th scope="col">Check</th><th scope="col">Result</th>
                    <th scope="col">What was seen</th><th scope="col">What to do</th></tr></thead>
                  <tbody>
                    ${e.checks.map((c) => {
                      const [what, todo] = EGRESS_CHECKS[c.name] || [c.name, ""];
                      return html`<tr>
                        <th scope="row"><code>${c.name}</code><br /><small class="muted">${what}</small></th>
                        <td><${StatusBadge} status=${c.status} /></td>
                        <td>${c.detail}</td>
                        <td>${c.status === "fail" || c.status === "warn" ? todo : "—"}</td>
                      </tr>`;
                    })}
                  </tbody>
                </table>
              <//>`}
  </section>`;
}

function Work({ m }) {
  return html`<section aria-labelledby="work-title">
    <h2 id="work-title">Requests and batch jobs</h2>
    <dl class="figures">
      <${Figure} label="HTTP requests in flight" value=${num(metric(m, "mailassay_http_in_flight"))}
        setting="http.io_threads" />
      <${Figure} label="Batch jobs running here" value=${num(metric(m, "mailassay_batch_running_jobs"))}
        setting="batch.max_jobs" />
      <${Figure} label="Batch validations in flight" value=${num(metric(m, "mailassay_batch_in_flight"))}
        setting="batch.concurrency" />
      <${Figure} label="Usage counts waiting" value=${num(metric(m, "mailassay_usage_pending"))} />
    </dl>
    <p class="muted">Actor scheduler threads: <code>actors.scheduler_threads</code>.
      Every setting, its variable and its default: <code>mailassay config</code>.</p>
  </section>`;
}

export function Operations() {
  const status = useLoad(() => api.publicGet("/status"), []);
  const metrics = useLoad(async () => parseMetrics(await api.publicGet("/metrics")), []);
  const health = useLoad(() => api.publicGet("/health"), []);
  const [at, setAt] = useState(new Date());
  usePolling(async () => {
    await Promise.all([status.reload(), metrics.reload(), health.reload()]);
    setAt(new Date());
  }, 15);
  const s = status.data;
  const m = metrics.data;
  return html`<${PageTitle}>Operations<//>
    <p class="muted">From <a href="/status">/status</a> and${" "}
      <a href="/metrics">/metrics</a>, read again every 15 seconds while this tab
      is visible (last: ${at.toLocaleTimeString()}).</p>
    <section aria-labelledby="status-title">
      <h2 id="status-title">Status</h2>
      <${ErrorNote} error=${status.error} />
      ${s
        ? html`<p><${StatusBadge} status=${s.status} /> · version ${s.version} ·
              up ${duration(s.uptimeSeconds)}</p>
            <ul>
              ${s.components.map(
                (c) => html`<li>${c.name}${c.backend ? ` (${c.backend})` : ""}:${" "}
                  <${StatusBadge} status=${c.status} /></li>`,
              )}
            </ul>`
        : !status.error && html`<${Loading} />`}
    </section>
    <${ErrorNote} error=${metrics.error} />
    ${!m && !metrics.error && html`<${Loading} />`}
    ${m &&
    html`<section aria-labelledby="pools-title">
        <h2 id="pools-title">Actor pools</h2>
        <${Pools} m=${m} />
      </section>
      <${Dns} m=${m} />
      <${Smtp} m=${m} />
      <${Egress} health=${health.data} />
      <${Work} m=${m} />`}`;
}
