// Enough of the batch CSV rules (docs/batch-csv.md) to offer the columns of
// a chosen file and estimate its addresses before it is uploaded; the
// server's reader decides.

/** The delimiter the server would pick: , ; or TAB, most frequent on the
 * first non-blank line outside quotes (ties: , then ;). */
export function detectDelimiter(text) {
  const line = text.split(/\r\n|\n|\r/).find((l) => l.trim() !== "") || "";
  const counts = { ",": 0, ";": 0, "\t": 0 };
  let quoted = false;
  for (const ch of line) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch in counts) counts[ch]++;
  }
  let best = ",";
  for (const d of [";", "\t"]) if (counts[d] > counts[best]) best = d;
  return best;
}

/** Parses RFC 4180 records (quotes, doubled quotes, any line end); skips
 * blank rows; stops after `maxRows` rows. */
export function parseCsv(text, maxRows = Infinity) {
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const delim = detectDelimiter(text);
  const rows = [];
  let row = [];
  let field = "";
  let quoted = false;
  const endRow = () => {
    row.push(field);
    field = "";
    if (row.some((c) => c.trim() !== "")) rows.push(row);
    row = [];
  };
  for (let i = 0; i < text.length && rows.length < maxRows; i++) {
    const ch = text[i];
    if (quoted) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delim) {
      row.push(field);
      field = "";
    } else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      endRow();
    } else field += ch;
  }
  if ((field !== "" || row.length) && rows.length < maxRows) endRow();
  return rows;
}

const PREFERRED = ["email", "e-mail", "email address", "emailaddress", "email_address",
  "e-mail address", "mail"];

/** {header: [names] | null, column: index the server would use by default}. */
export function describe(rows) {
  if (!rows.length) return { header: null, column: 0 };
  const first = rows[0];
  if (first.some((c) => c.includes("@"))) {
    const at = first.findIndex((c) => c.includes("@"));
    return { header: null, column: at };
  }
  const names = first.map((c) => c.trim());
  for (const p of PREFERRED) {
    const i = names.findIndex((n) => n.toLowerCase() === p);
    if (i >= 0) return { header: names, column: i };
  }
  return { header: names, column: 0 };
}

/** Addresses in column `column` of the data rows (roughly: a cell with one
 * @ between characters), unique ones when `dedupe`. */
export function estimate(rows, header, column, dedupe) {
  const data = header ? rows.slice(1) : rows;
  const seen = new Set();
  let count = 0;
  for (const r of data) {
    const cell = (r[column] || "").trim();
    const at = cell.lastIndexOf("@");
    if (at <= 0 || at === cell.length - 1) continue;
    const key = cell.slice(0, at) + "@" + cell.slice(at + 1).toLowerCase();
    if (dedupe) {
      if (seen.has(key)) continue;
      seen.add(key);
    }
    count++;
  }
  return { rows: data.length, addresses: count };
}
