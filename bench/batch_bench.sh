#!/usr/bin/env bash
# Batch-job benchmark of mailassay: the performance requirements of batch jobs.
#
#   bench/batch_bench.sh [--build-dir DIR] [--no-build] [--rows 200000]
#                        [--domains 5000] [--dup-percent 20] [--invalid 1000]
#                        [--jobs 3] [--duration 10] [--connections 64]
#                        [--threads 2] [--rounds 2] [--paced-connections 10]
#                        [--paced-delay-ms 10] [--low-concurrency 8]
#                        [--no-postgres] [--no-throughput] [--no-latency]
#                        [--serve-env VAR=VALUE]...
#
# Everything runs on 127.0.0.1 and free ports: the project's DNS peer
# (mailassay-dns-peer) serves `dN.SET.bench.test MX 10 mx.bench.test` for
# N < --domains (explicit lines for the throughput sets, `*.bench.test` for
# the sets the latency part makes up), and `mailassay serve` gets a
# throw-away database, MAILASSAY_DNS_SERVERS pointed at the peer (never the
# system resolver), MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS=true and
# MAILASSAY_LIMITS_IP_PER_MINUTE=10000000 (polling every 100 ms would hit the
# default per-IP limit). No SMTP. --serve-env adds a variable to every
# `mailassay serve` it starts (e.g. MAILASSAY_ACTORS_SCHEDULER_THREADS=1 or
# MALLOC_ARENA_MAX=2, to try a knob).
#
# The CSV: --rows unique addresses (short local parts) spread evenly over
# --domains domains, plus repeats of earlier addresses making --dup-percent %
# of the data rows (half of them with the domain upper-cased) and --invalid
# rows that are no address, shuffled; it must stay within the 10 MB upload
# limit. Uploaded as a raw text/csv body with an API key (signup ->
# POST /v2/api-keys).
#
# 1. Throughput, per backend (SQLite; PostgreSQL too when
#    scripts/lib/test-postgres.sh finds or starts one, in a fresh schema
#    `?schema=bench_<random>` dropped at exit): fresh peer and service, then
#    --jobs jobs one after the other (job k on its own domain set). Job 1 is
#    the figure: from the start of the upload until GET /v2/batch/{id} says
#    `completed` (polled every 100 ms); addresses/s, DNS queries
#    (mailassay_dns_queries_sent; the peer's own count), RSS (VmRSS polled,
#    VmHWM before/after the upload, at completion, after the export), and
#    the CSV export (GET /v2/batch/{id}/results?format=csv) must have exactly
#    uniqueEmails + invalidRows data rows, each address once. Jobs 2.. show
#    how time and memory of a long-lived process evolve.
# 2. Real-time latency (SQLite): wrk on POST /v2/email/validate for a cached
#    domain, --duration s idle, then --duration s while batch jobs run
#    (bench/batch/driver.py feed: upload, wait for `processing`, start wrk,
#    upload the next job as soon as one completes, so a job is active for the
#    whole window although one takes less than 10 s), interleaved, --rounds
#    rounds, under two loads: `closed` (bench/wrk/validate.lua, --connections
#    connections as fast as possible: saturates the 2 cores) and `paced`
#    (bench/batch/validate_paced.lua, --paced-connections connections each
#    waiting --paced-delay-ms between requests). When p99(batch) / p99(idle)
#    > 2, one more round with MAILASSAY_BATCH_CONCURRENCY=--low-concurrency.
#
# Prints markdown tables. Every process it starts is stopped on exit (and a
# PostgreSQL cluster it had to start, unless others connected meanwhile). A
# failure of the service (error answer, crash, stuck job, wrong export) is
# reported with the job record and the server's log lines (kept in
# /tmp/mailassay-batch-bench-*.log), not retried; the exit status is then 1.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build_dir="$src/build-bench"
do_build=1
rows=200000
domains=5000
dup_percent=20
invalid=1000
jobs=3
duration=10
connections=64
threads=2
rounds=2
paced_connections=10
paced_delay_ms=10
low_concurrency=8
use_postgres=1
do_throughput=1
do_latency=1
serve_env=()

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --rows) rows=$2; shift 2 ;;
    --domains) domains=$2; shift 2 ;;
    --dup-percent) dup_percent=$2; shift 2 ;;
    --invalid) invalid=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --duration) duration=${2%s}; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --paced-connections) paced_connections=$2; shift 2 ;;
    --paced-delay-ms) paced_delay_ms=$2; shift 2 ;;
    --low-concurrency) low_concurrency=$2; shift 2 ;;
    --no-postgres) use_postgres=0; shift ;;
    --no-throughput) do_throughput=0; shift ;;
    --no-latency) do_latency=0; shift ;;
    --serve-env) serve_env+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,56p' "$0"; exit 0 ;;
    *) echo "batch_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "batch_bench: $*" >&2; }
