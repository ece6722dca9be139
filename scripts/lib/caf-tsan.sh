#!/usr/bin/env bash
# Builds CAF's core and I/O libraries with -fsanitize=thread from Debian's
# source package of the installed libcaf-dev, installs them into a private
# prefix and prints that prefix as the last line of stdout (progress goes to
# stderr).
#
#   caf-tsan.sh [cache dir]     default: .cache/caf-tsan in the checkout
#
# Why: Debian's libcaf_core.so is not instrumented, so ThreadSanitizer cannot
# see the happens-before of CAF's mailboxes and scheduler and reports every
# message handed between actors as a race (docs/dependencies.md).
# Idempotent: nothing is fetched or built when the prefix holds a build of
# the same source version, tarball and flags.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache=$(realpath -m "${1:-.cache/caf-tsan}")
flags="-fsanitize=thread -O1 -g -fno-omit-frame-pointer"
# Debian builds CAF 0.17 as C++11 (CAF's CMake adds -std=c++11 when the
# flags name no standard); the same here, so the libraries match Debian's.
cxxflags="-std=c++11 $flags"

source_version=$(dpkg-query -W -f='${source:Version}' libcaf-dev)
source_package=$(dpkg-query -W -f='${source:Package}' libcaf-dev)
upstream=${source_version#*:}
upstream=${upstream%-*}
orig="${source_package}_${upstream}.orig.tar.gz"
prefix="$cache/prefix"
stamp="$prefix/mailassay-stamp"

# The .dsc lists the orig tarball's SHA-256; apt checked the .dsc against
# Debian's signed Sources index.
orig_sha256() {
  awk -v f="$orig" '/^Checksums-Sha256:/ {s = 1; next} /^[^ ]/ {s = 0}
                    s && $3 == f {print $1}' "$1"
}

dsc="$cache/src/${source_package}_${source_version#*:}.dsc"
if [[ -f "$stamp" && -f "$dsc" ]]; then
  want="$source_package $source_version $(orig_sha256 "$dsc") $cxxflags"
  if [[ $(cat "$stamp") == "$want" && -f "$prefix/lib/libcaf_core.so" ]]; then
    echo "caf-tsan: $prefix is up to date ($source_version)" >&2
    echo "$prefix"
    exit 0
  fi
fi

# Debian's source, through a private apt configuration: the machine's
# sources.list is left alone (it need not have a deb-src line).
apt_dir="$cache/apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" \
  "$cache/src"
codename=$(. /etc/os-release && echo "$VERSION_CODENAME")
cat >"$apt_dir/sources.list" <<EOF
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $codename main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security $codename-security main
deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $codename-updates main
EOF
apt=(apt-get -q -o "Dir::Etc::SourceList=$apt_dir/sources.list"
  -o Dir::Etc::SourceParts=- -o "Dir::State::Lists=$apt_dir/lists"
  -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root)
echo "caf-tsan: fetching Debian's $source_package $source_version" >&2
"${apt[@]}" update >&2
# The mirror may no longer hold the Debian packaging (debian.tar.xz) of an
# old revision, and apt-get then exits non-zero although it fetched the .dsc
# and the orig tarball: what counts is the tarball's checksum below.
(cd "$cache/src" &&
  "${apt[@]}" source --download-only \
    "$source_package=$source_version" >&2) || true
if [[ ! -f "$dsc" || ! -f "$cache/src/$orig" ]]; then
  echo "caf-tsan: apt did not fetch $dsc and $orig" >&2
  exit 1
fi
sha=$(orig_sha256 "$dsc")
if [[ -z "$sha" ]] ||
  ! echo "$sha  $cache/src/$orig" | sha256sum --check --quiet >&2; then
  echo "caf-tsan: $orig does not match the SHA-256 of $dsc" >&2
  exit 1
fi

src="$cache/src/actor-framework-$upstream"
rm -rf "$src" "$cache/build" "$prefix"
tar -xzf "$cache/src/$orig" -C "$cache/src"
# Debian's one visible change to the sources (its patch for newer GCC, as
# the installed /usr/include/caf shows): receive_buffer.hpp uses
# std::numeric_limits without including <limits>.
header="$src/libcaf_io/caf/io/network/receive_buffer.hpp"
if ! grep -q '#include <limits>' "$header"; then
  sed -i 's/^#include <cstring>$/&\n#include <limits>/' "$header"
fi

# Only the core and I/O libraries (what the project links), shared, with
# their headers; RPATH $ORIGIN so libcaf_io finds this libcaf_core.
echo "caf-tsan: building CAF $upstream with $flags" >&2
cmake -S "$src" -B "$cache/build" -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib \
  -DCMAKE_INSTALL_RPATH='$ORIGIN' \
  -DCAF_NO_EXAMPLES=ON -DCAF_NO_TOOLS=ON -DCAF_NO_UNIT_TESTS=ON \
  -DCAF_NO_OPENSSL=ON -DCAF_NO_PYTHON=ON -DCAF_NO_OPENCL=ON \
  -DCAF_NO_SUMMARY=ON -Wno-dev >&2
cmake --build "$cache/build" -j"$(nproc)" >&2
cmake --install "$cache/build" >&2

# The headers the project compiles against must be Debian's, the generated
# build_config.hpp (the options) included; CAF's test framework and OpenSSL
# module are not built here.
if ! diff -r -x test -x openssl \
  "$prefix/include/caf" /usr/include/caf >&2; then
  echo "caf-tsan: the headers differ from Debian's /usr/include/caf" >&2
  exit 1
fi
echo "$source_package $source_version $sha $cxxflags" >"$stamp"
echo "$prefix"
