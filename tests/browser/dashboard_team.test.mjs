// The Team page's danger zone (docs/privacy.md): an admin exports the
// organization's data as one JSON file without secrets but cannot delete it;
// the owner deletes it after typing the password (a wrong one erases
// nothing) and is signed out; in light and dark mode, with no serious
// axe-core violation.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import AxeBuilder from "@axe-core/playwright";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signIn,
  login,
  until,
} from "./lib/harness.mjs";

const OWNER = "owner@team.example";
const ADMIN = "admin@team.example";
let svc, browser;

before(async () => {
  svc = await startService();
  browser = await launchBrowser();
  const s = await svc.api("POST", "/v2/auth/signup", {
    organizationName: "Team Co", email: OWNER, password: "a long password",
  });
  assert.equal(s.status, 201, s.text);
  const added = await svc.api("POST", "/v2/organization/members",
    { email: ADMIN, password: "a long password", role: "admin" },
    s.body.accessToken);
  assert.equal(added.status, 201, added.text);
});

after(async () => {
  await browser?.close();
  await svc?.stop();
});

async function axeClean(page, where) {
  const result = await new AxeBuilder({ page }).analyze();
  const bad = result.violations
    .filter((v) => v.impact === "serious" || v.impact === "critical")
    .map((v) => `${v.id} (${v.impact}): ${v.nodes
      .map((n) => `${n.target.join(" ")} ${n.failureSummary}`).join("; ")}`);
  assert.deepEqual(bad, [], `axe-core on ${where}`);
}

for (const scheme of ["light", "dark"]) {
  test(`an admin exports the data and may not delete (${scheme})`, async () => {
    const page = await openPage(browser, { colorScheme: scheme });
    await signIn(page, svc.base, ADMIN);
    await page.goto(svc.base + "/#/team");
    const zone = page.getByRole("article", { name: "Danger zone" });
    await zone.waitFor();
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      zone.getByRole("button", { name: "Export data" }).click(),
    ]);
    assert.match(download.suggestedFilename(), /^mailassay-org_.*\.json$/);
    const text = fs.readFileSync(await download.path(), "utf8");
    const doc = JSON.parse(text);
    assert.equal(doc.organization.name, "Team Co");
    assert.equal(doc.members.length, 2);
    assert.doesNotMatch(text, /argon2|password/);
    assert.match(await zone.textContent(), /Only an owner can delete the organization/);
    // The audit log: the owner added this admin; the export is recorded too.
    const log = page.getByRole("article", { name: "Audit log" });
    const added = log.getByRole("row").filter({
      has: page.getByRole("rowheader", { name: "member.added" }),
    });
    await added.first().waitFor();
    assert.match(await added.first().textContent(), new RegExp(OWNER.replace(".", "\\.")));
    assert.match(await added.first().textContent(), /role: admin/);
    await log.getByLabel("Action").selectOption("organization.exported");
    // The filtered page replaces the first one: only exports are left.
    await until(async () =>
      await log.getByRole("rowheader", { name: "member.added" }).count() === 0,
    "the filtered audit log");
    await log.getByRole("rowheader", { name: "organization.exported" }).first().waitFor();
    assert.equal(await zone.getByRole("button", { name: "Delete organization" }).count(), 0);
    await axeClean(page, `the team page (${scheme})`);
    await assertClean(page, "the team page");
    await page.context().close();
  });
}

test("the owner deletes the organization: a wrong password erases nothing, "
  + "the right one erases it and signs out", async () => {
  const page = await openPage(browser);
  await signIn(page, svc.base, OWNER);
  await page.goto(svc.base + "/#/team");
  const zone = page.getByRole("article", { name: "Danger zone" });
  await zone.waitFor();
  const password = zone.getByLabel("Your password");
  await password.fill("not my password");
  await zone.getByRole("button", { name: "Delete organization" }).click();
  let dialog = page.getByRole("dialog", { name: "Delete the organization and all its data?" });
  await dialog.getByRole("button", { name: "Delete everything" }).click();
  await zone.getByText("The password is not correct").waitFor();
  // The browser logs the refused request; that one is expected.
  assert.deepEqual(page.problems.splice(0), [
    "console: Failed to load resource: the server responded with a status of 403 (Forbidden)",
  ]);
  assert.equal((await svc.api("GET", "/v2/organization", undefined,
    await login(svc, OWNER))).status, 200);

  await password.fill("a long password");
  await zone.getByRole("button", { name: "Delete organization" }).click();
  dialog = page.getByRole("dialog", { name: "Delete the organization and all its data?" });
  await axeClean(page, "the delete dialog");
  await dialog.getByRole("button", { name: "Delete everything" }).click();
  // Signed out: the sign-in form is back, and nobody can sign in again.
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  for (const email of [OWNER, ADMIN]) {
    const r = await svc.api("POST", "/v2/auth/login", { email, password: "a long password" });
    assert.equal(r.status, 401, email);
  }
  await assertClean(page, "the page after the delete");
  await page.context().close();
});
