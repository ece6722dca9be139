#!/usr/bin/env bash
# Pool-size sweep: the HTTP and batch benchmarks at a few sizes of each pool,
# as ratios to the defaults, measured in one run (docs/operations.md,
# "Tuning the pools", quotes its table).
#
#   bench/pools.sh [--build-dir DIR] [--no-build] [--duration 4s]
#                  [--connections 32] [--rows 20000] [--domains 200]
#                  [--only NAME,NAME...]
#
# Starts the project's DNS peer (mailassay-dns-peer) on 127.0.0.1 with the
# zone of bench/batch/driver.py (d0..dN.t.bench.test and cached.test, one
# MX each), then for each variant below a fresh `mailassay serve` on a
# throw-away SQLite database with the variant's settings, and measures:
#   real-time  wrk, `--connections` connections for `--duration`, on
#              POST /v2/email/validate of an address at cached.test (cached
#              key and DNS route: the hot path) -> requests/s and p99;
#   batch      one job of `--rows` addresses over `--domains` domains (no
#              SMTP; each domain's MX looked up once through the peer),
#              uploaded and polled by bench/batch/driver.py -> addresses/s;
#   memory     the resident set after start (idle) and the peak (VmHWM)
#              after both loads (the batch upload's buffers dominate it),
#              and the threads.
# The defaults run first, in the middle and at the end: the spread between
# them is the noise of the machine during the sweep. SMTP probing is on (an
# identity is set) but nothing is probed: the SMTP row shows what that pool
# costs in threads and memory; the effect of the per-host sessions and
# connection rate is bench/smtp_realtime_bench.py's (docs/performance.md).
# Every process it starts is stopped on exit. The machine may be shared: read
# the ratios, not the absolute figures, and repeat a surprising row.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build_dir="$src/build-bench"
do_build=1
duration=4s
connections=32
rows=20000
domains=200
only=

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --rows) rows=$2; shift 2 ;;
    --domains) domains=$2; shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;p}' "$0"; exit 0 ;;
    *) echo "pools: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "pools: $*" >&2; }
# shellcheck source=bench/lib/service.sh
. "$here/lib/service.sh"

bench_require wrk curl jq python3

if [ "$do_build" = 1 ]; then
  # build-bench, as the other scripts: a developer's build/ keeps the test
  # configuration its environment gave it.
  log "building mailassay and the DNS peer in $build_dir"
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DMAILASSAY_BENCH=ON -DBUILD_TESTING=ON >/dev/null
  nice -n 5 cmake --build "$build_dir" --target mailassay mailassay-dns-peer \
    -j2 >/dev/null
fi
mailassay=$build_dir/mailassay
dns_peer=$build_dir/tests/peers/mailassay-dns-peer
for b in "$mailassay" "$dns_peer"; do
  [ -x "$b" ] || { log "missing $b (build first or drop --no-build)"; exit 2; }
done

# The variants: NAME and the settings that differ from the defaults.
variants=(
  "defaults|"
  "http.io_threads=2|MAILASSAY_HTTP_IO_THREADS=2"
  "actors.scheduler_threads=1|MAILASSAY_ACTORS_SCHEDULER_THREADS=1"
  "actors.scheduler_threads=4|MAILASSAY_ACTORS_SCHEDULER_THREADS=4"
  "validation.workers=1|MAILASSAY_VALIDATION_WORKERS=1"
  "validation.workers=4|MAILASSAY_VALIDATION_WORKERS=4"
  "actors.storage_workers=2|MAILASSAY_ACTORS_STORAGE_WORKERS=2"
  "actors.storage_workers=8|MAILASSAY_ACTORS_STORAGE_WORKERS=8"
  "batch.concurrency=16|MAILASSAY_BATCH_CONCURRENCY=16"
  "batch.concurrency=256|MAILASSAY_BATCH_CONCURRENCY=256"
  "defaults (middle)|"
  "batch.nice=0|MAILASSAY_BATCH_NICE=0"
  "dns.max_inflight=16|MAILASSAY_DNS_MAX_INFLIGHT=16"
  "smtp.io_threads=4|MAILASSAY_SMTP_IO_THREADS=4"
  "defaults (again)|"
)

