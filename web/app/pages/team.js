// Team: members and their roles; owners and admins add members, change
// roles and remove members. What the signed-in person may not do is
// disabled with the reason beside it (the server refuses it anyway).
import {
  html,
  useState,
  useLoad,
  useAction,
  useFields,
  PageTitle,
  ErrorNote,
  Notice,
  Loading,
  TableScroll,
  Confirm,
  canManage,
  when,
} from "../ui.js";
import * as api from "../api.js";
import { DangerZone } from "./danger_zone.js";
import { AuditLog } from "./audit_log.js";

const ROLES = ["owner", "admin", "member"];
const ROLE_HELP = {
  owner: "everything, including managing owners",
  admin: "manages keys and members (not owners)",
  member: "reads keys, statistics and credits; validates and runs batches",
};

// Why `me` may not change or remove `m`, or null when allowed.
function whyNot(me, m, owners) {
  if (!canManage(me)) return "Only owners and admins can change members.";
  if (m.role === "owner" && me.role !== "owner") return "Only an owner can change an owner.";
  if (m.role === "owner" && owners === 1)
    return "The organization must keep an owner: this is the last one.";
  return null;
}

function MemberRow({ m, me, owners, onChanged }) {
  const [role, setRole] = useState(m.role);
  const [asking, setAsking] = useState(false);
  const { busy, error, setError, run } = useAction();
  const self = m.id === me.user.id;
  const blocked = whyNot(me, m, owners);
  const removeBlocked = blocked || (self ? "You cannot remove yourself." : null);
  const reasonId = `why-${m.id}`;
  const save = () =>
    run(async () => {
      await api.patch(`/v2/organization/members/${m.id}`, { role });
      onChanged(`${m.email} is now ${role}.`);
    });
  const remove = async (ok) => {
    setAsking(false);
    if (!ok) return;
    setError(null);
    try {
      await api.del(`/v2/organization/members/${m.id}`);
      onChanged(`${m.email} was removed.`);
    } catch (err) {
      setError(err);
    }
  };
  const label = m.name || m.email;
  return html`<tr>
    <th scope="row">${m.name || "—"}${self ? html` <span class="muted">(you)</span>` : ""}</th>
    <td>${m.email}</td>
    <td>
      ${canManage(me)
        ? html`<span class="row-actions">
            <select aria-label=${"Role of " + label} value=${role} disabled=${!!blocked}
              aria-describedby=${blocked ? reasonId : undefined}
              onChange=${(e) => setRole(e.target.value)}>
              ${ROLES.map(
                (r) => html`<option value=${r}
                  disabled=${r === "owner" && me.role !== "owner"}>${r}</option>`,
              )}
            </select>
            ${role !== m.role &&
            html`<button type="button" class="small" onClick=${save}
              aria-busy=${busy ? "true" : undefined}>Save role<span class="visually-hidden"> of ${label}</span></button>`}
          </span>`
        : m.role}
    </td>
    <td>${when(m.createdAt)}</td>
    ${canManage(me) &&
    html`<td>
      <button type="button" class="danger outline small" disabled=${!!removeBlocked}
        aria-describedby=${removeBlocked ? reasonId : undefined}
        onClick=${() => setAsking(true)}>Remove<span class="visually-hidden"> ${label}</span></button>
      ${(blocked || removeBlocked) &&
      html`<small id=${reasonId} class="muted reason">${blocked || removeBlocked}</small>`}
      <${ErrorNote} error=${error} />
      ${asking &&
      html`<${Confirm} title=${`Remove ${label}?`} confirm="Remove member" danger onClose=${remove}>
        <p>${m.email} can no longer sign in to this organization. Its API keys
          stay (they belong to the organization).</p>
      <//>`}
    </td>`}
  </tr>`;
}

function AddMember({ me, onAdded }) {
  const [f, set, reset] = useFields({ email: "", name: "", password: "", role: "member" });
  const { busy, error, run } = useAction();
  const submit = (e) => {
    e.preventDefault();
    const body = { email: f.email, password: f.password, role: f.role };
    if (f.name) body.name = f.name;
    run(async () => {
      await api.post("/v2/organization/members", body);
      reset();
      onAdded(`${body.email} was added as ${body.role}.`);
    });
  };
  return html`<article aria-labelledby="add-title">
    <h2 id="add-title">Add a member</h2>
    <form onSubmit=${submit}>
      <div class="grid">
        <label>Email
          <input type="email" name="email" required autocomplete="off"
            value=${f.email} onInput=${set("email")} />
        </label>
        <label>Name <span class="muted">(optional)</span>
          <input name="name" autocomplete="off" value=${f.name} onInput=${set("name")} />
        </label>
      </div>
      <div class="grid">
        <div>
          <label for="member-password">Initial password</label>
          <input id="member-password" type="password" name="password" required minlength="8"
            autocomplete="new-password" aria-describedby="member-password-help"
            value=${f.password} onInput=${set("password")} />
          <small id="member-password-help">At least 8 characters; tell it to
            them through another channel.</small>
        </div>
        <div>
          <label for="member-role">Role</label>
          <select id="member-role" name="role" value=${f.role} onChange=${set("role")}
            aria-describedby="member-role-help">
            ${ROLES.map(
              (r) => html`<option value=${r} disabled=${r === "owner" && me.role !== "owner"}>${r}</option>`,
            )}
          </select>
          <small id="member-role-help">${f.role}: ${ROLE_HELP[f.role]}.${me.role !== "owner"
            ? " Only owners can add owners." : ""}</small>
        </div>
      </div>
      <${ErrorNote} error=${error} />
      <button type="submit" aria-busy=${busy ? "true" : undefined}>Add member</button>
    </form>
  </article>`;
}

export function Team({ session }) {
  const members = useLoad(() => api.get("/v2/organization/members"), []);
  const [notice, setNotice] = useState("");
  const changed = (text) => {
    setNotice(text);
    members.reload();
  };
  const items = members.data ? members.data.items : [];
  const owners = items.filter((m) => m.role === "owner").length;
  return html`<${PageTitle}>Team<//>
    <p>Roles: <strong>owner</strong>, ${ROLE_HELP.owner}; <strong>admin</strong>,${" "}
      ${ROLE_HELP.admin}; <strong>member</strong>, ${ROLE_HELP.member}.</p>
    ${!canManage(session) &&
    html`<p class="note">Only owners and admins can add, change or remove members.</p>`}
    <${Notice}>${notice}<//>
    <${ErrorNote} error=${members.error} />
    ${!members.data && !members.error && html`<${Loading} />`}
    ${members.data &&
    html`<${TableScroll} label="Members">
      <table>
        <thead><tr><th scope="col">Name</th><th scope="col">Email</th>
          <th scope="col">Role</th><th scope="col">Joined</th>
          ${canManage(session) &&
          html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
        <tbody>
          ${items.map(
            (m) => html`<${MemberRow} key=${m.id + m.role} m=${m} me=${session}
              owners=${owners} onChanged=${changed} />`,
          )}
        </tbody>
      </table>
    <//>`}
    ${canManage(session) && html`<${AddMember} me=${session} onAdded=${changed} />`}
    <${AuditLog} session=${session} members=${items} />
    <${DangerZone} session=${session} />`;
}
