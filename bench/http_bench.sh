#!/usr/bin/env bash
# HTTP benchmark of mailassay against a bare RESTinio handler, same run.
#
#   bench/http_bench.sh [--build-dir DIR] [--no-build] [--duration 10s]
#                       [--connections 64] [--threads 2] [--rounds 3]
#                       [--limits-only] [--cases bare,auth,validate,sized,floor,me]
#                       [--mailassay PATH] [--previous PATH]
#
# Starts, all on 127.0.0.1 and free ports: the project's DNS peer
# (mailassay-dns-peer) with a small zone, bench/bare_server (the baseline:
# RESTinio with the service's traits, 200 + a small JSON body) and
# `mailassay serve` on a throw-away SQLite database, its DNS pointed at the
# peer. Signs up, creates an API key, warms the key and DNS caches, then
# runs wrk over the cases below, interleaved round by round (every other
# round in reverse order) so machine noise falls on all of them:
#   a  bare        GET /             bare_server
#   a' hop         GET /             hop_server: bare_server + one CAF hop
#                  (actor_pool, 2-thread sharing scheduler), no work
#   a" sized       (c)'s request to a second bare_server answering a body
#                  of (c)'s size (--body-bytes): the kernel's and RESTinio's
#                  share of (c), none of the service's work
#   e  floor       GET /no-such-route on mailassay: 404 without credentials:
#                  the exchange with no handler (request id, metrics, error
#                  body), but a walk of the whole route table (~5k of its
#                  ~21k instructions)
#   b  health      GET /health       one storage-worker hop (SQLite ping)
#   f  me          GET /v2/auth/me with the API key: the trivial
#                  authenticated endpoint of issue #2 (key and organization
#                  from the key cache, a ~500-byte JSON answer, no limiter
#                  check, no storage)
#   c  auth        POST /v2/email/validate {"email":"not-an-address"}
#                  key from the key cache, limiter, syntax fails: no DNS;
#                  answered on the I/O thread
#   d  validate    POST /v2/email/validate {"email":"...@cached.test"}
#                  (c) + free checks + the cached DNS route
#   c0, d0         (c) and (d) against a second mailassay started with
#                  MAILASSAY_LIMITS_ENABLED=false: no rate limiter, no usage
#                  recorder. The first instance has them on, with limits too
#                  high to trigger (per IP, and per minute/hour/day on the
#                  key), so (c)/(c0) and (d)/(d0) give their cost.
# --limits-only runs (c), (c0), (d), (d0) only. --cases runs the named
# cases only (bare is always included: the ratios need it). --mailassay
# benchmarks another build of the service (e.g. a copy of an earlier one)
# against the same baseline binaries.
# --previous PATH starts a third mailassay, another build's binary (e.g.
# the previous commit's, made by bench/build_previous.sh), configured as the
# first one (limits on, the key's windows at 10^9), with the risk lists of
# the tree it was built from when PATH's folder holds a CMakeCache.txt
# (otherwise this tree's), and adds (c') and (d'), (c) and (d) against it,
# each run right after its case in every round (so the every-other-round
# reversal alternates which of the two goes first). The report then gives
# new / previous per round for req/s and server CPU per request, their
# median and spread (min-max), against the issue #16 target of no slowdown
# beyond 5 %.
# Prints a markdown table (median over rounds; ratio = case / bare) and the
# resident memory of mailassay after start and after the load. Every process
# it starts is stopped on exit. Speed figures are ratios measured in the same
# run: the machine is shared and noisy, absolute req/s move with its load.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build_dir="$src/build-bench"
do_build=1
duration=10s
connections=64
threads=2
rounds=3
limits_only=0
only_cases=
mailassay_bin=
previous_bin=

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --duration) duration=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --limits-only) limits_only=1; shift ;;
    --cases) only_cases=$2; shift 2 ;;
    --mailassay) mailassay_bin=$2; shift 2 ;;
    --previous) previous_bin=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;p}' "$0"; exit 0 ;;
    *) echo "http_bench: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "http_bench: $*" >&2; }
# shellcheck source=bench/lib/service.sh
. "$here/lib/service.sh"

# --- tools -----------------------------------------------------------------
bench_require wrk curl jq python3

