#!/usr/bin/env bash
# Instructions per request of the cached validate path, counted by
# callgrind on the real binary: a count, not a time, so it does not move
# with the machine's load (docs/performance.md, "Comparing two builds").
#
#   bench/request_instructions.sh [--build-dir DIR] [--no-build]
#                                 [--previous PATH] [--case validate|auth]
#                                 [--seconds 15] [--connections 1]
#                                 [--keep DIR]
#
# Starts the DNS peer and `mailassay serve` under `valgrind --tool=callgrind`
# with instrumentation off (configured as bench/http_bench.sh's first
# instance: limits on, far above the load), signs up, creates a key, warms
# the key and DNS caches and runs bench/load_client for 2 s unmeasured;
# then switches instrumentation on, runs load_client (--connections
# keep-alive connections, --seconds), switches it off and stops the
# service. Prints the instructions of every thread divided by the answers
# load_client counted. With --previous PATH, the same for that binary
# (another build, e.g. bench/build_previous.sh's; its tree's risk lists when
# PATH's folder holds a CMakeCache.txt), then new / previous.
#   --case validate   http_bench.sh's (d): {"email":"jane.doe@cached.test"}
#   --case auth       http_bench.sh's (c): {"email":"not-an-address"}
# One connection (the default) sends a request only once the last was
# answered: every request pays the whole path, wake-ups included, and the
# count repeats within ~0.1 %. With more connections the event loop reads
# several requests per wake-up and the count depends on how far valgrind's
# (slow) server falls behind. --keep DIR keeps the callgrind outputs
# (DIR/new.cg, DIR/previous.cg) for callgrind_annotate --inclusive=yes.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
build_dir="$src/build-bench"
do_build=1
previous_bin=
case_name=validate
seconds=15
connections=1
keep=

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build_dir=$2; shift 2 ;;
    --no-build) do_build=0; shift ;;
    --previous) previous_bin=$2; shift 2 ;;
    --case) case_name=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --connections) connections=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;p}' "$0"; exit 0 ;;
    *) echo "request_instructions: unknown argument $1" >&2; exit 2 ;;
  esac
done

log() { echo "request_instructions: $*" >&2; }
# shellcheck source=bench/lib/service.sh
. "$here/lib/service.sh"
bench_require curl jq python3 valgrind callgrind_control

case "$case_name" in
  validate) email=jane.doe@cached.test ;;
  auth) email=not-an-address ;;
  *) log "unknown case $case_name (validate, auth)"; exit 2 ;;
esac

if [ "$do_build" = 1 ]; then
  log "building in $build_dir"
  cmake -S "$src" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
    -DMAILASSAY_BENCH=ON >/dev/null
  cmake --build "$build_dir" --target mailassay mailassay-dns-peer \
    load_client -j2 >/dev/null
fi
dns_peer=$build_dir/tests/peers/mailassay-dns-peer
client=$build_dir/bench/load_client
for b in "$build_dir/mailassay" "$dns_peer" "$client"; do
  [ -x "$b" ] || { log "missing $b (build first or drop --no-build)"; exit 2; }
done
[ -z "$previous_bin" ] || [ -x "$previous_bin" ] \
  || { log "--previous $previous_bin: not an executable"; exit 2; }

work=$(mktemp -d /tmp/mailassay-request-instructions.XXXXXX)
pids=()
trap 'bench_stop_all; rm -rf "$work"' EXIT
trap 'exit 130' INT TERM

cat >"$work/zone" <<'EOF'
cached.test 3600 MX 10 mx.cached.test
mx.cached.test 3600 A 127.0.0.2
EOF
bench_start_dns_peer "$dns_peer"
bench_jwt_secret

# count NAME BINARY RISK_DIR: sets count_n (answers) and count_ir
# (instructions) of one build.
count() {
  local name=$1 bin=$2 risk=$3 out=$work/$1.cg token key port
  # bench_start_service runs one executable: a wrapper under valgrind.
  printf '#!/bin/sh\nexec valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=%s %s "$@"\n' \
    "$out" "$bin" >"$work/$name.wrap"
  chmod +x "$work/$name.wrap"
  mailassay=$work/$name.wrap bench_health_tries=1200 bench_start_service \
    "$name" MAILASSAY_LIMITS_KEY_PER_MINUTE=1000000000 \
    MAILASSAY_RISK_DATA_DIR="$risk"
  token=$(curl -sf -X POST "$bench_base/v2/auth/signup" \
    -H 'Content-Type: application/json' \
    -d '{"organizationName":"Bench","email":"bench@cached.test","password":"bench-password-123"}' \
    | jq -r .accessToken)
  key=$(curl -sf -X POST "$bench_base/v2/api-keys" \
    -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -d '{"name":"bench","rateLimits":{"perMinute":1000000000,"perHour":1000000000,"perDay":1000000000}}' \
    | jq -r .key)
  [ -n "$key" ] && [ "$key" != null ] || { log "no key ($name)"; exit 1; }
  port=${bench_base##*:}
  local args=(--port "$port" --path /v2/email/validate
    --header "Authorization: Bearer $key" --body "{\"email\":\"$email\"}")
  # Warm-up: key cache, DNS cache, the connections' buffers.
  "$client" "${args[@]}" --connections "$connections" --seconds 2 >/dev/null
  callgrind_control -i on "$bench_pid" >/dev/null
  "$client" "${args[@]}" --connections "$connections" --seconds "$seconds" \
    >"$work/$name.load"
  callgrind_control -i off "$bench_pid" >/dev/null
  # The counts are written when valgrind exits.
  bench_stop "$bench_pid"
  count_n=$(jq '.statuses["200"].count // 0' "$work/$name.load")
  [ "$(jq '[.statuses[] | .count] | add' "$work/$name.load")" = "$count_n" ] \
    || { log "$name: answers other than 200: $(cat "$work/$name.load")"; exit 1; }
  count_ir=$(sed -n 's/^totals: //p' "$out")
  [ -n "$count_ir" ] || { log "$name: no callgrind totals in $out"; exit 1; }
  if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$out" "$keep/$name.cg"
  fi
}

report() { # NAME ANSWERS INSTRUCTIONS
  awk -v name="$1" -v n="$2" -v ir="$3" \
    'BEGIN { printf "%-9s %8d answers %14.0f instructions %9.1f per request\n", name, n, ir, ir / n }'
}

count new "$build_dir/mailassay" "$src/data/risk"
n_new=$count_n ir_new=$count_ir
report new "$n_new" "$ir_new"
if [ -n "$previous_bin" ]; then
  previous_risk=$src/data/risk
  cache=$(dirname "$previous_bin")/CMakeCache.txt
  if [ -f "$cache" ]; then
    previous_src=$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$cache")
    [ -d "$previous_src/data/risk" ] && previous_risk=$previous_src/data/risk
  fi
  count previous "$previous_bin" "$previous_risk"
  n_prev=$count_n ir_prev=$count_ir
  report previous "$n_prev" "$ir_prev"
  awk -v a="$ir_new" -v na="$n_new" -v b="$ir_prev" -v nb="$n_prev" \
    'BEGIN { printf "new / previous: %.4f\n", (a / na) / (b / nb) }'
fi
