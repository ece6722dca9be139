// Every page of the dashboard (and /docs) at 1280 and 375 px, in light and
// dark mode: no CSP violation, no console error, no serious or critical
// axe-core violation, nothing wider than the screen; a screenshot of each
// main page is written for README.md (build/screenshots, or
// $MAILASSAY_SCREENSHOTS_DIR: docs/screenshots to refresh the committed ones).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import AxeBuilder from "@axe-core/playwright";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signIn,
  until,
} from "./lib/harness.mjs";

const shots =
  process.env.MAILASSAY_SCREENSHOTS_DIR ||
  process.env.MAILASSAY_SCREENSHOTS_DEFAULT_DIR ||
  path.join(process.cwd(), "screenshots");
const OWNER = "owner@acme.example";
let svc, browser, keyId, jobId;

before(async () => {
  svc = await startService();
  browser = await launchBrowser();
  // An organization with some history: keys, validations, a finished
  // batch job, a team.
  const s = await svc.api("POST", "/v2/auth/signup", {
    organizationName: "Acme", email: OWNER, password: "a long password", name: "Ada Owner",
  });
  assert.equal(s.status, 201, s.text);
  const jwt = s.body.accessToken;
  const backend = await svc.api("POST", "/v2/api-keys", {
    name: "production backend", rateLimits: { perMinute: 600, perHour: null, perDay: null },
  }, jwt);
  keyId = backend.body.id;
  await svc.api("POST", "/v2/api-keys", {
    name: "signup widget", allowedDomains: ["shop.example.com"],
  }, jwt);
  await svc.api("POST", "/v2/api-keys", { name: "staging", mode: "test" }, jwt);
  for (const email of ["jane.doe@fast.test", "info@fast.test", "bob@fast.test", "x@nx.test",
    "broken@@fast.test"])
    await svc.api("POST", "/v2/email/validate", { email }, backend.body.key);
  for (const [email, role] of [["grace@acme.example", "admin"], ["linus@acme.example", "member"]])
    await svc.api("POST", "/v2/organization/members",
      { email, password: "a long password", role, name: email.split("@")[0] }, jwt);
  const form = new FormData();
  form.append("file", new Blob(["email\njane.doe@fast.test\ninfo@fast.test\nnot-an-address\n" +
    "gone@nx.test\nbob@fast.test\n"], { type: "text/csv" }), "customers.csv");
  const up = await fetch(svc.base + "/v2/batch/upload", {
    method: "POST", headers: { Authorization: "Bearer " + jwt }, body: form,
  });
  assert.equal(up.status, 201);
  jobId = (await up.json()).id;
  await until(async () =>
    (await svc.api("GET", `/v2/batch/${jobId}`, undefined, jwt)).body.status === "completed",
  "the batch job");
});

after(async () => {
  if (browser) await browser.close();
  if (svc) await svc.stop();
});

// route -> [file name of its screenshot or null, what shows it is ready]
const SIGNED_OUT = [
  ["#/signin", "signin", "Sign in to mailassay"],
  ["#/signup", null, "Create an organization"],
];
const SIGNED_IN = () => [
  ["#/", "overview", "Overview"],
  ["#/validate", "validate", "Validate an address"],
  ["#/batches", null, "Batches"],
  [`#/batches/${jobId}`, "batches", "Job “customers.csv”"],
  ["#/keys", "keys", "API keys"],
  [`#/keys/${keyId}`, null, "Key “production backend”"],
  ["#/credits", "credits", "Credits"],
  ["#/team", "team", "Team"],
  ["#/operations", "operations", "Operations"],
];

// Waits until the page drew its data (nothing busy), then checks it.
async function audit(page, route, heading, shot, variant) {
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
  await until(async () => (await page.locator('[aria-busy="true"]').count()) === 0,
    `${route} to finish loading`);
  const where = `${route} (${variant})`;
  await assertClean(page, where);
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  const viewport = page.viewportSize().width;
  assert.ok(width <= viewport, `${where} is ${width} px wide in a ${viewport} px window`);
  // The resting state, whatever the last click left under the pointer.
  await page.mouse.move(0, 0);
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes
      .map((n) => `${n.target.join(" ")} ${n.failureSummary}`).join("; ")}`);
  assert.deepEqual(bad, [], `axe-core on ${where}`);
  if (shot) await page.screenshot({ path: path.join(shots, `${shot}-${variant}.png`) });
}

for (const scheme of ["light", "dark"]) {
  for (const width of [1280, 375]) {
    const variant = `${width}-${scheme}`;
    test(`every page at ${width} px in ${scheme} mode is clean and accessible`, async () => {
      fs.mkdirSync(shots, { recursive: true });
      const page = await openPage(browser, {
        viewport: { width, height: width > 500 ? 800 : 760 },
        colorScheme: scheme,
      });
      for (const [route, shot, heading] of SIGNED_OUT) {
        await page.goto(svc.base + "/" + route);
        await audit(page, route, heading, shot, variant);
      }
      await signIn(page, svc.base, OWNER);
      for (const [route, shot, heading] of SIGNED_IN()) {
        await page.goto(svc.base + "/" + route);
        if (route === "#/validate") {
          await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
          await page.getByLabel("Email address").fill("info@fast.test");
          await page.getByRole("button", { name: "Validate", exact: true }).click();
          await page.getByRole("heading", { name: "info@fast.test" }).waitFor();
        }
        await audit(page, route, heading, shot, variant);
      }
      // The API reference page, under the same rules.
      await page.goto(svc.base + "/docs");
      await page.getByRole("heading", { name: "auth" }).waitFor();
      await audit(page, "/docs", "mailassay API", null, variant);
      await page.context().close();
    });
  }
}

test("the screenshots were written", () => {
  for (const name of ["signin", "overview", "validate", "batches", "keys", "credits", "team",
    "operations"])
    for (const v of ["1280-light", "1280-dark", "375-light", "375-dark"])
      assert.ok(fs.statSync(path.join(shots, `${name}-${v}.png`)).size > 1000, `${name}-${v}`);
});
