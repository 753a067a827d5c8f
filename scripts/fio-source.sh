#!/usr/bin/env bash
# Makes ready the source of the installed fio, for libzonelab_fio.so: fio's
# external engines are built against the headers of the fio that loads them,
# and Debian ships no fio headers. It installs fio (Debian's package) when it
# is missing, fetches the source package of exactly the installed version
# (`apt-get source fio=VERSION`, adding a deb-src source when apt has none)
# and runs fio's own ./configure there, with Debian's options but the GUI
# and NBD ones (debian/rules), which change no structure the engine reads.
#
# Everything goes to a cache outside the checkout:
#   ${ZONELAB_CACHE:-$HOME/.cache/zonelab}/fio-VERSION/
#     source/fio-UPSTREAM/   the source, configured (config-host.h)
#     fio.stamp              the version and this script's hash
# A run that finds the stamp matching does nothing. Progress goes to
# stderr; the configured source directory is the one line on stdout.
#
# usage: scripts/fio-source.sh
set -euo pipefail

say() { echo "fio-source: $*" >&2; }
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# shellcheck source=scripts/deb-src.sh
. "$(dirname "${BASH_SOURCE[0]}")/deb-src.sh"

missing=()
[ -n "$(installed_version fio)" ] || missing+=(fio)
[ -n "$(installed_version dpkg-dev)" ] || missing+=(dpkg-dev)
[ -n "$(installed_version gcc)" ] || missing+=(gcc)
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >&2
fi
version="$(installed_version fio)"
upstream="${version%-*}"
upstream="${upstream#*:}"
running="$(fio --version 2>/dev/null || true)"
if [ "$running" != "fio-$upstream" ]; then
  say "the fio on PATH says '${running:-nothing}', the fio package is $version"
  exit 1
fi

cache_root="${ZONELAB_CACHE:-$HOME/.cache/zonelab}"
cache_dir="$cache_root/fio-$version"
src_dir="$cache_dir/source/fio-$upstream"
stamp="$cache_dir/fio.stamp"
script_hash="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
key="fio $version script $script_hash"

if [ -f "$src_dir/config-host.h" ] && [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$key" ]; then
  echo "$src_dir"
  exit 0
fi

fetch_source fio "$version" "$cache_dir/source"
[ -f "$src_dir/ioengines.h" ] || { say "no $src_dir/ioengines.h after apt-get source"; exit 1; }

say "configuring fio $upstream (./configure --disable-native --prefix=/usr)"
(cd "$src_dir" && ./configure --disable-native --prefix=/usr >"$cache_dir/configure.log" 2>&1) ||
  { say "fio's configure failed; see $cache_dir/configure.log"; exit 1; }
[ -f "$src_dir/config-host.h" ] || { say "no config-host.h after configure"; exit 1; }
echo "$key" >"$stamp"
echo "$src_dir"
