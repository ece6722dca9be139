#!/usr/bin/env python3
"""Helper of bench/batch_bench.sh: generates the CSV and the zone, talks to
`mailassay serve` over HTTP (keep-alive, one process, so polling every
100 ms costs the 2-core machine next to nothing) and prints JSON.

  driver.py zone     --out FILE --domains N --sets a,b,...
  driver.py gen      --out FILE --rows N --domains N --dup-percent P
                     --invalid N --set NAME [--seed S]
  driver.py setup    --base URL                      -> API key on stdout
  driver.py warm     --base URL --key K --email E    -> status of 2nd call
  driver.py run      --base URL --key K --file CSV --pid PID [--poll-ms 100]
                     [--stall-seconds 60] [--timeout-seconds 900]
                     [--rename FROM:TO]
                     upload, poll to a final status, metrics, RSS, export
  driver.py feed     --base URL --key K --pid PID --template CSV --prefix P
                     --ready FILE --stop FILE --out FILE
                     keeps a batch job running back to back (see cmd_feed)
  driver.py metric   --base URL --name NAME
Everything goes to 127.0.0.1: the service's DNS is the bench's peer.
"""

import argparse
import csv
import http.client
import io
import json
import random
import sys
import time
import urllib.parse
import zlib

FINAL = ("completed", "failed", "cancelled")

# Short first names: local parts stay short so that 200000 unique addresses
# plus 20 % duplicates stay well under the 10 MB upload limit.
NAMES = (
    "anna ben carl dana eva finn gina hugo ida jan kim lea max nina otto paul "
    "rosa sam tina uwe vera will xena yann zoe ali bea cem dora emil fay gus "
    "hana ivo jo kai lou mia ned ola pia quin rey sue tom una val wes yara "
    "zack amy bob cleo dan"
).split()


def log(msg):
    print("batch_bench: " + msg, file=sys.stderr, flush=True)


# --- files --------------------------------------------------------------------

def cmd_zone(a):
    with open(a.out, "w") as f:
        f.write("# batch_bench zone: one MX per domain, one shared MX host\n")
        f.write("mx.bench.test 3600 A 127.0.0.2\n")
        f.write("cached.test 3600 MX 10 mx.bench.test\n")
        # Sets made up while measuring (driver.py feed): any name below.
        f.write("*.bench.test 3600 MX 10 mx.bench.test\n")
        for s in a.sets.split(","):
            for d in range(a.domains):
                f.write(f"d{d}.{s}.bench.test 3600 MX 10 mx.bench.test\n")


def cmd_gen(a):
    rng = random.Random(a.seed if a.seed is not None else zlib.crc32(a.set.encode()))
    unique = []
    for i in range(a.rows):
        name = NAMES[rng.randrange(len(NAMES))]
        # i makes the address unique; every domain gets rows/domains of them.
        unique.append((f"{name}{i}", f"d{i % a.domains}.{a.set}.bench.test"))
    rng.shuffle(unique)
    # dup-percent is the share of the data rows that repeat an earlier
    # address: dups = unique * p / (100 - p).
    dups = round(a.rows * a.dup_percent / (100 - a.dup_percent))
    rows = [f"{l}@{d}" for l, d in unique]
    extra = []
    for k in range(dups):
        l, d = unique[rng.randrange(len(unique))]
        # Half of the repeats differ in the domain's case only: still the same
        # address for the de-duplication (domain compared case-insensitively).
        extra.append(f"{l}@{d.upper() if k % 2 else d}")
    extra += [f"not-an-address-{k}" for k in range(a.invalid)]
    # Repeats and invalid rows anywhere in the file (a repeat may come before
    # the row it repeats: then that one is the duplicate).
    rows += extra
    rng.shuffle(rows)
    data = ("email\n" + "\n".join(rows) + "\n").encode()
    with open(a.out, "wb") as f:
        f.write(data)
    print(json.dumps({"bytes": len(data), "data_rows": len(rows),
                      "unique": a.rows, "duplicates": dups,
                      "invalid": a.invalid, "domains": a.domains}))


# --- HTTP ---------------------------------------------------------------------

