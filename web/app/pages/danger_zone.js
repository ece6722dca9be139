// The Team page's danger zone (docs/privacy.md): owners and admins take the
// organization's data out as one JSON file; an owner erases the whole
// organization after typing the password again. Members do not see it.
import { html, useState, useAction, ErrorNote, Confirm, canManage, download } from "../ui.js";
import * as api from "../api.js";

function ExportData({ session }) {
  const { busy, error, run } = useAction();
  const save = () =>
    run(async () => {
      const blob = await api.blob("/v2/organization/export");
      const day = new Date().toISOString().slice(0, 10);
      download(blob, `mailassay-${session.organization.id}-${day}.json`);
    });
  return html`<section aria-labelledby="export-title">
    <h3 id="export-title">Export the organization's data</h3>
    <p>One JSON file: the organization, its members, API keys (prefixes
      only), webhooks, usage, ledger and batch jobs (records, not their
      rows). No secret is in it.</p>
    <${ErrorNote} error=${error} />
    <button type="button" class="secondary" onClick=${save}
      aria-busy=${busy ? "true" : undefined}>Export data</button>
  </section>`;
}

function EraseOrganization({ session }) {
  const [password, setPassword] = useState("");
  const [asking, setAsking] = useState(false);
  const { error, setError } = useAction();
  const owner = session.role === "owner";
  const erase = async (ok) => {
    setAsking(false);
    if (!ok) return;
    setError(null);
    try {
      await api.del("/v2/organization", { password });
    } catch (err) {
      setError(err);
      return;
    }
    // Everything is gone, the session's refresh token too.
    try {
      await api.signOut();
    } catch (_) {
      // Signed out locally all the same.
    }
  };
  const submit = (e) => {
    e.preventDefault();
    setAsking(true);
  };
  return html`<section aria-labelledby="erase-title">
    <h3 id="erase-title">Delete the organization</h3>
    <p>Erases the organization and everything it owns: members, API keys,
      webhooks, batch jobs with their rows, usage, credits and ledger. A
      running job stops. This cannot be undone.</p>
    ${owner
      ? html`<form onSubmit=${submit}>
          <label for="erase-password">Your password</label>
          <input id="erase-password" type="password" name="password" required
            autocomplete="current-password" value=${password}
            onInput=${(e) => setPassword(e.target.value)} />
          <${ErrorNote} error=${error} />
          <button type="submit" class="danger">Delete organization</button>
        </form>`
      : html`<p class="note">Only an owner can delete the organization.</p>`}
    ${asking &&
    html`<${Confirm} title="Delete the organization and all its data?"
        confirm="Delete everything" danger onClose=${erase}>
      <p>${session.organization.name}: every member, key, job and webhook is
        erased at once, and everyone is signed out.</p>
    <//>`}
  </section>`;
}

export function DangerZone({ session }) {
  if (!canManage(session)) return null;
  return html`<article class="danger-zone" aria-labelledby="danger-title">
    <h2 id="danger-title">Danger zone</h2>
    <${ExportData} session=${session} />
    <${EraseOrganization} session=${session} />
  </article>`;
}
