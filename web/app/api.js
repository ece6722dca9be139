// The API client: the one module that holds the session. The access token
// lives in this module's memory only; the refresh token lives in an
// HttpOnly cookie the page cannot read, which only /v2/auth/* receives
// (docs/dashboard.md, "Sessions"). Pages call get/post/... and never see a
// token.

const FLAG = "mailassay.signedIn"; // no secret: "try the cookie on load"
const channel =
  "BroadcastChannel" in window ? new BroadcastChannel("mailassay-session") : null;

let accessToken = null;
let expiresAt = 0; // ms since the epoch
let session = null; // {user, organization, role}
let refreshing = null; // the refresh in flight, shared by every caller
const listeners = new Set();

/** An answer other than 2xx: status, message (text), code, body. */
export class ApiError extends Error {
  constructor(status, body) {
    const m = body && body.message;
    super(
      Array.isArray(m) ? m.join("; ") : m || `The server answered ${status}`,
    );
    this.status = status;
    this.code = (body && body.code) || null;
    this.body = body;
  }
}

/** The signed-in session ({user, organization, role}) or null. */
export function currentSession() {
  return session;
}

/** Calls `fn(session|null)` whenever the session starts or ends. */
export function onSessionChange(fn) {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function setSession(body, broadcast) {
  if (body) {
    accessToken = body.accessToken;
    // A minute early: a request never leaves with a token about to expire.
    expiresAt = Date.now() + (body.expiresIn - 60) * 1000;
    session = {
      user: body.user,
      organization: body.organization,
      role: body.role,
    };
    localStorage.setItem(FLAG, "1");
  } else {
    accessToken = null;
    expiresAt = 0;
    session = null;
    localStorage.removeItem(FLAG);
  }
  if (broadcast && channel) channel.postMessage(body ? "signed-in" : "signed-out");
  for (const fn of listeners) fn(session);
}

if (channel) {
  // Another tab signed out: its refresh family is gone, so is ours.
  channel.onmessage = (e) => {
    if (e.data === "signed-out" && session) setSession(null, false);
  };
}

async function parse(r) {
  if (r.status === 204) return null;
  const type = r.headers.get("Content-Type") || "";
  if (type.includes("json")) return r.json();
  return r.text();
}

// POSTs to an auth endpoint in the cookie form (the browser sends and
// stores the cookie; this page never sees it).
async function authCall(path, body) {
  const init = { method: "POST", credentials: "same-origin" };
  if (body !== undefined) {
    init.headers = { "Content-Type": "application/json" };
    init.body = JSON.stringify(body);
  }
  const r = await fetch(path, init);
  const data = await parse(r);
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

// Spends the cookie for a new pair. Tabs take turns (Web Locks): two tabs
// presenting the same cookie at once would look like a stolen token and
// end the session everywhere.
function refresh() {
  if (!refreshing) {
    const run = async () => {
      try {
        setSession(await authCall("/v2/auth/refresh"), false);
        return true;
      } catch (e) {
        if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
          setSession(null, false);
          return false;
        }
        throw e;
      }
    };
    const locked = navigator.locks
      ? navigator.locks.request("mailassay-refresh", run)
      : run();
    refreshing = locked.finally(() => {
      refreshing = null;
    });
  }
  return refreshing;
}

/** Restores the session after a reload; resolves to the session or null. */
export async function restore() {
  if (localStorage.getItem(FLAG) !== "1") return null;
  try {
    await refresh();
  } catch {
    return null;
  }
  return session;
}

/** Signs in; resolves to the session, throws ApiError. */
export async function signIn(email, password) {
  setSession(
    await authCall("/v2/auth/login?session=cookie", { email, password }),
    true,
  );
  return session;
}

/** Creates an organization and its owner; resolves to the session. */
export async function signUp(fields) {
  setSession(await authCall("/v2/auth/signup?session=cookie", fields), true);
  return session;
}

/** Ends the refresh family on the server and forgets the session. */
export async function signOut() {
  try {
    await authCall("/v2/auth/logout");
  } finally {
    setSession(null, true);
  }
}

/** Whether sign-up is open on this server. */
export async function signupEnabled() {
  const r = await fetch("/v2/auth/options");
  return r.ok ? (await r.json()).signupEnabled : false;
}

// One authenticated request; refreshes first when the token is (nearly)
// expired, and once more if the server still says 401.
async function request(method, path, { json, form, raw } = {}) {
  if (!accessToken || Date.now() >= expiresAt) {
    if (!(await refresh())) throw new ApiError(401, { message: "Signed out" });
  }
  const send = () => {
    const headers = { Authorization: "Bearer " + accessToken };
    const init = { method, headers };
    if (json !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(json);
    } else if (form !== undefined) {
      init.body = form; // multipart: the browser sets the boundary
    }
    return fetch(path, init);
  };
  let r = await send();
  if (r.status === 401 && (await refresh())) r = await send();
  if (raw && r.ok) return r;
  const data = await parse(r);
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, json) => request("POST", path, { json });
export const patch = (path, json) => request("PATCH", path, { json });
/** DELETEs; `json`, when given, is the body (DELETE /v2/organization). */
export const del = (path, json) =>
  request("DELETE", path, json === undefined ? {} : { json });
/** POSTs a FormData (multipart/form-data). */
export const upload = (path, form) => request("POST", path, { form });
/** GETs a body as a Blob (exports). */
export const blob = async (path) =>
  (await request("GET", path, { raw: true })).blob();

/** GETs a public document (no credential): /status, /metrics. */
export async function publicGet(path) {
  const r = await fetch(path);
  const data = await parse(r);
  if (!r.ok) throw new ApiError(r.status, data);
  return data;
}
