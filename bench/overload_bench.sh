#!/usr/bin/env bash
# Overload benchmark of the request path (issue #29), next to http_bench.sh.
#
#   bench/overload_bench.sh [--build-dir DIR] [--no-build] [--seconds 10]
#                           [--rounds 3] [--high 4000] [--low 64]
#                           [--previous PATH]
#
# Starts, on 127.0.0.1 and free ports: the DNS peer (cached.test and a
# wildcard *.wild.test), bench/bare_server (the baseline) and `mailassay
# serve` on a throw-away SQLite database (limits on, far above the load),
# plus `--previous PATH`'s binary configured alike. Load comes from
# bench/load_client, which reports every answer's latency by status (wrk
# has one distribution for all answers).
#
# The validate mix: POST /v2/email/validate with the API key, 90 % of the
# connections on a cached domain (answered on the event loop: key cache,
# limiter, free checks, DNS cache) and 10 % on a domain never looked up
# before (a DNS query to the peer: the request waits, and counts against
# http.max_waiting_requests).
#
# Per round (interleaved so the machine's noise falls on all of them):
#   low   --low connections: bare (GET /), the cached validate alone on
#         mailassay and on --previous (http_bench.sh's (d)), the two in
#         turn first every other round; req/s and p99 side by side
#   high  --high connections: the mix on mailassay with its defaults, and
#         on one with http.max_waiting_requests=256, so the waiting part
#         sheds
# Prints, median over rounds: low: new/bare req/s (target >= 0.75) and the
# server's CPU per request, bare's over new's (the loop is the bottleneck,
# so the two agree; CPU per request does not count time descheduled),
# new/previous req/s, p99 and CPU per request (target: no worse, within the
# machine's noise);
# high: the 200s' p99 (target <= 1 s), the 503s' count, how many carried
# Retry-After, and their p99 (answered at once).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build_dir="$src/build-bench"
do_build=1
seconds=10
rounds=3
high=4000
low=64
previous_bin=

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --seconds) seconds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --high) high=$2; shift 2 ;;
    --low) low=$2; shift 2 ;;
    --previous) previous_bin=$2; shift 2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
done

log() { echo "overload_bench: $*" >&2; }
# shellcheck source=bench/lib/service.sh
. "$here/lib/service.sh"
bench_require curl jq python3

if [ "$do_build" = 1 ]; then
  log "building in $build_dir"
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DMAILASSAY_BENCH=ON >/dev/null
  cmake --build "$build_dir" --target mailassay mailassay-dns-peer \
    bare_server load_client -j2 >/dev/null
fi
mailassay=$build_dir/mailassay
dns_peer=$build_dir/tests/peers/mailassay-dns-peer
bare=$build_dir/bench/bare_server
client=$build_dir/bench/load_client
for b in "$mailassay" "$dns_peer" "$bare" "$client"; do
  [ -x "$b" ] || { log "missing $b (build first or drop --no-build)"; exit 2; }
done
[ -z "$previous_bin" ] || [ -x "$previous_bin" ] \
  || { log "--previous $previous_bin: not an executable"; exit 2; }
# 4000 connections and their server side need the descriptors.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
[ "$(ulimit -n)" -gt $((2 * high + 512)) ] \
  || { log "open-file limit $(ulimit -n) is too low for --high $high"; exit 2; }

work=$(mktemp -d /tmp/mailassay-overload-bench.XXXXXX)
pids=()
trap 'bench_stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

cat >"$work/zone" <<'EOF'
cached.test 3600 MX 10 mx.cached.test
mx.cached.test 3600 A 127.0.0.2
*.wild.test 3600 MX 10 mx.wild.test
EOF
bench_start_dns_peer "$dns_peer"

bare_port=$(free_port)
"$bare" --address 127.0.0.1 --port "$bare_port" >"$work/bare.log" 2>&1 &
pids+=($!)
bench_wait_for_line "$work/bare.log" "listening" "${pids[-1]}"
bare_pid=${pids[-1]}

