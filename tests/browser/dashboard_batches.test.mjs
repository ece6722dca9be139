// The dashboard's batch jobs in headless Chromium against the real binary:
// a CSV dropped on the page, its progress moving with the 30-second poll
// (driven by Playwright's clock, paused while the tab is hidden), an export
// while it runs, completion, the export of only the invalid rows, the 409
// of a second upload, and cancelling.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signUp,
  nav,
  until,
  login,
} from "./lib/harness.mjs";

let svc, browser, page, jobId;

// 40 addresses whose domains answer DNS after 300 ms each (one at a time:
// about 12 seconds of work), a duplicate, two rows without an address, two
// addresses at a domain that does not exist, and a fast one.
const SLOW = Array.from({ length: 40 }, (_, i) => `jane.doe@d${i}.slow.test`);
const INVALID = ["not-an-address", "", "gone@nx.test", "also@nx.test"];
const CSV =
  "email,name\n" +
  SLOW.map((e, i) => `${e},Jane ${i}`).join("\n") +
  `\n${SLOW[0]},Again\nnot-an-address,Broken\n,Nobody\ngone@nx.test,Gone\n` +
  "also@nx.test,Also\nann@fast.test,Ann\n";

// RFC 4180 rows of an export.
function parseCsv(text) {
  const rows = [];
  let row = [], field = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; }
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") { row.push(field); field = ""; }
    else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field); rows.push(row); row = []; field = "";
    } else field += c;
  }
  if (field || row.length) { row.push(field); rows.push(row); }
  return rows;
}

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

const progress = async (p) =>
  Number(await p.getByRole("progressbar", { name: "Progress" }).getAttribute("value"));

async function downloadText(p, button) {
  const [download] = await Promise.all([p.waitForEvent("download"), button.click()]);
  return { name: download.suggestedFilename(), text: fs.readFileSync(await download.path(), "utf8") };
}

before(async () => {
  svc = await startService({
    MAILASSAY_BATCH_CONCURRENCY: "1",
    MAILASSAY_BATCH_POLL_MS: "200",
    // SMTP on (a sender identity), for the SMTP batch's credits.
    MAILASSAY_SMTP_HELO: "probe.example.io",
    MAILASSAY_SMTP_MAIL_FROM: "verify@example.io",
    // The last test shortens the retention: the sweep then comes at once.
    MAILASSAY_BATCH_RETENTION_SWEEP_SECONDS: "1",
  });
  browser = await launchBrowser();
  page = await openPage(browser);
  // The page's timers run on Playwright's clock: the 30-second poll fires
  // when the test moves time forward, not after 30 real seconds.
  await page.clock.install();
  await signUp(page, svc.base, "Batch Co", "owner@batch.example");
});

after(async () => {
  if (browser) await browser.close();
  if (svc) await svc.stop();
});

test("a dropped CSV is uploaded with its options and the job page opens", async () => {
  await nav(page, "Batches");
  await dropFile(page, "contacts.csv", CSV);
  // The column and the estimate come from the file itself.
  assert.match(
    await page.getByLabel("Column with the addresses").locator("option:checked").textContent(),
    /Automatic: email/,
  );
  await page.getByText("46 rows, about 43 unique addresses").waitFor();
  await page.getByLabel("Check mailboxes over SMTP").check();
  await page.getByText(/Costs up to 43\s+credits/).waitFor();
  await page.getByLabel("Check mailboxes over SMTP").uncheck();
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Job “contacts.csv”", level: 1 }).waitFor();
  jobId = page.url().split("#/batches/")[1];
  assert.match(jobId, /^job_/);
  await assertClean(page, "the upload");
});

test("a second upload while the job runs is explained with a link to it", async () => {
  // Another tab of the same browser (the same session cookie).
  const other = await page.context().newPage();
  await other.goto(svc.base + "/#/batches");
  await other.getByRole("heading", { name: "Batches", level: 1 }).waitFor();
  await dropFile(other, "second.csv", "email\nbob@fast.test\n");
  await other.getByRole("button", { name: "Upload and start" }).click();
  const alert = other.getByRole("alert").filter({ hasText: "A batch job is already running" });
  await alert.waitFor();
  const link = alert.getByRole("link", { name: "contacts.csv" });
  assert.equal(await link.getAttribute("href"), `#/batches/${jobId}`);
  await other.close();
});

