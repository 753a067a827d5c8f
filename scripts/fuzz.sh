#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, with address and undefined-behaviour
# sanitizers) and runs each for FUZZ_SECONDS, then merges the inputs that
# found new coverage into fuzz/corpus/<target>/. A target with a dictionary
# (fuzz/<target>.dict: tokens, nesting shapes) is run with -dict=.
#
#   FUZZ_SECONDS=60        time per target
#   FUZZ_TARGETS="image config job trace fs_records fs_superblock fs_journal fs_journal_damage fs_policy sweep_spec vhost_user stream_hints"
#   FUZZ_OUT=build-fuzz    objects, binaries, crash artifacts
#   FUZZ_MINIMIZE=1        also shrink the committed corpus to a minimal set
#   FUZZ_CXX=clang++
# Exits non-zero if a target crashed; the reproducer is under $FUZZ_OUT/artifacts/
# and `zonelab_fuzz_replay --target image|config|job FILE` replays it.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${FUZZ_SECONDS:-60}
targets=${FUZZ_TARGETS:-"image config job trace fs_records fs_superblock fs_journal fs_journal_damage fs_policy sweep_spec vhost_user stream_hints"}
out=${FUZZ_OUT:-build-fuzz}
cxx=${FUZZ_CXX:-clang++}
mkdir -p "$out/obj" "$out/artifacts" "$out/generated"
# src/sweep's build id (scripts/build-id.cmake in the CMake build): a fixed one.
[ -f "$out/generated/zonelab_build_id.h" ] ||
  echo '#define ZONELAB_BUILD_ID "fuzz"' >"$out/generated/zonelab_build_id.h"
# A smaller quarantine keeps memory modest on a shared machine.
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32}

flags=(-std=c++20 -g -O1 -fno-omit-frame-pointer -Iinclude -Isrc -I"$out/generated"
  -DTOML_HEADER_ONLY=0 -DTOML_SHARED_LIB=1
  -fsanitize=address,undefined -fno-sanitize-recover=undefined)
libs=(-lfmt -ltomlplusplus -lcrypto -ldl -pthread)

# The library code the targets reach, instrumented for coverage. An object is
# rebuilt when its source, this script or any header is newer: a header
# change (a struct's layout) must not leave objects that disagree.
# Each layer's image-section codec sits beside its layer (docs/image-format.md).
# The file system's targets run it on a whole device stack.
mapfile -t sources < <(ls src/common/*.cc src/store/*.cc src/workload/job.cc src/workload/trace.cc \
  src/workload/replay.cc src/workload/runner.cc fuzz/fuzz_targets.cc \
  fuzz/fs_fuzz_targets.cc src/sim/*.cc src/flash/*.cc src/controller/*.cc src/zns/*.cc \
  src/conv/*.cc src/host/*.cc src/stack/*.cc src/fs/*.cc src/workload/interference*.cc src/kv/*.cc \
  src/experiments/*.cc src/sweep/sweep.cc fuzz/sweep_fuzz_targets.cc \
  src/serve/vhost_user_blk.cc src/serve/stream_hints.cc fuzz/serve_fuzz_targets.cc | grep -v '_test\.cc$')
newest_header=$(ls -t include/zonelab/*.h src/*/*.h fuzz/*.h | head -n 1)
objects=()
for src in "${sources[@]}"; do
  obj="$out/obj/$(echo "$src" | tr / _).o"
  if [ ! -f "$obj" ] || [ "$src" -nt "$obj" ] || [ "$0" -nt "$obj" ] ||
    [ "$newest_header" -nt "$obj" ]; then
    echo "fuzz: compiling $src"
    "$cxx" "${flags[@]}" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"
  fi
  objects+=("$obj")
done

status=0
for target in $targets; do
  case "$target" in
    image) function=fuzz_image_decode ;;
    config) function=fuzz_config_toml ;;
    job) function=fuzz_job_file ;;
    trace) function=fuzz_trace ;;
    fs_records) function=fuzz_fs_records ;;
    fs_superblock) function=fuzz_fs_superblock ;;
    fs_journal) function=fuzz_fs_journal ;;
    fs_journal_damage) function=fuzz_fs_journal_damage ;;
    fs_policy) function=fuzz_fs_policy ;;
    sweep_spec) function=fuzz_sweep_spec ;;
    vhost_user) function=fuzz_vhost_user ;;
    stream_hints) function=fuzz_stream_hints ;;
    *) echo "fuzz: unknown target '$target'" >&2; exit 2 ;;
  esac
  binary="$out/fuzz_$target"
  echo "fuzz: linking $binary"
  "$cxx" "${flags[@]}" -fsanitize=fuzzer -DZONELAB_FUZZ_TARGET="$function" \
    fuzz/libfuzzer_main.cc "${objects[@]}" "${libs[@]}" -o "$binary"

  corpus="fuzz/corpus/$target"
  found="$out/new-$target"
  rm -rf "$found" && mkdir -p "$corpus" "$found"
  dict=()
  [ -f "fuzz/$target.dict" ] && dict=(-dict="fuzz/$target.dict")
  echo "fuzz: running $target for ${seconds}s"
  if ! "$binary" "${dict[@]}" -max_len=65536 -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$out/artifacts/$target-" "$found" "$corpus" \
      2>&1 | tee "$out/$target.log" | grep -E '^(#[0-9]+ +DONE|INFO: seed|==|SUMMARY|stat::)'; then
    :
  fi
  if grep -qE 'ERROR: (libFuzzer|AddressSanitizer|UndefinedBehaviorSanitizer)|runtime error|deadly signal' \
      "$out/$target.log"; then
    echo "fuzz: $target crashed; see $out/$target.log and $out/artifacts/" >&2
    status=1
    continue
  fi
  "$binary" -merge=1 -max_len=65536 "$corpus" "$found" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new' || true
  if [ "${FUZZ_MINIMIZE:-0}" = 1 ]; then
    # Named seeds (from `zonelab_fuzz_replay --write-seeds`) stay; of the
    # inputs libFuzzer named by hash, only those adding coverage stay.
    minimal="$out/minimal-$target"
    rm -rf "$minimal" && mkdir -p "$minimal"
    find "$corpus" -maxdepth 1 -type f -regextype posix-extended ! -regex '.*/[0-9a-f]{40}' -exec cp {} "$minimal"/ \;
    "$binary" -merge=1 -use_counters=0 -max_len=65536 "$minimal" "$corpus" 2>&1 | grep -E 'MERGE-OUTER: [0-9]+ new' || true
    rm -f "$corpus"/* && cp "$minimal"/* "$corpus"/
  fi
  echo "fuzz: $target corpus has $(ls "$corpus" | wc -l) files"
done
exit $status
