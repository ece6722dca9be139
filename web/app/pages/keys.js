// API keys: the list (live/test, status), creation with the secret shown
// once, editing (name, allowedDomains, checks, per-key limits), revoke,
// reactivate, delete, and per-key statistics over 7/30/90 days.
import {
  html,
  useState,
  useEffect,
  useLoad,
  useAction,
  PageTitle,
  ErrorNote,
  Notice,
  Loading,
  Badge,
  StatusBadge,
  TableScroll,
  CopyButton,
  Confirm,
  BarChart,
  canManage,
  MEMBER_REASON,
  num,
  when,
  day,
  percent,
  shellQuote,
  origin,
} from "../ui.js";
import * as api from "../api.js";

const CHECKS = [
  ["smtp", "SMTP mailbox check", "requests may ask for it; 1 credit per address"],
  ["disposable", "Disposable-address detection", ""],
  ["roleAccount", "Role-account detection", "info@, sales@, …"],
  ["randomDetection", "Random-address detection", ""],
  ["enrichment", "Enrichment", "a probable first name"],
];
const DEFAULT_CONFIG = {
  smtp: false,
  disposable: true,
  roleAccount: true,
  enrichment: false,
  randomDetection: true,
};
const WINDOWS = [
  ["perMinute", "Per minute"],
  ["perHour", "Per hour"],
  ["perDay", "Per day"],
];

const limitText = (v) => (v == null ? "unlimited" : num(v));

function curlExample(secret) {
  return (
    `curl -s ${origin()}/v2/email/validate \\\n` +
    `  -H ${shellQuote("Authorization: Bearer " + secret)} \\\n` +
    `  -H 'Content-Type: application/json' \\\n` +
    `  -d '{"email":"jane@example.com"}'`
  );
}

function splitDomains(text) {
  return text
    .split(/[\s,]+/)
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);
}

// The fields of a key as a form; `onSave(body)` gets the JSON to send.
function KeyForm({ initial, defaults, creating, onSave, onCancel }) {
  const [name, setName] = useState(initial.name || "");
  const [mode, setMode] = useState("live");
  const [domains, setDomains] = useState((initial.allowedDomains || []).join("\n"));
  const [config, setConfig] = useState({ ...DEFAULT_CONFIG, ...(initial.config || {}) });
  const start = initial.rateLimits || defaults || {};
  const [limits, setLimits] = useState(
    Object.fromEntries(WINDOWS.map(([k]) => [k, start[k] == null ? "" : String(start[k])])),
  );
  const { busy, error, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    const rateLimits = {};
    for (const [k] of WINDOWS) rateLimits[k] = limits[k] === "" ? null : Number(limits[k]);
    const body = { name, allowedDomains: splitDomains(domains), config, rateLimits };
    if (creating) body.mode = mode;
    run(() => onSave(body));
  };
  const id = creating ? "new" : initial.id;
  return html`<form onSubmit=${submit}>
    <label>Name
      <input name="name" required maxlength="100" value=${name}
        onInput=${(e) => setName(e.target.value)} />
    </label>
    ${creating &&
    html`<fieldset>
      <legend>Mode</legend>
      <label><input type="radio" name="mode" value="live" checked=${mode === "live"}
        onChange=${() => setMode("live")} /> Live (<code>svc_live_</code>): real checks</label>
      <label><input type="radio" name="mode" value="test" checked=${mode === "test"}
        onChange=${() => setMode("test")} /> Test (<code>svc_test_</code>): a sandbox,
        no DNS, no SMTP, no credits</label>
    </fieldset>`}
    <label for=${"domains-" + id}>Allowed domains</label>
    <textarea id=${"domains-" + id} name="allowedDomains" rows="2"
      aria-describedby=${"domains-help-" + id}
      value=${domains} onInput=${(e) => setDomains(e.target.value)}></textarea>
    <small id=${"domains-help-" + id}>One per line or separated by commas, e.g.${" "}
      <code>shop.example.com</code> (subdomains included). Empty: usable from
      anywhere, for servers only; a key in a web page must be restricted.
      A restricted key is publishable: it only validates single addresses
      without SMTP (the widget, <code>POST /v2/email/validate</code>) and gets
      403 everywhere else.</small>
    <fieldset>
      <legend>Checks</legend>
      ${CHECKS.map(
        ([k, label, help]) => html`<label>
          <input type="checkbox" role="switch" name=${k} checked=${config[k]}
            onChange=${(e) => setConfig({ ...config, [k]: e.target.checked })} />
          ${label}${help && html` <span class="hint muted">(${help})</span>`}
        </label>`,
      )}
    </fieldset>
    <fieldset>
      <legend>Rate limits</legend>
      <p class="muted" id=${"limits-help-" + id}>Requests this key may make on the
        validation endpoints; the next one gets 429. Empty: unlimited. Server
        defaults for new keys: ${limitText(defaults && defaults.perMinute)} a minute,${" "}
        ${limitText(defaults && defaults.perHour)} an hour,${" "}
        ${limitText(defaults && defaults.perDay)} a day.</p>
      <div class="grid">
        ${WINDOWS.map(
          ([k, label]) => html`<label>${label}
            <input type="number" name=${k} min="1" step="1" inputmode="numeric"
              placeholder="unlimited" aria-describedby=${"limits-help-" + id}
              value=${limits[k]} onInput=${(e) => setLimits({ ...limits, [k]: e.target.value })} />
          </label>`,
        )}
      </div>
    </fieldset>
    <${ErrorNote} error=${error} />
    <div class="actions">
      <button type="submit" aria-busy=${busy ? "true" : undefined}>
        ${creating ? "Create key" : "Save changes"}
      </button>
      ${onCancel &&
      html`<button type="button" class="secondary" onClick=${onCancel}>Cancel</button>`}
    </div>
  </form>`;
}

