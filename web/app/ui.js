// What every page shares: the view library, small components and
// formatting. Views are functions of state written with htm (no build
// step); components here carry text beside every colour.
import { h, Fragment } from "./vendor/preact.mjs";
import {
  useState,
  useEffect,
  useRef,
  useCallback,
  useMemo,
} from "./vendor/hooks.mjs";
import htm from "./vendor/htm.mjs";

export const html = htm.bind(h);
export { h, Fragment, useState, useEffect, useRef, useCallback, useMemo };

const numberFormat = new Intl.NumberFormat();
const dateTimeFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: "medium",
  timeStyle: "short",
});
const dateFormat = new Intl.DateTimeFormat(undefined, {
  dateStyle: "medium",
  timeZone: "UTC",
});

/** 12345 -> "12,345" (the reader's locale). */
export const num = (n) => (n == null ? "—" : numberFormat.format(n));

/** An ISO timestamp in the reader's time zone, or "—". */
export const when = (iso) => (iso ? dateTimeFormat.format(new Date(iso)) : "—");

/** A "YYYY-MM-DD" UTC day. */
export const day = (d) => dateFormat.format(new Date(d + "T00:00:00Z"));

/** 0.8333 -> "83.3 %". */
export const percent = (x) =>
  x == null ? "—" : `${(Math.round(x * 1000) / 10).toLocaleString()} %`;

/** Seconds -> "1 h 5 min", "3 min 20 s", "45 s". */
export function duration(s) {
  if (s == null) return "—";
  s = Math.max(0, Math.round(s));
  if (s >= 3600) return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
  if (s >= 60) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${s} s`;
}

/** Whether the role may manage keys and members. */
export const canManage = (session) =>
  !!session && (session.role === "owner" || session.role === "admin");

/** The reason shown beside what a member may not do. */
export const MEMBER_REASON = "Only owners and admins can do this.";

/**
 * Runs `load()` now and whenever `deps` change; returns
 * {data, error, loading, reload}.
 */
export function useLoad(load, deps) {
  const [state, setState] = useState({ data: null, error: null, loading: true });
  const seq = useRef(0);
  const reload = useCallback(() => {
    const mine = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    return load().then(
      (data) => {
        if (mine === seq.current) setState({ data, error: null, loading: false });
      },
      (error) => {
        if (mine === seq.current) setState((s) => ({ ...s, error, loading: false }));
      },
    );
  }, deps);
  useEffect(() => {
    reload();
  }, [reload]);
  return { ...state, reload };
}

/**
 * A form's fields, one object: returns [fields, set, reset], where
 * `set(name)` is the onInput handler of the field `name` and `reset()`
 * puts back `initial`.
 */
export function useFields(initial) {
  const [fields, setFields] = useState(initial);
  const set = (name) => (e) => setFields({ ...fields, [name]: e.target.value });
  return [fields, set, () => setFields(initial)];
}

/**
 * What an action on the API shows while it runs: returns {busy, error,
 * setError, run}. `run(action)` clears the error, is busy while `action()`
 * runs, keeps what it threw as `error` (for ErrorNote) and resolves to
 * whether it succeeded. Options: `leaving: true` stays busy after a
 * success (the page changes); `failed()` runs with the error, in the same
 * render (to clear what the error makes stale).
 */
export function useAction() {
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const run = async (action, { leaving = false, failed = null } = {}) => {
    setBusy(true);
    setError(null);
    try {
      await action();
      if (!leaving) setBusy(false);
      return true;
    } catch (err) {
      setError(err);
      if (failed) failed();
      setBusy(false);
      return false;
    }
  };
  return { busy, error, setError, run };
}

/**
 * Calls `fn` every `seconds` while the tab is visible, and at once when it
 * becomes visible again; nothing runs while the tab is hidden.
 */
export function usePolling(fn, seconds, active = true) {
  const saved = useRef(fn);
  saved.current = fn;
  useEffect(() => {
    if (!active) return undefined;
    let timer = null;
    const arm = () => {
      clearTimeout(timer);
      timer = document.hidden ? null : setTimeout(tick, seconds * 1000);
    };
    const tick = () => {
      Promise.resolve(saved.current()).finally(arm);
    };
    const onVisibility = () => {
      if (document.hidden) clearTimeout(timer);
      else tick();
    };
    document.addEventListener("visibilitychange", onVisibility);
    arm();
    return () => {
      clearTimeout(timer);
      document.removeEventListener("visibilitychange", onVisibility);
    };
  }, [seconds, active]);
}

/** A page's heading; takes focus when the page opens (screen readers). */
export function PageTitle({ children }) {
  const ref = useRef(null);
  useEffect(() => {
    if (ref.current) ref.current.focus({ preventScroll: true });
  }, []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

/** An error of a call, as an alert. */
export function ErrorNote({ error, children }) {
  if (!error) return null;
  return html`<p role="alert" class="note error">
    <strong>Error:</strong> ${children || error.message}
  </p>`;
}

/** A success or information line that screen readers announce. */
export function Notice({ children }) {
  if (!children) return null;
  return html`<p role="status" class="note ok">${children}</p>`;
}

/** Shown while something loads. */
export const Loading = ({ what = "Loading" }) =>
  html`<p aria-busy="true">${what}…</p>`;

/** A coloured label that also says its value in words. */
export function Badge({ kind, children }) {
  return html`<span class=${"badge badge-" + kind}>${children}</span>`;
}

const statusText = {
  valid: "valid",
  invalid: "invalid",
  risky: "risky",
  unknown: "unknown",
  active: "active",
  revoked: "revoked",
  queued: "queued",
  processing: "processing",
  completed: "completed",
  cancelled: "cancelled",
  failed: "failed",
  operational: "operational",
  degraded: "degraded",
  unavailable: "unavailable",
};

/** A status word as a badge. */
export const StatusBadge = ({ status }) =>
  html`<${Badge} kind=${status}>${statusText[status] || status}<//>`;

/** A table in a region that scrolls sideways on narrow screens. */
export function TableScroll({ label, children }) {
  return html`<div class="table-scroll" role="region" aria-label=${label} tabindex="0">
    ${children}
  </div>`;
}

/** Copies `text`; says so in a live region. */
export function CopyButton({ text, label = "Copy", class: cls = "secondary" }) {
  const [done, setDone] = useState("");
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone("Copied to the clipboard.");
    } catch {
      setDone("Copying is not allowed here: select the text and copy it.");
    }
  };
  return html`<span class="copy">
    <button type="button" class=${cls} onClick=${copy}>${label}</button>
    <span role="status" class="muted">${done}</span>
  </span>`;
}

