#!/usr/bin/env bash
# Two builds' free-check benchmarks side by side (issue #16: no slowdown
# beyond 5 % against the previous commit, measured in one run).
#
#   bench/free_checks_cmp.sh --previous PATH [--new PATH] [--rounds 10]
#                            [--passes 3] [--data-from SOURCE_DIR]
#
# --new (default build-bench/bench/free_checks_bench of this tree) and
# --previous (another build's free_checks_bench, e.g. from
# bench/build_previous.sh) run alternately, round by round, the previous
# one first in every other round, each with MAILASSAY_BENCH_PASSES=--passes
# (best of that many passes per case, thread CPU time) and its own source
# tree's risk lists (the one it was built from): each build's work as it
# shipped. --data-from gives both the lists of SOURCE_DIR/data/risk (and so
# the same generated addresses): the code alone compared. Per case ((a) syntax, (b) syntax + free checks, (c) + enrichment,
# each risk function alone) it prints ns/address of both (median over
# rounds) and new / previous in time per address, per round, with the
# median and spread (min-max): above 1.05 is a slowdown beyond 5 %.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
new_bin=$src/build-bench/bench/free_checks_bench
prev_bin=
rounds=10
passes=3
data_from=

while [ $# -gt 0 ]; do
  case "$1" in
    --new) new_bin=$2; shift 2 ;;
    --previous) prev_bin=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --passes) passes=$2; shift 2 ;;
    --data-from) data_from=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;p}' "$0"; exit 0 ;;
    *) echo "free_checks_cmp: unknown argument $1" >&2; exit 2 ;;
  esac
done
log() { echo "free_checks_cmp: $*" >&2; }
[ -n "$prev_bin" ] || { log "--previous PATH is required"; exit 2; }
for b in "$new_bin" "$prev_bin"; do
  [ -x "$b" ] || { log "missing $b (cmake --build build-bench --target free_checks_bench)"; exit 2; }
done

work=$(mktemp -d /tmp/mailassay-free-checks-cmp.XXXXXX)
trap 'rm -rf "$work"' EXIT

# ns FILE -> "case ns" lines of one free_checks_bench report: (a), (b),
# (c) and each risk function alone.
ns() {
  sed -n \
    -e 's/^(a) syntax only:.*( *\([0-9.]*\) ns\/address.*/a_syntax \1/p' \
    -e 's/^(b) syntax + free checks:.*( *\([0-9.]*\) ns\/address.*/b_free_checks \1/p' \
    -e 's/^(c) (b) + first-name.*( *\([0-9.]*\) ns\/address.*/c_enrichment \1/p' \
    -e 's/^ *\([a-z_]*\) *\([0-9.]*\) ns\/valid address.*/\1 \2/p' "$1"
}

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
log "new: $new_bin"
log "previous: $prev_bin"
log "$rounds rounds, best of $passes passes per case, load $load_start"
[ -z "$data_from" ] || log "both on the risk lists of $data_from"
for r in $(seq 1 "$rounds"); do
  order=(new prev)
  [ $((r % 2)) = 0 ] && order=(prev new)
  for side in "${order[@]}"; do
    bin=$new_bin
    [ "$side" = prev ] && bin=$prev_bin
    MAILASSAY_BENCH_PASSES=$passes "$bin" ${data_from:+"$data_from"} >"$work/$side.$r.out" \
      || { log "$bin failed:"; cat "$work/$side.$r.out" >&2; exit 1; }
    ns "$work/$side.$r.out" >"$work/$side.$r.ns"
  done
  log "round $r: (b) new $(awk '$1 == "b_free_checks" {print $2}' "$work/new.$r.ns") ns," \
    "previous $(awk '$1 == "b_free_checks" {print $2}' "$work/prev.$r.ns") ns"
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

median() { sort -g | awk '{v[NR] = $1} END {
  if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR/2] + v[NR/2 + 1]) / 2 }'; }
value() { awk -v c="$2" '$1 == c {print $2}' "$1"; }

echo
echo "### Free checks, new / previous ($(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load $load_start at the start, $load_end at the end)"
echo
echo "$rounds alternating rounds, best of $passes passes per case and round, thread CPU time, one core; ratio = new / previous time per address (> 1: new is slower); risk lists: ${data_from:-those of the tree each build was made from}."
echo
echo "| case | new ns/address | previous ns/address | new / previous: median (min-max) | per round | no slowdown beyond 5 % |"
echo "|---|---:|---:|---:|---|---|"
for c in $(awk '{print $1}' "$work/new.1.ns"); do
  value "$work/prev.1.ns" "$c" | grep -q . || continue
  nm=$(for r in $(seq 1 "$rounds"); do value "$work/new.$r.ns" "$c"; done | median)
  pm=$(for r in $(seq 1 "$rounds"); do value "$work/prev.$r.ns" "$c"; done | median)
  ratios=$(for r in $(seq 1 "$rounds"); do
      awk -v a="$(value "$work/new.$r.ns" "$c")" -v b="$(value "$work/prev.$r.ns" "$c")" \
        'BEGIN {printf "%.3f\n", a / b}'
    done)
  med=$(echo "$ratios" | median)
  lo=$(echo "$ratios" | sort -g | head -n1)
  hi=$(echo "$ratios" | sort -g | tail -n1)
  verdict=pass
  awk -v m="$med" 'BEGIN {exit !(m > 1.05)}' && verdict=FAIL
  echo "| $c | $nm | $pm | $med ($lo-$hi) | $(echo $ratios) | $verdict |"
done
