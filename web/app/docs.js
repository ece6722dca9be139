// /docs: lists the operations of /v2/openapi.json by tag. A script file of
// its own, so the page needs no inline script under its CSP.
const root = document.getElementById("ops");

function render(spec) {
  root.textContent = "";
  const tags = new Map();
  for (const [path, ops] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (method === "parameters") continue;
      const tag = (op.tags || ["other"])[0];
      if (!tags.has(tag)) tags.set(tag, []);
      tags.get(tag).push([method, path, op]);
    }
  }
  for (const [tag, list] of tags) {
    const h = document.createElement("h2");
    h.textContent = tag;
    root.append(h);
    for (const [method, path, op] of list) {
      const row = document.createElement("div");
      row.className = "op";
      const m = document.createElement("span");
      m.className = "method";
      m.textContent = method.toUpperCase();
      const p = document.createElement("code");
      p.textContent = path;
      const s = document.createElement("div");
      s.className = "summary";
      s.textContent = op.summary || "";
      row.append(m, p, s);
      root.append(row);
    }
  }
}

fetch("/v2/openapi.json")
  .then((r) => r.json())
  .then(render)
  .catch(() => {
    root.textContent = "The API description could not be loaded.";
  });
