#!/usr/bin/env bash
# Keeps the package lists and the Dockerfile from drifting apart:
#  1. every library the built binary links directly (ELF NEEDED) belongs to a
#     package listed in scripts/lib/runtime-packages.txt;
#  2. every package of the lists exists in this Debian's archive;
#  3. the Dockerfile installs from the lists (build: packages.txt; runtime:
#     runtime-packages.txt) and names no package of its own.
# Usage: runtime_packages_test.sh SOURCE_DIR BINARY
set -euo pipefail
src=$1 bin=$2
fail=0
bad() { echo "FAIL: $*"; fail=1; }
listed() { sed 's/#.*//' "$1" | tr -s ' \t' '\n' | grep -v '^$' | sort -u; }

runtime=$(listed "$src/scripts/lib/runtime-packages.txt")

# The package owning a file; dpkg records either the /lib or the /usr/lib
# spelling of a path (usrmerge), so try both.
owner() {
  local f=$1 p
  for cand in "$f" "$(realpath "$f")" "/usr${f#/usr}" "${f#/usr}"; do
    p=$(dpkg -S "$cand" 2>/dev/null | head -n 1) && { echo "${p%%:*}"; return; }
  done
  return 1
}

# 1. Direct libraries of the binary.
[ -x "$bin" ] || { echo "FAIL: no binary at $bin"; exit 1; }
needed=$(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
[ -n "$needed" ] || bad "readelf found no NEEDED entry in $bin"
while read -r so; do
  path=$(ldd "$bin" | awk -v s="$so" '$1 == s { print $3 }')
  [ -n "$path" ] || { bad "$so: not found by ldd"; continue; }
  pkg=$(owner "$path") || { bad "$so ($path): no Debian package owns it"; continue; }
  grep -qx "$pkg" <<<"$runtime" || bad "$so comes from $pkg, which runtime-packages.txt does not list"
done <<<"$needed"

# 2. Every listed package is known to apt (a typo would break a fresh machine).
for list in packages.txt test-packages.txt runtime-packages.txt check-fresh-packages.txt \
  check-image-packages.txt image-build-packages.txt; do
  while read -r pkg; do
    apt-cache show --no-all-versions "$pkg" >/dev/null 2>&1 ||
      bad "$list: package '$pkg' is unknown to apt (after apt-get update)"
  done < <(listed "$src/scripts/lib/$list")
done

# 3. The Dockerfile takes its packages from the lists.
df="$src/Dockerfile"
grep -q "install-deps.sh scripts/lib/packages.txt scripts/lib/image-build-packages.txt" "$df" ||
  bad "Dockerfile: the build stage does not install scripts/lib/packages.txt and image-build-packages.txt"
grep -q 'install-deps.sh scripts/lib/runtime-packages.txt' "$df" ||
  bad "Dockerfile: the runtime stage does not install scripts/lib/runtime-packages.txt"
if grep -nE 'apt-get install' "$df"; then
  bad "Dockerfile: installs packages by name instead of through the lists"
fi

((fail == 0)) && echo "runtime packages: $(wc -w <<<"$needed") libraries covered, lists and Dockerfile agree"
exit $fail
