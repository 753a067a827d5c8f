#!/usr/bin/env bash
# `make demo`: create a `small` device image and run a short benchmark table
# across read, write and append at several queue depths.
set -euo pipefail
zonelab=${1:-build/zonelab}
root=$(cd "$(dirname "$0")/.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$zonelab" create "$dir/demo.img" --preset small --set store.backing=none
"$zonelab" bench "$dir/demo.img" --job "$root/examples/demo.toml"
"$zonelab" report "$dir/demo.img" --limit 16
