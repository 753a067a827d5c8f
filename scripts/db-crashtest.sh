#!/usr/bin/env bash
# RocksDB's crash test (tools/db_crashtest.py from Debian's rocksdb 7.8.3
# source) on zonelab://, for long runs: db_stress with the plugin preloaded
# on a fresh image, killed and restarted by RocksDB's own driver for the
# given minutes, and `zonelab fs fsck` on the image before every start.
#
#   blackbox  db_crashtest.py kills db_stress with SIGKILL every --interval
#             seconds; each restart verifies the database against the
#             expected state RocksDB keeps on the host.
#   whitebox  db_stress kills itself at random kill points inside RocksDB
#             (--kill_random_test; Debian's library keeps its kill points),
#             then, in the second half, runs to the end with universal,
#             FIFO and level compaction.
#
# A kill loses what the process held unsynced (the file system keeps only
# what RocksDB synced, as ZenFS does), so db_stress runs with
# --sync_fault_injection=1: RocksDB's mode for a system crash with the WAL
# on, which traces every write in the expected-values directory and, after
# a crash, accepts the database at any point of that trace (losing an
# unsynced suffix) but nothing else.
#
# usage: scripts/db-crashtest.sh [blackbox|whitebox] [--minutes N]
#          [--interval S] [--build DIR] [--preset NAME] [--keep]
#          [-- db_crashtest.py options, e.g. --simple --max_key=100000]
# The work directory (image, expected values, logs) is a fresh temporary
# one, removed after a run that passes unless --keep is given.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
mode=blackbox
minutes=10
interval=60
build="$root/build"
preset=small
keep=0
while [ $# -gt 0 ]; do
  case "$1" in
    blackbox | whitebox) mode="$1"; shift ;;
    --minutes) minutes="$2"; shift 2 ;;
    --interval) interval="$2"; shift 2 ;;
    --build) build="$(cd "$2" && pwd)"; shift 2 ;;
    --preset) preset="$2"; shift 2 ;;
    --keep) keep=1; shift ;;
    --) shift; break ;;
    *) echo "usage: $0 [blackbox|whitebox] [--minutes N] [--interval S] [--build DIR]" \
      "[--preset NAME] [--keep] [-- db_crashtest.py options]" >&2; exit 2 ;;
  esac
done
zonelab="$build/zonelab"
plugin="$build/libzonelab_rocksdb.so"
for f in "$zonelab" "$plugin"; do
  [ -f "$f" ] || { echo "db-crashtest: no $f (cmake --build $build)" >&2; exit 2; }
done

db_stress="$("$here/build-db-stress.sh")"
crashtest="$(dirname "$db_stress")/db_crashtest.py"
work="$(mktemp -d "${TMPDIR:-/tmp}/zonelab-db-crashtest-XXXXXX")"
image="$work/dev.img"
"$zonelab" create "$image" --preset "$preset" >/dev/null
"$zonelab" mkfs "$image" >/dev/null

# fsck.sh: `zonelab fs fsck` on the image, its report appended to fsck.log.
# Not damage: a backup's private directory (its tables are in shared/) and
# the half-made copies a killed backup, checkpoint or restore leaves. Any other
# problem, or a failure that names none, is.
known_re='^problem: database [^ ]*/\.(backup[0-9]+/private/[0-9]+(\.tmp)?|restore[0-9]+|checkpoint[0-9]+\.tmp): RocksDB does not open it'
cat >"$work/fsck.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
last="$work/fsck.last"
status=0
"$zonelab" fs fsck "$image" >"\$last" 2>&1 || status=\$?
{ echo "--- \$(date +%T) \$*: exit \$status"; cat "\$last"; } >>"$work/fsck.log"
[ "\$status" -eq 0 ] && exit 0
problems="\$(grep '^problem: ' "\$last" || true)"
if [ -z "\$problems" ] || grep -v -E '$known_re' <<<"\$problems" | grep -q .; then
  echo "db-crashtest: zonelab fs fsck failed on $image (see $work/fsck.log)" >&2
  exit 1
fi
EOF
# stress.sh: what db_crashtest.py runs in place of db_stress -- fsck, then
# db_stress with the plugin. A fresh (empty) expected-values directory means
# the driver started over (its first run, or whitebox's second half, which
# empties the directory and removes the database's host directory), so the
# database in the image starts over too.
cat >"$work/stress.sh" <<EOF
#!/usr/bin/env bash
set -euo pipefail
"$work/fsck.sh" "before db_stress" || exit 99
extra=()
for arg in "\$@"; do
  case "\$arg" in
    --expected_values_dir=*)
      dir="\${arg#*=}"
      if [ -z "\$(ls -A "\$dir" 2>/dev/null)" ]; then extra+=(--destroy_db_initially=1); fi ;;
  esac
done
LD_PRELOAD="$plugin" exec "$db_stress" "\$@" "\${extra[@]}"
EOF
chmod +x "$work/fsck.sh" "$work/stress.sh"

echo "db-crashtest: $mode for $minutes min on $image (work directory $work)"
set +e
(
  cd "$work"
  TEST_TMPDIR="$work" python3 "$crashtest" "$mode" --stress_cmd="$work/stress.sh" \
    --duration=$((minutes * 60)) --interval="$interval" \
    --sync_fault_injection=1 --max_key=1000000 --threads=8 \
    "--fs_uri=zonelab://$image?timing=off&pacing=sleep" "$@"
) 2>&1 | tee "$work/crashtest.log"
status=${PIPESTATUS[0]}
set -e
kills="$(grep -c -E '^KILLED|^Crashing at' "$work/crashtest.log" || true)"
echo "db-crashtest: db_crashtest.py exit $status; $kills kills;" \
  "$(grep -c '^--- ' "$work/fsck.log" || true) fsck runs"
# Whitebox: the kill points RocksDB ended the process at, by source line.
if grep -q '^Crashing at' "$work/crashtest.log"; then
  echo "db-crashtest: kill points reached:"
  grep -o '^Crashing at .*' "$work/crashtest.log" | sed 's/^Crashing at //' | sort | uniq -c |
    sort -rn | sed 's/^/  /'
fi
if [ "$status" -eq 0 ] && "$work/fsck.sh" "at the end"; then
  echo "db-crashtest: passed"
  [ "$keep" -eq 1 ] || rm -rf "$work"
  exit 0
fi
echo "db-crashtest: FAILED; logs in $work"
exit 1
