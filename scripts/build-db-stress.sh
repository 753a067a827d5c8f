#!/usr/bin/env bash
# Builds RocksDB's own stress test, db_stress, from Debian's rocksdb 7.8.3-2
# source package against Debian's shared librocksdb.so (the library the
# zonelab plugin links), and keeps RocksDB's crash-test driver
# (tools/db_crashtest.py) beside it. Nothing of RocksDB is built but
# db_stress's own sources: the library already holds the test utilities
# they use (test_util/testutil.cc, sync and kill points,
# utilities/fault_injection_fs.cc).
#
# Everything goes to a cache outside the checkout:
#   ${ZONELAB_CACHE:-$HOME/.cache/zonelab}/rocksdb-7.8.3/
#     db_stress        the binary
#     db_crashtest.py  RocksDB's crash-test driver, from the same source
#     db_stress.stamp  the source version and this script's hash
# A run that finds the binary with a matching stamp does nothing. Progress
# goes to stderr; the binary's path is the one line on stdout.
#
# On a fresh Debian bookworm machine (as root, or with sudo) it adds a
# deb-src source when apt has none for rocksdb, and installs dpkg-dev (for
# `apt-get source`), g++ and librocksdb-dev 7.8.3-2, whose dependencies
# bring the headers db_stress includes (gflags, snappy, zlib, bzip2, lz4,
# zstd).
#
# The flags are Debian's (debian/rules: CMake through debhelper, so
# CMAKE_BUILD_TYPE=None): -O2 -g and no -DNDEBUG -- Debian's library keeps
# its assertions, sync points and kill points (TEST_KILL_RANDOM), and
# classes such as port::Mutex have debug-only members, so db_stress must be
# compiled the same way -- with the definitions RocksDB's CMakeLists.txt
# adds on x86-64 Linux with PORTABLE=ON and no liburing.
#
# usage: scripts/build-db-stress.sh [-j N]   (N at most 2; default 2)
set -euo pipefail

readonly kVersion=7.8.3-2
readonly kUpstream=7.8.3
jobs_max=2
while [ $# -gt 0 ]; do
  case "$1" in
    -j) jobs_max="$2"; shift 2 ;;
    -j*) jobs_max="${1#-j}"; shift ;;
    *) echo "usage: $0 [-j N]" >&2; exit 2 ;;
  esac
done
if ! [[ "$jobs_max" =~ ^[0-9]+$ ]] || [ "$jobs_max" -lt 1 ]; then jobs_max=1; fi
if [ "$jobs_max" -gt 2 ]; then jobs_max=2; fi

cache_root="${ZONELAB_CACHE:-$HOME/.cache/zonelab}"
cache_dir="$cache_root/rocksdb-$kUpstream"
binary="$cache_dir/db_stress"
stamp="$cache_dir/db_stress.stamp"
script_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
key="rocksdb $kVersion script $script_hash"

say() { echo "build-db-stress: $*" >&2; }

if [ -x "$binary" ] && [ -f "$cache_dir/db_crashtest.py" ] && [ -f "$stamp" ] &&
  [ "$(cat "$stamp")" = "$key" ]; then
  echo "$binary"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# shellcheck source=scripts/deb-src.sh
. "$(dirname "${BASH_SOURCE[0]}")/deb-src.sh"

# --- packages ---------------------------------------------------------------
packages=(dpkg-dev g++ librocksdb-dev)
missing=()
for p in "${packages[@]}"; do
  [ -n "$(installed_version "$p")" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]/#librocksdb-dev/librocksdb-dev=$kVersion}" >&2
fi
for p in librocksdb-dev librocksdb7.8; do
  v="$(installed_version "$p")"
  if [ "$v" != "$kVersion" ]; then
    say "$p is ${v:-not installed}; db_stress must be built from the same version ($kVersion)"
    exit 1
  fi
done

# --- source -------------------------------------------------------------------
src_dir="$cache_dir/source/rocksdb-$kUpstream"
if [ ! -f "$src_dir/db_stress_tool/db_stress.cc" ]; then
  fetch_source rocksdb "$kVersion" "$cache_dir/source"
  [ -f "$src_dir/db_stress_tool/db_stress.cc" ] || { say "no $src_dir after apt-get source"; exit 1; }