# shellcheck source=bench/lib/service.sh
. "$here/lib/service.sh"
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# --- tools -----------------------------------------------------------------
bench_require curl jq python3
[ "$do_latency" = 0 ] || bench_require wrk
driver() { python3 "$here/batch/driver.py" "$@"; }

if [ "$do_build" = 1 ]; then
  log "building in $build_dir"
  [ -f "$build_dir/CMakeCache.txt" ] || cmake -S "$src" -B "$build_dir" \
    -DCMAKE_BUILD_TYPE=Release -DMAILASSAY_BENCH=ON -DBUILD_TESTING=ON >/dev/null
  cmake --build "$build_dir" --target mailassay mailassay-dns-peer -j2 >/dev/null
fi
mailassay=$build_dir/mailassay
dns_peer=$build_dir/tests/peers/mailassay-dns-peer
for b in "$mailassay" "$dns_peer"; do
  [ -x "$b" ] || { log "missing $b (build first or drop --no-build)"; exit 2; }
done

# --- processes, stopped on exit -------------------------------------------
work=$(mktemp -d /tmp/mailassay-batch-bench.XXXXXX)
pids=()
pg_url=
pg_started=0
pg_schemas=()
keep_logs=()

forget_pid() {
  local p keep=()
  for p in "${pids[@]}"; do [ "$p" = "$1" ] || keep+=("$p"); done
  pids=("${keep[@]}")
}

# stop_proc PID: bench_stop, and PID leaves `pids`; sets stopped_rc to its
# exit status.
stop_proc() {
  bench_stop "$1"
  forget_pid "$1"
  stopped_rc=$bench_stopped_rc
}

pg_psql() { PGCONNECT_TIMEOUT=3 psql "${pg_url%%\?*}" -X -Atq "$@"; }

