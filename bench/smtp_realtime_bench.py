#!/usr/bin/env python3
"""Real-time SMTP validations under concurrent load, against a real MTA.

    bench/smtp_realtime_bench.py [--build-dir build] [--postfix ADDR:PORT]
                                 [--total 1000] [--concurrency 100]
                                 [--modes shared,unshared,unshared-nocache]

The private Postfix of scripts/lib/test-postfix.sh (started when
--postfix is not given and MAILASSAY_TEST_POSTFIX is unset) serves
load.postfix.test with mailboxes box000 ... box199. For each mode this starts
the project's DNS peer (load.postfix.test MX -> a relay on 127.0.0.27+), a
TCP relay in front of Postfix that counts connections (opened, most open at
once), and `mailassay serve` with the service's default politeness (4
sessions and 2 new connections per second per MX host, 20 RCPTs per
session), then sends --total `POST /v2/email/validate` with `smtp: true`,
--concurrency at a time, over 200 distinct addresses (address k = request
j mod 200; every fifth k is `nobox<k>`, which does not exist). Each answer
is checked (valid / invalid as the mailbox says, creditsUsed 1).

Modes: shared (the default settings: shared sessions, joined probes, the
result cache), unshared (MAILASSAY_SMTP_SHARE_SESSIONS=false: one probe and
its own sessions per request; the result cache still on), unshared-nocache
(sharing off and MAILASSAY_SMTP_RESULT_CACHE_SECONDS=0: how the service
probed before sessions were shared).

Prints a markdown table: wall time, p50/p99 latency, answers by status,
wrong answers, connections, most open at once, addresses per connection.
Everything stays on 127.0.0.0/8; every process started is stopped.
"""

import argparse
import json
import os
import select
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)


class Relay:
    """Forwards 127.0.0.27:port to the MTA and counts connections."""

    def __init__(self, listen_ip, port, to):
        self.to = to
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((listen_ip, port))
        self.sock.listen(256)
        self.lock = threading.Lock()
        self.opened = 0
        self.open = 0
        self.peak = 0
        self.conns = []  # [client socket, counted_closed]
        self.stopping = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def closed(self, c):
        with self.lock:
            if not c[1]:
                c[1] = True
                self.open -= 1

    def accept_loop(self):
        while not self.stopping:
            try:
                client, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                # A client whose close already arrived is not open any more
                # (the service closes a session before it opens the next).
                for c in self.conns:
                    if c[1]:
                        continue
                    try:
                        if c[0].recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b"":
                            c[1] = True
                            self.open -= 1
                    except (BlockingIOError, OSError):
                        pass
                self.opened += 1
                self.open += 1
                self.peak = max(self.peak, self.open)
                c = [client, False]
                self.conns.append(c)
            threading.Thread(target=self.pump, args=(c,), daemon=True).start()

    def pump(self, c):
        client = c[0]
        server = socket.create_connection(self.to)
        try:
            while True:
                r, _, _ = select.select([client, server], [], [], 1.0)
                if self.stopping:
                    break
                done = False
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        done = True
                        break
                    (server if s is client else client).sendall(data)
                if done:
                    break
        except OSError:
            pass
        self.closed(c)
        server.close()
        client.close()

    def stop(self):
        self.stopping = True
        # Wakes the accepting thread (close alone leaves it listening).
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def free_port(ip="127.0.0.1"):
    s = socket.socket()
    s.bind((ip, 0))
    port = s.getsockname()[1]
    s.close()
    return port