if [ "$do_build" = 1 ]; then
  log "building in $build_dir"
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DMAILASSAY_BENCH=ON >/dev/null
  cmake --build "$build_dir" --target mailassay mailassay-dns-peer \
    bare_server hop_server -j2 >/dev/null
fi
mailassay=${mailassay_bin:-$build_dir/mailassay}
dns_peer=$build_dir/tests/peers/mailassay-dns-peer
bare=$build_dir/bench/bare_server
hop=$build_dir/bench/hop_server
for b in "$mailassay" "$dns_peer" "$bare" "$hop"; do
  [ -x "$b" ] || { log "missing $b (build first or drop --no-build)"; exit 2; }
done
if [ -n "$previous_bin" ]; then
  [ -x "$previous_bin" ] || { log "--previous $previous_bin: not an executable"; exit 2; }
  previous_bin=$(cd "$(dirname "$previous_bin")" && pwd)/$(basename "$previous_bin")
  # The risk lists the previous build shipped with: its source tree's.
  previous_risk=$src/data/risk
  previous_cache=$(dirname "$previous_bin")/CMakeCache.txt
  if [ -f "$previous_cache" ]; then
    previous_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$previous_cache")
    [ -d "$previous_src/data/risk" ] && previous_risk=$previous_src/data/risk
  fi
fi