cleanup() {
  local name
  bench_stop_all
  for name in "${pg_schemas[@]}"; do
    pg_psql -c "DROP SCHEMA IF EXISTS $name CASCADE" >/dev/null 2>&1 \
      || log "could not drop schema $name"
  done
  if [ "$pg_started" = 1 ]; then
    # Started by this run: stop it unless someone else connected meanwhile.
    local others
    others=$(pg_psql -c "SELECT count(*) FROM pg_stat_activity
      WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" \
      2>/dev/null || echo 0)
    if [ "${others:-0}" = 0 ]; then
      log "stopping the PostgreSQL cluster this run started"
      local data=${MAILASSAY_PG_DIR:-/tmp/mailassay-pg}/data
      local pg_bin=${MAILASSAY_PG_BIN:-/usr/lib/postgresql/15/bin}
      if [ "$(id -u)" = 0 ]; then
        (cd / && su postgres -s /bin/sh -c "'$pg_bin/pg_ctl' -D '$data' stop -m fast") >/dev/null 2>&1 || true
      else
        "$pg_bin/pg_ctl" -D "$data" stop -m fast >/dev/null 2>&1 || true
      fi
    else
      log "leaving PostgreSQL running: $others other client(s) connected"
    fi
  fi
  for name in "${keep_logs[@]}"; do
    cp "$work/$name.log" "/tmp/mailassay-batch-bench-$name.log" 2>/dev/null \
      && log "log of $name kept in /tmp/mailassay-batch-bench-$name.log"
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_peer NAME: a DNS peer on the bench zone; sets NAME_dns, NAME_peer.
start_peer() {
  local name=$1 port pid
  port=$(free_port)
  "$dns_peer" --zone "$work/zone" --listen "127.0.0.1:$port" \
    >"$work/$name.dns.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do
    grep -q listening "$work/$name.dns.log" 2>/dev/null && break
    kill -0 "$pid" 2>/dev/null || { cat "$work/$name.dns.log" >&2; exit 1; }
    sleep 0.1
  done
  grep -q listening "$work/$name.dns.log" \
    || { log "DNS peer did not start"; cat "$work/$name.dns.log" >&2; exit 1; }
  eval "${name}_dns=$port ${name}_peer=$pid"
}

# stop_peer NAME: stops NAME's peer; sets peer_queries to the number of
# queries it received.
stop_peer() {
  local name=$1 pid
  pid=$(eval echo "\$${name}_peer")
  stop_proc "$pid"
  peer_queries=$(sed -n 's/.*: \([0-9]*\) queries.*/\1/p' "$work/$name.dns.log" | tail -n 1)
}

bench_jwt_secret
# PostgreSQL's first start and its migrations may take longer than 10 s.
bench_health_tries=300

# start_service NAME DB_URL LOG_LEVEL [VAR=VALUE...]: bench_start_service
# (bench/lib/service.sh) on NAME's DNS peer with that database and log
# level, --serve-env added; sets NAME_pid, NAME_base.
start_service() {
  local name=$1 db=$2 level=$3
  shift 3
  dns_port=$(eval echo "\$${name}_dns")
  bench_start_service "$name" MAILASSAY_DATABASE_URL="$db" \
    MAILASSAY_LOG_LEVEL="$level" "${serve_env[@]}" "$@"
  eval "${name}_pid=$bench_pid ${name}_base=$bench_base"
}

# Lines of a service log at warn level or above (JSON lines, "level"),
# but the expected start-up warning that SMTP probing is off.
log_problems() {
  grep -Ei '"level" *: *"(warn|warning|error|critical)"|\[(warn|warning|error|critical)\]' \
    "$work/$1.log" | grep -v '"event":"smtp_disabled"' || true
}

# --- data ------------------------------------------------------------------
# Explicit zone lines for the throughput sets t, t2.. (one MX per domain);
# the latency part makes up set names as it goes, served by *.bench.test.
sets=(t)
for j in $(seq 2 "$jobs"); do sets+=("t$j"); done
driver zone --out "$work/zone" --domains "$domains" \
  --sets "$(IFS=,; echo "${sets[*]}")"
driver gen --out "$work/t.csv" --rows "$rows" --domains "$domains" \
  --dup-percent "$dup_percent" --invalid "$invalid" --set t >"$work/t.json"
file_bytes=$(jq .bytes "$work/t.json")
max_bytes=10485760
log "CSV: $(cat "$work/t.json")"
if [ "$file_bytes" -gt "$max_bytes" ]; then
  log "the CSV is $file_bytes bytes, over the 10 MB upload limit ($max_bytes):" \
    "use fewer --rows / --dup-percent"
  exit 2
fi

run_date=$(date -u '+%Y-%m-%d %H:%M UTC')
load_start=$(loadavg)
status=0

# --- 1. throughput ---------------------------------------------------------
declare -A T # T[backend,field]
backends=()

# throughput_run TAG DB_URL: fresh peer and service; --jobs jobs one after
# the other (job 1 with set t, job k with set tk); results in
# $work/tpTAG.K.json.
throughput_run() {
  local tag=$1 db=$2 key out rc j svc="tp$1" bad=0 problems
  log "throughput ($tag): load $(loadavg)"
  start_peer "$svc"
  start_service "$svc" "$db" info
  local base pid
  base=$(eval echo "\$${svc}_base"); pid=$(eval echo "\$${svc}_pid")
  key=$(driver setup --base "$base")
  for j in $(seq 1 "$jobs"); do
    rc=0
    local rename=()
    [ "$j" -gt 1 ] && rename=(--rename "t:t$j")
    out=$(driver run --base "$base" --key "$key" --file "$work/t.csv" \
      --pid "$pid" "${rename[@]}") || rc=$?
    echo "${out:-{\}}" >"$work/$svc.$j.json"
    log "throughput ($tag) job $j: $(jq -c '{total_seconds, upload_seconds, queued_seconds, mailassay_dns_queries_sent, vmhwm_done_kb, vmrss_after_export_kb, export_rows, export_expected, error}' <<<"${out:-{\}}" 2>/dev/null)"
    if [ "$rc" != 0 ] || [ "$(jq -r '.job.status == "completed" and .export_rows == .export_expected and .export_repeated_emails == 0' <<<"${out:-{\}}" 2>/dev/null)" != true ]; then
      bad=1
      log "throughput ($tag) job $j: PROBLEM (driver exit $rc)"
      log "result: $(jq -c 'del(.timeline)' <<<"$out" 2>/dev/null || echo "$out")"
      log "timeline: $(jq -c .timeline <<<"$out" 2>/dev/null | head -c 2000)"
      break
    fi
  done
  stop_peer "$svc"; T[$tag,peer]=${peer_queries:-?}
  stop_proc "$pid"; T[$tag,svc_rc]=$stopped_rc
  problems=$(log_problems "$svc")
  T[$tag,problems]=$(grep -c . <<<"$problems" || true)
  T[$tag,load]=$(loadavg)
  if [ "$bad" = 1 ] || [ "$stopped_rc" != 0 ] || [ -n "$problems" ]; then
    status=1
    keep_logs+=("$svc")
    log "throughput ($tag): mailassay exit status $stopped_rc on SIGTERM"
    [ -n "$problems" ] && { log "warn/error lines of mailassay:"; head -n 20 <<<"$problems" >&2; }
    [ "$bad" = 1 ] && { log "last lines of mailassay's log:"; tail -n 20 "$work/$svc.log" >&2; }
  fi
  backends+=("$tag")
}

if [ "$do_throughput" = 1 ]; then
  throughput_run sqlite "sqlite://$work/tp.db"
  if [ "$use_postgres" = 1 ]; then
    pg_port_was_up=0
    for p in "${MAILASSAY_PG_PORT:-55432}" 5432; do
      pg_isready -q -h 127.0.0.1 -p "$p" 2>/dev/null && pg_port_was_up=1
    done
    if pg_url=$("$src/scripts/lib/test-postgres.sh" 2>"$work/pg.log" | tail -n 1) \
       && [ -n "$pg_url" ]; then
      [ "$pg_port_was_up" = 0 ] && pg_started=1
      schema="bench_$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n')"
      pg_schemas+=("$schema")
      log "PostgreSQL: ${pg_url%%@*}@... schema $schema"
      throughput_run postgresql "$pg_url?schema=$schema"
    else
      log "no PostgreSQL (scripts/lib/test-postgres.sh: $(tail -n 1 "$work/pg.log")); SQLite only"
    fi
  fi
fi

# --- 2. real-time latency with and without a batch ------------------------
# run_wrk MODE OUT [SECONDS] -> "rps p50 p99 errors"
run_wrk() {
  local mode=$1 out=$2 secs=${3:-$duration}
  if [ "$mode" = closed ]; then
    BENCH_API_KEY=$lat_key BENCH_EMAIL=jane.doe@cached.test \
      wrk -c "$connections" -t "$threads" -d "${secs}s" --latency \
      -s "$here/wrk/validate.lua" "$lat_base/v2/email/validate" >"$out"
  else
    BENCH_API_KEY=$lat_key BENCH_EMAIL=jane.doe@cached.test \
      BENCH_DELAY_MS=$paced_delay_ms \
      wrk -c "$paced_connections" -t "$threads" -d "${secs}s" --latency \
      -s "$here/batch/validate_paced.lua" "$lat_base/v2/email/validate" >"$out"
  fi
  bench_wrk_summary "$out"
}

declare -A L # L[suite,mode,state,round] = "rps p50 p99 errors"
modes=(closed paced)

# latency_suite SUITE ROUNDS [VAR=VALUE...]: one service (SQLite) for all
# its rounds; per round and load, wrk idle, then wrk while driver.py feed
# keeps batch jobs of the --rows CSV running back to back (each on a new
# domain set: cold DNS cache), started before wrk and waited for after it.
latency_suite() {
  local suite=$1 nrounds=$2 r mode svc="lat_$1" st feeder f
  shift 2
  L[$suite,load]=$(loadavg)
  log "latency ($suite): load ${L[$suite,load]}; ${*:-default batch settings}"
  start_peer "$svc"
  start_service "$svc" "sqlite://$work/$svc.db" warn "$@"
  lat_pid=$(eval echo "\$${svc}_pid"); lat_base=$(eval echo "\$${svc}_base")
  lat_key=$(driver setup --base "$lat_base")
  st=$(driver warm --base "$lat_base" --key "$lat_key" --email jane.doe@cached.test)
  log "warm-up: jane.doe@cached.test -> $st"
  for mode in "${modes[@]}"; do run_wrk "$mode" "$work/warm.$mode" 2 >/dev/null; done
  for r in $(seq 1 "$nrounds"); do
    for mode in "${modes[@]}"; do
      L[$suite,$mode,idle,$r]=$(run_wrk "$mode" "$work/wrk.$suite.$mode.idle.$r")
      log "$suite round $r $mode idle: ${L[$suite,$mode,idle,$r]}"
      f="$work/feed.$suite.$mode.$r"
      rm -f "$work/ready" "$work/stop"
      driver feed --base "$lat_base" --key "$lat_key" --pid "$lat_pid" \
        --template "$work/t.csv" --prefix "f$suite$r${mode:0:1}" \
        --ready "$work/ready" --stop "$work/stop" --out "$f.json" \
        >"$f.out" 2>&1 &
      feeder=$!
      for _ in $(seq 1 1200); do
        [ -s "$work/ready" ] && break
        kill -0 "$feeder" 2>/dev/null || break
        sleep 0.05
      done
      if [ "$(cat "$work/ready" 2>/dev/null)" = failed ] || [ ! -s "$work/ready" ]; then
        status=1; keep_logs+=("$svc")
        log "$suite round $r $mode: the first batch job did not start: $(cat "$f.out" "$f.json" 2>/dev/null | head -c 2000)"
        kill "$feeder" 2>/dev/null || true; wait "$feeder" 2>/dev/null || true
        tail -n 20 "$work/$svc.log" >&2
        break 2
      fi
      L[$suite,$mode,batch,$r]=$(run_wrk "$mode" "$work/wrk.$suite.$mode.batch.$r")
      date +%s.%N >"$work/stop.tmp" && mv "$work/stop.tmp" "$work/stop"
      wait "$feeder" || true
      if [ ! -s "$f.json" ] || [ "$(jq -r '.error // empty' "$f.json")" != "" ]; then
        status=1; keep_logs+=("$svc")
        log "$suite round $r $mode: batch feeder failed: $(jq -r .error "$f.json" 2>/dev/null) $(head -c 1000 "$f.out")"
        log "job records: $(jq -c '[.jobs[] | .record // {id}]' "$f.json" 2>/dev/null | head -c 3000)"
        log "warn/error lines:"; log_problems "$svc" | head -n 20 >&2
      fi
      L[$suite,$mode,feed,$r]=$(jq -r '"\(.jobs_in_window) \(.busy_share) \(.rows_in_window)"' "$f.json" 2>/dev/null || echo "? ? ?")
      log "$suite round $r $mode batch: ${L[$suite,$mode,batch,$r]} (jobs in window, busy share, rows validated in window: ${L[$suite,$mode,feed,$r]}; job seconds $(jq -c .job_seconds "$f.json" 2>/dev/null); VmHWM $(jq -r .vmhwm_kb "$f.json" 2>/dev/null) kB)"
    done
  done
  L[$suite,rss]=$(awk '/^VmHWM/ {print $2}' "/proc/$lat_pid/status")
  L[$suite,load]="${L[$suite,load]} at start, $(loadavg) at end"
  L[$suite,jobs]=$(cat "$work"/feed."$suite".*.json 2>/dev/null | jq -s '[.[].jobs | length] | add')
  local problems
  problems=$(log_problems "$svc")
  if [ -n "$problems" ]; then
    status=1; keep_logs+=("$svc")
    log "warn/error lines of mailassay ($suite):"; head -n 20 <<<"$problems" >&2
  fi
  stop_proc "$lat_pid"
  [ "$stopped_rc" = 0 ] || { status=1; keep_logs+=("$svc"); log "mailassay ($suite) exited with $stopped_rc on SIGTERM"; }
  stop_peer "$svc"; L[$suite,peer]=$peer_queries
}

median() { sort -g | awk '{v[NR] = $1} END {
  if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR/2] + v[NR/2 + 1]) / 2 }'; }
