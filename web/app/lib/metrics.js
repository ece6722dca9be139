// Reads the Prometheus text format (0.0.4) of /metrics into
// {name: [{labels, value}]}: the Operations page needs a few gauges, and
// the text is simple enough that a JSON twin of it is not worth keeping.

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the text; comment and malformed lines are skipped. */
export function parseMetrics(text) {
  const out = {};
  for (const line of text.split("\n")) {
    if (!line || line[0] === "#") continue;
    const m = LINE.exec(line);
    if (!m) continue;
    const labels = {};
    if (m[3]) for (const [, k, v] of m[3].matchAll(LABEL)) labels[k] = v.replace(/\\(.)/g, "$1");
    (out[m[1]] ||= []).push({ labels, value: Number(m[4]) });
  }
  return out;
}

/** The value of `name` with `labels` (all given labels match), or null. */
export function metric(parsed, name, labels = {}) {
  const series = parsed[name] || [];
  const hit = series.find((s) =>
    Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return hit ? hit.value : null;
}

/** The distinct values of label `label` of `name`, in order of appearance. */
export function labelValues(parsed, name, label) {
  const seen = [];
  for (const s of parsed[name] || [])
    if (s.labels[label] != null && !seen.includes(s.labels[label])) seen.push(s.labels[label]);
  return seen;
}
