// Batches: upload a CSV (drop it or choose it; emailColumn, deduplicate,
// smtp with its credit estimate), explain the 409 of a second job, follow a
// job (polled every 30 s while the tab is visible), cancel it, export all
// rows or chosen statuses, also while it runs, and delete it (erased).
import {
  html,
  useState,
  useEffect,
  useLoad,
  usePolling,
  useAction,
  PageTitle,
  ErrorNote,
  Notice,
  Loading,
  StatusBadge,
  TableScroll,
  Confirm,
  download,
  num,
  when,
  duration,
} from "../ui.js";
import * as api from "../api.js";
import { parseCsv, describe, estimate } from "../lib/csv.js";

const ACTIVE = ["queued", "processing"];
const STATUSES = ["valid", "invalid", "risky", "unknown"];
const POLL_SECONDS = 30;
const items = (j) => j.uniqueEmails + j.invalidRows;

// The 409: which job is running, with a link to it.
function ActiveJobNote() {
  const jobs = useLoad(() => api.get("/v2/batch"), []);
  const active = jobs.data && jobs.data.items.find((j) => ACTIVE.includes(j.status));
  return html`<div role="alert" class="note error">
    <p><strong>A batch job is already running for this organization.</strong>${" "}
      An organization runs one job at a time, so this file was not uploaded and
      nothing was charged.</p>
    <p>${active
      ? html`Running: <a href=${"#/batches/" + active.id}>${active.fileName}</a>${" "}
          (${num(active.processed)} of ${num(items(active))} done). Wait for it to
          finish, or open it and cancel it; then upload again.`
      : "Wait for it to finish or cancel it, then upload again."}</p>
  </div>`;
}

function Upload({ onUploaded }) {
  const [file, setFile] = useState(null);
  const [rows, setRows] = useState(null);
  const [column, setColumn] = useState("");
  const [dedupe, setDedupe] = useState(true);
  const [smtp, setSmtp] = useState(false);
  const [over, setOver] = useState(false);
  const { busy, error, setError, run } = useAction();
  const balance = useLoad(() => api.get("/v2/credits/balance"), []);
  const take = async (f) => {
    setError(null);
    setFile(f);
    setRows(null);
    setColumn("");
    if (f) setRows(parseCsv(await f.text()));
  };
  const info = rows ? describe(rows) : null;
  const columnIndex =
    info && info.header && column !== "" ? info.header.indexOf(column) : info && info.column;
  const est = info ? estimate(rows, info.header, columnIndex, dedupe) : null;
  const submit = async (e) => {
    e.preventDefault();
    if (!file) return;
    const form = new FormData();
    form.append("file", file, file.name);
    form.append("deduplicate", String(dedupe));
    form.append("smtp", String(smtp));
    if (column) form.append("emailColumn", column);
    run(async () => onUploaded(await api.upload("/v2/batch/upload", form)));
  };
  const drop = (e) => {
    e.preventDefault();
    setOver(false);
    const f = e.dataTransfer && e.dataTransfer.files[0];
    if (f) take(f);
  };
  const credits = balance.data ? balance.data.balance : null;
  return html`<article aria-labelledby="upload-title">
    <h2 id="upload-title">Upload a file</h2>
    <form onSubmit=${submit}>
      <div class=${"dropzone" + (over ? " over" : "")} role="group"
        aria-labelledby="drop-label"
        onDragOver=${(e) => {
          e.preventDefault();
          setOver(true);
        }}
        onDragLeave=${() => setOver(false)} onDrop=${drop}>
        <label id="drop-label" for="batch-file">Drop a CSV file here, or choose one</label>
        <input id="batch-file" type="file" name="file" accept=".csv,text/csv,text/plain"
          aria-describedby="file-help" onChange=${(e) => take(e.target.files[0] || null)} />
        <small id="file-help" class="muted">UTF-8 text, one address per row,
          up to 10 MB and 200,000 addresses.</small>
        ${file && html`<p><strong>${file.name}</strong> · ${num(file.size)} bytes${est
          ? ` · ${num(est.rows)} rows, about ${num(est.addresses)} ${dedupe ? "unique " : ""}addresses`
          : ""}</p>`}
      </div>
      ${info &&
      (info.header
        ? html`<label>Column with the addresses
            <select name="emailColumn" value=${column} onChange=${(e) => setColumn(e.target.value)}>
              <option value="">Automatic: ${info.header[info.column]}</option>
              ${info.header.map((h) => html`<option value=${h}>${h}</option>`)}
            </select>
          </label>`
        : html`<p class="muted">The first row holds an address, so the file has no
            header: the addresses are read from column ${info.column + 1}.</p>`)}
      <label>
        <input type="checkbox" role="switch" name="deduplicate" checked=${dedupe}
          onChange=${(e) => setDedupe(e.target.checked)} />
        Remove duplicate addresses
      </label>
      <label>
        <input type="checkbox" role="switch" name="smtp" checked=${smtp}
          aria-describedby="smtp-help" onChange=${(e) => setSmtp(e.target.checked)} />
        Check mailboxes over SMTP
      </label>
      <p id="smtp-help" class=${smtp && est && credits != null && est.addresses > credits
        ? "note warn" : "muted"}>
        ${smtp
          ? html`Costs up to <strong>${est ? num(est.addresses) : "one per address"}</strong>
              ${est ? " credits" : ""} (one per address, reserved at upload; what
              is not used is refunded). Your balance: ${num(credits)}.${est &&
              credits != null && est.addresses > credits
                ? " That is not enough: the upload would be refused (402)."
                : ""}`
          : "Without SMTP, the checks are free (syntax, DNS, disposable, role, typo)."}
      </p>
      ${error &&
      (error.status === 409
        ? html`<${ActiveJobNote} />`
        : html`<${ErrorNote} error=${error} />`)}
      <button type="submit" disabled=${!file} aria-busy=${busy ? "true" : undefined}>
        Upload and start</button>
    </form>
  </article>`;
}

