// The Operations page shows the service's egress self-audit: against a
// world where the egress address is listed, its PTR names another host and
// port 25 is closed, the owner sees each check's result, what was seen and
// what to do, in light and dark mode, with no serious axe-core violation.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import AxeBuilder from "@axe-core/playwright";
import {
  startService,
  launchBrowser,
  openPage,
  assertClean,
  signIn,
  freePort,
  until,
} from "./lib/harness.mjs";

const OWNER = "owner@egress.example";
// Probes leave from 127.0.0.2, listed on zen.test, whose PTR names another
// host; the reference domain's MX is 127.0.0.1, where smtp.port is closed.
const WORLD = `
probe.example.io A 127.0.0.2
2.0.0.127.in-addr.arpa PTR static-2.isp.test
example.io MX 10 mx.example.io
mx.example.io A 127.0.0.1
ref.test MX 10 mx.ref.test
mx.ref.test A 127.0.0.1
2.0.0.127.zen.test A 127.0.0.2
2.0.0.127.zen.test TXT Listed by zen.test
`;
let svc, browser;

before(async () => {
  svc = await startService({
    MAILASSAY_SMTP_HELO: "probe.example.io",
    MAILASSAY_SMTP_MAIL_FROM: "verify@example.io",
    MAILASSAY_SMTP_PORT: String(await freePort()),
    MAILASSAY_SMTP_SOURCE_ADDRESS: "127.0.0.2",
    MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS: "127.0.0.0/8",
    MAILASSAY_EGRESS_REFERENCE_DOMAINS: "ref.test",
    MAILASSAY_EGRESS_DNSBL: "zen.test",
    MAILASSAY_EGRESS_INTERVAL_SECONDS: "0",
  }, WORLD);
  browser = await launchBrowser();
  const s = await svc.api("POST", "/v2/auth/signup", {
    organizationName: "Egress", email: OWNER, password: "a long password",
  });
  assert.equal(s.status, 201, s.text);
  // The audit at start has ended.
  await until(async () => (await svc.api("GET", "/health")).body.details.egress,
    "the egress audit");
});

after(async () => {
  await browser?.close();
  await svc?.stop();
});

for (const scheme of ["light", "dark"]) {
  test(`the Operations page shows the failed egress checks (${scheme})`, async () => {
    const page = await openPage(browser, { colorScheme: scheme });
    await signIn(page, svc.base, OWNER);
    await page.goto(svc.base + "/#/operations");
    const region = page.getByRole("region", { name: "Egress checks" });
    await region.waitFor();
    const row = (name) => region.getByRole("row").filter({
      has: page.getByRole("rowheader").filter({ hasText: name }),
    });
    for (const [name, result, seen, todo] of [
      ["dnsbl", "fail", "zen.test (127.0.0.2: Listed by zen.test)", "delisting"],
      ["egress_ptr", "fail", "names static-2.isp.test", "reverse DNS"],
      ["port25", "fail", "looks blocked", "smtp.socks5_proxy"],
      ["helo_dns", "ok", "127.0.0.2", "—"],
      ["mail_from", "ok", "has MX mx.example.io", "—"],
    ]) {
      const cells = row(name).getByRole("cell");
      assert.equal(await cells.nth(0).innerText(), result, name);
      assert.match(await cells.nth(1).innerText(), new RegExp(seen.replace(/[.()]/g, "\\$&")), name);
      assert.match(await cells.nth(2).innerText(), new RegExp(todo), name);
    }
    await assertClean(page, `operations (${scheme})`);
    await page.mouse.move(0, 0);
    const result = await new AxeBuilder({ page }).analyze();
    const bad = result.violations
      .filter((v) => v.impact === "serious" || v.impact === "critical")
      .map((v) => `${v.id} (${v.impact}): ${v.nodes
        .map((n) => `${n.target.join(" ")} ${n.failureSummary}`).join("; ")}`);
    assert.deepEqual(bad, [], `axe-core on operations (${scheme})`);
    await page.context().close();
  });
}
