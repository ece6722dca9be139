// The dashboard's sessions, API keys and roles in headless Chromium against
// the real binary: sign up, a key's secret shown once, revoke (401) and
// reactivate, a per-minute limit set in the page, what a member may not do,
// the last owner, reload and sign-out.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signUp,
  signIn,
  login,
  until,
  nav,
} from "./lib/harness.mjs";

const OWNER = "owner@keys.example";
const MEMBER = "member@keys.example";
let svc, browser, owner;

before(async () => {
  // A default hourly limit, so the form has a default to show.
  svc = await startService({ MAILASSAY_LIMITS_KEY_PER_HOUR: "1000" });
  browser = await launchBrowser();
  owner = await openPage(browser);
  await signUp(owner, svc.base, "Keys Co", OWNER);
});

after(async () => {
  if (browser) await browser.close();
  if (svc) await svc.stop();
});

const row = (page, name) => page.getByRole("row").filter({ has: page.getByRole("link", { name, exact: true }) });

async function createKey(page, name) {
  await nav(page, "API keys");
  await page.getByRole("button", { name: "Create a key" }).click();
  await page.getByLabel("Name", { exact: true }).fill(name);
  await page.getByRole("button", { name: "Create key" }).click();
  const box = page.getByLabel("Secret key");
  await box.waitFor();
  return box.inputValue();
}

test("a new key's secret is shown once; revoked it gets 401, reactivated it works", async () => {
  const page = owner;
  const secret = await createKey(page, "backend");
  assert.match(secret, /^svc_live_[A-Za-z0-9]{32,}$/);
  const example = page.getByRole("article").filter({ hasText: "Try it" }).locator("pre");
  assert.ok((await example.textContent()).includes(secret), "the curl example holds the key");
  assert.equal((await svc.api("GET", "/v2/credits/balance", undefined, secret)).status, 200);

  // Gone after a reload, and nowhere in the page.
  await page.reload();
  await row(page, "backend").waitFor();
  assert.equal(await page.getByLabel("Secret key").count(), 0);
  assert.ok(!(await page.content()).includes(secret), "the secret is not in the page");

  // Revoke: the dialog says what happens to the next request.
  await row(page, "backend").getByRole("button", { name: "Revoke backend" }).click();
  const dialog = page.getByRole("dialog", { name: "Revoke “backend”?" });
  assert.match(await dialog.textContent(), /next request on, the key gets 401 Unauthorized/);
  await dialog.getByRole("button", { name: "Revoke key" }).click();
  await page.getByRole("status").filter({ hasText: "is revoked: its next request gets 401" }).waitFor();
  await row(page, "backend").getByText("revoked", { exact: true }).waitFor();
  const refused = await svc.api("GET", "/v2/credits/balance", undefined, secret);
  assert.equal(refused.status, 401);

  await row(page, "backend").getByRole("button", { name: "Reactivate backend" }).click();
  await row(page, "backend").getByText("active", { exact: true }).waitFor();
  assert.equal((await svc.api("GET", "/v2/credits/balance", undefined, secret)).status, 200);
  await assertClean(page, "the keys page");
});

test("a per-minute limit of 3 set in the page refuses the 4th validation with 429", async () => {
  const page = owner;
  const secret = await createKey(page, "limited");
  await page.getByRole("button", { name: "I have saved it" }).click();
  await row(page, "limited").getByRole("link", { name: "limited" }).click();
  await page.getByRole("heading", { name: "Key “limited”", level: 1 }).waitFor();
  // The defaults are shown, and the new key got them.
  await page.getByText("Server defaults for new keys: unlimited a minute, 1,000 an hour").waitFor();
  assert.equal(await page.getByLabel("Per hour").inputValue(), "1000");
  await page.getByLabel("Per minute").fill("3");
  await page.getByRole("button", { name: "Save changes" }).click();
  await page.getByRole("status").filter({ hasText: "Saved." }).waitFor();
  assert.equal(await page.getByLabel("Per minute").inputValue(), "3");

  const statuses = [];
  for (let i = 0; i < 4; i++) {
    const r = await svc.api("POST", "/v2/email/validate", { email: `jane${i}@fast.test` }, secret);
    statuses.push(r.status);
    if (i === 3) assert.ok(Number(r.headers.get("retry-after")) > 0, "Retry-After");
  }
  assert.deepEqual(statuses, [200, 200, 200, 429]);
  await assertClean(page, "the key page");

  // The overview counts them, per key (the 429 is a request, not a success).
  await nav(page, "Overview");
  const usage = page.getByRole("region", { name: "Requests by key" });
  const cells = usage.getByRole("row").filter({ hasText: "limited" }).getByRole("cell");
  await cells.first().waitFor();
  assert.deepEqual(await cells.allTextContents(), ["live", "4", "75 %", "0"]);
  await assertClean(page, "the overview");
});