col() { # suite mode state field rounds -> values
  local r
  for r in $(seq 1 "$5"); do echo "${L[$1,$2,$3,$r]:-}" | awk -v c="$4" 'NF {print $c}'; done
}

# ratios SUITE MODE ROUNDS -> "median_ratio per-round..."
ratios() {
  local r all=()
  for r in $(seq 1 "$3"); do
    [ -n "${L[$1,$2,batch,$r]:-}" ] || continue
    all+=("$(awk -v a="$(echo "${L[$1,$2,batch,$r]}" | cut -d' ' -f3)" \
      -v b="$(echo "${L[$1,$2,idle,$r]}" | cut -d' ' -f3)" 'BEGIN {printf "%.2f", a / b}')")
  done
  echo "$(printf '%s\n' "${all[@]}" | median) ${all[*]}"
}

low_ran=0
if [ "$do_latency" = 1 ]; then
  latency_suite main "$rounds" || true
  need_low=0
  for mode in "${modes[@]}"; do
    [ -n "${L[main,$mode,batch,1]:-}" ] || continue
    read -r m _ <<<"$(ratios main "$mode" "$rounds")"
    awk -v m="$m" 'BEGIN {exit !(m > 2)}' && need_low=1
  done
  if [ "$need_low" = 1 ]; then
    latency_suite low 1 MAILASSAY_BATCH_CONCURRENCY="$low_concurrency" || true
    low_ran=1
  fi
