#!/usr/bin/env bash
# End-to-end checks of the `zonelab` tool against the interface its users rely
# on (docs/cli.md, docs/benchmarks.md, docs/image-format.md): exit codes,
# persistence across processes, locking, JSON fields, determinism.
# Prints one line per check and "N passed, N failed" at the end.
set -uo pipefail
Z=$(realpath "${1:?usage: cli_test.sh path/to/zonelab}")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir"
passed=0
failed=0

check() {  # check NAME EXPECTED_EXIT COMMAND...
  local name=$1 want=$2
  shift 2
  "$@" >out.txt 2>err.txt
  local got=$?
  if [ "$got" = "$want" ]; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $name: exit $got, expected $want"
    sed 's/^/  | /' out.txt err.txt | head -5
  fi
}

expect() {  # expect NAME PYTHON_BOOL_EXPR_ON_j  (j = JSON of out.txt)
  if python3 -c "import json,sys; j=json.load(open('out.txt')); sys.exit(0 if ($2) else 1)" 2>/dev/null; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $1: $2"
    head -c 400 out.txt
    echo
  fi
}

one_line_error() {  # stderr has exactly one line
  if [ "$(wc -l <err.txt)" = "1" ]; then passed=$((passed + 1)); else
    failed=$((failed + 1)); echo "FAIL: $1: stderr has $(wc -l <err.txt) lines"; cat err.txt; fi
}

check "help" 0 "$Z" --help
check "create" 0 "$Z" create dev.img --preset small
check "create refuses an existing image" 2 "$Z" create dev.img --preset small
one_line_error "create refuses an existing image"
check "info" 0 "$Z" info dev.img --json
expect "info fields" "all(k in j for k in ['interface','lba_size','zone_size_lbas','zone_capacity_lbas','zone_count','capacity_lbas','max_open','max_active','zasl_lbas','config']) and j['status']=='SUCCESS' and j['zone_count']==64"
check "write" 0 "$Z" write dev.img --lba 0 --blocks 8 --seed 7 --json
expect "write status" "j['status']=='SUCCESS' and j['sct']==0 and j['latency_ns']>0"
check "read verifies in a new process" 0 "$Z" read dev.img --lba 0 --blocks 8 --expect-seed 7 --json
expect "read verified" "j['verified'] is True"
check "read with the wrong seed" 3 "$Z" read dev.img --lba 0 --blocks 8 --expect-seed 8 --json
expect "read not verified" "j['verified'] is False"
check "write off the write pointer" 3 "$Z" write dev.img --lba 100 --blocks 1 --json
expect "ZONE_INVALID_WRITE" "j['status']=='ZONE_INVALID_WRITE' and j['sct']==1 and j['sc']==0xBC"
check "append" 0 "$Z" append dev.img --zone 1 --blocks 4 --seed 3 --json
expect "append lba" "j['lba']==16384"
check "append again" 0 "$Z" append dev.img --zone 1 --blocks 4 --seed 3 --json
expect "append lba advances" "j['lba']==16388"
check "appended data verifies" 0 "$Z" read dev.img --lba 16384 --blocks 8 --expect-seed 3
check "report" 0 "$Z" report dev.img --limit 3 --json
expect "report" "[z['state'] for z in j['zones']]==['implicitly-opened','implicitly-opened','empty'] and j['zones'][0]['wp']==8"
check "report filter" 0 "$Z" report dev.img --state empty --json
expect "report filter" "len(j['zones'])==62"
check "info with two open zones" 0 "$Z" info dev.img --json
expect "open and active counts" "j['open_zones']==2 and j['active_zones']==2 and j['zones_by_state']['implicitly-opened']==2"
check "close zone 1" 0 "$Z" zone dev.img close --zone 1 --json
check "info with a closed zone" 0 "$Z" info dev.img --json
expect "closed zone is active, not open" "j['open_zones']==1 and j['active_zones']==2 and j['zones_by_state']['closed']==1"
check "finish" 0 "$Z" zone dev.img finish --zone 0 --json
check "finished zone" 0 "$Z" report dev.img --limit 1 --json
expect "finished zone wp" "j['zones'][0]['state']=='full' and j['zones'][0]['wp']==16384"
check "write to full zone" 3 "$Z" write dev.img --lba 8 --blocks 1 --json
expect "ZONE_IS_FULL" "j['status']=='ZONE_IS_FULL'"
check "reset all" 0 "$Z" zone dev.img reset --all --json
check "after reset all" 0 "$Z" info dev.img --json
expect "all empty" "j['zones_by_state']['empty']==64 and j['active_zones']==0"
check "inject" 0 "$Z" inject dev.img --zone 5 --state read-only
check "write to read-only" 3 "$Z" write dev.img --lba $((5*16384)) --blocks 1 --json
expect "ZONE_IS_READ_ONLY" "j['status']=='ZONE_IS_READ_ONLY'"
check "offline all" 0 "$Z" zone dev.img offline --all --json
check "read offline" 3 "$Z" read dev.img --lba $((5*16384)) --blocks 1 --json
expect "ZONE_IS_OFFLINE" "j['status']=='ZONE_IS_OFFLINE'"

