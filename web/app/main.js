// The dashboard's shell: restores the session, routes on the URL's hash
// (#/keys, #/batches/job_...) so every page survives a reload, and draws the
// navigation. Each page is one module under pages/.
import { render } from "./vendor/preact.mjs";
import { html, useState, useEffect, canManage } from "./ui.js";
import * as api from "./api.js";
import { SignIn, SignUp } from "./pages/signin.js";
import { Overview } from "./pages/overview.js";
import { Validate } from "./pages/validate.js";
import { Batches } from "./pages/batches.js";
import { Keys } from "./pages/keys.js";
import { Credits } from "./pages/credits.js";
import { Team } from "./pages/team.js";
import { Operations } from "./pages/operations.js";

// path -> [title, component, owner/admin only]
const pages = {
  "": ["Overview", Overview],
  validate: ["Validate", Validate],
  batches: ["Batches", Batches],
  keys: ["API keys", Keys],
  credits: ["Credits", Credits],
  team: ["Team", Team],
  operations: ["Operations", Operations, true],
};

// "#/keys/key_1" -> {page: "keys", rest: ["key_1"]}
function parseHash() {
  const parts = window.location.hash.replace(/^#\/?/, "").split("/");
  return { page: parts[0] || "", rest: parts.slice(1).map(decodeURIComponent) };
}

function useRoute() {
  const [route, setRoute] = useState(parseHash());
  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener("hashchange", on);
    return () => window.removeEventListener("hashchange", on);
  }, []);
  return route;
}

function Nav({ session, current }) {
  const [busy, setBusy] = useState(false);
  const signOut = async () => {
    setBusy(true);
    try {
      await api.signOut();
    } finally {
      setBusy(false);
      window.location.hash = "#/signin";
    }
  };
  const links = Object.entries(pages).filter(
    ([, [, , managers]]) => !managers || canManage(session),
  );
  return html`<header class="container">
    <nav aria-label="Main">
      <ul>
        <li><a href="#/" class="brand"><strong>mailassay</strong></a></li>
      </ul>
      <ul class="links">
        ${links.map(
          ([path, [title]]) => html`<li>
            <a href=${"#/" + path}
              aria-current=${current === path ? "page" : undefined}>${title}</a>
          </li>`,
        )}
      </ul>
    </nav>
    <div class="who">
      <span>
        <span class="muted">Signed in as</span> ${session.user.email} (${session.role})
        · ${session.organization.name}
      </span>
      <button type="button" class="secondary outline small" onClick=${signOut}
        aria-busy=${busy ? "true" : undefined}>Sign out</button>
    </div>
  </header>`;
}

function App() {
  const route = useRoute();
  const [session, setSession] = useState(undefined); // undefined: restoring
  useEffect(() => {
    const off = api.onSessionChange((s) => setSession(s));
    api.restore().then((s) => setSession((cur) => (cur === undefined ? s : cur)));
    return off;
  }, []);

  useEffect(() => {
    const entry = pages[route.page];
    const title = session
      ? entry
        ? entry[0]
        : "Not found"
      : route.page === "signup"
        ? "Sign up"
        : "Sign in";
    document.title = `${title} · mailassay`;
  }, [route.page, session]);

  if (session === undefined)
    return html`<main class="container"><p aria-busy="true">Loading…</p></main>`;

  if (!session) {
    const Page = route.page === "signup" ? SignUp : SignIn;
    return html`<main class="container narrow"><${Page} /></main>`;
  }
  if (route.page === "signin" || route.page === "signup") {
    window.location.hash = "#/";
    return null;
  }
  const entry = pages[route.page];
  let body;
  if (!entry)
    body = html`<h1>Not found</h1><p>There is no page here. <a href="#/">Overview</a></p>`;
  else if (entry[2] && !canManage(session))
    body = html`<h1>${entry[0]}</h1>
      <p class="note">Only owners and admins can see this page.</p>`;
  else {
    const Page = entry[1];
    body = html`<${Page} key=${route.page} session=${session} rest=${route.rest} />`;
  }
  return html`<${Nav} session=${session} current=${route.page} />
    <main class="container">${body}</main>`;
}

render(html`<${App} />`, document.getElementById("app"));
