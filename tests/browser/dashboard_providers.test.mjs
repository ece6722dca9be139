// The provider of an answer on the dashboard (issue #30), in headless
// Chromium against the real binary: the Validate page names it, and a
// job's page counts its results by provider. The service reads a provider
// table of the test's own that maps fast.test's MX host to "google".
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signUp,
  nav,
  until,
} from "./lib/harness.mjs";

let svc, browser, page, dir;

async function dropFile(p, name, text) {
  const data = await p.evaluateHandle(([n, t]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([t], n, { type: "text/csv" }));
    return dt;
  }, [name, text]);
  await p.getByRole("group", { name: "Drop a CSV file here, or choose one" })
    .dispatchEvent("drop", { dataTransfer: data });
  await p.getByText(name, { exact: true }).waitFor();
}

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "mailassay-providers-"));
  const table = path.join(dir, "providers.txt");
  fs.writeFileSync(table, "mx.fast.test google mailbox\n");
  svc = await startService({
    MAILASSAY_RISK_PROVIDERS_FILE: table,
    MAILASSAY_BATCH_POLL_MS: "200",
  });
  browser = await launchBrowser();
  page = await openPage(browser);
  await signUp(page, svc.base, "Provider Co", "owner@provider.example");
});

after(async () => {
  if (browser) await browser.close();
  if (svc) await svc.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("the Validate page names the provider, or says none is known", async () => {
  await nav(page, "Validate");
  await page.getByLabel("Email address").fill("ann@fast.test");
  await page.getByRole("button", { name: "Validate", exact: true }).click();
  await page.getByRole("heading", { name: "ann@fast.test" }).waitFor();
  const row = page.getByRole("row", { name: /^Provider/ });
  assert.match(await row.textContent(), /google \(mailbox provider\)/);

  await page.getByLabel("Email address").fill("gone@nx.test");
  await page.getByRole("button", { name: "Validate", exact: true }).click();
  await page.getByRole("heading", { name: "gone@nx.test" }).waitFor();
  assert.match(await page.getByRole("row", { name: /^Provider/ }).textContent(),
    /none known/);
  await assertClean(page, "the Validate page with a provider");
});

test("a job's page counts its results by provider", async () => {
  await nav(page, "Batches");
  await dropFile(page, "mixed.csv",
    "email\nann@fast.test\nbob@fast.test\ngone@nx.test\n");
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Job “mixed.csv”", level: 1 }).waitFor();
  // Three fast addresses: the job finishes within moments; the page shows
  // it after a reload.
  await until(async () => {
    await page.reload();
    const bar = page.getByRole("progressbar", { name: "Progress" });
    await bar.waitFor();
    return (await bar.getAttribute("value")) === "100";
  }, "the job to finish");
  await page.getByRole("button", { name: "Count results by provider" }).click();
  const table = page.getByRole("region", { name: "Provider counts" }).getByRole("table");
  await table.waitFor();
  const google = table.getByRole("row", { name: /^google/ });
  assert.match(await google.textContent(), /mailbox provider\s*2\s*2\s*66\.7 %/);
  const none = table.getByRole("row", { name: /^none known/ });
  assert.match(await none.textContent(), /—\s*1\s*0\s*33\.3 %/);
  await assertClean(page, "a job's results by provider");
});