test("a key's statistics cover 7, 30 or 90 days", async () => {
  const page = owner;
  await nav(page, "API keys");
  await row(page, "limited").getByRole("link", { name: "limited" }).click();
  const usage = page.getByRole("region", { name: "Usage" });
  const figure = (name) => usage.getByRole("definition").filter({
    has: page.locator(`xpath=preceding-sibling::dt[.="${name}"]`),
  });
  await usage.getByText("Show the numbers as a table").click();
  for (const days of [7, 90, 30]) {
    await usage.getByLabel(`${days} days`).check();
    await usage.getByText(`Requests per day, last ${days} days`, { exact: true }).waitFor();
    const table = usage.getByRole("region", { name: `Requests per day, last ${days} days (table)` });
    await until(async () => (await table.getByRole("row").count()) === days + 1, `${days} rows`);
    assert.equal(await figure("Requests").textContent(), "4");
    assert.equal(await figure("Answered 200").textContent(), "75 %");
  }
  await assertClean(page, "the key's statistics");
});

test("the Validate page explains a result and copies it as curl", async () => {
  const page = owner;
  await page.context().grantPermissions(["clipboard-read", "clipboard-write"]);
  await nav(page, "Validate");
  await page.getByLabel("Email address").fill("info@fast.test");
  await page.getByRole("button", { name: "Validate", exact: true }).click();
  const result = page.getByRole("article").filter({
    has: page.getByRole("heading", { name: "info@fast.test" }),
  });
  await result.waitFor();
  await result.getByText("A role address (info@, sales@, …), often read by several people.").waitFor();
  assert.equal(await result.getByRole("meter", { name: "Score" }).getAttribute("value"), "67");
  const signals = result.getByRole("region", { name: "Signals" });
  assert.match(await signals.getByRole("row").filter({ hasText: "role_account" }).textContent(), /-20/);
  await page.getByText("Copy as curl").click();
  await page.getByRole("button", { name: "Copy curl command" }).click();
  await page.getByText("Copied to the clipboard.").waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  assert.ok(copied.startsWith(`curl -s ${svc.base}/v2/email/validate`), copied);
  assert.ok(copied.includes(`-d '{"email":"info@fast.test"}'`), copied);
  await assertClean(page, "the validate page");
});

test("a domain-restricted key is marked publishable and says what it may do", async () => {
  const page = owner;
  await nav(page, "API keys");
  await page.getByRole("button", { name: "Create a key" }).click();
  await page.getByLabel("Name", { exact: true }).fill("signup page");
  await page.getByLabel("Allowed domains").fill("shop.example.com");
  await page.getByText("A restricted key is publishable").waitFor();
  await page.getByRole("button", { name: "Create key" }).click();
  const secret = await page.getByLabel("Secret key").inputValue();
  await page.getByRole("button", { name: "I have saved it" }).click();
  await row(page, "signup page").getByText("publishable", { exact: true }).waitFor();
  await row(page, "signup page").getByRole("link", { name: "signup page" }).click();
  await page.getByText("this key may sit in a web page").waitFor();
  await assertClean(page, "a publishable key's page");
  // What the page says is what the service does.
  const refused = await svc.api("GET", "/v2/batch", undefined, secret, { Origin: "https://shop.example.com" });
  assert.equal(refused.status, 403);
});

test("a member sees the keys but cannot create or revoke them", async () => {
  const page = owner;
  await nav(page, "Team");
  await page.getByLabel("Email").fill(MEMBER);
  await page.getByLabel("Initial password").fill("a long password");
  await page.getByLabel("Role", { exact: true }).selectOption("member");
  await page.getByRole("button", { name: "Add member" }).click();
  await page.getByRole("status").filter({ hasText: `${MEMBER} was added as member` }).waitFor();

  const member = await openPage(browser);
  await signIn(member, svc.base, MEMBER);
  // No Operations for members.
  assert.equal(await member.getByRole("navigation").getByRole("link", { name: "Operations" }).count(), 0);
  await nav(member, "API keys");
  await row(member, "backend").waitFor();
  const create = member.getByRole("button", { name: "Create a key" });
  assert.ok(await create.isDisabled());
  assert.equal(
    await create.getAttribute("aria-describedby"),
    await member.getByText("Only owners and admins can create API keys.").getAttribute("id"),
  );
  assert.equal(await member.getByRole("button", { name: /^Revoke/ }).count(), 0);
  assert.equal(await member.getByRole("button", { name: /^Delete/ }).count(), 0);
  // The server says the same.
  const token = await login(svc, MEMBER);
  assert.equal((await svc.api("POST", "/v2/api-keys", { name: "x" }, token)).status, 403);
  await assertClean(member, "the keys page of a member");
  await member.context().close();
});

