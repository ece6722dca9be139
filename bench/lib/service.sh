# Shared by the HTTP benchmarks (bench/http_bench.sh, bench/pools.sh):
# sourced, not run. Starting a `mailassay serve` for a benchmark, driving
# wrk at it and reading wrk's report are written once here.
#
# The caller sets before use: `src` (the source tree), `work` (a scratch
# folder), `dns_port` (the DNS peer), `pids` (an array: every process
# started is appended, `bench_stop_all` stops them), and `log` (a function).

# bench_require TOOL...: exits 2, naming the package list, when a tool is
# missing (the scripts install nothing themselves).
bench_require() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || {
      log "$tool is required (scripts/lib/install-deps.sh scripts/lib/test-packages.txt)"
      exit 2
    }
  done
}

free_port() {
  python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Converts a wrk latency ("812.00us", "1.23ms", "1.02s") to milliseconds.
to_ms() {
  awk -v v="$1" 'BEGIN {
    n = v + 0
    if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n = n; else if (v ~ /m$/) n *= 60000; else if (v ~ /s$/) n *= 1000
    printf "%.3f", n }'
}

# bench_wait_for_line FILE TEXT PID: waits until FILE contains TEXT; exits
# 1 showing FILE when PID dies or 10 s pass.
bench_wait_for_line() {
  local file=$1 text=$2 pid=$3
  for _ in $(seq 1 100); do
    grep -q "$text" "$file" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  log "gave up waiting for '$text' in $file:"; cat "$file" >&2; exit 1
}

# bench_start_dns_peer PEER: the DNS peer binary PEER serving $work/zone on
# a free loopback port (sets dns_port), added to pids, once it listens.
bench_start_dns_peer() {
  dns_port=$(free_port)
  "$1" --zone "$work/zone" --listen "127.0.0.1:$dns_port" \
    >"$work/dns.log" 2>&1 &
  pids+=($!)
  bench_wait_for_line "$work/dns.log" "listening" "${pids[-1]}"
}

# bench_cpu_ticks PID: the CPU time (user + system, in clock ticks) PID has
# used so far. CPU per request moves less than req/s on a shared machine
# (time spent descheduled is not counted).
bench_cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# bench_stop PID: SIGTERM, SIGKILL if still running 10 s later; reaps it
# and sets bench_stopped_rc to its exit status. Not in a subshell: only the
# shell that started it can wait for it.
bench_stop() {
  local pid=$1
  bench_stopped_rc=0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || bench_stopped_rc=$?
}

# bench_stop_all: bench_stop for every process in `pids`, all signalled
# first so they stop together.
bench_stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do bench_stop "$pid"; done
}

# bench_jwt_secret: writes the shared access-token secret to
# $work/jwt.secret.
bench_jwt_secret() {
  head -c 48 /dev/urandom | base64 | tr -d '\n' >"$work/jwt.secret"
  chmod 600 "$work/jwt.secret"
}

# bench_start_service NAME [VAR=VALUE...]: starts `mailassay serve` (the
# binary in $mailassay) on a free port with its own SQLite database
# ($work/NAME.db), the DNS peer, test domains allowed, the per-IP limit far
# above any load and the given settings (which override these: the last
# assignment of a variable wins); waits until /health answers, for
# bench_health_tries x 0.1 s (default 100). Sets bench_pid and bench_base
# (http://127.0.0.1:PORT). Its log is $work/NAME.log.
bench_start_service() {
  local name=$1 port i
  shift
  port=$(free_port)
  env MAILASSAY_HTTP_PORT="$port" MAILASSAY_HTTP_ADDRESS=127.0.0.1 \
    MAILASSAY_DATABASE_URL="sqlite://$work/$name.db" \
    MAILASSAY_AUTH_JWT_SECRET_FILE="$work/jwt.secret" \
    MAILASSAY_WEBHOOKS_SECRET_KEY_FILE="$work/$name.webhooks.key" \
    MAILASSAY_CONTROL_SOCKET="$work/$name.sock" \
    MAILASSAY_DNS_SERVERS="127.0.0.1:$dns_port" \
    MAILASSAY_VALIDATION_ALLOW_TEST_DOMAINS=true \
    MAILASSAY_RISK_DATA_DIR="$src/data/risk" \
    MAILASSAY_LOG_LEVEL=warn \
    MAILASSAY_LIMITS_IP_PER_MINUTE=1000000000 \
    "$@" \
    "$mailassay" serve >"$work/$name.log" 2>&1 &
  bench_pid=$!
  pids+=("$bench_pid")
  bench_base="http://127.0.0.1:$port"
  for i in $(seq 1 "${bench_health_tries:-100}"); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$bench_base/health")" = 200 ] && return 0
    kill -0 "$bench_pid" 2>/dev/null || { cat "$work/$name.log" >&2; exit 1; }
    sleep 0.1
  done
  log "mailassay ($name) did not become healthy"
  exit 1
}

# bench_wrk_validate OUT KEY EMAIL URL [WRK ARGS...]: wrk POSTing
# {"email": EMAIL} with KEY to URL (bench/wrk/validate.lua); report in OUT.
bench_wrk_validate() {
  local out=$1 key=$2 email=$3 url=$4
  shift 4
  BENCH_API_KEY=$key BENCH_EMAIL=$email wrk "$@" \
    -s "$src/bench/wrk/validate.lua" "$url" >"$out"
}

# bench_wrk_summary FILE: "rps p50_ms p99_ms failures" of a wrk --latency
# report (failures: non-2xx answers plus socket errors).
bench_wrk_summary() {
  local rps p50 p99 bad errs
  rps=$(awk '/^Requests\/sec/ {print $2}' "$1")
  p50=$(to_ms "$(awk '$1 == "50%" {print $2}' "$1")")
  p99=$(to_ms "$(awk '$1 == "99%" {print $2}' "$1")")
  bad=$(awk '/Non-2xx/ {print $NF}' "$1")
  errs=$(awk '/Socket errors/ {gsub(",", ""); print $4 + $6 + $8 + $10}' "$1")
  echo "$rps $p50 $p99 $(( ${bad:-0} + ${errs:-0} ))"
}