fi
load_end=$(loadavg)

# --- report ----------------------------------------------------------------
kb_mb() { awk -v k="$1" 'BEGIN {if (k == "" || k == "null" || k == "?") print "?"; else printf "%.1f", k / 1024}'; }
verdict() { if awk "BEGIN {exit !($1)}" 2>/dev/null; then echo pass; else echo "**FAIL**"; fi; }
R() { # backend job jq-expression; "?" when missing (a verdict on it fails)
  local v
  v=$(jq -r "$3" "$work/tp$1.$2.json" 2>/dev/null) || v="?"
  case "$v" in ""|null) echo "?" ;; *) echo "$v" ;; esac
}

echo
echo "### Batch jobs ($run_date, $(nproc) cores, load average $load_start at start, $load_end at end)"
echo
echo "mailassay built $(date -u -r "$mailassay" '+%Y-%m-%d %H:%M UTC'), tree at $(git -C "$src" describe --always --dirty 2>/dev/null || echo '?')."
echo
[ ${#serve_env[@]} -gt 0 ] && { echo "Every \`mailassay serve\` ran with: ${serve_env[*]}."; echo; }
echo "CSV: $(jq -r '"\(.bytes) bytes (limit 10485760), \(.data_rows) data rows = \(.unique) unique addresses over \(.domains) domains + \(.duplicates) repeats of earlier rows + \(.invalid) rows that are no address"' "$work/t.json")."
if [ "$do_throughput" = 1 ]; then
  echo
  printf '| job 1 on a fresh process: upload → `completed`, no SMTP, local DNS peer |'
  for b in "${backends[@]}"; do printf ' %s |' "$b"; done; echo
  printf '|---|'; for _ in "${backends[@]}"; do printf -- '---:|'; done; echo
  row() { # label jq-expression
    printf '| %s |' "$1"
    for b in "${backends[@]}"; do printf ' %s |' "$(R "$b" 1 "$2")"; done; echo
  }
  row "upload (POST → 201), s" .upload_seconds
  row "201 → first poll seeing \`processing\`, s" '.queued_seconds // "?"'
  row "**total (upload start → \`completed\`), s**" .total_seconds
  row "**addresses/s** (uniqueEmails / total)" '(.job.uniqueEmails / .total_seconds | floor)'
  row "job: totalRows / uniqueEmails / duplicatesRemoved / invalidRows" '"\(.job.totalRows) / \(.job.uniqueEmails) / \(.job.duplicatesRemoved) / \(.job.invalidRows)"'
  row "job: status; counts valid / invalid / risky / unknown" '"\(.job.status); \(.job.counts.valid) / \(.job.counts.invalid) / \(.job.counts.risky) / \(.job.counts.unknown)"'
  row "DNS queries sent (\`mailassay_dns_queries_sent\`)" '.mailassay_dns_queries_sent'
  row "DNS cache misses / hits" '"\(.mailassay_dns_cache_misses) / \(.mailassay_dns_cache_hits)"'
  row "RSS before the upload: VmRSS / VmHWM (start-up peak), MB" '"\((.vmrss_before_upload_kb // 0) / 1024 * 10 | floor / 10) / \((.vmhwm_before_upload_kb // 0) / 1024 * 10 | floor / 10)"'
  row "VmHWM when the upload answered, MB" '((.vmhwm_after_upload_kb // 0) / 1024 * 10 | floor / 10)'
  row "**peak RSS**: max VmRSS polled / VmHWM at completion, MB" '"\((.rss_peak_polled_kb // 0) / 1024 * 10 | floor / 10) / \((.vmhwm_done_kb // 0) / 1024 * 10 | floor / 10)"'
  row "VmHWM / VmRSS after the CSV export, MB" '"\((.vmhwm_after_export_kb // 0) / 1024 * 10 | floor / 10) / \((.vmrss_after_export_kb // 0) / 1024 * 10 | floor / 10)"'
  row "export: data rows / uniqueEmails + invalidRows" '"\(.export_rows) / \(.export_expected)"'
  row "export: addresses listed twice" .export_repeated_emails
  row "export: bytes; s" '"\(.export_bytes); \(.export_seconds)"'
  if [ "$jobs" -gt 1 ]; then
    lst() { # backend expr -> "a, b, c" over jobs
      local j out=()
      for j in $(seq 1 "$jobs"); do out+=("$(R "$1" "$j" "$2")"); done
      (IFS=/; echo "${out[*]}" | sed 's#/# / #g')
    }
    printf '| jobs 1..%s in the same process (new domains each): total s |' "$jobs"
    for b in "${backends[@]}"; do printf ' %s |' "$(lst "$b" .total_seconds)"; done; echo
    printf '| jobs 1..%s: VmHWM at completion, MB |' "$jobs"
    for b in "${backends[@]}"; do printf ' %s |' "$(lst "$b" '((.vmhwm_done_kb // 0) / 1024 | floor)')"; done; echo
    printf '| jobs 1..%s: VmRSS after the export, MB |' "$jobs"
    for b in "${backends[@]}"; do printf ' %s |' "$(lst "$b" '((.vmrss_after_export_kb // 0) / 1024 | floor)')"; done; echo
    printf '| jobs 1..%s: export rows right |' "$jobs"
    for b in "${backends[@]}"; do printf ' %s |' "$(lst "$b" '.export_rows == .export_expected and .export_repeated_emails == 0')"; done; echo
  fi
  printf '| DNS queries received by the peer (all %s jobs) |' "$jobs"
  for b in "${backends[@]}"; do printf ' %s |' "${T[$b,peer]}"; done; echo
  printf '| mailassay exit status on SIGTERM / warn+error log lines |'
  for b in "${backends[@]}"; do printf ' %s / %s |' "${T[$b,svc_rc]}" "${T[$b,problems]}"; done; echo
  printf '| load average after the run |'
  for b in "${backends[@]}"; do printf ' %s |' "${T[$b,load]}"; done; echo
  echo
  echo "| target | measured | |"
  echo "|---|---|---|"
  for b in "${backends[@]}"; do
    tot=$(R "$b" 1 .total_seconds); hwm=$(R "$b" 1 .vmhwm_done_kb)
    hwm2=$(R "$b" 1 .vmhwm_after_export_kb); hwmn=$(R "$b" "$jobs" .vmhwm_after_export_kb)
    ok_rows=$(R "$b" 1 '.export_rows == .export_expected and .export_repeated_emails == 0 and .job.status == "completed"')
    echo "| $b: $rows addresses in < 10 s | ${tot} s | $(verdict "$tot < 10") |"
    echo "| $b: peak RSS < 200 MB, job 1 on a fresh process | $(kb_mb "$hwm") MB | $(verdict "$hwm < 204800") |"
    echo "| $b: same, job 1 + its CSV export | $(kb_mb "$hwm2") MB | $(verdict "$hwm2 < 204800") |"
    [ "$jobs" -gt 1 ] && echo "| $b: same, after $jobs jobs + exports in one process | $(kb_mb "$hwmn") MB | $(verdict "$hwmn < 204800") |"
    echo "| $b: export rows = uniqueEmails + invalidRows | $(R "$b" 1 '"\(.export_rows) = \(.export_expected)"') | $( [ "$ok_rows" = true ] && echo pass || echo '**FAIL**') |"
  done
fi

if [ "$do_latency" = 1 ] && [ -n "${L[main,closed,idle,1]:-}" ]; then
  echo
  echo "Real-time \`POST /v2/email/validate\` (cached domain), SQLite, ${duration} s per wrk run, idle and batch runs interleaved, $rounds round(s), median over rounds. closed = bench/wrk/validate.lua, -c $connections -t $threads, as fast as possible (saturates both cores); paced = bench/batch/validate_paced.lua, -c $paced_connections -t $threads, ${paced_delay_ms} ms think time per connection. \"batch\": $rows-address jobs uploaded back to back from 1 job in \`processing\` before wrk starts until wrk ends (a 200000-address job takes less than the window)."
  echo
  echo "| suite | load | state | req/s | p50 ms | p99 ms | p99 per round | errors | batch in the window: jobs, share of time with a job active, addresses validated |"
  echo "|---|---|---|---:|---:|---:|---|---:|---|"
  suites=(main); [ "$low_ran" = 1 ] && suites+=(low)
  for s in "${suites[@]}"; do
    n=$rounds; [ "$s" = low ] && n=1
    label="BATCH_CONCURRENCY 64 (default)"; [ "$s" = low ] && label="BATCH_CONCURRENCY $low_concurrency"
    for mode in "${modes[@]}"; do
      [ -n "${L[$s,$mode,batch,1]:-}" ] || continue
      for state in idle batch; do
        info="–"
        [ "$state" = batch ] && info=$(for r in $(seq 1 "$n"); do echo "${L[$s,$mode,feed,$r]:-? ? ?}" | awk '{printf "%s, %s %%, %s; ", $1, ($2 == "?" || $2 == "null") ? "?" : int($2 * 100 + 0.5), $3}'; done)
        printf '| %s | %s | %s | %.0f | %s | %s | %s | %s | %s |\n' "$label" "$mode" "$state" \
          "$(col "$s" "$mode" "$state" 1 "$n" | median)" \
          "$(col "$s" "$mode" "$state" 2 "$n" | median)" \
          "$(col "$s" "$mode" "$state" 3 "$n" | median)" \
          "$(col "$s" "$mode" "$state" 3 "$n" | tr '\n' ' ')" \
          "$(col "$s" "$mode" "$state" 4 "$n" | awk '{s += $1} END {print s + 0}')" "${info%; }"
      done
    done
  done
  echo
  for s in "${suites[@]}"; do echo "Load average during the $s suite: ${L[$s,load]}."; echo; done
  echo "| target | p99(batch) / p99(idle): median (per round) | |"
  echo "|---|---|---|"
  for s in "${suites[@]}"; do
    n=$rounds; [ "$s" = low ] && n=1
    for mode in "${modes[@]}"; do
      [ -n "${L[$s,$mode,batch,1]:-}" ] || continue
      read -r m per <<<"$(ratios "$s" "$mode" "$n")"
      sfx=""; [ "$s" = low ] && sfx=", MAILASSAY_BATCH_CONCURRENCY=$low_concurrency"
      echo "| $mode load$sfx: ≤ 2 | $m ($per) | $(verdict "$m <= 2") |"
    done
    echo "| peak RSS of mailassay over the $s latency runs (${L[$s,jobs]:-?} batch jobs) < 200 MB | $(kb_mb "${L[$s,rss]:-}") MB | $(verdict "${L[$s,rss]:-0} > 0 && ${L[$s,rss]:-0} < 204800") |"
  done
fi
[ "$status" = 0 ] || log "there were failures: see the messages above"
exit "$status"
