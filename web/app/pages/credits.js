// Credits: the balance and the ledger (newest first, paged), each batch
// entry linked to its job, and the whole ledger as a CSV file.
import {
  html,
  useState,
  useEffect,
  useLoad,
  PageTitle,
  ErrorNote,
  Loading,
  TableScroll,
  download,
  num,
  when,
} from "../ui.js";
import * as api from "../api.js";

const KINDS = {
  signup: "Sign-up grant",
  grant: "Credits added",
  smtp_check: "SMTP check",
  smtp_refund: "SMTP check refunded (no server answered)",
  batch_reserve: "Batch job: reserved",
  batch_refund: "Batch job: unused part refunded",
};

const PAGE = 50;

// A CSV cell: quoted when needed, and a leading = + - @ defused (a
// spreadsheet would run it as a formula).
function cell(v) {
  let s = v == null ? "" : String(v);
  if (/^[=+\-@]/.test(s) && !/^-?\d+$/.test(s)) s = "'" + s;
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

async function exportLedger() {
  const rows = [["id", "createdAt", "kind", "delta", "balanceAfter", "reference"]];
  let before = 0;
  for (;;) {
    const page = await api.get(
      `/v2/credits/transactions?limit=500${before ? "&before=" + before : ""}`,
    );
    for (const e of page.items)
      rows.push([e.id, e.createdAt, e.kind, e.delta, e.balanceAfter, e.reference]);
    if (page.nextBefore == null) break;
    before = page.nextBefore;
  }
  const text = rows.map((r) => r.map(cell).join(",")).join("\r\n") + "\r\n";
  const today = new Date().toISOString().slice(0, 10);
  download(new Blob([text], { type: "text/csv" }), `mailassay-credits-${today}.csv`);
}

function Reference({ e }) {
  if (e.kind.startsWith("batch_") && e.reference)
    return html`<a href=${"#/batches/" + e.reference}>job ${e.reference}</a>`;
  return e.reference ? html`<span class="muted">${e.reference}</span>` : "—";
}

export function Credits() {
  const balance = useLoad(() => api.get("/v2/credits/balance"), []);
  const [entries, setEntries] = useState([]);
  const [next, setNext] = useState(0);
  const [error, setError] = useState(null);
  const [loading, setLoading] = useState(true);
  const [exporting, setExporting] = useState(false);
  const load = async (before) => {
    setLoading(true);
    try {
      const page = await api.get(
        `/v2/credits/transactions?limit=${PAGE}${before ? "&before=" + before : ""}`,
      );
      setEntries((cur) => (before ? cur.concat(page.items) : page.items));
      setNext(page.nextBefore);
      setError(null);
    } catch (err) {
      setError(err);
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    load(0);
  }, []);
  const exportCsv = async () => {
    setExporting(true);
    try {
      await exportLedger();
    } catch (err) {
      setError(err);
    } finally {
      setExporting(false);
    }
  };
  const b = balance.data;
  return html`<${PageTitle}>Credits<//>
    <p>One credit is used per address checked over SMTP; syntax, DNS and the
      other checks are free. Operators add credits with${" "}
      <code>mailassay admin grant-credits</code>.</p>
    <${ErrorNote} error=${balance.error} />
    ${b
      ? html`<dl class="figures">
          <div><dt>Balance</dt><dd>${num(b.balance)}</dd></div>
          <div><dt>Used so far</dt><dd>${num(b.consumed)}</dd></div>
        </dl>`
      : !balance.error && html`<${Loading} />`}
    <h2>Ledger</h2>
    <div class="actions">
      <button type="button" class="secondary" onClick=${exportCsv}
        aria-busy=${exporting ? "true" : undefined}>Export the ledger as CSV</button>
    </div>
    <${ErrorNote} error=${error} />
    ${entries.length > 0 &&
    html`<${TableScroll} label="Ledger">
      <table>
        <thead><tr><th scope="col">Date</th><th scope="col">Entry</th>
          <th scope="col" class="num">Change</th>
          <th scope="col" class="num">Balance after</th>
          <th scope="col">For</th></tr></thead>
        <tbody>
          ${entries.map(
            (e) => html`<tr key=${e.id}>
              <td>${when(e.createdAt)}</td>
              <td>${KINDS[e.kind] || e.kind}</td>
              <td class="num">${e.delta > 0 ? "+" : ""}${num(e.delta)}</td>
              <td class="num">${num(e.balanceAfter)}</td>
              <td><${Reference} e=${e} /></td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>`}
    ${!loading && entries.length === 0 && !error && html`<p>No entries yet.</p>`}
    ${loading && html`<${Loading} />`}
    ${!loading && next != null &&
    html`<button type="button" class="secondary" onClick=${() => load(next)}>
      Show older entries</button>`}`;
}
