// The widget in headless Chromium against the real binary: a typo shows the
// suggestion, an invalid address shows the error, and a page holding a key
// without a domain restriction gets nothing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import net from "node:net";
import { chromium } from "playwright-core";

const binary = process.env.MAILASSAY_BINARY;
const sourceDir = process.env.MAILASSAY_SOURCE_DIR;
const chromiumPath = process.env.MAILASSAY_CHROMIUM || "/usr/bin/chromium";

function freePort() {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

async function api(port, method, p, body, token) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = "Bearer " + token;
  const r = await fetch(`http://127.0.0.1:${port}${p}`, {
    method,
    headers,
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: r.status, body: await r.json() };
}

let service, page_server, browser, apiPort, pagePort, restrictedKey, openKey;
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "mailassay-browser-"));

before(async () => {
  assert.ok(binary, "MAILASSAY_BINARY is not set (run through ctest)");
  apiPort = await freePort();
  pagePort = await freePort();
  service = spawn(binary, ["serve"], {
    env: {
      ...process.env,
      MAILASSAY_HTTP_PORT: String(apiPort),
      MAILASSAY_HTTP_ADDRESS: "127.0.0.1",
      MAILASSAY_DATABASE_URL: `sqlite://${dir}/db.sqlite`,
      MAILASSAY_AUTH_JWT_SECRET_FILE: `${dir}/jwt`,
      MAILASSAY_WEBHOOKS_SECRET_KEY_FILE: `${dir}/webhooks.key`,
      MAILASSAY_RISK_DATA_DIR: `${sourceDir}/data/risk`,
      MAILASSAY_DNS_SERVERS: "127.0.0.1:1",
      MAILASSAY_LOG_LEVEL: "warn",
    },
    stdio: "ignore",
  });
  for (let i = 0; i < 200; i++) {
    try {
      const r = await fetch(`http://127.0.0.1:${apiPort}/health`);
      if (r.status === 200) break;
    } catch {}
    await new Promise((r) => setTimeout(r, 50));
  }
  const s = await api(apiPort, "POST", "/v2/auth/signup", {
    organizationName: "Widget Co",
    email: "owner@widget.example",
    password: "a long password",
  });
  assert.equal(s.status, 201);
  const jwt = s.body.accessToken;
  restrictedKey = (
    await api(apiPort, "POST", "/v2/api-keys",
      { name: "widget", allowedDomains: ["127.0.0.1"] }, jwt)
  ).body.key;
  openKey = (await api(apiPort, "POST", "/v2/api-keys", { name: "open" }, jwt))
    .body.key;
  // The page lives on another origin (another port), as on a real site.
  page_server = http.createServer((req, res) => {
    const key = req.url.includes("open") ? openKey : restrictedKey;
    res.setHeader("Content-Type", "text/html");
    res.end(`<!doctype html><html><body>
      <input id="email" type="email">
      <script src="http://127.0.0.1:${apiPort}/widget.js" data-key="${key}"
              data-debounce="50"></script></body></html>`);
  });
  await new Promise((r) => page_server.listen(pagePort, "127.0.0.1", r));
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
           "--disable-background-networking", "--disable-component-update",
           "--disable-sync"],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (page_server) page_server.close();
  if (service) service.kill("SIGTERM");
  fs.rmSync(dir, { recursive: true, force: true });
});

async function typeAndBlur(page, text) {
  await page.fill("#email", text);
  await page.locator("#email").blur();
}

test("typing a typo shows the suggestion, and clicking it fixes the field", async () => {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${pagePort}/`);
  await typeAndBlur(page, "jane@gmial.com");
  const link = page.locator(".mailassay-suggestion");
  await link.waitFor({ timeout: 10000 });
  assert.equal(await link.textContent(), "jane@gmail.com");
  await link.click();
  assert.equal(await page.inputValue("#email"), "jane@gmail.com");
  await page.close();
});

test("an invalid address shows the error", async () => {
  const page = await browser.newPage();
  await page.goto(`http://127.0.0.1:${pagePort}/`);
  await typeAndBlur(page, "not an address");
  const msg = page.locator('.mailassay-message[data-status="invalid"]');
  await msg.waitFor({ timeout: 10000 });
  assert.match(await msg.textContent(), /does not look valid/);
  assert.equal(await page.getAttribute("#email", "aria-invalid"), "true");
  await page.close();
});

test("a page with an unrestricted key gets no verdict", async () => {
  const page = await browser.newPage();
  const outcomes = [];
  // Only the POST counts (a CORS preflight may come first). The 403
  // carries no CORS grant, so the browser may report it as a response, as
  // failed, or both.
  const isPost = (req) =>
    req.url().endsWith("/v2/widget/validate") && req.method() === "POST";
  page.on("response", (r) => {
    if (isPost(r.request())) outcomes.push(r.status());
  });
  page.on("requestfailed", (req) => {
    if (isPost(req)) outcomes.push("failed");
  });
  await page.goto(`http://127.0.0.1:${pagePort}/open`);
  await typeAndBlur(page, "jane@gmial.com");
  for (let i = 0; i < 100 && outcomes.length === 0; i++)
    await new Promise((r) => setTimeout(r, 50));
  assert.ok(outcomes.length >= 1);
  for (const o of outcomes)
    assert.ok(o === 403 || o === "failed", String(outcomes));
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(await page.locator(".mailassay-suggestion").count(), 0);
  assert.equal(await page.locator('.mailassay-message[data-status]').count(), 0);
  // And the service itself refuses that key for the widget.
  const direct = await fetch(`http://127.0.0.1:${apiPort}/v2/widget/validate`, {
    method: "POST",
    headers: { "Content-Type": "application/json",
               Authorization: "Bearer " + openKey,
               Origin: `http://127.0.0.1:${pagePort}` },
    body: JSON.stringify({ email: "jane@gmial.com" }),
  });
  assert.equal(direct.status, 403);
  await page.close();
});