test("progress moves with the 30-second poll, which pauses while the tab is hidden", async () => {
  const seen = [await progress(page)];
  assert.ok(seen[0] < 100, `the job starts unfinished (${seen[0]})`);

  // An export while the job runs: the rows finished so far.
  const partial = await downloadText(page, page.getByRole("button", { name: "Download all rows" }));
  assert.equal(partial.name, "contacts-results.csv");
  const partialRows = parseCsv(partial.text);
  assert.equal(partialRows[0][0], "email");
  assert.ok(partialRows.length - 1 < 45, `a partial export (${partialRows.length - 1} rows)`);

  // Hidden: moving the clock by minutes asks nothing.
  const polls = [];
  page.on("request", (r) => {
    if (r.url().endsWith(`/v2/batch/${jobId}`)) polls.push(r.url());
  });
  await page.evaluate(() => {
    Object.defineProperty(document, "hidden", { configurable: true, get: () => true });
    Object.defineProperty(document, "visibilityState", { configurable: true, get: () => "hidden" });
    document.dispatchEvent(new Event("visibilitychange"));
  });
  await page.clock.fastForward("02:00");
  await page.evaluate(() => new Promise((r) => setTimeout(r, 0)));
  assert.equal(polls.length, 0, "no poll while hidden");
  // Visible again: it looks at once.
  await page.evaluate(() => {
    delete document.hidden;
    delete document.visibilityState;
    document.dispatchEvent(new Event("visibilitychange"));
  });
  await until(() => polls.length === 1, "a poll when the tab is visible again");

  // Every 30 s (of the page's clock) it looks again, until the job is done.
  const last = page.getByText(/Checked again every 30 seconds/);
  const done = page.getByText("completed", { exact: true }).first();
  await until(async () => {
    const before = (await done.count()) ? "" : await last.textContent();
    await page.clock.fastForward("00:30");
    // The poll's answer is shown: the time of the last look changed, or
    // the job is over (and the line is gone).
    await until(async () => (await done.count()) > 0 || (await last.textContent()) !== before,
      "the poll's answer");
    const p = await progress(page);
    if (p !== seen[seen.length - 1]) seen.push(p);
    return p === 100 && (await done.count()) > 0;
  }, "the job to complete", 120000);
  await page.getByText("completed", { exact: true }).first().waitFor();
  assert.ok(seen.length >= 2, `progress moved: ${seen}`);
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i] > seen[i - 1], `${seen}`);
  await page.getByText("45 of 45 addresses done (100 %)").waitFor();
  await assertClean(page, "the job page");
});

test("the export of only the invalid rows holds exactly those rows", async () => {
  const breakdown = page.getByRole("region", { name: "Results by status" });
  const invalidRow = breakdown.getByRole("row").filter({ hasText: "invalid" });
  assert.equal(await invalidRow.getByRole("cell").first().textContent(), "4");
  // "invalid" is the preset choice.
  assert.ok(await page.getByLabel("invalid", { exact: true }).isChecked());
  assert.ok(!(await page.getByLabel("valid", { exact: true }).isChecked()));
  const file = await downloadText(page, page.getByRole("button", { name: "Download the chosen statuses" }));
  assert.equal(file.name, "contacts-results-invalid.csv");
  const rows = parseCsv(file.text);
  assert.equal(rows[0][0], "email");
  assert.equal(rows[0][1], "status");
  const data = rows.slice(1);
  assert.deepEqual(data.map((r) => r[1]), ["invalid", "invalid", "invalid", "invalid"]);
  assert.deepEqual(data.map((r) => r[0]).sort(), [...INVALID].sort());
  await assertClean(page, "the export");
});

test("a running job can be cancelled from its page", async () => {
  await nav(page, "Batches");
  await dropFile(page, "slow.csv",
    "email\n" + Array.from({ length: 30 }, (_, i) => `x@e${i}.slow.test`).join("\n") + "\n");
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Job “slow.csv”", level: 1 }).waitFor();
  await page.getByRole("button", { name: "Cancel the job" }).click();
  await page.getByRole("dialog", { name: "Cancel this job?" })
    .getByRole("button", { name: "Cancel the job" }).click();
  await page.getByRole("status").filter({ hasText: "The job was cancelled" }).waitFor();
  await page.getByText("cancelled", { exact: true }).first().waitFor();
  assert.equal(await page.getByRole("button", { name: "Cancel the job" }).count(), 0);
  await assertClean(page, "cancelling");
});