# Bad input: one clear line, exit 2, image unchanged.
sum_before=$(head -c 128M dev.img | md5sum | cut -d" " -f1)  # sparse 4 GiB image: metadata and zone 0 come first
check "unknown flag" 2 "$Z" write dev.img --lba 0 --blocks 1 --bogus
check "unknown zone action" 2 "$Z" zone dev.img explode --zone 0
one_line_error "unknown zone action"
check "zone out of range" 2 "$Z" zone dev.img reset --zone 999
one_line_error "zone out of range"
check "zero blocks" 2 "$Z" write dev.img --lba 0 --blocks 0
check "unknown inject state" 2 "$Z" inject dev.img --zone 1 --state broken
sum_after=$(head -c 128M dev.img | md5sum | cut -d' ' -f1)
if [ "$sum_before" = "$sum_after" ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: bad input changed the image"; fi
# batch answers line by line: a bad line is answered and the batch goes on.
check "batch with a bad line" 2 sh -c "printf 'write --lba 0 --blocks 8\nwrite --lba 8 --nonsense 1\nwrite --lba 8 --blocks 8\n' | '$Z' batch dev.img"
python3 - <<'PY' && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: batch answers each line"; cat out.txt; }
import json
lines = [json.loads(l) for l in open("out.txt")]
assert [l["status"] for l in lines] == ["SUCCESS", "INVALID_INPUT", "SUCCESS"], lines
assert lines[1]["line"] == 2 and lines[1]["error"], lines[1]
PY
check "zone 0 after the batch" 0 "$Z" report dev.img --limit 1 --json
expect "the good lines ran" "j['zones'][0]['wp']==16"
check "undo the batch" 0 "$Z" zone dev.img reset --zone 0

check "unknown preset" 2 "$Z" create x.img --preset nope
one_line_error "unknown preset"
check "unknown key" 2 "$Z" create x.img --set zns.bogus=1
one_line_error "unknown key"
check "capacity not a multiple of the stripe" 2 "$Z" create x.img --set zns.zone_capacity=48000KiB
check "max_open > max_active" 2 "$Z" create x.img --set zns.max_open=14 --set zns.max_active=4
check "zero channels" 2 "$Z" create x.img --set flash.channels=0
check "absurd size" 2 "$Z" create x.img --set flash.blocks_per_plane=99999999999
printf 'this is = = not toml' >bad.toml
check "malformed TOML" 2 "$Z" create x.img --config bad.toml
one_line_error "malformed TOML"
[ ! -e x.img ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: a refused create left a file"; }
printf 'garbage that is not an image' >junk.img
check "not an image" 2 "$Z" info junk.img
one_line_error "not an image"
head -c 100 dev.img >trunc.img
check "truncated image" 2 "$Z" info trunc.img
one_line_error "truncated image"

# Lock: a second process cannot open an image that is in use.
"$Z" create lock.img --preset small >/dev/null
( exec 9<lock.img; flock -x 9; sleep 2 ) &
sleep 0.5
check "locked image" 2 "$Z" info lock.img
one_line_error "locked image"
wait

# Batch: one JSON object a line, state kept between lines and processes.
"$Z" create b.img --preset small >/dev/null
printf 'write --lba 0 --blocks 8 --seed 1\nappend --zone 2 --blocks 2\nread --lba 0 --blocks 8 --expect-seed 1\nzone finish --zone 0\nwrite --lba 8 --blocks 1\n' | "$Z" batch b.img >out.txt
got=$?
[ "$got" = 3 ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: batch exit $got, expected 3"; }
if python3 - <<'PY'
import json
lines = [json.loads(l) for l in open('out.txt')]
assert [l['status'] for l in lines] == ['SUCCESS', 'SUCCESS', 'SUCCESS', 'SUCCESS', 'ZONE_IS_FULL'], lines
assert lines[1]['lba'] == 32768 and lines[2]['verified'] is True
PY
then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: batch output"; fi
check "batch state persisted" 0 "$Z" report b.img --limit 1 --json
expect "batch state persisted" "j['zones'][0]['state']=='full'"

# Management designs: bad design names and granularities are refused; the
# lazy block mapping and its stale pages persist between processes.
check "unknown mapping design" 2 "$Z" create bad.img --preset small --set zns.mapping.blocks=random
one_line_error "unknown mapping design"
check "unknown reset mode" 2 "$Z" config --preset small --set zns.reset.mode=later
check "unknown erase_on" 2 "$Z" config --preset small --set zns.mapping.erase_on=page
check "finish granularity not a multiple of the LBA" 2 "$Z" create bad.img --preset small --set zns.finish.granularity=1000
[ ! -e bad.img ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: a refused create left a file"; }
check "lazy image" 0 "$Z" create lazy.img --preset small --set store.backing=none --set zns.mapping.blocks=lazy --set zns.reset.mode=async
check "lazy info before writes" 0 "$Z" info lazy.img --json
expect "lazy info before writes" "j['block_map']['mapping']=='lazy' and j['block_map']['free_physical_zones']==j['block_map']['physical_zones']"
check "lazy write" 0 "$Z" write lazy.img --lba 0 --blocks 64
check "lazy reset" 0 "$Z" zone lazy.img reset --zone 0 --json
check "lazy info after reset" 0 "$Z" info lazy.img --json
expect "lazy reset leaves stale pages" "j['block_map']['stale_pages']>0 and j['wear']['erases']==0"
check "preemptive reset config" 0 "$Z" config --preset confznspp --set zns.reset.preemptive=true --json
expect "preemptive reset config" "j['config']['zns']['reset']['preemptive'] is True"

# The conventional SSD: bench runs it and reports its FTL; images hold ZNS
# devices only; an over-provisioning that leaves no spare is refused.
check "bench block interface" 0 "$Z" bench --preset small --set interface=block --rw write --bs 64KiB --iodepth 4 --numjobs 4 --zone_order random --size 300% --json
expect "bench block interface" "j['device']['ftl']['gc_victims']>0 and j['device']['write_amplification']>1 and j['jobs'][0]['errors']==0"
check "bench block log" 0 "$Z" bench --preset small --set interface=block --rw write --bs 64KiB --size 100% --log_interval 100ms --json
expect "bench block log" "sum(j['jobs'][0]['bw_log']['bytes'])==j['jobs'][0]['bytes']"

# Block-interface images: the FTL persists between processes, the zoned view
# answers zone commands, append and inject are refused.
check "block image" 0 "$Z" create blk.img --preset small --set interface=block
check "block info" 0 "$Z" info blk.img --json
expect "block info" "j['interface']=='block' and j['zone_count']==59 and j['capacity_lbas']==59*j['zone_capacity_lbas'] and j['zasl_lbas']==0 and j['ftl']['valid_lbas']==0 and j['ftl']['free_blocks']>0 and j['config']['interface']=='block' and 'block_map' not in j"
check "block info text" 0 "$Z" info blk.img
check "block write" 0 "$Z" write blk.img --lba 100 --blocks 40 --seed 7 --json
check "block rewrite" 0 "$Z" write blk.img --lba 120 --blocks 8 --seed 8 --json
check "block read new process" 0 "$Z" read blk.img --lba 100 --blocks 20 --expect-seed 7 --json
expect "block read verified" "j['verified'] is True"
check "block read rewritten" 0 "$Z" read blk.img --lba 120 --blocks 8 --expect-seed 8 --json
check "block report" 0 "$Z" report blk.img --limit 2 --json
expect "block report" "[z['state'] for z in j['zones']]==['implicitly-opened','empty'] and j['zones'][0]['wp']==140"
check "block info after writes" 0 "$Z" info blk.img --json
expect "block info after writes" "j['ftl']['valid_lbas']+0<=40 and j['lifetime']['host_write_bytes']==48*4096"
check "block append refused" 3 "$Z" append blk.img --zone 0 --blocks 1 --json
expect "block append refused" "j['status']=='INVALID_FIELD'"
check "block inject refused" 2 "$Z" inject blk.img --zone 0 --state offline
one_line_error "block inject refused"
check "block reset" 0 "$Z" zone blk.img reset --zone 0 --json
check "block reset reads zeros" 3 "$Z" read blk.img --lba 100 --blocks 8 --expect-seed 7 --json
expect "block reset reads zeros" "j['verified'] is False and j['mismatched_blocks']==8"
check "block reset report" 0 "$Z" report blk.img --limit 1 --json
expect "block reset report" "j['zones'][0]['state']=='empty' and j['zones'][0]['wp']==0"
check "block finish" 0 "$Z" zone blk.img finish --zone 3 --json
check "block finish report" 0 "$Z" report blk.img --state full --json
expect "block finish report" "[z['zone'] for z in j['zones']]==[3]"
# The same commands in one batch and split over processes: same statuses,
# latencies and final FTL state (a read saves nothing, as on ZNS images).
cmds='write --lba 0 --blocks 300 --seed 1
write --lba 4096 --blocks 64 --seed 2
read --lba 0 --blocks 300 --expect-seed 1
write --lba 10 --blocks 5 --seed 3
zone reset --zone 0
write --lba 0 --blocks 2 --seed 4
read --lba 0 --blocks 2 --expect-seed 4'
"$Z" create one.img --preset small --set interface=block >/dev/null
printf '%s\n' "$cmds" | "$Z" batch one.img >batch.txt
"$Z" create split.img --preset small --set interface=block >/dev/null
: >split.txt
printf '%s\n' "$cmds" | while read -r line; do printf '%s\n' "$line" | "$Z" batch split.img >>split.txt; done
if python3 - <<'PY'
import json
a = [json.loads(l) for l in open('batch.txt')]
b = [json.loads(l) for l in open('split.txt')]
assert len(a) == 7 and a == b, (a, b)
assert all(l['status'] == 'SUCCESS' for l in a) and a[2]['verified'] and a[6]['verified']
PY
then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: block batch and split runs differ"; fi
check "block one info" 0 "$Z" info one.img --json
python3 -c "import json; j=json.load(open('out.txt')); print(json.dumps([j['ftl'], j['wear'], j['lifetime']['host_write_bytes']]))" >one_info.txt
check "block split info" 0 "$Z" info split.img --json
python3 -c "import json; j=json.load(open('out.txt')); print(json.dumps([j['ftl'], j['wear'], j['lifetime']['host_write_bytes']]))" >split_info.txt
cmp -s one_info.txt split_info.txt && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: block batch and split states differ"; }
check "block bench image" 0 "$Z" bench one.img --rw write --bs 64KiB --size 10% --json
expect "block bench image" "j['jobs'][0]['errors']==0 and j['jobs'][0]['ops']>0"
check "block image after bench" 0 "$Z" read one.img --lba 0 --blocks 1 --json
# A corrupt FTL (checksums recomputed, so only the FTL checks can catch it)
# is refused with one line and the image is left as it was.
"$Z" create bad-ftl.img --preset small --set interface=block --set store.backing=none >/dev/null
python3 - bad-ftl.img <<'PY'
import struct, sys
path = sys.argv[1]
data = bytearray(open(path, 'rb').read())
def crc32c(buf, crc=0):
    crc ^= 0xFFFFFFFF
    for b in buf:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF
slot = 4096
payload_bytes = struct.unpack_from('<Q', data, slot + 16)[0]
pos, end = slot + 32, slot + 32 + payload_bytes
while pos < end:
    kind, length = struct.unpack_from('<IQ', data, pos)
    if kind == 7:
        struct.pack_into('<I', data, pos + 12 + 4, 0x0FFFFFFF)  # LBA 0 -> a slot beyond the flash
    pos += 12 + length
header = bytes(data[slot:slot + 28])
crc = crc32c(bytes(data[slot + 32:end]), crc32c(header))
struct.pack_into('<I', data, slot + 28, crc)
open(path, 'wb').write(data)
PY
sum_before=$(md5sum <bad-ftl.img)
check "corrupt block image" 2 "$Z" write bad-ftl.img --lba 0 --blocks 1
one_line_error "corrupt block image"
grep -q "corrupt image: ftl" err.txt && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: corrupt block image message"; cat err.txt; }
[ "$(md5sum <bad-ftl.img)" = "$sum_before" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: a refused block image changed"; }
check "block image too large" 2 "$Z" create huge.img --set interface=block --set flash.blocks_per_plane=65536 --set host.lba_size=512
one_line_error "block image too large"
grep -q "metadata" err.txt && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: too-large message"; cat err.txt; }
[ ! -e huge.img ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: a refused block image left a file"; }
check "block image absurd flash" 2 "$Z" create huge.img --set interface=block --set flash.channels=1024 --set flash.dies_per_channel=1024 --set flash.pages_per_block=65536 --set flash.page_size=1MiB --set host.lba_size=512
one_line_error "block image absurd flash"
check "block image of zssd-small" 2 "$Z" create huge.img --preset zssd-small --set interface=block
grep -q "needs about 1.9 GiB" err.txt && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: zssd-small block message"; cat err.txt; }
check "block OP too small" 2 "$Z" bench --preset small --set interface=block --set block.overprovisioning=1% --rw write
check "block OP malformed" 2 "$Z" config --set block.overprovisioning=lots
check "bad zone_order" 2 "$Z" bench --preset small --rw write --zone_order backwards
check "block config" 0 "$Z" config --preset small --set interface=block --set block.gc=cost-benefit --json
expect "block config" "j['config']['interface']=='block' and j['config']['block']['gc']=='cost-benefit' and j['config']['block']['overprovisioning']=='7%'"

check "bench mq-deadline" 0 "$Z" bench --preset small --rw write --bs 4KiB --iodepth 8 --numjobs 2 --size 64MiB --scheduler mq-deadline --json
expect "bench mq-deadline" "j['scheduler']=='mq-deadline' and j['jobs'][0]['errors']==0 and j['jobs'][0]['bytes']==64*1024*1024"
check "bench unknown scheduler" 2 "$Z" bench --preset small --rw write --scheduler cfq
one_line_error "bench unknown scheduler"
# Benchmarks: JSON fields, and byte-identical output for the same seed.
check "bench json" 0 "$Z" bench --preset small --rw write --bs 64KiB --iodepth 4 --size 256MiB --json
expect "bench fields" "all(k in j['jobs'][0] for k in ['ops','bytes','iops','bw_bytes_per_s','lat_ns']) and all(k in j['jobs'][0]['lat_ns'] for k in ['mean','p50','p95','p99','p999','max']) and all(k in j['device'] for k in ['host_write_bytes','flash_program_bytes','erases','channel_busy','die_busy']) and 'virtual_time_ns' in j and 'wall_time_s' in j and 'sim_commands_per_s' in j"
expect "bench wrote what it said" "j['jobs'][0]['bytes']==256*1024*1024 and j['device']['flash_program_bytes']['host']==256*1024*1024"
run_det() {
  printf '[fill]\nrw = "write"\nbs = "128KiB"\niodepth = 4\nzones = "0-3"\n[mixed-read]\nrw = "randread"\nbs = "4KiB"\niodepth = 16\nzones = "0-3"\nsize = "16MiB"\nstonewall = true\n[appender]\nrw = "append"\nbs = "8KiB"\niodepth = 4\nzones = "10-11"\nsize = "8MiB"\n' >det.toml
  "$Z" bench --preset small --set seed=42 --job det.toml --json --no-wall-clock
}
run_det >det1.json 2>/dev/null
run_det >det2.json 2>/dev/null
if cmp -s det1.json det2.json && [ -s det1.json ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: bench output differs between identical runs"; fi
check "bench without rw" 2 "$Z" bench --preset small
check "bench zones outside the device" 2 "$Z" bench --preset small --rw write --zones 0-999
check "bench randread on an empty device" 2 "$Z" bench --preset small --rw randread
check "bench bad size" 2 "$Z" bench --preset small --rw write --size lots
check "bench on an image" 0 "$Z" bench dev.img --rw write --zones 0-0 --size 1MiB
check "bench state kept in the image" 0 "$Z" report dev.img --limit 1 --json
expect "bench state kept in the image" "j['zones'][0]['wp']==256"

# Real-time runs: the same job paced to the wall clock, with the completion error.
check "bench realtime" 0 "$Z" bench --preset small --rw write --bs 64KiB --iodepth 4 --size 4MiB --realtime --json
expect "bench realtime fields" "all(k in j['realtime'][h] for k in ['p50','p99','max'] for h in ['completion_error_ns','wakeup_ns']) and j['realtime']['completions']==j['commands']==64 and j['realtime']['timing']=='modeled' and j['jobs'][0]['bytes']==4*1024*1024"
check "bench timing off" 0 "$Z" bench --preset small --rw write --bs 64KiB --size 4MiB --timing off --json
expect "bench timing off" "j['realtime']['timing']=='off' and j['realtime']['completion_error_ns']['max']==0 and j['realtime']['turnaround_ns']['max']>0"
check "bench time scale" 0 "$Z" bench --preset small --rw write --bs 64KiB --size 1MiB --time-scale 2 --json
expect "bench time scale" "j['realtime']['time_scale']==2 and j['wall_time_s']*1e9>=2*j['virtual_time_ns']"
check "bench realtime table" 0 "$Z" bench --preset small --rw write --bs 64KiB --size 1MiB --realtime
grep -q "completion error" out.txt && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: bench realtime table has no completion error"; }
check "bench time scale 0" 2 "$Z" bench --preset small --rw write --time-scale 0
one_line_error "bench time scale 0"
check "bench timing bad" 2 "$Z" bench --preset small --rw write --timing sometimes
one_line_error "bench timing bad"

# Interference runs (seed 003 2.2): refusals, JSON fields, CSV, job files, determinism.
ifr() { "$Z" interference --preset small --quiet "$@"; }
check "interference intensity 150" 2 ifr --foreground write --background finish --intensity 150
one_line_error "interference intensity 150"
check "interference alpha 2" 2 ifr --foreground write --background finish --intensity 50 --alpha 2
one_line_error "interference alpha 2"
check "interference unknown background" 2 ifr --foreground write --background trim --intensity 50
one_line_error "interference unknown background"
check "interference unknown foreground" 2 ifr --foreground randread --background finish --intensity 50
check "interference bs not a multiple of the LBA size" 2 ifr --foreground write --background finish --intensity 50 --bs 6000
one_line_error "interference bs not a multiple of the LBA size"
check "interference softfinish chunk not a multiple of the LBA" 2 ifr --foreground write --background softfinish --intensity 50 --set host.softfinish.chunk=6000
one_line_error "interference softfinish chunk not a multiple of the LBA"
check "interference realtime" 0 ifr --foreground write --background finish --intensity 50 --levels 1,4 --runtime 50ms --realtime --json
expect "interference realtime" "j['realtime']['completions']>0 and j['realtime']['completion_error_ns']['p50']<=j['realtime']['completion_error_ns']['max'] and j['m_inter']>0"
check "interference bad time scale" 2 ifr --foreground write --background finish --intensity 50 --time-scale 0
one_line_error "interference bad time scale"
check "interference unknown scheduler" 2 ifr --foreground write --background finish --intensity 50 --scheduler cfq
one_line_error "interference unknown scheduler"
check "interference zinc softfinish" 0 ifr --foreground write --background softfinish --intensity 50 --levels 1,4 --runtime 200ms --scheduler zinc --set host.softfinish.chunk=64KiB --json
expect "interference zinc softfinish" "j['scheduler']=='zinc' and j['background']['op']=='softfinish' and j['background']['ops']>0 and len(j['levels'])==2"
check "interference level 0" 2 ifr --foreground write --background finish --intensity 50 --levels 0
check "interference bad levels" 2 ifr --foreground write --background finish --intensity 50 --levels 1-x
check "interference more write zones than the device has" 2 ifr --foreground write --background finish --intensity 50 --levels 70
one_line_error "interference more write zones than the device has"
check "interference without intensity" 2 ifr --foreground write --background finish
check "interference reset runs out of zones" 2 ifr --foreground write --background reset --intensity 50 --runtime 60s --levels 1
one_line_error "interference reset runs out of zones"
check "interference json" 0 ifr --foreground write --background finish --intensity 50 --levels 1,4 --runtime 100ms --json --csv if.csv
expect "interference fields" "j['status']=='SUCCESS' and [l['cl'] for l in j['levels']]==[1,4] and all(k in l[r] for l in j['levels'] for r in ['iso','int'] for k in ['iops','p95_ns']) and all(l['iso']['iops']>0 and l['iso']['p95_ns']>0 for l in j['levels']) and all(0<l[r]['p50_ns']<=l[r]['p95_ns']<=l[r]['p99_ns']<=l[r]['p999_ns'] for l in j['levels'] for r in ['iso','int']) and 'distance' in j['levels'][0] and j['m_inter']>0 and j['background']['op']=='finish' and j['background']['intensity_percent']==50 and j['background']['peak_ops_per_s']>0 and j['background']['ops']>=2 and j['background']['mean_latency_ns']>0 and j['foreground']=={'op':'write','bs':16384,'scaling':'threads','zones':4} and j['runtime_ns']==100000000 and j['virtual_time_ns']>0"
if [ "$(head -1 if.csv)" = "cl,iso_iops,iso_p95_ns,int_iops,int_p95_ns,distance" ] && [ "$(wc -l <if.csv)" = 3 ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: interference CSV"; cat if.csv; fi
check "interference intensity 0" 0 ifr --foreground read --background reset --intensity 0 --levels 1,2 --runtime 50ms --json
expect "interference intensity 0 equals isolation" "j['m_inter']==0 and all(l['iso']['iops']==l['int']['iops'] and l['iso']['p95_ns']==l['int']['p95_ns'] for l in j['levels']) and j['background']['ops']==0"
printf 'foreground = "append"\nbackground = "finish"\nintensity = 25\nlevels = [1, 2]\nruntime = "50ms"\nbs = "64KiB"\n' >if.toml
check "interference job file" 0 ifr --job if.toml --levels 3 --json
expect "interference flags override the job file" "[l['cl'] for l in j['levels']]==[3] and j['foreground']['op']=='append' and j['foreground']['bs']==65536 and j['background']['intensity_percent']==25"
printf 'foreground = "write"\niodepth = 4\n' >if-bad.toml
check "interference job file with an unknown key" 2 ifr --job if-bad.toml --background finish --intensity 50
one_line_error "interference job file with an unknown key"
sum_before=$(head -c 8M dev.img | md5sum)
check "interference on an image" 0 "$Z" interference dev.img --quiet --foreground write --background finish --intensity 50 --levels 2 --runtime 50ms --json
[ "$sum_before" = "$(head -c 8M dev.img | md5sum)" ] && passed=$((passed + 1)) || { failed=$((failed + 1)); echo "FAIL: interference changed the image"; }
run_interference_det() { ifr --set seed=9 --foreground read --background finish --intensity 40 --levels 1,8 --runtime 50ms --json; }
run_interference_det >if1.json 2>/dev/null
run_interference_det >if2.json 2>/dev/null
if cmp -s if1.json if2.json && [ -s if1.json ]; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAIL: interference output differs between identical runs"; fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
