// The dashboard's pure helpers (web/app/lib), in node without a browser:
// the CSV sniffing of the upload form and the Prometheus text reader of the
// Operations page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";

// Imported from their text as data: URLs, which are ES modules on every
// Node: from a file, Node 18 (Debian 12's) reads a .js without a
// "type": "module" package.json as CommonJS, and the browser's modules
// have no package.json to carry.
const lib = (name) => {
  const file = path.join(process.env.MAILASSAY_SOURCE_DIR || "../..", "web/app/lib", name);
  return import("data:text/javascript," + encodeURIComponent(readFileSync(file, "utf8")));
};
const { parseCsv, detectDelimiter, describe, estimate } = await lib("csv.js");
const { parseMetrics, metric, labelValues } = await lib("metrics.js");

test("the delimiter is the most frequent of , ; TAB on the first line, outside quotes", () => {
  assert.equal(detectDelimiter("a,b,c\n1;2;3;4;5"), ",");
  assert.equal(detectDelimiter("a;b;c\n"), ";");
  assert.equal(detectDelimiter("a\tb\n"), "\t");
  assert.equal(detectDelimiter('"x;y;z",b\n'), ",");
  assert.equal(detectDelimiter("\n\nemail\n"), ",");
  assert.equal(detectDelimiter("a,b;c\n"), ","); // ties go to ,
});

test("RFC 4180 records: quotes, doubled quotes, line ends, blank rows", () => {
  assert.deepEqual(parseCsv('email,name\r\n"a@x.com","Doe, ""J"""\n\n,,\nb@y.com,B\rc@z.com,C'), [
    ["email", "name"],
    ["a@x.com", 'Doe, "J"'],
    ["b@y.com", "B"],
    ["c@z.com", "C"],
  ]);
  assert.deepEqual(parseCsv('"multi\nline",x\n'), [["multi\nline", "x"]]);
  assert.deepEqual(parseCsv("\ufeffemail\na@b.c\n"), [["email"], ["a@b.c"]]);
  assert.equal(parseCsv("a\nb\nc\nd\n", 2).length, 2);
});

test("the header and the column are found as the server finds them", () => {
  assert.deepEqual(describe(parseCsv("name,E-Mail,mail\nA,a@x.com,b@x.com\n")), {
    header: ["name", "E-Mail", "mail"],
    column: 1,
  });
  assert.deepEqual(describe(parseCsv("id,contact\n1,a@x.com\n")), {
    header: ["id", "contact"],
    column: 0,
  });
  assert.deepEqual(describe(parseCsv("1,a@x.com\n2,b@x.com\n")), { header: null, column: 1 });
  assert.deepEqual(describe([]), { header: null, column: 0 });
});

test("the estimate counts addresses, unique ones when de-duplicating", () => {
  const rows = parseCsv("email\na@x.com\na@X.COM\nA@x.com\nnot one\n\n@x.com\nb@\nc@y.org\n");
  assert.deepEqual(estimate(rows, rows[0], 0, true), { rows: 7, addresses: 3 });
  assert.deepEqual(estimate(rows, rows[0], 0, false), { rows: 7, addresses: 4 });
});

test("Prometheus text: series with labels, comments skipped, values as numbers", () => {
  const m = parseMetrics(
    "# HELP mailassay_pool_workers Workers.\n# TYPE mailassay_pool_workers gauge\n" +
      'mailassay_pool_workers{pool="storage"} 4\nmailassay_pool_workers{pool="validation"} 2\n' +
      'mailassay_pool_busy{pool="storage"} 1\nmailassay_dns_cache_hits 12\n' +
      'odd{a="x\\"y",b="z"} 1.5e3\nnot a metric line\n',
  );
  assert.equal(metric(m, "mailassay_pool_workers", { pool: "storage" }), 4);
  assert.equal(metric(m, "mailassay_pool_workers", { pool: "validation" }), 2);
  assert.equal(metric(m, "mailassay_pool_workers", { pool: "nope" }), null);
  assert.equal(metric(m, "mailassay_dns_cache_hits"), 12);
  assert.equal(metric(m, "missing"), null);
  assert.equal(metric(m, "odd", { a: 'x"y' }), 1500);
  assert.deepEqual(labelValues(m, "mailassay_pool_workers", "pool"), ["storage", "validation"]);
});
