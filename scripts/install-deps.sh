#!/usr/bin/env bash
# Installs the Debian packages zonelab builds and tests with, when any is missing.
# docs/dependencies.md lists every command `make test` and `make demo` run and
# the package each comes from; keep the two in step.
set -euo pipefail
packages=(
  # compilers and build tools: c++/g++ (with ThreadSanitizer's runtime), ar,
  # cmake and ctest, ninja, pkg-config
  build-essential cmake ninja-build pkg-config
  # the format check lists the sources with git and checks them with clang-format
  git clang-format
  # the C++ libraries zonelab links
  libgtest-dev libbenchmark-dev libfmt-dev
  libtomlplusplus-dev nlohmann-json3-dev libcli11-dev
  # the Python tests, and `make plot-deps`: python3 -m venv, then pip inside
  # the venv fetching the plotting packages over HTTPS
  python3 python3-venv ca-certificates
  # flock (cli_test.sh) and taskset (make bench)
  util-linux
  # strace: the vhost-user test delays serve's listen(2) with it
  strace
  # `make fuzz`: libFuzzer with address and undefined-behaviour sanitizers
  clang libclang-rt-14-dev
  # the RocksDB plugin and db_bench runs on the zoned file system (RocksDB 7.8.3)
  librocksdb-dev rocksdb-tools
  # `zonelab serve` (libfuse 3, fusermount3) and `zonelab vm`: User-Mode
  # Linux, the kernel file systems' tools, and modprobe for UML's modules
  libfuse3-dev fuse3 user-mode-linux e2fsprogs xfsprogs f2fs-tools btrfs-progs kmod
  # the Python module (pybind11 for Debian's python3) and its tests (pytest)
  pybind11-dev python3-dev python3-pytest
  # `zonelab sweep`: Dask's distributed scheduler (and the dask command), and
  # SHA-256 for the point cache's keys (OpenSSL's libcrypto)
  python3-distributed libssl-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}"