class Client:
    def __init__(self, base, key=None, timeout=300):
        u = urllib.parse.urlsplit(base)
        self.host, self.port = u.hostname, u.port
        self.key = key
        self.timeout = timeout
        self.conn = None

    def call(self, method, path, body=None, headers=None, token=None):
        h = dict(headers or {})
        auth = token or self.key
        if auth:
            h["Authorization"] = "Bearer " + auth
        for attempt in (1, 2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection(self.host, self.port,
                                                       timeout=self.timeout)
            try:
                self.conn.request(method, path, body=body, headers=h)
                r = self.conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                return r.status, data
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = None
                if attempt == 2 or method != "GET":
                    raise
        raise AssertionError("unreachable")

    def json(self, method, path, obj=None, token=None):
        body = None if obj is None else json.dumps(obj).encode()
        hdr = {"Content-Type": "application/json"} if body else {}
        st, data = self.call(method, path, body, hdr, token)
        try:
            return st, json.loads(data) if data else None
        except ValueError:
            return st, data.decode(errors="replace")


def metrics(c):
    st, data = c.call("GET", "/metrics")
    out = {}
    for line in data.decode().splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            try:
                out[name] = float(value)
            except ValueError:
                pass
    return out


def proc_status(pid):
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS", "VmHWM")):
                    k, v = line.split(":")
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except OSError:
        return False


def cmd_setup(a):
    c = Client(a.base)
    st, r = c.json("POST", "/v2/auth/signup", {
        "organizationName": "Batch bench", "email": "bench@cached.test",
        "password": "bench-password-123"})
    if st not in (200, 201):
        sys.exit(f"signup: {st} {r}")
    high = 1000000000
    st, k = c.json("POST", "/v2/api-keys", {
        "name": "bench",
        "rateLimits": {"perMinute": high, "perHour": high, "perDay": high}},
        token=r["accessToken"])
    if st not in (200, 201):
        sys.exit(f"api key: {st} {k}")
    print(k["key"])


def cmd_warm(a):
    c = Client(a.base, a.key)
    for _ in range(2):
        st, r = c.json("POST", "/v2/email/validate", {"email": a.email})
    if st != 200:
        sys.exit(f"validate {a.email}: {st} {r}")
    print(r.get("status") or r.get("result", {}).get("status"))


def renamed(body, rename):
    """The CSV with its domain set FROM replaced by TO (FROM:TO): the same
    rows over other domains, so the DNS cache starts cold again."""
    if not rename:
        return body
    old, new = rename.split(":")
    return (body.replace(f".{old}.bench.test".encode(), f".{new}.bench.test".encode())
            .replace(f".{old}.bench.test".upper().encode(),
                     f".{new}.bench.test".upper().encode()))


def upload(c, path, rename=None, body=None):
    if body is None:
        with open(path, "rb") as f:
            body = f.read()
    body = renamed(body, rename)
    t0 = time.monotonic()
    st, data = c.call("POST", "/v2/batch/upload?fileName=bench.csv", body,
                      {"Content-Type": "text/csv"})
    t1 = time.monotonic()
    try:
        job = json.loads(data)
    except ValueError:
        job = data.decode(errors="replace")
    if st != 201:
        print(json.dumps({"error": f"upload answered {st}", "body": job}))
        sys.exit(1)
    return t0, t1, job


def poll(c, job_id, pid, t0, poll_ms, stall_s, timeout_s, until=FINAL):
    """Polls GET /v2/batch/{id} every poll_ms until the status is in `until`.
    Returns (job, timeline, peak_rss_kb, error)."""
    timeline = []
    peak_rss = 0
    last_processed, last_change = None, time.monotonic()
    status = None
    while True:
        now = time.monotonic()
        if not alive(pid):
            return None, timeline, peak_rss, "mailassay process died"
        peak_rss = max(peak_rss, proc_status(pid).get("VmRSS", 0))
        st, j = c.json("GET", f"/v2/batch/{job_id}")
        if st != 200:
            return None, timeline, peak_rss, f"GET /v2/batch/{job_id} answered {st}: {j}"
        if j["status"] != status or j["processed"] != last_processed:
            timeline.append((round(now - t0, 3), j["status"], j["processed"]))
        if j["processed"] != last_processed or j["status"] != status:
            last_change = now
        status, last_processed = j["status"], j["processed"]
        if status in until:
            return j, timeline, peak_rss, None
        if now - last_change > stall_s:
            return j, timeline, peak_rss, (
                f"job stuck: no progress for {stall_s} s (status {status}, "
                f"processed {last_processed})")
        if now - t0 > timeout_s:
            return j, timeline, peak_rss, f"job not finished after {timeout_s} s"
        time.sleep(max(0.0, poll_ms / 1000 - (time.monotonic() - now)))


def verify_export(c, job):
    t = time.monotonic()
    st, data = c.call("GET", f"/v2/batch/{job['id']}/results?format=csv")
    took = time.monotonic() - t
    out = {"export_status": st, "export_bytes": len(data),
           "export_seconds": round(took, 3)}
    if st != 200:
        out["export_error"] = data[:500].decode(errors="replace")
        return out
    reader = csv.reader(io.StringIO(data.decode()))
    header = next(reader, None)
    rows = 0
    seen = set()
    repeated = 0
    counts = {}
    for row in reader:
        if not row:
            continue
        rows += 1
        if row[0] in seen and not row[0].startswith("not-an-address"):
            repeated += 1
        seen.add(row[0])
        counts[row[1]] = counts.get(row[1], 0) + 1
    out.update({"export_header": ",".join(header or []),
                "export_rows": rows,
                "export_expected": job["uniqueEmails"] + job["invalidRows"],
                "export_repeated_emails": repeated,
                "export_status_counts": counts})
    return out


def cmd_run(a):
    c = Client(a.base, a.key)
    m0 = metrics(c)
    ps_start = proc_status(a.pid)
    t0, t1, job = upload(c, a.file, a.rename)
    ps_upload = proc_status(a.pid)
    j, timeline, peak_rss, err = poll(c, job["id"], a.pid, t0, a.poll_ms,
                                      a.stall_seconds, a.timeout_seconds)
    t_end = time.monotonic()
    ps_done = proc_status(a.pid)
    res = {"job_id": job["id"], "upload_seconds": round(t1 - t0, 3),
           "total_seconds": round(t_end - t0, 3),
           "timeline": timeline, "job": j or job,
           "rss_peak_polled_kb": peak_rss,
           "vmhwm_before_upload_kb": ps_start.get("VmHWM"),
           "vmrss_before_upload_kb": ps_start.get("VmRSS"),
           "vmhwm_after_upload_kb": ps_upload.get("VmHWM"),
           "vmhwm_done_kb": ps_done.get("VmHWM"),
           "vmrss_done_kb": ps_done.get("VmRSS")}
    first_proc = next((t for t, s, _ in timeline if s == "processing"), None)
    res["queued_seconds"] = None if first_proc is None else round(first_proc - (t1 - t0), 3)
    if err:
        res["error"] = err
        print(json.dumps(res))
        sys.exit(1)
    m1 = metrics(c)
    for k in ("mailassay_dns_queries_sent", "mailassay_dns_cache_misses",
              "mailassay_dns_cache_hits", "mailassay_batch_items_done"):
        res[k] = m1.get(k, 0) - m0.get(k, 0)
    if j["status"] == "completed":
        res.update(verify_export(c, j))
    ps_after = proc_status(a.pid)
    res["vmhwm_after_export_kb"] = ps_after.get("VmHWM")
    res["vmrss_after_export_kb"] = ps_after.get("VmRSS")
    print(json.dumps(res))


def cmd_feed(a):
    """Keeps a batch job running: uploads the template (domain set renamed
    to PREFIX1, PREFIX2, ...), waits for `processing`, writes --ready, then
    uploads the next one as soon as the previous completes, until --stop
    exists (it holds the wall-clock end of the measuring window); then waits
    for the last job and writes the jobs and the window's figures to --out."""
    import os
    c = Client(a.base, a.key)
    with open(a.template, "rb") as f:
        template = f.read()
    jobs = []
    peak = 0
    err = None
    n = 0
    ready_wall = None
    stop_wall = None

    def mono_to_wall(t):
        return time.time() - (time.monotonic() - t)

    while err is None:
        n += 1
        t0, t1, job = upload(c, None, f"t:{a.prefix}{n}", template)
        rec = {"id": job["id"], "upload_start": mono_to_wall(t0),
               "upload_end": mono_to_wall(t1), "processing": None,
               "end": None, "status": None, "rows": job["uniqueEmails"]}
        jobs.append(rec)
        status = None
        last = (None, None)
        last_change = time.monotonic()
        while True:
            now = time.monotonic()
            if not alive(a.pid):
                err = "mailassay process died"
                break
            peak = max(peak, proc_status(a.pid).get("VmRSS", 0))
            st, j = c.json("GET", f"/v2/batch/{job['id']}")
            if st != 200:
                err = f"GET /v2/batch/{job['id']} answered {st}: {j}"
                break
            status = j["status"]
            if (status, j["processed"]) != last:
                last, last_change = (status, j["processed"]), now
            if status == "processing" and rec["processing"] is None:
                rec["processing"] = time.time()
            if ready_wall is None and status != "queued":
                ready_wall = time.time()
                with open(a.ready, "w") as f:
                    f.write(str(ready_wall))
            if status in FINAL:
                rec["end"] = time.time()
                rec["status"] = status
                rec["record"] = j
                if status != "completed":
                    err = f"job {job['id']} ended {status}"
                break
            if now - last_change > a.stall_seconds:
                rec["record"] = j
                err = (f"job {job['id']} stuck: no progress for "
                       f"{a.stall_seconds} s (status {status}, processed "
                       f"{j['processed']})")
                break
            time.sleep(max(0.0, a.poll_ms / 1000 - (time.monotonic() - now)))
        if os.path.exists(a.stop):
            break
    if os.path.exists(a.stop):
        with open(a.stop) as f:
            text = f.read().strip()
        stop_wall = float(text) if text else None
    busy = 0.0
    rows_in = 0
    overlapping = 0
    if ready_wall and stop_wall:
        for r in jobs:
            if r["end"] is None:
                continue
            lo, hi = max(r["upload_start"], ready_wall), min(r["end"], stop_wall)
            if hi > lo:
                overlapping += 1
                busy += hi - lo
                span = r["end"] - r["upload_start"]
                rows_in += r["rows"] * (hi - lo) / span if span > 0 else 0
    window = (stop_wall - ready_wall) if ready_wall and stop_wall else None
    ps = proc_status(a.pid)
    res = {"jobs": jobs, "error": err, "window_seconds": window,
           "jobs_in_window": overlapping,
           "busy_share": round(busy / window, 3) if window else None,
           "rows_in_window": int(rows_in),
           "job_seconds": [round(r["end"] - r["upload_start"], 3)
                           for r in jobs if r["end"]],
           "rss_peak_polled_kb": peak, "vmhwm_kb": ps.get("VmHWM"),
           "vmrss_kb": ps.get("VmRSS")}
    with open(a.out, "w") as f:
        json.dump(res, f)
    if ready_wall is None:
        with open(a.ready, "w") as f:
            f.write("failed")


def cmd_metric(a):
    print(int(metrics(Client(a.base)).get(a.name, 0)))


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    z = sub.add_parser("zone")
    z.add_argument("--out", required=True)
    z.add_argument("--domains", type=int, required=True)
    z.add_argument("--sets", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--out", required=True)
    g.add_argument("--rows", type=int, required=True)
    g.add_argument("--domains", type=int, required=True)
    g.add_argument("--dup-percent", type=float, default=20)
    g.add_argument("--invalid", type=int, default=1000)
    g.add_argument("--set", required=True)
    g.add_argument("--seed", type=int)
    s = sub.add_parser("setup")
    s.add_argument("--base", required=True)
    w = sub.add_parser("warm")
    for q in (w,):
        q.add_argument("--base", required=True)
        q.add_argument("--key", required=True)
        q.add_argument("--email", required=True)
    r = sub.add_parser("run")
    fe = sub.add_parser("feed")
    for q in (r, fe):
        q.add_argument("--base", required=True)
        q.add_argument("--key", required=True)
        q.add_argument("--pid", type=int, required=True)
        q.add_argument("--poll-ms", type=int, default=100)
        q.add_argument("--stall-seconds", type=float, default=60)
        q.add_argument("--timeout-seconds", type=float, default=900)
    r.add_argument("--file", required=True)
    r.add_argument("--rename", help="FROM:TO, domain set renamed in memory")
    fe.add_argument("--template", required=True)
    fe.add_argument("--prefix", required=True)
    fe.add_argument("--ready", required=True)
    fe.add_argument("--stop", required=True)
    fe.add_argument("--out", required=True)
    m = sub.add_parser("metric")
    m.add_argument("--base", required=True)
    m.add_argument("--name", required=True)
    a = p.parse_args()
    {"zone": cmd_zone, "gen": cmd_gen, "setup": cmd_setup, "warm": cmd_warm,
     "run": cmd_run,
     "feed": cmd_feed, "metric": cmd_metric}[a.cmd](a)


if __name__ == "__main__":
    main()