// The secret of a key just created: shown here once, never again.
function NewSecret({ created, onDone }) {
  const curl = curlExample(created.key);
  return html`<article class="secret" aria-labelledby="new-key-title">
    <h2 id="new-key-title">Your new key “${created.name}”</h2>
    <p><strong>Copy it now: it is shown only this once.</strong> The server keeps
      only a hash of it; if you lose it, create another key and revoke this one.</p>
    <label>Secret key
      <input readonly name="secret" value=${created.key}
        onFocus=${(e) => e.target.select()} />
    </label>
    <${CopyButton} text=${created.key} label="Copy key" />
    <p>Try it:</p>
    <pre><code>${curl}</code></pre>
    <${CopyButton} text=${curl} label="Copy curl command" />
    <footer>
      <button type="button" onClick=${onDone}>I have saved it</button>
    </footer>
  </article>`;
}

function Disabled({ label, reason, id }) {
  return html`<button type="button" disabled aria-describedby=${id}>${label}</button>
    <small id=${id} class="muted">${reason}</small>`;
}

// Revoke, reactivate and delete, with the confirmations that say what
// happens to the key's next request.
function KeyActions({ k, session, onChanged, compact }) {
  const [asking, setAsking] = useState(null);
  const { busy, error, run } = useAction();
  if (!canManage(session)) return null;
  const act = (what) =>
    run(async () => {
      if (what === "delete") await api.del(`/v2/api-keys/${k.id}`);
      else await api.post(`/v2/api-keys/${k.id}/${what}`);
      onChanged(what);
    });
  const close = (what) => (ok) => {
    setAsking(null);
    if (ok) act(what);
  };
  const hidden = html`<span class="visually-hidden"> ${k.name}</span>`;
  return html`<span class=${compact ? "row-actions" : "actions"}>
    ${k.status === "active"
      ? html`<button type="button" class="secondary small" aria-busy=${busy ? "true" : undefined}
          onClick=${() => setAsking("revoke")}>Revoke${hidden}</button>`
      : html`<button type="button" class="secondary small" aria-busy=${busy ? "true" : undefined}
          onClick=${() => act("reactivate")}>Reactivate${hidden}</button>`}
    <button type="button" class="danger outline small" onClick=${() => setAsking("delete")}>
      Delete${hidden}</button>
    <${ErrorNote} error=${error} />
    ${asking === "revoke" &&
    html`<${Confirm} title=${`Revoke “${k.name}”?`} confirm="Revoke key" danger
        onClose=${close("revoke")}>
      <p>From its next request on, the key gets <strong>401 Unauthorized</strong>.
        You can reactivate it later.</p>
    <//>`}
    ${asking === "delete" &&
    html`<${Confirm} title=${`Delete “${k.name}”?`} confirm="Delete key" danger
        onClose=${close("delete")}>
      <p>From its next request on, the key gets <strong>401 Unauthorized</strong>,
        and it cannot be reactivated: deleting cannot be undone. Its usage
        statistics go with it.</p>
    <//>`}
  </span>`;
}

function KeyList({ session }) {
  const keys = useLoad(() => api.get("/v2/api-keys"), []);
  const limits = useLoad(() => api.get("/v2/api-keys/rate-limits"), []);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState(null);
  const [notice, setNotice] = useState("");
  const manager = canManage(session);
  const create = async (body) => {
    const k = await api.post("/v2/api-keys", body);
    setCreating(false);
    setCreated(k);
    keys.reload();
  };
  const changed = (name) => (what) => {
    const said = {
      revoke: `“${name}” is revoked: its next request gets 401 Unauthorized.`,
      reactivate: `“${name}” is active again.`,
      delete: `“${name}” is deleted.`,
    };
    setNotice(said[what]);
    keys.reload();
  };
  const items = keys.data ? keys.data.items : [];
  return html`
    <${PageTitle}>API keys<//>
    <p>Keys authenticate your servers and, restricted to your domains, the
      browser widget: <code>Authorization: Bearer svc_live_…</code>. Use one key
      per environment or project.</p>
    ${manager
      ? !creating &&
        !created &&
        html`<button type="button" onClick=${() => setCreating(true)}>Create a key</button>`
      : html`<p><${Disabled} label="Create a key" id="create-reason"
          reason="Only owners and admins can create API keys." /></p>`}
    ${creating &&
    html`<article aria-labelledby="create-title">
      <h2 id="create-title">New key</h2>
      ${limits.data
        ? html`<${KeyForm} initial=${{}} creating defaults=${limits.data.defaults}
            onSave=${create} onCancel=${() => setCreating(false)} />`
        : html`<${Loading} />`}
    </article>`}
    ${created && html`<${NewSecret} created=${created} onDone=${() => setCreated(null)} />`}
    <${Notice}>${notice}<//>
    <${ErrorNote} error=${keys.error} />
    ${keys.loading && !keys.data && html`<${Loading} />`}
    ${keys.data &&
    (items.length === 0
      ? html`<p>No keys yet.</p>`
      : html`<${TableScroll} label="API keys">
          <table>
            <thead><tr>
              <th scope="col">Name</th><th scope="col">Key</th><th scope="col">Mode</th>
              <th scope="col">Status</th><th scope="col">Allowed domains</th>
              <th scope="col">Limits (min / h / day)</th><th scope="col">Created</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr></thead>
            <tbody>
              ${items.map(
                (k) => html`<tr key=${k.id}>
                  <th scope="row"><a href=${"#/keys/" + k.id}>${k.name}</a></th>
                  <td><code>${k.prefix}</code></td>
                  <td><${Badge} kind=${k.mode}>${k.mode}<//></td>
                  <td><${StatusBadge} status=${k.status} /></td>
                  <td>${k.allowedDomains.length
                    ? html`<${Badge} kind="publishable">publishable<//> ${k.allowedDomains.join(", ")}`
                    : html`<span class="muted">any</span>`}</td>
                  <td>${WINDOWS.map(([w]) => limitText(k.rateLimits[w])).join(" / ")}</td>
                  <td>${when(k.createdAt)}</td>
                  <td><${KeyActions} k=${k} session=${session} compact
                    onChanged=${changed(k.name)} /></td>
                </tr>`,
              )}
            </tbody>
          </table>
        <//>`)}`;
}

function KeyStats({ id }) {
  const [days, setDays] = useState(30);
  const stats = useLoad(() => api.get(`/v2/api-keys/${id}/stats?days=${days}`), [id, days]);
  const s = stats.data;
  return html`<section aria-labelledby="stats-title">
    <h2 id="stats-title">Usage</h2>
    <fieldset class="period">
      <legend>Period</legend>
      ${[7, 30, 90].map(
        (d) => html`<label><input type="radio" name="days" value=${d}
          checked=${days === d} onChange=${() => setDays(d)} /> ${d} days</label>`,
      )}
    </fieldset>
    <${ErrorNote} error=${stats.error} />
    ${!s && html`<${Loading} />`}
    ${s &&
    html`<dl class="figures">
        <div><dt>Requests</dt><dd>${num(s.totalRequests)}</dd></div>
        <div><dt>Answered 200</dt><dd>${percent(s.successRate)}</dd></div>
        <div><dt>Credits used</dt><dd>${num(s.creditsConsumed)}</dd></div>
        <div><dt>Distinct addresses</dt><dd>${num(s.topEmails)}</dd></div>
      </dl>
      <${BarChart} title=${`Requests per day, last ${days} days`} valueLabel="Requests"
        rows=${s.requestsByDay.map((d) => ({ label: day(d.date), value: d.requests }))} />`}
  </section>`;
}

function KeyDetail({ id, session }) {
  const key = useLoad(() => api.get(`/v2/api-keys/${id}`), [id]);
  const limits = useLoad(() => api.get("/v2/api-keys/rate-limits"), []);
  const [notice, setNotice] = useState("");
  const [formKey, setFormKey] = useState(0);
  const k = key.data;
  const save = async (body) => {
    await api.patch(`/v2/api-keys/${id}`, body);
    setNotice("Saved.");
    await key.reload();
    setFormKey((n) => n + 1);
  };
  const changed = (what) => {
    if (what === "delete") {
      window.location.hash = "#/keys";
      return;
    }
    setNotice(
      what === "revoke"
        ? "Revoked: the key's next request gets 401 Unauthorized."
        : "Active again.",
    );
    key.reload();
  };
  useEffect(() => setNotice(""), [id]);
  return html`
    <p><a href="#/keys">← All keys</a></p>
    <${ErrorNote} error=${key.error} />
    ${!k && !key.error && html`<${Loading} />`}
    ${k &&
    html`<${PageTitle}>Key “${k.name}”<//>
      <p><code>${k.prefix}</code> <${Badge} kind=${k.mode}>${k.mode}<//>
        <${StatusBadge} status=${k.status} /> · created ${when(k.createdAt)}</p>
      ${k.allowedDomains.length > 0 &&
      html`<p><${Badge} kind="publishable">publishable<//> Restricted to
        ${" " + k.allowedDomains.join(", ")}, this key may sit in a web page:
        it only validates single addresses without SMTP (the widget,
        <code>POST /v2/email/validate</code>). Batches, credits, usage and the
        organization answer it 403, whatever site it is sent from.</p>`}
      <${KeyActions} k=${k} session=${session} onChanged=${changed} />
      <${Notice}>${notice}<//>
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        ${canManage(session)
          ? limits.data
            ? html`<${KeyForm} key=${formKey} initial=${k} defaults=${limits.data.defaults}
                onSave=${save} />`
            : html`<${Loading} />`
          : html`<p class="muted">${MEMBER_REASON} Checks: ${CHECKS.filter(
              ([c]) => k.config[c],
            )
              .map(([, label]) => label)
              .join(", ") || "none"}.</p>`}
      </section>
      <${KeyStats} id=${id} />`}`;
}

export function Keys({ session, rest }) {
  return rest[0]
    ? html`<${KeyDetail} id=${rest[0]} session=${session} />`
    : html`<${KeyList} session=${session} />`;
}