# --- processes, stopped on exit -------------------------------------------
work=$(mktemp -d /tmp/mailassay-http-bench.XXXXXX)
pids=()
svc_pid=
cleanup() {
  local rc
  # A service that died under load is a finding: show why before cleaning up.
  if [ -n "$svc_pid" ] && ! kill -0 "$svc_pid" 2>/dev/null; then
    wait "$svc_pid" 2>/dev/null && rc=0 || rc=$?
    log "mailassay (pid $svc_pid) exited early with status $rc; its log:"
    tail -n 30 "$work/mailassay.log" >&2 || true
    cp "$work/mailassay.log" /tmp/mailassay-http-bench-crash.log 2>/dev/null \
      && log "full log kept in /tmp/mailassay-http-bench-crash.log"
  fi
  bench_stop_all
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$work/zone" <<'EOF'
# http_bench zone: one cached domain plus wildcards.
cached.test 3600 MX 10 mx.cached.test
mx.cached.test 3600 A 127.0.0.2
*.wild.test 3600 MX 10 mx.wild.test
EOF
bench_start_dns_peer "$dns_peer"

bare_port=$(free_port)
"$bare" --address 127.0.0.1 --port "$bare_port" >"$work/bare.log" 2>&1 &
pids+=($!)
bench_wait_for_line "$work/bare.log" "listening" "${pids[-1]}"

# The size of (c)'s body (a syntax failure's result): checked after the
# warm-up below.
sized_bytes=745
sized_port=$(free_port)
"$bare" --address 127.0.0.1 --port "$sized_port" --body-bytes "$sized_bytes" \
  >"$work/sized.log" 2>&1 &
pids+=($!)
bench_wait_for_line "$work/sized.log" "listening" "${pids[-1]}"

hop_port=$(free_port)
"$hop" --address 127.0.0.1 --port "$hop_port" >"$work/hop.log" 2>&1 &
pids+=($!)
bench_wait_for_line "$work/hop.log" "listening" "${pids[-1]}"

bench_jwt_secret
# Far above what the load reaches: the limiter runs but never refuses.
high=1000000000

# start_service NAME [VAR=VALUE...]: bench_start_service; sets NAME_pid,
# NAME_base.
start_service() {
  local name=$1
  shift
  bench_start_service "$name" "$@"
  eval "${name}_pid=$bench_pid ${name}_base=$bench_base"
}

# setup_account BASE NAME [RATE_LIMITS_JSON]: signs up, creates a key (with
# those rateLimits), warms the key and DNS caches; sets NAME_key.
setup_account() {
  local base=$1 name=$2 limits=${3:-} token key body
  token=$(curl -sf -X POST "$base/v2/auth/signup" \
    -H 'Content-Type: application/json' \
    -d '{"organizationName":"Bench","email":"bench@cached.test","password":"bench-password-123"}' \
    | jq -r .accessToken)
  [ -n "$token" ] && [ "$token" != null ] || { log "signup failed ($name)"; exit 1; }
  body='{"name":"bench"}'
  [ -n "$limits" ] && body="{\"name\":\"bench\",\"rateLimits\":$limits}"
  key=$(curl -sf -X POST "$base/v2/api-keys" -H "Authorization: Bearer $token" \
    -H 'Content-Type: application/json' -d "$body" | jq -r .key)
  [ -n "$key" ] && [ "$key" != null ] || { log "key creation failed ($name)"; exit 1; }
  eval "${name}_key=$key"
  validate() {
    curl -s -w '\n%{http_code}' -X POST "$base/v2/email/validate" \
      -H "Authorization: Bearer $key" -H 'Content-Type: application/json' \
      -d "{\"email\":\"$1\"}"
  }
  # The first call resolves cached.test through the peer; later ones hit
  # the DNS cache. Check both bodies so the benchmark measures what it
  # claims.
  validate "jane.doe@cached.test" >"$work/$name.warm1"
  validate "jane.doe@cached.test" >"$work/$name.warm2"
  validate "not-an-address" >"$work/$name.warm3"
  [ "$(tail -n1 "$work/$name.warm2")" = 200 ] || { log "validate ($name): $(cat "$work/$name.warm2")"; exit 1; }
  [ "$(tail -n1 "$work/$name.warm3")" = 200 ] || { log "validate ($name): $(cat "$work/$name.warm3")"; exit 1; }
  # The first `me` reads the organization from storage and caches it.
  local me_type
  me_type=$(curl -sf "$base/v2/auth/me" -H "Authorization: Bearer $key" | jq -r .type)
  [ "$me_type" = api_key ] || { log "GET /v2/auth/me ($name): type '$me_type'"; exit 1; }
  local d_status c_status
  d_status=$(head -n1 "$work/$name.warm2" | jq -r '.status // .result.status // empty')
  c_status=$(head -n1 "$work/$name.warm3" | jq -r '.status // .result.status // empty')
  log "warm-up ($name): cached.test -> ${d_status:-?}, not-an-address -> ${c_status:-?}"
}

start_service svc
start_service off MAILASSAY_LIMITS_ENABLED=false
if [ -n "$previous_bin" ]; then
  mailassay=$previous_bin start_service prev MAILASSAY_RISK_DATA_DIR="$previous_risk"
  log "previous: $previous_bin (risk lists $previous_risk)"
fi
base=$svc_base
sleep 1
rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$svc_pid/status"; }
rss_start=$(rss_kb)

# --- accounts, keys, warm caches --------------------------------------------
setup_account "$svc_base" svc "{\"perMinute\":$high,\"perHour\":$high,\"perDay\":$high}"
setup_account "$off_base" off
[ -n "$previous_bin" ] \
  && setup_account "$prev_base" prev "{\"perMinute\":$high,\"perHour\":$high,\"perDay\":$high}"
log "sample (d): $(head -n1 "$work/svc.warm2" | head -c 400)"
c_bytes=$(head -n1 "$work/svc.warm3" | tr -d '\n' | wc -c)
[ "$c_bytes" = "$sized_bytes" ] \
  || log "note: (c)'s body is $c_bytes bytes, (a\") answers $sized_bytes"
# Headers of the limited instance: the key's windows are the ones reported.
curl -s -D - -o /dev/null -X POST "$svc_base/v2/email/validate" \
  -H "Authorization: Bearer $svc_key" -H 'Content-Type: application/json' \
  -d '{"email":"not-an-address"}' | grep -i '^ratelimit' | tr -d '\r' \
  | sed 's/^/http_bench: limits on: /' >&2

# --- wrk -------------------------------------------------------------------
case_name=(bare hop health auth validate auth_off validate_off sized floor me
  auth_prev validate_prev)
case_label=("(a) bare RESTinio handler" "(a') bare + one CAF hop, no work"
  "(b) GET /health (storage hop)"
  "(c) validate, bad syntax (cached key, no DNS)"
  "(d) validate, cached DNS"
  "(c0) = (c), limiter and usage recorder off"
  "(d0) = (d), limiter and usage recorder off"
  "(a\") bare, (c)'s request and body size"
  "(e) 404 without credentials (all non-2xx by design)"
  "(f) GET /v2/auth/me, cached key (trivial authenticated endpoint)"
  "(c') = (c), previous build" "(d') = (d), previous build")
cases=(0 1 7 8 9 2 3 4 5 6)
[ "$limits_only" = 1 ] && cases=(3 5 4 6)
if [ -n "$only_cases" ]; then
  cases=(0)
  for name in ${only_cases//,/ }; do
    found=
    for i in "${!case_name[@]}"; do
      [ "${case_name[$i]}" = "$name" ] && found=$i
    done
    [ -n "$found" ] || { log "unknown case $name (${case_name[*]})"; exit 2; }
    [ "$found" = 0 ] || cases+=("$found")
  done
fi
# With --previous, (c') and (d') right after (c) and (d).
if [ -n "$previous_bin" ]; then
  with_prev=()
  for i in "${cases[@]}"; do
    with_prev+=("$i")
    [ "$i" = 3 ] && with_prev+=(10)
    [ "$i" = 4 ] && with_prev+=(11)
  done
  cases=("${with_prev[@]}")
fi

run_case() { # case-index round -> prints "rps p50ms p99ms errors cpu_us"
  local i=$1 out="$work/wrk.$1.$2"
  local args=(-c "$connections" -t "$threads" -d "$duration" --latency)
  # CPU of the server under test per request: steadier than req/s on a
  # shared machine, since time spent descheduled is not counted.
  local pid=
  case "${case_name[$i]}" in
    floor|health|auth|validate|me) pid=$svc_pid ;;
    auth_off|validate_off) pid=$off_pid ;;
    auth_prev|validate_prev) pid=$prev_pid ;;
  esac
  local ticks0=0
  [ -n "$pid" ] && ticks0=$(bench_cpu_ticks "$pid")
  case "${case_name[$i]}" in
    bare) wrk "${args[@]}" "http://127.0.0.1:$bare_port/" >"$out" ;;
    hop) wrk "${args[@]}" "http://127.0.0.1:$hop_port/" >"$out" ;;
    sized) bench_wrk_validate "$out" "$svc_key" not-an-address \
        "http://127.0.0.1:$sized_port/v2/email/validate" "${args[@]}" ;;
    floor) wrk "${args[@]}" "$svc_base/no-such-route" >"$out" ;;
    health) wrk "${args[@]}" "$base/health" >"$out" ;;
    me) BENCH_API_KEY=$svc_key wrk "${args[@]}" -s "$here/wrk/bearer.lua" \
        "$svc_base/v2/auth/me" >"$out" ;;
    auth) bench_wrk_validate "$out" "$svc_key" not-an-address \
        "$svc_base/v2/email/validate" "${args[@]}" ;;
    validate) bench_wrk_validate "$out" "$svc_key" jane.doe@cached.test \
        "$svc_base/v2/email/validate" "${args[@]}" ;;
    auth_off) bench_wrk_validate "$out" "$off_key" not-an-address \
        "$off_base/v2/email/validate" "${args[@]}" ;;
    validate_off) bench_wrk_validate "$out" "$off_key" jane.doe@cached.test \
        "$off_base/v2/email/validate" "${args[@]}" ;;
    auth_prev) bench_wrk_validate "$out" "$prev_key" not-an-address \
        "$prev_base/v2/email/validate" "${args[@]}" ;;
    validate_prev) bench_wrk_validate "$out" "$prev_key" jane.doe@cached.test \
        "$prev_base/v2/email/validate" "${args[@]}" ;;
  esac
  local rps p50 p99 failures
  read -r rps p50 p99 failures <<<"$(bench_wrk_summary "$out")"
  local cpu_us=0
  if [ -n "$pid" ]; then
    cpu_us=$(awk -v t0="$ticks0" -v t1="$(bench_cpu_ticks "$pid")" \
      -v hz="$(getconf CLK_TCK)" -v n="$(awk '/requests in/ {print $1}' "$out")" \
      'BEGIN {printf "%.1f", (t1 - t0) / hz * 1e6 / n}')
  fi
  echo "$rps $p50 $p99 $failures $cpu_us"
}