# --- processes, stopped on exit -------------------------------------------
work=$(mktemp -d /tmp/mailassay-pools.XXXXXX)
pids=()
cleanup() {
  bench_stop_all
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
driver() { python3 "$here/batch/driver.py" "$@"; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

driver zone --out "$work/zone" --domains "$domains" --sets t
driver gen --out "$work/t.csv" --rows "$rows" --domains "$domains" \
  --dup-percent 0 --invalid 0 --set t >/dev/null
dns_port=$(free_port)
"$dns_peer" --zone "$work/zone" --listen "127.0.0.1:$dns_port" \
  >"$work/dns.log" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  grep -q listening "$work/dns.log" 2>/dev/null && break
  sleep 0.1
done
grep -q listening "$work/dns.log" || { log "DNS peer did not start"; exit 1; }
bench_jwt_secret

# run_variant INDEX NAME [VAR=VALUE...]
#   -> "rps p99_ms batch_per_s idle_rss_kb hwm_kb threads"
run_variant() {
  local idx=$1 name=$2 pid base key out
  shift 2
  bench_start_service "v$idx" MAILASSAY_BATCH_POLL_MS=100 \
    MAILASSAY_SMTP_HELO=probe.example.io MAILASSAY_SMTP_MAIL_FROM=verify@example.io \
    "$@"
  pid=$bench_pid
  base=$bench_base
  local idle_rss
  idle_rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
  key=$(driver setup --base "$base")
  driver warm --base "$base" --key "$key" --email jane.doe@cached.test >/dev/null
  bench_wrk_validate "$work/wrk.$idx" "$key" jane.doe@cached.test \
    "$base/v2/email/validate" -c "$connections" -t 2 -d "$duration" --latency
  local rps p99 failures
  read -r rps _ p99 failures <<<"$(bench_wrk_summary "$work/wrk.$idx")"
  [ "$failures" = 0 ] || log "$name: $failures failed answers under wrk"
  out=$(driver run --base "$base" --key "$key" --file "$work/t.csv" \
    --pid "$pid" --poll-ms 50) || { log "$name: batch run failed: $out"; exit 1; }
  local per_s hwm threads
  per_s=$(jq -r --argjson n "$rows" \
    '($n / .total_seconds) | floor' <<<"$out")
  hwm=$(awk '/^VmHWM/ {print $2}' "/proc/$pid/status")
  threads=$(awk '/^Threads/ {print $2}' "/proc/$pid/status")
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$rps $p99 $per_s $idle_rss $hwm $threads"
}

run_date=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(loadavg)
log "$(nproc) cores, load $load_start; wrk $connections connections for" \
  "$duration; batch $rows addresses over $domains domains"
results=()
names=()
for i in "${!variants[@]}"; do
  name=${variants[$i]%%|*}
  settings=${variants[$i]#*|}
  if [ -n "$only" ] && [[ "$name" != defaults* ]] \
    && [[ ",$only," != *",${name%%=*},"* ]] && [[ ",$only," != *",$name,"* ]]; then
    continue
  fi
  # shellcheck disable=SC2086
  r=$(run_variant "$i" "$name" $settings)
  log "$name: $r (load $(loadavg))"
  names+=("$name")
  results+=("$r")
done

echo
echo "bench/pools.sh, $run_date, $(nproc) cores, load average $load_start at the start, $(loadavg) at the end"
echo "(ratios to the first defaults run; real-time: wrk $connections connections, $duration, validate with cached key and DNS; batch: $rows addresses, $domains domains, no SMTP)"
echo
echo "| variant | real-time req/s | p99 | batch addresses/s | RSS idle | peak RSS | threads |"
echo "|---|---:|---:|---:|---:|---:|---:|"
read -r b_rps b_p99 b_batch b_idle b_hwm _ <<<"${results[0]}"
for i in "${!names[@]}"; do
  read -r rps p99 batch idle hwm threads <<<"${results[$i]}"
  awk -v n="${names[$i]}" -v rps="$rps" -v p99="$p99" -v batch="$batch" \
    -v idle="$idle" -v hwm="$hwm" -v th="$threads" -v brps="$b_rps" \
    -v bp99="$b_p99" -v bbatch="$b_batch" -v bidle="$b_idle" -v bhwm="$b_hwm" \
    'BEGIN {
      printf "| %s | %.0f (%.2f) | %.2f ms (%.2f) | %.0f (%.2f) | %.1f MiB (%.2f) | %.1f MiB (%.2f) | %d |\n",
        n, rps, rps / brps, p99, p99 / bp99, batch, batch / bbatch,
        idle / 1024, idle / bidle, hwm / 1024, hwm / bhwm, th }'
done