/** Saves `blob` as a download named `name`. */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

/** A modal dialog asking to confirm; `onClose(true|false)`. */
export function Confirm({ title, children, confirm, danger, onClose }) {
  const ref = useRef(null);
  useEffect(() => {
    const d = ref.current;
    if (d && !d.open) d.showModal();
  }, []);
  return html`<dialog ref=${ref} aria-labelledby="confirm-title"
      onCancel=${(e) => {
        e.preventDefault();
        onClose(false);
      }}>
    <article>
      <h2 id="confirm-title">${title}</h2>
      ${children}
      <footer>
        <button type="button" class="secondary" onClick=${() => onClose(false)}>
          Keep it
        </button>
        <button type="button" class=${danger ? "danger" : ""}
          onClick=${() => onClose(true)}>${confirm}</button>
      </footer>
    </article>
  </dialog>`;
}

/**
 * A bar chart of `rows` ({label, value}) with the same numbers in a table
 * behind it: the chart is a picture for those who see it, the table is the
 * data for everyone.
 */
export function BarChart({ title, rows, valueLabel, labelHeader = "Day" }) {
  const max = Math.max(1, ...rows.map((r) => r.value));
  const total = rows.reduce((a, r) => a + r.value, 0);
  const w = 10;
  const summary = `${title}: ${num(total)} in ${rows.length} ${
    rows.length === 1 ? "day" : "days"
  }, at most ${num(max === 1 && total === 0 ? 0 : max)} a day.`;
  return html`<figure class="chart">
    <figcaption>${title}</figcaption>
    <div class="chart-plot">
      <span class="chart-max" aria-hidden="true">${num(total ? max : 0)}</span>
      <svg role="img" aria-label=${summary}
        viewBox=${`0 0 ${rows.length * w} 100`} preserveAspectRatio="none">
        ${rows.map((r, i) => {
          const height = (r.value / max) * 100;
          return html`<rect x=${i * w + 1} y=${100 - height} width=${w - 2}
            height=${height} class="bar"><title>${r.label}: ${num(r.value)}</title></rect>`;
        })}
      </svg>
    </div>
    <div class="chart-axis" aria-hidden="true">
      <span>${rows.length ? rows[0].label : ""}</span>
      <span>${rows.length ? rows[rows.length - 1].label : ""}</span>
    </div>
    <details>
      <summary>Show the numbers as a table</summary>
      <${TableScroll} label=${title + " (table)"}>
        <table>
          <thead><tr><th scope="col">${labelHeader}</th>
            <th scope="col" class="num">${valueLabel}</th></tr></thead>
          <tbody>
            ${rows.map(
              (r) => html`<tr><td>${r.label}</td><td class="num">${num(r.value)}</td></tr>`,
            )}
          </tbody>
        </table>
      <//>
    </details>
  </figure>`;
}

/** Quotes `s` for a POSIX shell. */
export const shellQuote = (s) => `'${String(s).replace(/'/g, `'\\''`)}'`;

/** This service's address as the browser sees it, for curl examples. */
export const origin = () => window.location.origin;