function JobList() {
  const jobs = useLoad(() => api.get("/v2/batch"), []);
  const list = jobs.data ? jobs.data.items : [];
  usePolling(jobs.reload, POLL_SECONDS, list.some((j) => ACTIVE.includes(j.status)));
  return html`<section aria-labelledby="jobs-title">
    <h2 id="jobs-title">Jobs</h2>
    <${ErrorNote} error=${jobs.error} />
    ${!jobs.data && !jobs.error && html`<${Loading} />`}
    ${jobs.data && list.length === 0 && html`<p>No job yet.</p>`}
    ${list.length > 0 &&
    html`<${TableScroll} label="Jobs">
      <table>
        <thead><tr><th scope="col">File</th><th scope="col">Status</th>
          <th scope="col">Progress</th><th scope="col" class="num">Addresses</th>
          <th scope="col">Created</th></tr></thead>
        <tbody>
          ${list.map(
            (j) => html`<tr key=${j.id}>
              <th scope="row"><a href=${"#/batches/" + j.id}>${j.fileName}</a></th>
              <td><${StatusBadge} status=${j.status} /></td>
              <td>${j.progress} %</td>
              <td class="num">${num(items(j))}</td>
              <td>${when(j.createdAt)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>`}
  </section>`;
}

function Breakdown({ j }) {
  const done = STATUSES.reduce((a, s) => a + j.counts[s], 0);
  return html`<${TableScroll} label="Results by status">
    <table>
      <caption class="muted">Results so far</caption>
      <thead><tr><th scope="col">Status</th><th scope="col" class="num">Addresses</th>
        <th scope="col" class="num">Share</th></tr></thead>
      <tbody>
        ${STATUSES.map(
          (s) => html`<tr>
            <th scope="row"><${StatusBadge} status=${s} /></th>
            <td class="num">${num(j.counts[s])}</td>
            <td class="num">${done ? `${Math.round((1000 * j.counts[s]) / done) / 10} %` : "—"}</td>
          </tr>`,
        )}
      </tbody>
    </table>
  <//>`;
}

// Results by provider (issue #30): counted in the browser from the JSON
// export, on request only, since a large job's export is many megabytes.
export function tallyProviders(results) {
  const rows = new Map();
  for (const r of results) {
    const key = r.provider ? r.provider.name : "";
    const row = rows.get(key) || { name: key, kind: r.provider ? r.provider.kind : "",
      count: 0, valid: 0 };
    row.count += 1;
    if (r.status === "valid") row.valid += 1;
    rows.set(key, row);
  }
  return [...rows.values()].sort((a, b) => b.count - a.count || a.name.localeCompare(b.name));
}

function ByProvider({ j }) {
  const [rows, setRows] = useState(null);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const count = async () => {
    setBusy(true);
    setError(null);
    try {
      const doc = await api.get(`/v2/batch/${j.id}/results?format=json`);
      setRows(tallyProviders(doc.results || []));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const total = rows ? rows.reduce((a, r) => a + r.count, 0) : 0;
  return html`<section aria-labelledby="providers-title">
    <h2 id="providers-title">Results by provider</h2>
    <p class="muted">Who runs each address's mail, from its domain's first MX host:
      a mailbox provider, or a security gateway in front of one.</p>
    <button type="button" class="secondary" onClick=${count}
      aria-busy=${busy ? "true" : undefined}>Count results by provider</button>
    <${ErrorNote} error=${error} />
    ${rows &&
    html`<${TableScroll} label="Provider counts">
      <table>
        <caption class="muted">${num(total)} results</caption>
        <thead><tr><th scope="col">Provider</th><th scope="col">Kind</th>
          <th scope="col" class="num">Addresses</th><th scope="col" class="num">Valid</th>
          <th scope="col" class="num">Share</th></tr></thead>
        <tbody>
          ${rows.map(
            (r) => html`<tr>
              <th scope="row">${r.name || "none known"}</th>
              <td>${r.kind === "gateway" ? "security gateway" : r.kind === "mailbox" ? "mailbox provider" : "—"}</td>
              <td class="num">${num(r.count)}</td>
              <td class="num">${num(r.valid)}</td>
              <td class="num">${total ? `${Math.round((1000 * r.count) / total) / 10} %` : "—"}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>`}
  </section>`;
}

function Export({ j }) {
  const [chosen, setChosen] = useState(["invalid"]);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState("");
  const base = j.fileName.replace(/\.[^.]*$/, "") || "batch";
  const get = async (statuses) => {
    setBusy(statuses.length ? "chosen" : "all");
    setError(null);
    try {
      const q = statuses.length ? "&status=" + statuses.join(",") : "";
      const blob = await api.blob(`/v2/batch/${j.id}/results?format=csv${q}`);
      download(blob, `${base}-results${statuses.length ? "-" + statuses.join("-") : ""}.csv`);
    } catch (err) {
      setError(err);
    } finally {
      setBusy("");
    }
  };
  const toggle = (s) => (e) =>
    setChosen(e.target.checked ? STATUSES.filter((x) => x === s || chosen.includes(x))
      : chosen.filter((x) => x !== s));
  return html`<section aria-labelledby="export-title">
    <h2 id="export-title">Export</h2>
    ${ACTIVE.includes(j.status) &&
    html`<p class="muted">The job is still running: a file holds the rows finished so far.</p>`}
    <p class="muted">CSV columns: email, status, reason, score, normalized, then the
      checks' flags, the suggestion and the provider.</p>
    <div class="actions">
      <button type="button" onClick=${() => get([])}
        aria-busy=${busy === "all" ? "true" : undefined}>Download all rows</button>
    </div>
    <fieldset class="period">
      <legend>Only these statuses</legend>
      ${STATUSES.map(
        (s) => html`<label><input type="checkbox" name=${"export-" + s}
          checked=${chosen.includes(s)} onChange=${toggle(s)} /> ${s}</label>`,
      )}
    </fieldset>
    <button type="button" class="secondary" disabled=${!chosen.length}
      onClick=${() => get(chosen)} aria-busy=${busy === "chosen" ? "true" : undefined}>
      Download the chosen statuses</button>
    <${ErrorNote} error=${error} />
  </section>`;
}

function JobDetail({ id }) {
  const job = useLoad(() => api.get(`/v2/batch/${id}`), [id]);
  const [checked, setChecked] = useState(new Date());
  const [asking, setAsking] = useState(false);
  const [erasing, setErasing] = useState(false);
  const [notice, setNotice] = useState("");
  const [error, setError] = useState(null);
  const j = job.data;
  const active = !!j && ACTIVE.includes(j.status);
  const refresh = async () => {
    await job.reload();
    setChecked(new Date());
  };
  usePolling(refresh, POLL_SECONDS, active);
  useEffect(() => setChecked(new Date()), [id]);
  const cancel = async (ok) => {
    setAsking(false);
    if (!ok) return;
    setError(null);
    try {
      await api.post(`/v2/batch/${id}/cancel`);
      setNotice("The job was cancelled; the credits it had not used are refunded.");
      refresh();
    } catch (err) {
      setError(err);
      refresh();
    }
  };
  const erase = async (ok) => {
    setErasing(false);
    if (!ok) return;
    setError(null);
    try {
      await api.del(`/v2/batch/${id}`);
      window.location.hash = "#/batches";
    } catch (err) {
      setError(err);
    }
  };
  return html`<p><a href="#/batches">← All jobs</a></p>
    <${ErrorNote} error=${job.error} />
    ${!j && !job.error && html`<${Loading} />`}
    ${j &&
    html`<${PageTitle}>Job “${j.fileName}”<//>
      <p><${StatusBadge} status=${j.status} /> · created ${when(j.createdAt)}${j.finishedAt
        ? ` · finished ${when(j.finishedAt)}` : ""}</p>
      <label id="job-progress-label" for="job-progress">Progress</label>
      <progress id="job-progress" aria-labelledby="job-progress-label"
        value=${j.progress} max="100"></progress>
      <p aria-live="polite">${num(j.processed)} of ${num(items(j))} addresses done
        (${j.progress} %)${active && j.etaSeconds != null
          ? ` · about ${duration(j.etaSeconds)} left` : ""}</p>
      ${active &&
      html`<p class="muted">Checked again every ${POLL_SECONDS} seconds while this tab is
          visible · last ${checked.toLocaleTimeString()}${" "}
        <button type="button" class="small secondary" onClick=${refresh}>Check now</button></p>`}
      <${Notice}>${notice}<//>
      <${ErrorNote} error=${error} />
      ${active &&
      html`<button type="button" class="danger outline" onClick=${() => setAsking(true)}>
        Cancel the job</button>`}
      ${asking &&
      html`<${Confirm} title="Cancel this job?" confirm="Cancel the job" danger onClose=${cancel}>
        <p>The rows not done yet are not checked; those done stay exportable, and
          the credits not used are refunded.</p>
      <//>`}
      <button type="button" class="danger outline" onClick=${() => setErasing(true)}>
        Delete the job</button>
      ${erasing &&
      html`<${Confirm} title="Delete this job?" confirm="Delete the job" danger onClose=${erase}>
        <p>The uploaded addresses, the results and the job itself are erased for
          good${active ? "; the job is cancelled first and the credits not used are refunded" : ""}.
          Download the results first if you need them.</p>
      <//>`}
      <h2>Results</h2>
      <${Breakdown} j=${j} />
      <dl class="figures">
        <div><dt>Rows in the file</dt><dd>${num(j.totalRows)}</dd></div>
        <div><dt>Duplicates removed</dt><dd>${num(j.duplicatesRemoved)}</dd></div>
        <div><dt>Rows without an address</dt><dd>${num(j.invalidRows)}</dd></div>
        <div><dt>Credits used / reserved</dt><dd>${num(j.creditsUsed)} / ${num(j.creditsReserved)}</dd></div>
      </dl>
      <p class="muted">Column: ${j.emailColumn || "the first holding an address"} ·
        duplicates ${j.deduplicate ? "removed" : "kept"} · SMTP ${j.smtp ? "on" : "off"}</p>
      ${j.resultsErasedAt
        ? html`<section aria-labelledby="erased-title">
            <h2 id="erased-title">Export</h2>
            <p>The addresses and results of this job were erased ${when(j.resultsErasedAt)},
              after the retention period; the counts above stay.</p>
          </section>`
        : html`<${ByProvider} j=${j} />
          <${Export} j=${j} />`}`}`;
}

export function Batches({ rest }) {
  if (rest[0]) return html`<${JobDetail} id=${rest[0]} />`;
  return html`<${PageTitle}>Batches<//>
    <p>Validate a whole file. Progress is checked every ${POLL_SECONDS} seconds;
      the results can be downloaded while the job runs.</p>
    <${Upload} onUploaded=${(job) => (window.location.hash = "#/batches/" + job.id)} />
    <${JobList} />`;
}