test("a job is deleted from its page after a confirmation, and is gone", async () => {
  await nav(page, "Batches");
  await dropFile(page, "erase.csv", "email\nerase-me@fast.test\n");
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Job “erase.csv”", level: 1 }).waitFor();
  const erased = page.url().split("#/batches/")[1];
  // Declining keeps it.
  await page.getByRole("button", { name: "Delete the job" }).click();
  const dialog = page.getByRole("dialog", { name: "Delete this job?" });
  await dialog.getByRole("button", { name: "Keep it" }).click();
  await page.getByRole("heading", { name: "Job “erase.csv”", level: 1 }).waitFor();
  await page.getByRole("button", { name: "Delete the job" }).click();
  await dialog.getByRole("button", { name: "Delete the job" }).click();
  await page.getByRole("heading", { name: "Batches", level: 1 }).waitFor();
  // The list (loaded: the earlier jobs are there) no longer holds it.
  await page.getByRole("link", { name: "contacts.csv" }).first().waitFor();
  assert.equal(await page.getByRole("link", { name: "erase.csv" }).count(), 0);
  assert.equal(await page.locator(`a[href="#/batches/${erased}"]`).count(), 0);
  await assertClean(page, "deleting");
});

test("an SMTP batch's credits are in the ledger, linked to the job, and the ledger downloads as CSV", async () => {
  // SMTP batches reserve a credit per address at upload and refund what
  // was not used when the job ends (here every MX is on loopback, which the
  // address policy refuses: nothing is spent).
  await nav(page, "Batches");
  await dropFile(page, "smtp.csv", "email\nann@fast.test\nbob@fast.test\n");
  await page.getByLabel("Check mailboxes over SMTP").check();
  await page.getByText(/Costs up to 2\s+credits/).waitFor();
  await page.getByRole("button", { name: "Upload and start" }).click();
  await page.getByRole("heading", { name: "Job “smtp.csv”", level: 1 }).waitFor();
  const smtpJob = page.url().split("#/batches/")[1];
  const done = page.getByText("completed", { exact: true }).first();
  await until(async () => {
    if ((await done.count()) > 0) return true;
    await Promise.all([
      page.waitForResponse((r) => r.url().endsWith(`/v2/batch/${smtpJob}`)),
      page.getByRole("button", { name: "Check now" }).click({ timeout: 2000 }),
    ]);
    return (await done.count()) > 0;
  }, "the SMTP job to end", 60000);

  await nav(page, "Credits");
  const ledger = page.getByRole("region", { name: "Ledger" });
  const reserved = ledger.getByRole("row").filter({ hasText: "Batch job: reserved" });
  await reserved.waitFor();
  assert.match(await reserved.textContent(), /-2/);
  const link = reserved.getByRole("link", { name: `job ${smtpJob}` });
  assert.equal(await link.getAttribute("href"), `#/batches/${smtpJob}`);

  const file = await downloadText(page, page.getByRole("button", { name: "Export the ledger as CSV" }));
  assert.match(file.name, /^mailassay-credits-\d{4}-\d{2}-\d{2}\.csv$/);
  const rows = parseCsv(file.text);
  assert.deepEqual(rows[0], ["id", "createdAt", "kind", "delta", "balanceAfter", "reference"]);
  const reserve = rows.find((r) => r[2] === "batch_reserve");
  assert.deepEqual(reserve.slice(2), ["batch_reserve", "-2", "98", smtpJob]);
  assert.deepEqual(rows[rows.length - 1].slice(2, 5), ["signup", "100", "100"]);
  await assertClean(page, "the credits page");
});

test("a job whose results the retention erased says so instead of offering downloads", async () => {
  // Last: a retention of one second erases every finished job's results.
  const token = await login(svc, "owner@batch.example");
  const set = await svc.api("PATCH", "/v2/organization", { batchRetentionSeconds: 1 }, token);
  assert.equal(set.status, 200, set.text);
  await until(async () => {
    const r = await svc.api("GET", `/v2/batch/${jobId}`, undefined, token);
    return r.body.resultsErasedAt !== null;
  }, "the retention to erase the job's results", 60000);
  await page.goto(`${svc.base}/#/batches/${jobId}`);
  await page.getByText(/The addresses and results of this job were erased/).waitFor();
  assert.equal(await page.getByRole("button", { name: "Download all rows" }).count(), 0);
  assert.equal(await page.getByRole("button", { name: "Count results by provider" }).count(), 0);
  // The record and its counts stay.
  await page.getByText(/addresses done/).waitFor();
  await assertClean(page, "an erased job");
});