test("the last owner cannot be removed or demoted", async () => {
  const page = owner;
  await nav(page, "Team");
  const me = page.getByRole("row").filter({ hasText: OWNER });
  const remove = me.getByRole("button", { name: /^Remove/ });
  await remove.waitFor();
  assert.ok(await remove.isDisabled());
  assert.ok(await me.getByRole("combobox").isDisabled());
  await me.getByText("The organization must keep an owner: this is the last one.").waitFor();
  // The member's row can be changed.
  const other = page.getByRole("row").filter({ hasText: MEMBER });
  assert.ok(!(await other.getByRole("button", { name: /^Remove/ }).isDisabled()));
  await other.getByRole("combobox", { name: `Role of ${MEMBER}` }).selectOption("admin");
  await other.getByRole("button", { name: `Save role of ${MEMBER}` }).click();
  await page.getByRole("status").filter({ hasText: `${MEMBER} is now admin.` }).waitFor();
  // And the server refuses it too.
  const token = await login(svc, OWNER);
  const members = (await svc.api("GET", "/v2/organization/members", undefined, token)).body.items;
  const self = members.find((m) => m.email === OWNER);
  assert.equal(members.find((m) => m.email === MEMBER).role, "admin");
  assert.equal((await svc.api("DELETE", `/v2/organization/members/${self.id}`, undefined, token)).status, 409);
  await assertClean(page, "the team page");
});

test("a reload keeps the session; signing out ends the refresh family", async () => {
  const page = owner;
  await page.goto(svc.base + "/#/");
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  await page.reload();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor();
  const cookies = await page.context().cookies();
  const c = cookies.find((x) => x.name === "__Host-mailassay_refresh");
  assert.ok(c, "the refresh cookie is set");
  assert.equal(c.httpOnly, true);
  assert.equal(c.secure, true);
  assert.equal(c.sameSite, "Strict");
  assert.equal(c.path, "/");
  // No token where a script could find it later.
  const stored = await page.evaluate(() => JSON.stringify({ ...localStorage, ...sessionStorage }));
  assert.ok(!stored.includes("eyJ") && !stored.includes(c.value), stored);
  assert.ok(!(await page.evaluate(() => document.cookie)).includes(c.value));

  await page.getByRole("button", { name: "Sign out" }).click();
  await page.getByRole("heading", { name: "Sign in to mailassay" }).waitFor();
  // The token the cookie held is dead, and so is its family.
  const r = await svc.api("POST", "/v2/auth/refresh", { refreshToken: c.value });
  assert.equal(r.status, 401);
  await page.reload();
  await page.getByRole("heading", { name: "Sign in to mailassay" }).waitFor();
  await until(async () => !(await page.context().cookies()).some((x) => x.name === "__Host-mailassay_refresh"),
    "the cookie to be cleared");
  await assertClean(page, "sign-out");
});

test("sign-up is offered only where the server has it open", async () => {
  const closed = await startService({ MAILASSAY_AUTH_SIGNUP_ENABLED: "false" });
  try {
    const page = await openPage(browser);
    await page.goto(closed.base + "/");
    await page.getByRole("heading", { name: "Sign in to mailassay" }).waitFor();
    // Whether sign-up is open is known once nothing is busy.
    await until(async () => (await page.locator('[aria-busy="true"]').count()) === 0,
      "the sign-up option");
    assert.equal(await page.getByRole("link", { name: "Create an organization" }).count(), 0);
    await page.goto(closed.base + "/#/signup");
    await page.getByText("Sign-up is closed on this server").waitFor();
    assert.equal(await page.getByRole("button", { name: "Create account" }).count(), 0);
    await assertClean(page, "the closed sign-up");
    await page.context().close();
  } finally {
    await closed.stop();
  }
});