fi

# --- compile ------------------------------------------------------------------
# db_stress_tool/CMakeLists.txt's list; every other symbol comes from the
# shared library, but for the compression libraries that util/compression.h
# calls inline.
sources=(
  batched_ops_stress.cc cf_consistency_stress.cc db_stress.cc db_stress_common.cc
  db_stress_driver.cc db_stress_gflags.cc db_stress_listener.cc db_stress_shared_state.cc
  db_stress_stat.cc db_stress_test_base.cc db_stress_tool.cc expected_state.cc
  multi_ops_txns_stress.cc no_batched_ops_stress.cc
)
defines=(
  -DGFLAGS=1 -DSNAPPY -DZLIB -DBZIP2 -DLZ4 -DZSTD
  -DROCKSDB_PLATFORM_POSIX -DROCKSDB_LIB_IO_POSIX -DOS_LINUX
  -DROCKSDB_FALLOCATE_PRESENT -DROCKSDB_RANGESYNC_PRESENT
  -DROCKSDB_PTHREAD_ADAPTIVE_MUTEX -DROCKSDB_MALLOC_USABLE_SIZE
  -DROCKSDB_SCHED_GETCPU_PRESENT -DROCKSDB_NO_DYNAMIC_EXTENSION
  -D_FORTIFY_SOURCE=2
)
cxxflags=(
  -std=gnu++17 -g -O2 -fstack-protector-strong -Wformat -Werror=format-security
  -pthread -fno-omit-frame-pointer -momit-leaf-frame-pointer -fno-builtin-memcmp
  "-ffile-prefix-map=$src_dir=."
)
# Objects are keyed on the flags, so that a change elsewhere in this script
# relinks without recompiling.
flags_hash="$(printf '%s\n' "$kVersion" "${cxxflags[@]}" "${defines[@]}" | sha256sum | cut -c1-16)"
obj_dir="$cache_dir/obj-$flags_hash"
mkdir -p "$obj_dir"
compile() {
  local src="$1" obj="$obj_dir/${1%.cc}.o"
  g++ "${cxxflags[@]}" "${defines[@]}" -I"$src_dir" -I"$src_dir/include" \
    -c "$src_dir/db_stress_tool/$src" -o "$obj.tmp"
  mv "$obj.tmp" "$obj"
}
start_s=$SECONDS
n=${#sources[@]}
i=0
for src in "${sources[@]}"; do
  i=$((i + 1))
  if [ -f "$obj_dir/${src%.cc}.o" ]; then
    say "[$i/$n] $src (compiled before)"
    continue
  fi
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
    wait -n || { say "compiling failed"; wait; exit 1; }
  done
  say "[$i/$n] compiling $src ($((SECONDS - start_s)) s)"
  compile "$src" &
done
while [ "$(jobs -rp | wc -l)" -gt 0 ]; do
  wait -n || { say "compiling failed"; wait; exit 1; }
done
for src in "${sources[@]}"; do
  [ -f "$obj_dir/${src%.cc}.o" ] || { say "missing ${src%.cc}.o"; exit 1; }
done

say "linking db_stress against /usr/lib/x86_64-linux-gnu/librocksdb.so"
objects=()
for src in "${sources[@]}"; do objects+=("$obj_dir/${src%.cc}.o"); done
g++ -pthread -Wl,-z,relro -o "$binary.tmp" "${objects[@]}" \
  /usr/lib/x86_64-linux-gnu/librocksdb.so -lgflags -lsnappy -lz -lbz2 -llz4 -lzstd
mv "$binary.tmp" "$binary"
cp "$src_dir/tools/db_crashtest.py" "$cache_dir/db_crashtest.py"
echo "$key" >"$stamp"
# Old objects from an earlier version of this script.
find "$cache_dir" -maxdepth 1 -name 'obj-*' ! -name "obj-$flags_hash" -exec rm -rf {} +
say "built $binary in $((SECONDS - start_s)) s"
echo "$binary"