log "wrk: $connections connections, $threads threads, $duration per run," \
  "$rounds round(s) of ${#cases[@]} cases, interleaved"
# Short warm-up of every server (connections, allocator, caches).
for i in "${cases[@]}"; do
  duration=2s run_case "$i" warm >/dev/null
done
declare -A result
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for r in $(seq 1 "$rounds"); do
  # Every other round runs the cases in reverse order, so a drift of the
  # machine's load (other work starting or ending) falls on both sides of
  # each pair being compared.
  order=("${cases[@]}")
  if [ $((r % 2)) = 0 ]; then
    order=()
    for ((k = ${#cases[@]} - 1; k >= 0; k--)); do order+=("${cases[$k]}"); done
  fi
  for i in "${order[@]}"; do
    result[$i,$r]=$(run_case "$i" "$r")
    kill -0 "$svc_pid" 2>/dev/null || { log "mailassay died during round $r"; exit 1; }
    kill -0 "$off_pid" 2>/dev/null || { log "mailassay (off) died during round $r"; exit 1; }
    [ -z "$previous_bin" ] || kill -0 "$prev_pid" 2>/dev/null \
      || { log "mailassay (previous) died during round $r"; exit 1; }
    log "round $r ${case_name[$i]}: ${result[$i,$r]}"
  done
done
sleep 2
rss_end=$(rss_kb)

# --- report ----------------------------------------------------------------
median() { sort -g | awk '{v[NR] = $1} END {
  if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR/2] + v[NR/2 + 1]) / 2 }'; }
col() { # case column -> values over rounds
  local r
  for r in $(seq 1 "$rounds"); do
    echo "${result[$1,$r]}" | awk -v c="$2" '{print $c}'
  done
}
on_off() { # on-case off-case [column] -> median of per-round on/off ratios, then them
  local r ratios c=${3:-1}
  ratios=$(for r in $(seq 1 "$rounds"); do
      paste <(echo "${result[$1,$r]}" | cut -d' ' -f"$c") \
        <(echo "${result[$2,$r]}" | cut -d' ' -f"$c") \
        | awk '{printf "%.3f\n", $1 / $2}'
    done)
  echo "$(echo "$ratios" | median) $(echo $ratios)"
}
echo
echo "### HTTP benchmark ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end)"
echo
if [ "$limits_only" = 1 ]; then
  echo "wrk -c $connections -t $threads -d $duration, $rounds interleaved round(s); median per case."
  echo
  echo "| case | req/s | p50 ms | p99 ms | non-2xx + socket errors | server CPU µs/request |"
  echo "|---|---:|---:|---:|---:|---:|"
  for i in "${cases[@]}"; do
    printf '| %s | %.0f | %s | %s | %s | %s |\n' "${case_label[$i]}" \
      "$(col "$i" 1 | median)" "$(col "$i" 2 | median)" \
      "$(col "$i" 3 | median)" "$(col "$i" 4 | awk '{s += $1} END {print s}')" \
      "$(col "$i" 5 | median)"
  done
else
bare_rps=$(col 0 1 | median)
echo "wrk -c $connections -t $threads -d $duration, $rounds interleaved round(s); median per case; ratio = case / bare, same run."
echo
echo "| case | req/s | ratio vs bare | p50 ms | p99 ms | non-2xx + socket errors | server CPU µs/request | per-round ratios |"
echo "|---|---:|---:|---:|---:|---:|---:|---|"
for i in "${cases[@]}"; do
  rps=$(col "$i" 1 | median)
  p50=$(col "$i" 2 | median)
  p99=$(col "$i" 3 | median)
  bad=$(col "$i" 4 | awk '{s += $1} END {print s}')
  per=$(for r in $(seq 1 "$rounds"); do
      paste <(echo "${result[$i,$r]}" | cut -d' ' -f1) \
        <(echo "${result[0,$r]}" | cut -d' ' -f1) \
        | awk '{printf "%.2f ", $1 / $2}'
    done)
  ratio=$(awk -v a="$rps" -v b="$bare_rps" 'BEGIN {printf "%.2f", a / b}')
  printf '| %s | %.0f | %s | %s | %s | %s | %s | %s|\n' "${case_label[$i]}" \
    "$rps" "$ratio" "$p50" "$p99" "$bad" "$(col "$i" 5 | median)" "$per"
  eval "ratio_$i=$ratio p50_$i=$p50 p99_$i=$p99"
done
fi
verdict() { if awk "BEGIN {exit !($1)}"; then echo pass; else echo FAIL; fi; }
ran() { local c; for c in "${cases[@]}"; do [ "$c" = "$1" ] && return 0; done; return 1; }
# spread CASE OTHER COLUMN -> "median min max r1 r2 ..." of the per-round
# ratios CASE / OTHER in that column.
spread() {
  local r ratios
  ratios=$(for r in $(seq 1 "$rounds"); do
      paste <(echo "${result[$1,$r]}" | cut -d' ' -f"$3") \
        <(echo "${result[$2,$r]}" | cut -d' ' -f"$3") \
        | awk '{printf "%.3f\n", $1 / $2}'
    done)
  echo "$(echo "$ratios" | median) $(echo "$ratios" | sort -g | head -n1)" \
    "$(echo "$ratios" | sort -g | tail -n1) $(echo $ratios)"
}
if [ -n "$previous_bin" ]; then
  echo
  echo "new: $(readlink -f "$mailassay")"
  echo "previous: $previous_bin"
  echo
  echo "| new / previous, same run | req/s: median (min-max) | per round | server CPU µs/request: median (min-max) | per round | no slowdown beyond 5 % |"
  echo "|---|---:|---|---:|---|---|"
  for pair in "3 10" "4 11"; do
    read -r n p <<<"$pair"
    ran "$n" || continue
    read -r rm rlo rhi rper <<<"$(spread "$n" "$p" 1)"
    read -r cm clo chi cper <<<"$(spread "$n" "$p" 5)"
    echo "| ${case_label[$n]} | $rm ($rlo-$rhi) | $rper | $cm ($clo-$chi) | $cper | req/s $(verdict "$rm >= 0.95"), CPU $(verdict "$cm <= 1.05") |"
  done
fi
echo
echo "| target | measured | |"
echo "|---|---|---|"
if [ "$limits_only" != 1 ]; then
ran 9 && echo "| (f) trivial authenticated endpoint >= 0.75 x bare (issue #2) | $ratio_9 | $(verdict "$ratio_9 >= 0.75") |"
ran 3 && echo "| (c) validate, bad syntax >= 0.75 x bare (stricter than #2) | $ratio_3 | $(verdict "$ratio_3 >= 0.75") |"
if ran 4; then
echo "| (d) >= 0.60 x bare | $ratio_4 | $(verdict "$ratio_4 >= 0.60") |"
echo "| (d) p50 <= 2 ms | $p50_4 ms | $(verdict "$p50_4 <= 2") |"
echo "| (d) p99 <= 3 ms | $p99_4 ms | $(verdict "$p99_4 <= 3") |"
fi
fi
if ran 3 && ran 5; then
read -r c_on_off c_rounds <<<"$(on_off 3 5)"
read -r c_cpu c_cpu_rounds <<<"$(on_off 3 5 5)"
echo "| limiter + usage cost on (c): (c) / (c0) >= 0.90 | $c_on_off (rounds: $c_rounds) | $(verdict "$c_on_off >= 0.90") |"
echo "| server CPU per request, (c) / (c0) <= 1.10 | $c_cpu (rounds: $c_cpu_rounds) | $(verdict "$c_cpu <= 1.10") |"
fi
if ran 4 && ran 6; then
read -r d_on_off d_rounds <<<"$(on_off 4 6)"
read -r d_cpu d_cpu_rounds <<<"$(on_off 4 6 5)"
echo "| limiter + usage cost on (d): (d) / (d0) >= 0.90 | $d_on_off (rounds: $d_rounds) | $(verdict "$d_on_off >= 0.90") |"
echo "| server CPU per request, (d) / (d0) <= 1.10 | $d_cpu (rounds: $d_cpu_rounds) | $(verdict "$d_cpu <= 1.10") |"
fi
echo "| mailassay RSS after start < 50 MB | $(awk -v k="$rss_start" 'BEGIN {printf "%.1f MB", k / 1024}') | $(verdict "$rss_start < 51200") |"
echo "| mailassay RSS after the load (idle) < 50 MB | $(awk -v k="$rss_end" 'BEGIN {printf "%.1f MB", k / 1024}') | $(verdict "$rss_end < 51200") |"
