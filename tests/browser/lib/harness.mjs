// What the dashboard's browser tests share: the real binary on a free port
// (with the project's DNS peer in front of it), headless Chromium, pages
// that record console errors and CSP violations, and waiting on conditions
// instead of sleeping.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { chromium } from "playwright-core";

export const binary = process.env.MAILASSAY_BINARY;
export const sourceDir = process.env.MAILASSAY_SOURCE_DIR;
const dnsPeer = process.env.MAILASSAY_DNS_PEER;
const chromiumPath = process.env.MAILASSAY_CHROMIUM || "/usr/bin/chromium";

/** Generous: the suite runs on a loaded 2-core machine. */
export const TIMEOUT = 30000;

export function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Polls `fn` until it returns a truthy value (returned) or `ms` pass. */
export async function until(fn, what, ms = TIMEOUT) {
  const end = Date.now() + ms;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      if (e.message === "exited") throw e;
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last})`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The zone the DNS peer serves: `*.slow.test` answers after 300 ms (a
// batch of them takes seconds, so its progress can be watched), `fast.test`
// at once, `nx.test` does not exist.
const ZONE = `
fast.test MX 10 mx.fast.test
mx.fast.test A 127.0.0.1
*.slow.test MX 10 mx.slow.test
*.slow.test DELAY 300
mx.slow.test A 127.0.0.1
nx.test NXDOMAIN
`;

/**
 * Starts the service (and its DNS peer); `env` adds settings, `zone` adds
 * lines to the peer's zone. Returns
 * {base, port, stop(), api(method, path, body, token)}.
 */
export async function startService(env = {}, zone = "") {
  assert.ok(binary, "MAILASSAY_BINARY is not set (run through ctest)");
  assert.ok(dnsPeer, "MAILASSAY_DNS_PEER is not set (run through ctest)");
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mailassay-dashboard-"));
  fs.writeFileSync(path.join(dir, "zone.txt"), ZONE + zone);
  const dnsPort = await freePort();
  const dns = spawn(dnsPeer, ["--zone", path.join(dir, "zone.txt"), "--listen",
    `127.0.0.1:${dnsPort}`], { stdio: "ignore" });
  const port = await freePort();
  const log = fs.openSync(path.join(dir, "service.log"), "w");
  // The service refuses MAILASSAY_ variables it does not know, such as
  // this harness's own.
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("MAILASSAY_")),
  );
  const service = spawn(binary, ["serve"], {
    env: {
      ...inherited,
      MAILASSAY_HTTP_PORT: String(port),
      MAILASSAY_HTTP_ADDRESS: "127.0.0.1",
      MAILASSAY_DATABASE_URL: `sqlite://${dir}/db.sqlite`,
      MAILASSAY_AUTH_JWT_SECRET_FILE: `${dir}/jwt`,
      MAILASSAY_WEBHOOKS_SECRET_KEY_FILE: `${dir}/webhooks.key`,
      MAILASSAY_RISK_DATA_DIR: `${sourceDir}/data/risk`,
      MAILASSAY_DNS_SERVERS: `127.0.0.1:${dnsPort}`,
      MAILASSAY_DNS_TIMEOUT_MS: "3000",
      MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS: "true",
      MAILASSAY_LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "ignore", log],
  });
  const base = `http://127.0.0.1:${port}`;
  let exited = false;
  service.once("exit", () => (exited = true));
  try {
    await until(async () => {
      if (exited) throw new Error("exited");
      return (await fetch(`${base}/health`)).status === 200;
    }, "the service", exited ? 0 : undefined);
  } catch (e) {
    if (!exited) service.kill("SIGKILL");
    dns.kill("SIGTERM");
    const text = fs.readFileSync(path.join(dir, "service.log"), "utf8");
    fs.rmSync(dir, { recursive: true, force: true });
    throw new Error(`the service did not start: ${e.message}\n${text}`);
  }
  const api = async (method, p, body, token, headers = {}) => {
    const h = { ...headers };
    if (body !== undefined) h["Content-Type"] = "application/json";
    if (token) h.Authorization = "Bearer " + token;
    const r = await fetch(base + p, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    let json = null;
    try {
      json = text ? JSON.parse(text) : null;
    } catch {}
    return { status: r.status, body: json, text, headers: r.headers };
  };
  const stop = async () => {
    const gone = new Promise((r) => service.once("exit", r));
    service.kill("SIGTERM");
    await gone;
    dns.kill("SIGTERM");
    fs.rmSync(dir, { recursive: true, force: true });
  };
  return { base, port, dir, api, stop };
}

/** Headless Chromium with the flags that work on these machines; Playwright
 * gives it a new, empty profile directory of its own (and removes it). */
export function launchBrowser() {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update",
      "--disable-sync"],
  });
}

/**
 * A new context and page (`options` as for browser.newContext) whose
 * console errors, page errors and CSP violations are collected in
 * `page.problems`.
 */
export async function openPage(browser, options = {}) {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    acceptDownloads: true,
    ...options,
  });
  context.setDefaultTimeout(TIMEOUT);
  // CSP violations as the page sees them (also those the console would
  // only mention in passing).
  await context.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener("securitypolicyviolation", (e) => {
      window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`);
    });
  });
  const page = await context.newPage();
  page.problems = [];
  page.on("console", (m) => {
    if (m.type() === "error") page.problems.push("console: " + m.text());
  });
  page.on("pageerror", (e) => page.problems.push("page error: " + e.message));
  return page;
}

/** Fails when the page logged an error or the CSP blocked anything. */
export async function assertClean(page, where) {
  const csp = await page.evaluate(() => window.__cspViolations || []);
  assert.deepEqual(csp, [], `CSP violations on ${where}`);
  assert.deepEqual(page.problems, [], `console errors on ${where}`);
}

/** Follows a link of the main navigation. */
export async function nav(page, name) {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name, exact: true }).click();
  await page.getByRole("heading", { level: 1 }).first().waitFor();
}

/** Signs up through the page; returns the organization's owner email. */
export async function signUp(page, base, org, email, password = "a long password") {
  await page.goto(base + "/");
  await page.getByRole("link", { name: "Create an organization" }).click();
  await page.getByLabel("Organization name").fill(org);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Create account" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
}

/** Signs in through the page. */
export async function signIn(page, base, email, password = "a long password") {
  await page.goto(base + "/");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
}

/** An access token for API calls made by the test itself. */
export async function login(svc, email, password = "a long password") {
  const r = await svc.api("POST", "/v2/auth/login", { email, password });
  assert.equal(r.status, 200, r.text);
  return r.body.accessToken;
}
