// The Team page's audit log (docs/privacy.md, "Audit log"): who changed what
// in the organization, newest first, a page at a time, filtered by action.
// Owners and admins only (the server refuses everyone else).
import { html, useState, useLoad, ErrorNote, Loading, TableScroll, when, canManage } from "../ui.js";
import * as api from "../api.js";

const ACTIONS = [
  "api_key.created", "api_key.updated", "api_key.revoked", "api_key.reactivated",
  "api_key.deleted", "member.added", "member.role_changed", "member.removed",
  "credits.granted", "webhook.created", "webhook.updated", "webhook.deleted",
  "webhook.secret_rotated", "batch.deleted", "organization.updated",
  "organization.exported", "auth.login_failed",
];
const PAGE = 25;

// "user usr_…", "API key key_…", "operator", or "—" (nobody signed in).
function actorText(actor, names) {
  if (!actor.id) return "—";
  if (actor.type === "api_key") return `API key ${actor.id}`;
  if (actor.type === "operator") return "operator (CLI)";
  return names.get(actor.id) || actor.id;
}

function detailsText(e) {
  const parts = Object.entries(e.details).map(([k, v]) =>
    `${k}: ${Array.isArray(v) ? v.join(", ") : v === null ? "—" : v}`);
  if (e.occurrences > 1) parts.push(`${e.occurrences} times`);
  return parts.join("; ");
}

function AuditTable({ members }) {
  const [action, setAction] = useState("");
  const [older, setOlder] = useState([]);
  const [next, setNext] = useState(null);
  const query = (before) =>
    `/v2/audit-log?limit=${PAGE}${action ? `&action=${action}` : ""}${before ? `&before=${before}` : ""}`;
  const first = useLoad(async () => {
    const page = await api.get(query(0));
    setOlder([]);
    setNext(page.nextBefore);
    return page;
  }, [action]);
  const [moreError, setMoreError] = useState(null);
  const more = async () => {
    setMoreError(null);
    try {
      const page = await api.get(query(next));
      setOlder(older.concat(page.items));
      setNext(page.nextBefore);
    } catch (err) {
      setMoreError(err);
    }
  };
  const names = new Map(members.map((m) => [m.id, m.email]));
  const rows = first.data ? first.data.items.concat(older) : [];
  return html`<article aria-labelledby="audit-title">
    <h2 id="audit-title">Audit log</h2>
    <p>Who changed what in the organization, newest first. Entries follow the
      organization's retention.</p>
    <label for="audit-action">Action</label>
    <select id="audit-action" value=${action} onChange=${(e) => setAction(e.target.value)}>
      <option value="">every action</option>
      ${ACTIONS.map((a) => html`<option value=${a}>${a}</option>`)}
    </select>
    <${ErrorNote} error=${first.error} />
    ${!first.data && !first.error && html`<${Loading} />`}
    ${first.data &&
    html`<${TableScroll} label="Audit log">
      <table>
        <thead><tr><th scope="col">When</th><th scope="col">Action</th>
          <th scope="col">By</th><th scope="col">Target</th>
          <th scope="col">From</th><th scope="col">Details</th></tr></thead>
        <tbody>
          ${rows.length === 0 &&
          html`<tr><td colspan="6" class="muted">Nothing recorded yet.</td></tr>`}
          ${rows.map(
            (e) => html`<tr key=${e.id}>
              <td>${when(e.at)}</td>
              <th scope="row">${e.action}</th>
              <td>${actorText(e.actor, names)}</td>
              <td>${names.get(e.target) || e.target || "—"}</td>
              <td>${e.ip || "—"}</td>
              <td>${detailsText(e)}</td>
            </tr>`,
          )}
        </tbody>
      </table>
    <//>`}
    <${ErrorNote} error=${moreError} />
    ${next !== null && html`<button type="button" class="secondary" onClick=${more}>Older entries</button>`}
  </article>`;
}

export function AuditLog({ session, members }) {
  // Members are refused by the server: they get no table and no request.
  if (!canManage(session)) return null;
  return html`<${AuditTable} members=${members} />`;
}
