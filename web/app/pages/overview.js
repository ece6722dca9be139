// Overview: credits, the organization's requests per day (all keys), the
// active batch job and the service's status.
import {
  html,
  useLoad,
  usePolling,
  PageTitle,
  ErrorNote,
  Loading,
  Badge,
  StatusBadge,
  TableScroll,
  BarChart,
  num,
  day,
  percent,
  duration,
} from "../ui.js";
import * as api from "../api.js";

const ACTIVE = ["queued", "processing"];

function CreditsCard() {
  const b = useLoad(() => api.get("/v2/credits/balance"), []);
  return html`<article aria-labelledby="credits-card">
    <h2 id="credits-card">Credits</h2>
    <${ErrorNote} error=${b.error} />
    ${b.data
      ? html`<p class="big">${num(b.data.balance)}</p>
          <p class="muted">${num(b.data.consumed)} used so far · one per address
            checked over SMTP</p>
          <a href="#/credits">Ledger</a>`
      : !b.error && html`<${Loading} />`}
  </article>`;
}

function JobCard() {
  const jobs = useLoad(() => api.get("/v2/batch"), []);
  const active = jobs.data && jobs.data.items.find((j) => ACTIVE.includes(j.status));
  usePolling(jobs.reload, 30, !!active);
  return html`<article aria-labelledby="job-card">
    <h2 id="job-card">Batch job</h2>
    <${ErrorNote} error=${jobs.error} />
    ${!jobs.data && !jobs.error && html`<${Loading} />`}
    ${jobs.data &&
    (active
      ? html`<p><a href=${"#/batches/" + active.id}>${active.fileName}</a>${" "}
            <${StatusBadge} status=${active.status} /></p>
          <progress value=${active.progress} max="100"
            aria-label=${"Progress of " + active.fileName}></progress>
          <p>${num(active.processed)} of ${num(active.uniqueEmails + active.invalidRows)}${" "}
            addresses (${active.progress} %)${active.etaSeconds != null
              ? html` · about ${duration(active.etaSeconds)} left`
              : ""}</p>`
      : html`<p>No batch job is running.</p><a href="#/batches">Upload a file</a>`)}
  </article>`;
}

function ServiceCard() {
  const s = useLoad(() => api.publicGet("/status"), []);
  return html`<article aria-labelledby="service-card">
    <h2 id="service-card">Service</h2>
    <${ErrorNote} error=${s.error} />
    ${s.data
      ? html`<p><${StatusBadge} status=${s.data.status} /> · version ${s.data.version}</p>
          <ul>
            ${s.data.components.map(
              (c) => html`<li>${c.name}: <${StatusBadge} status=${c.status} /></li>`,
            )}
          </ul>`
      : !s.error && html`<${Loading} />`}
  </article>`;
}

function Usage() {
  const u = useLoad(() => api.get("/v2/usage?days=30"), []);
  const d = u.data;
  return html`<section aria-labelledby="usage-title">
    <h2 id="usage-title">Requests, last 30 days</h2>
    <p class="muted">Validations made with the organization's API keys (the
      dashboard's own, signed in, are not counted).</p>
    <${ErrorNote} error=${u.error} />
    ${!d && !u.error && html`<${Loading} />`}
    ${d &&
    html`<dl class="figures">
        <div><dt>Requests</dt><dd>${num(d.totalRequests)}</dd></div>
        <div><dt>Answered 200</dt><dd>${percent(d.successRate)}</dd></div>
        <div><dt>Credits used</dt><dd>${num(d.creditsConsumed)}</dd></div>
        <div><dt>Distinct addresses</dt><dd>${num(d.topEmails)}</dd></div>
      </dl>
      <${BarChart} title="Requests per day, all keys" valueLabel="Requests"
        rows=${d.requestsByDay.map((x) => ({ label: day(x.date), value: x.requests }))} />
      <h3>By key</h3>
      ${d.keys.length === 0
        ? html`<p>No key was used in these 30 days. <a href="#/keys">API keys</a></p>`
        : html`<${TableScroll} label="Requests by key">
            <table>
              <thead><tr><th scope="col">Key</th><th scope="col">Mode</th>
                <th scope="col" class="num">Requests</th>
                <th scope="col" class="num">Answered 200</th>
                <th scope="col" class="num">Credits</th></tr></thead>
              <tbody>
                ${d.keys.map(
                  (k) => html`<tr>
                    <th scope="row"><a href=${"#/keys/" + k.id}>${k.name || k.id}</a></th>
                    <td><${Badge} kind=${k.mode}>${k.mode}<//></td>
                    <td class="num">${num(k.requests)}</td>
                    <td class="num">${percent(k.requests ? k.successful / k.requests : null)}</td>
                    <td class="num">${num(k.credits)}</td>
                  </tr>`,
                )}
              </tbody>
            </table>
          <//>`}`}
  </section>`;
}

export function Overview({ session }) {
  return html`<${PageTitle}>Overview<//>
    <div class="cards">
      <${CreditsCard} />
      <${JobCard} />
      <${ServiceCard} />
    </div>
    <${Usage} />`;
}
