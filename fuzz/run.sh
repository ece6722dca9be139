#!/usr/bin/env bash
# Runs one fuzz target for a while, niced, and merges what it found into its
# corpus (docs/fuzzing.md).
#
#   fuzz/run.sh TARGET [SECONDS] [BUILD_DIR]
#
# TARGET: request_gate, json_body, query, access_token, csv_reader,
# batch_intake, multipart or smtp_reply (fuzz/CMakeLists.txt); SECONDS
# defaults to 600; BUILD_DIR to build (its fuzz/clang holds the libFuzzer
# builds, made by `cmake --build BUILD_DIR` when clang is installed).
# New inputs go to a scratch folder first; `-merge=1` then keeps in
# fuzz/corpus/TARGET only the inputs that add coverage (past 130 KB, new
# edges only). A failure leaves
# its input (crash-*, timeout-*, oom-*) in the scratch folder and stops.
set -euo pipefail
target=${1:?target}
seconds=${2:-600}
build=${3:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
fuzzer=$build/fuzz/clang/fuzz_$target
corpus=$root/fuzz/corpus/$target
dict=$root/fuzz/dict/$target.dict
[ -x "$fuzzer" ] || { echo "no libFuzzer build at $fuzzer" >&2; exit 2; }
work=$(mktemp -d "/tmp/mailassay-fuzz-$target.XXXXXX")
mkdir -p "$work/new" "$work/merged"
args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048
      -print_final_stats=1 -artifact_prefix="$work/")
[ -f "$dict" ] && args+=(-dict="$dict")
echo "fuzzing $target for $seconds s (scratch: $work)"
nice -n 10 "$fuzzer" "${args[@]}" "$work/new" "$corpus" 2>&1 |
  tee "$work/log" | grep -E "^#[0-9]+ +(DONE|pulse)|Done|stat::|ERROR|SUMMARY" || true
shopt -s nullglob
failures=("$work"/crash-* "$work"/timeout-* "$work"/oom-* "$work"/leak-*)
if ((${#failures[@]})); then
  echo "failure: ${failures[*]}" >&2
  exit 1
fi
# Keep the inputs that add coverage: the old corpus and the new finds,
# minimised together.
nice -n 10 "$fuzzer" -merge=1 "$work/merged" "$corpus" "$work/new" \
  >"$work/merge.log" 2>&1
# Past 130 KB (long inputs that reach loops more often), keep only what
# reaches new edges, so that the repository stays small.
if (($(cat "$work/merged"/* | wc -c) > 130000)); then
  mkdir "$work/edges"
  nice -n 10 "$fuzzer" -merge=1 -use_counters=0 "$work/edges" "$work/merged" \
    >>"$work/merge.log" 2>&1
  rm -rf "$work/merged"
  mv "$work/edges" "$work/merged"
fi
rm -f "$corpus"/*
cp "$work/merged"/* "$corpus"/
echo "corpus of $target: $(ls "$corpus" | wc -l) inputs; log: $work/log"
