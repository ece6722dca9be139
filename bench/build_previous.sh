#!/usr/bin/env bash
# Builds another revision's benchmark binaries, for a side-by-side run
# against this tree (bench/http_bench.sh --previous, bench/free_checks_cmp.sh).
#
#   bench/build_previous.sh REV [--dir DIR] [--jobs 2]
#
# Checks REV out in a detached git worktree (DIR, default
# ${TMPDIR:-/tmp}/mailassay-bench-SHORTREV; reused when it already holds
# REV), configures DIR/build-bench (Release, MAILASSAY_BENCH=ON,
# BUILD_TESTING=ON for the DNS peer, ccache as the compiler launcher when it
# is installed) and builds, under nice, the targets the comparisons run:
# mailassay, mailassay-dns-peer, bare_server, hop_server, free_checks_bench.
# Prints the build folder on stdout. `git worktree remove DIR` when done.
# Source /work/ccache.env (or set CCACHE_DIR) first to share a cache.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
rev=
dir=
jobs=2

while [ $# -gt 0 ]; do
  case "$1" in
    --dir) dir=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d;p}' "$0"; exit 0 ;;
    -*) echo "build_previous: unknown argument $1" >&2; exit 2 ;;
    *) [ -z "$rev" ] || { echo "build_previous: one revision" >&2; exit 2; }
       rev=$1; shift ;;
  esac
done
[ -n "$rev" ] || { echo "usage: bench/build_previous.sh REV [--dir DIR]" >&2; exit 2; }

log() { echo "build_previous: $*" >&2; }

commit=$(git -C "$src" rev-parse --verify "$rev^{commit}")
short=$(git -C "$src" rev-parse --short "$commit")
dir=${dir:-${TMPDIR:-/tmp}/mailassay-bench-$short}

if [ -e "$dir/.git" ]; then
  have=$(git -C "$dir" rev-parse HEAD)
  [ "$have" = "$commit" ] \
    || { log "$dir holds $have, not $commit: remove it or pick another --dir"; exit 2; }
  log "reusing the worktree $dir ($short)"
else
  log "worktree $dir at $short"
  git -C "$src" worktree add --detach "$dir" "$commit" >/dev/null 2>&1 \
    || { log "git worktree add $dir $commit failed"; exit 1; }
fi

launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
log "configuring $dir/build-bench"
cmake -S "$dir" -B "$dir/build-bench" -DCMAKE_BUILD_TYPE=Release \
  -DMAILASSAY_BENCH=ON -DBUILD_TESTING=ON "${launcher[@]}" >/dev/null
log "building (nice, -j$jobs; output in $dir/build-bench/build_previous.log)"
nice -n 5 cmake --build "$dir/build-bench" -j"$jobs" --target mailassay \
  mailassay-dns-peer bare_server hop_server free_checks_bench \
  >"$dir/build-bench/build_previous.log" 2>&1 \
  || { tail -n 30 "$dir/build-bench/build_previous.log" >&2; log "build failed"; exit 1; }
echo "$dir/build-bench"