bench_jwt_secret
# start NAME BINARY [VAR=VALUE...]: a service and its account; sets
# NAME_port and NAME_key.
start() {
  local name=$1 bin=$2 token key
  shift 2
  mailassay=$bin bench_start_service "$name" \
    MAILASSAY_LIMITS_KEY_PER_MINUTE=1000000000 "$@"
  token=$(curl -sf -X POST "$bench_base/v2/auth/signup" \
    -H 'Content-Type: application/json' \
    -d '{"organizationName":"Bench","email":"bench@cached.test","password":"bench-password-123"}' \
    | jq -r .accessToken)
  key=$(curl -sf -X POST "$bench_base/v2/api-keys" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"bench","rateLimits":{"perMinute":1000000000,"perHour":1000000000,"perDay":1000000000}}' \
    | jq -r .key)
  [ -n "$key" ] && [ "$key" != null ] || { log "no key ($name)"; exit 1; }
  # Warm the key and DNS caches.
  for _ in 1 2; do
    curl -sf -o /dev/null -X POST "$bench_base/v2/email/validate" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d '{"email":"jane.doe@cached.test"}'
  done
  eval "${name}_port=${bench_base##*:} ${name}_key=$key ${name}_pid=$bench_pid"
}

# One instance per case: the mix fills the DNS cache with fresh domains,
# which the 64-connection comparison must not inherit.
start svc "$mailassay"
start loaded "$mailassay"
start high "$mailassay" MAILASSAY_HTTP_MAX_WAITING_REQUESTS=256
[ -z "$previous_bin" ] || start prev "$previous_bin"

# cpu_us JSON TICKS: the server's CPU µs per 200 of a load_client report,
# given the CPU ticks it used meanwhile.
cpu_us() {
  python3 -c 'import json, os, sys
r = json.load(open(sys.argv[1]))
n = r["statuses"].get("200", {}).get("count", 0)
print("%.2f" % (int(sys.argv[2]) / os.sysconf("SC_CLK_TCK") * 1e6 / max(n, 1)))' "$1" "$2"
}

# cached OUT PORT KEY CONNECTIONS PID: the cached validate alone
# (http_bench's (d)); OUT.cpu gets the server's CPU µs per request.
cached() {
  local t0
  t0=$(bench_cpu_ticks "$5")
  "$client" --port "$2" --connections "$4" --seconds "$seconds" \
    --path /v2/email/validate --header "Authorization: Bearer $3" \
    --body '{"email":"jane.doe@cached.test"}' >"$1.hit"
  cpu_us "$1.hit" $(($(bench_cpu_ticks "$5") - t0)) >"$1.cpu"
  echo '{"seconds": 1, "connect_errors": 0, "socket_errors": 0, "retry_after": 0, "statuses": {}}' >"$1.miss"
}

# mix OUT PORT KEY CONNECTIONS: the validate mix, two clients at once.
mix() {
  local out=$1 port=$2 key=$3 n=$4 misses
  misses=$(( n / 10 ))
  "$client" --port "$port" --connections $(( n - misses )) --seconds "$seconds" \
    --path /v2/email/validate --header "Authorization: Bearer $key" \
    --body '{"email":"jane.doe@cached.test"}' >"$out.hit" &
  local hit=$!
  "$client" --port "$port" --connections "$misses" --seconds "$seconds" \
    --path /v2/email/validate --header "Authorization: Bearer $key" \
    --body '{"email":"jane.doe@d{n}.wild.test"}' >"$out.miss"
  wait "$hit"
}

# The merged figures of a mix run: "ok_rps ok_p99 shed shed_retry shed_p99
# other" (ok: 200s; shed: 503s).
summary() {
  python3 - "$1.hit" "$1.miss" <<'PY'
import json, sys
runs = [json.load(open(f)) for f in sys.argv[1:]]
secs = max(r["seconds"] for r in runs)
def merged(status):
    n = sum(r["statuses"].get(status, {}).get("count", 0) for r in runs)
    # The p99 of the merge is bounded by the largest part's; report that.
    p99 = max((r["statuses"].get(status, {}).get("p99_ms", 0) for r in runs), default=0)
    return n, p99
ok, ok_p99 = merged("200")
shed, shed_p99 = merged("503")
retry = sum(r["retry_after"] for r in runs)
other = sum(v["count"] for r in runs for s, v in r["statuses"].items() if s not in ("200", "503"))
other += sum(r["socket_errors"] + r["connect_errors"] for r in runs)
print(f"{ok/secs:.0f} {ok_p99:.2f} {shed} {retry} {shed_p99:.2f} {other}")
PY
}