def call(base, method, path, body=None, token=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"} if data else {}
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(base + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read() or b"null")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


def address(k):
    return ("nobox%03d" if k % 5 == 4 else "box%03d") % k + "@load.postfix.test"


def run_mode(args, mode, mta, n):
    tmp = tempfile.mkdtemp(prefix="mailassay-smtp-bench-")
    # A relay address of its own per mode: nothing left of the last one.
    relay_ip = "127.0.0.%d" % (27 + n)
    relay = Relay(relay_ip, mta[1], mta)
    zone = os.path.join(tmp, "zone")
    with open(zone, "w") as f:
        f.write("mx.load.postfix.test A %s\n"
                "load.postfix.test MX 10 mx.load.postfix.test\n" % relay_ip)
    dns_port = free_port()
    dns = subprocess.Popen(
        [os.path.join(args.build_dir, "tests/peers/mailassay-dns-peer"),
         "--zone", zone, "--listen", "127.0.0.1:%d" % dns_port],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    http_port = free_port()
    env = dict(os.environ)
    env.update({
        "MAILASSAY_HTTP_PORT": str(http_port),
        "MAILASSAY_HTTP_ADDRESS": "127.0.0.1",
        "MAILASSAY_DATABASE_URL": "sqlite://%s/bench.db" % tmp,
        "MAILASSAY_AUTH_JWT_SECRET_FILE": "%s/jwt.secret" % tmp,
        "MAILASSAY_DNS_SERVERS": "127.0.0.1:%d" % dns_port,
        "MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS": "true",
        "MAILASSAY_RISK_DATA_DIR": os.path.join(SRC, "data/risk"),
        "MAILASSAY_SMTP_HELO": "probe.example.io",
        "MAILASSAY_SMTP_MAIL_FROM": "verify@example.io",
        "MAILASSAY_SMTP_PORT": str(mta[1]),
        "MAILASSAY_SMTP_ALLOW_PRIVATE_TARGETS": "127.0.0.0/8",
        "MAILASSAY_LIMITS_IP_PER_MINUTE": "10000000",
        "MAILASSAY_CREDITS_SIGNUP_GRANT": str(args.total),
        "MAILASSAY_LOG_LEVEL": "warn",
    })
    if mode != "shared":
        env["MAILASSAY_SMTP_SHARE_SESSIONS"] = "false"
    if mode == "unshared-nocache":
        env["MAILASSAY_SMTP_RESULT_CACHE_SECONDS"] = "0"
    log = open(os.path.join(tmp, "serve.log"), "w")
    serve = subprocess.Popen([os.path.join(args.build_dir, "mailassay"), "serve"],
                             env=env, stdout=log, stderr=log)
    base = "http://127.0.0.1:%d" % http_port
    try:
        for _ in range(200):
            try:
                if call(base, "GET", "/health")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        _, b = call(base, "POST", "/v2/auth/signup",
                    {"organizationName": "Bench", "email": "b@example.org",
                     "password": "correct horse battery"})
        _, k = call(base, "POST", "/v2/api-keys",
                    {"name": "bench", "config": {"smtp": True}},
                    b["accessToken"])
        key = k["key"]
        results = []
        lock = threading.Lock()
        nxt = [0]
        t0 = time.time()

        def worker():
            while True:
                with lock:
                    j = nxt[0]
                    nxt[0] += 1
                if j >= args.total:
                    return
                kk = j % 200
                s = time.time()
                st, body = call(base, "POST", "/v2/email/validate",
                                {"email": address(kk), "smtp": True,
                                 "timeout": 30000}, key)
                e = time.time()
                with lock:
                    results.append((kk, e - s, st, body))

        threads = [threading.Thread(target=worker)
                   for _ in range(args.concurrency)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.time() - t0
    finally:
        serve.terminate()
        serve.wait()
        dns.terminate()
        dns.wait()
        relay.stop()
        log.close()
    lat = sorted(r[1] for r in results)
    statuses = {}
    wrong = 0
    for kk, _, st, body in results:
        status = body.get("status") if st == 200 else "http %d" % st
        statuses[status] = statuses.get(status, 0) + 1
        want = "invalid" if kk % 5 == 4 else "valid"
        if st != 200 or status != want or body.get("creditsUsed") != 1:
            wrong += 1
    return {
        "mode": mode, "wall": wall,
        "p50": lat[len(lat) // 2] * 1000,
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))] * 1000,
        "statuses": statuses, "wrong": wrong,
        "connections": relay.opened, "peak": relay.peak,
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build-dir", default=os.path.join(SRC, "build"))
    p.add_argument("--postfix", default=os.environ.get("MAILASSAY_TEST_POSTFIX"))
    p.add_argument("--total", type=int, default=1000)
    p.add_argument("--concurrency", type=int, default=100)
    p.add_argument("--modes", default="shared,unshared,unshared-nocache")
    args = p.parse_args()
    if not args.postfix:
        out = subprocess.run([os.path.join(SRC, "scripts/lib/test-postfix.sh")],
                             check=True, capture_output=True, text=True)
        args.postfix = out.stdout.strip().splitlines()[-1]
    ip, port = args.postfix.rsplit(":", 1)
    if not ip.startswith("127."):
        sys.exit("smtp_realtime_bench: the MTA must be on loopback")
    mta = (ip, int(port))
    load = os.getloadavg()
    print("smtp_realtime_bench %s, load average %.2f %.2f %.2f, %d cores; "
          "%d validations, %d at a time, 200 addresses at load.postfix.test "
          "(Postfix %s)" % (time.strftime("%Y-%m-%d %H:%M"), load[0], load[1],
                            load[2], os.cpu_count(), args.total,
                            args.concurrency, args.postfix))
    rows = [run_mode(args, m, mta, n)
            for n, m in enumerate(args.modes.split(","))]
    print()
    print("| mode | wall | p50 | p99 | answers | wrong | connections | "
          "most open at once | addresses / connection | validations / "
          "connection |")
    print("|---|---:|---:|---:|---|---:|---:|---:|---:|---:|")
    ok = True
    for r in rows:
        answers = ", ".join("%s %d" % kv for kv in sorted(r["statuses"].items()))
        print("| %s | %.2f s | %.0f ms | %.0f ms | %s | %d | %d | %d | %.1f | "
              "%.1f |" % (
                  r["mode"], r["wall"], r["p50"], r["p99"], answers,
                  r["wrong"], r["connections"], r["peak"],
                  200 / max(1, r["connections"]),
                  args.total / max(1, r["connections"])))
        ok = ok and r["wrong"] == 0
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