bare_run() {
  local t0
  t0=$(bench_cpu_ticks "$bare_pid")
  "$client" --port "$bare_port" --connections "$low" --seconds "$seconds" \
    --path / >"$1"
  cpu_us "$1" $(($(bench_cpu_ticks "$bare_pid") - t0)) >"$1.cpu"
  python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); s=r["statuses"]["200"]; print("%.0f %.2f" % (s["count"]/r["seconds"], s["p99_ms"]))' "$1"
}

: >"$work/rows"
for round in $(seq 1 "$rounds"); do
  log "round $round/$rounds"
  b=$(bare_run "$work/bare.$round")
  # With --previous, every other round runs it first: neither build always
  # follows bare (an A/A run, the same binary twice, spread 0.83-1.43 at
  # load ~3 without this).
  if [ -n "$previous_bin" ] && [ $((round % 2)) = 0 ]; then
    cached "$work/prev.$round" "$prev_port" "$prev_key" "$low" "$prev_pid"
  fi
  cached "$work/low.$round" "$svc_port" "$svc_key" "$low" "$svc_pid"
  lo=$(summary "$work/low.$round")
  pr="- -"
  if [ -n "$previous_bin" ]; then
    [ $((round % 2)) = 0 ] \
      || cached "$work/prev.$round" "$prev_port" "$prev_key" "$low" "$prev_pid"
    pr=$(summary "$work/prev.$round" | awk '{print $1, $2}')
  fi
  mix "$work/high.$round" "$loaded_port" "$loaded_key" "$high"
  hi=$(summary "$work/high.$round")
  mix "$work/shed.$round" "$high_port" "$high_key" "$high"
  sh=$(summary "$work/shed.$round")
  cpu="$(cat "$work/bare.$round.cpu") $(cat "$work/low.$round.cpu")"
  cpu="$cpu $(cat "$work/prev.$round.cpu" 2>/dev/null || echo -)"
  echo "$b $(echo "$lo" | awk '{print $1, $2}') $pr $hi $sh $cpu" >>"$work/rows"
done

python3 - "$work/rows" "$low" "$high" "${previous_bin:+yes}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
low, high, prev = sys.argv[2], sys.argv[3], sys.argv[4] == "yes"
def col(i): return [float(r[i]) for r in rows]
med = statistics.median
bare_rps, bare_p99 = med(col(0)), med(col(1))
new_rps, new_p99 = med(col(2)), med(col(3))
print(f"## Overload benchmark (median of {len(rows)} rounds)\n")
print(f"| case | req/s (200) | p99 ms (200) | ratio |")
print(f"|---|---|---|---|")
print(f"| bare, {low} connections | {bare_rps:.0f} | {bare_p99:.2f} | 1 |")
cpu_ratios = [b / n for b, n in zip(col(18), col(19))]
print(f"| validate (cached), {low} connections | {new_rps:.0f} | {new_p99:.2f} | {new_rps/bare_rps:.2f} x bare (target >= 0.75); CPU per request {med(col(19)):.2f} us against bare's {med(col(18)):.2f}: {med(cpu_ratios):.2f} ({min(cpu_ratios):.2f}-{max(cpu_ratios):.2f}) |")
if prev:
    prs = [new / old for new, old in zip(col(2), col(4))]
    p99s = [new / old for new, old in zip(col(3), col(5))]
    cpus = [new / old for new, old in zip(col(19), col(20))]
    print(f"| validate (cached), {low} connections, previous | {med(col(4)):.0f} | {med(col(5)):.2f} | new/previous req/s {med(prs):.3f} ({min(prs):.3f}-{max(prs):.3f}), p99 {med(p99s):.3f} ({min(p99s):.3f}-{max(p99s):.3f}), CPU per request {med(cpus):.3f} ({min(cpus):.3f}-{max(cpus):.3f}) |")
for o, what in ((6, "defaults"), (12, "http.max_waiting_requests=256")):
    print(f"| mix, {high} connections, {what} | {med(col(o)):.0f} | {med(col(o+1)):.2f} | p99 of 200s, target <= 1000 ms |")
print()
for o, what in ((6, "defaults"), (12, "http.max_waiting_requests=256")):
    print(f"- {high} connections, {what}: 503 answers {med(col(o+2)):.0f} per round, "
          f"{med(col(o+3)):.0f} with Retry-After, their p99 {med(col(o+4)):.2f} ms; "
          f"other answers and socket errors {med(col(o+5)):.0f}.")
PY
