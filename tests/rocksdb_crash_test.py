#!/usr/bin/env python3
"""RocksDB on zonelab:// killed and power-cut, over and over, with workloads
of many shapes: value sizes from 100 B to 1 MiB, memtables from 64 KiB to
64 MiB, one to four threads (concurrent memtable writes), column families,
RocksDB's direct I/O options, `zonelab kv` and stock db_bench, with and
without sync; a device with a volatile write cache; and seed 004's drive
with zenfs+, table files striped over its independent zone groups. Each scenario keeps
its own image and database, which live on across its iterations, so crashes
land on databases of every age.

A crash is one of:
  kill   SIGKILL at a random instant;
  power  (kv) --power-cut-after N: the device loses power between two
         commands (N random), every I/O after fails.

After each crash:
  1. `zonelab fs fsck` must exit 0. Its last check opens every RocksDB
     database on the file system read-only (so "clean" means the database
     opens); and
  2. the database must open for the tool and hold what was acknowledged:
     kv    `zonelab kv --workload verify` reads back every key the ack log
           lists (each write RocksDB acknowledged with sync on) and checks
           its value;
     db_bench fillseq (synced, a fresh database each time, made by a run
           that is not killed): the keys the progress lines counted as
           finished before the kill are all there (`ldb dump --count_only`,
           every column family);
     db_bench overwrite (on the database it keeps): the database opens
           and reads (readrandom).

Prints, per scenario, the crashes, the acknowledged writes at each kill,
and what recovery did (the image's command journal replayed, a file's tail
given back, a torn journal tail); the run fails on the first few failures.

usage: rocksdb_crash_test.py ZONELAB PLUGIN [--seconds S] [--min-iterations N]
                             [--iterations N] [--seed S] [--only NAME,...]
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

KIB = 1024
MIB = 1024 * 1024

# name: tool, crash kinds, and the tool's options. "num" is the key range;
# "acks" marks a kv writer whose acknowledged keys are checked.
SCENARIOS = [
    {"name": "kv-100B-64KiB", "tool": "kv", "crashes": ["kill", "power"],
     "args": ["--workload", "fillrandom", "--num", "200000", "--value-size", "100",
              "--write-buffer-size", "64KiB", "--target-file-size", "256KiB", "--sync"]},
    {"name": "kv-1MiB-1MiB", "tool": "kv", "crashes": ["kill", "power"],
     "args": ["--workload", "fillrandom", "--num", "1000", "--value-size", "1MiB",
              "--write-buffer-size", "1MiB", "--target-file-size", "2MiB", "--sync"]},
    {"name": "kv-4KiB-4threads", "tool": "kv", "crashes": ["kill"],
     "args": ["--workload", "fillrandom", "--num", "100000", "--value-size", "4KiB",
              "--write-buffer-size", "256KiB", "--target-file-size", "1MiB", "--threads", "4",
              "--sync"]},
    {"name": "kv-64KiB-64MiB", "tool": "kv", "crashes": ["kill"],
     "args": ["--workload", "overwrite", "--num", "10000", "--value-size", "64KiB",
              "--write-buffer-size", "64MiB", "--target-file-size", "8MiB", "--sync"]},
    {"name": "kv-volatile-cache", "tool": "kv", "crashes": ["kill"],
     "create": ["--preset", "small", "--set", "buffer.size=1MiB",
                "--set", "buffer.power_loss_protection=off"],
     "args": ["--workload", "fillrandom", "--num", "200000", "--value-size", "100",
              "--write-buffer-size", "256KiB", "--target-file-size", "512KiB", "--sync"]},
    {"name": "kv-zenfs+-striped", "tool": "kv", "crashes": ["kill", "power"],
     "create": ["--preset", "zenfsplus", "--set", "flash.blocks_per_plane=16",
                "--set", "zns.zone_count=128"],
     "mkfs": ["--policy", "zenfs+", "-o", "stripe_unit=64KiB,minor_gc_period=100ms"],
     "args": ["--workload", "fillrandom", "--num", "100000", "--value-size", "2000",
              "--write-buffer-size", "1MiB", "--target-file-size", "2MiB", "--threads", "2",
              "--sync"]},
    {"name": "kv-flexzns-sets", "tool": "kv", "crashes": ["kill", "power"],
     "create": ["--preset", "small", "--set", "flash.blocks_per_plane=32",
                "--set", "flash.pages_per_block=64", "--set", "flash.page_size=4KiB",
                "--set", "zns.format=1MiB:32,4MiB:20"],
     "args": ["--workload", "overwrite", "--num", "20000", "--value-size", "2000",
              "--write-buffer-size", "1MiB", "--target-file-size", "1MiB", "--threads", "2",
              "--sync"]},
    # The same sets with the deep levels spilling into the small zones
    # (mkfs --spill-cold) under a 2 MiB level 1, so that L2 holds most of
    # the data: a table of L2 lands in either set as their live shares move.
    {"name": "kv-flexzns-spill", "tool": "kv", "crashes": ["kill", "power"],
     "create": ["--preset", "small", "--set", "flash.blocks_per_plane=32",
                "--set", "flash.pages_per_block=64", "--set", "flash.page_size=4KiB",
                "--set", "zns.format=1MiB:32,4MiB:20"],
     "mkfs": ["--spill-cold"],
     "args": ["--workload", "fillrandom", "--num", "60000", "--value-size", "700",
              "--write-buffer-size", "512KiB", "--target-file-size", "768KiB",
              "--max-bytes-for-level-base", "2MiB", "--threads", "3", "--sync"]},
    # Two tenants at once (seed 001 §IV-D) on a mixed format (1 MiB zones on
    # dies 0-3, 2 MiB zones on dies 4-7), each with its own workload, value
    # size and ack log; fsck checks that no tenant's data lies in the
    # other's zones, verify reads back both tenants' keys.
    {"name": "kv-tenants", "tool": "kv", "crashes": ["kill", "power"],
     "create": ["--preset", "small", "--set", "flash.blocks_per_plane=32",
                "--set", "flash.pages_per_block=64", "--set", "flash.page_size=4KiB",
                "--set", "zns.format=1MiB:32@0-3,2MiB:16@4-7",
                "--set", "zns.parity.placement=separate"],
     "mkfs": ["--tenant", "a=0", "--tenant", "b=1"],
     "args": ["--workload", "fillrandom"],
     "tenants": {"a": ["--workload", "overwrite", "--num", "6000", "--value-size", "2000",
                       "--write-buffer-size", "1MiB", "--target-file-size", "900KiB", "--sync"],
                 "b": ["--workload", "fillrandom", "--num", "30000", "--value-size", "300",
                       "--threads", "2", "--write-buffer-size", "512KiB",
                       "--target-file-size", "900KiB", "--sync"]}},
    {"name": "db_bench-fillseq-1MiB", "tool": "db_bench", "crashes": ["kill"], "fresh": True,
     "window": [1.5, 5.0],
     "args": ["--benchmarks=fillseq", "--sync=1", "--value_size=1048576", "--num=2000",
              "--write_buffer_size=4194304", "--target_file_size_base=4194304"]},
    {"name": "db_bench-fillseq-3cf", "tool": "db_bench", "crashes": ["kill"], "fresh": True,
     "args": ["--benchmarks=fillseq", "--sync=1", "--value_size=1000", "--num=400000",
              "--num_column_families=3", "--write_buffer_size=65536",
              "--target_file_size_base=262144"]},
    {"name": "db_bench-direct-2threads", "tool": "db_bench", "crashes": ["kill"],
     "args": ["--benchmarks=overwrite", "--sync=1", "--value_size=16384", "--num=20000",
              "--threads=2", "--allow_concurrent_memtable_write=1",
              "--use_direct_io_for_flush_and_compaction=1", "--use_direct_reads=1",
              "--write_buffer_size=1048576", "--target_file_size_base=1048576"]},
    {"name": "db_bench-nosync-4threads", "tool": "db_bench", "crashes": ["kill"],
     "args": ["--benchmarks=overwrite", "--sync=0", "--value_size=200", "--num=500000",
              "--threads=4", "--write_buffer_size=8388608", "--target_file_size_base=2097152"]},
]

KV_COMMON = ["--timing", "off", "--pacing", "sleep", "--seed", "1", "--quiet"]


def value_size(args):
    return args[args.index("--value-size") + 1] if "--value-size" in args else "100"


class Run:
    def __init__(self, zonelab, plugin, work, rng):
        self.zonelab = zonelab
        self.plugin = plugin
        self.work = work
        self.rng = rng
        self.db_bench = shutil.which("db_bench")
        self.ldb = shutil.which("ldb")
        self.failures = []
        self.stats = {}

    def image(self, s):
        return os.path.join(self.work, s["name"] + ".img")

    def acks(self, s, tenant=None):
        return os.path.join(self.work, s["name"] + (".%s" % tenant if tenant else "") + ".acks")

    def ack_logs(self, s):
        return [self.acks(s, t) for t in s["tenants"]] if "tenants" in s else [self.acks(s)]

    def tenant_flags(self, s, verify):
        # --tenant NAME:FLAGS for each tenant: its own workload (or verify)
        # and its own ack log.
        out = []
        for t, args in s.get("tenants", {}).items():
            own = (["--workload", "verify", "--value-size", value_size(args)] if verify
                   else args) + ["--ack-log", self.acks(s, t)]
            out += ["--tenant", t + ":" + " ".join(own)]
        return out

    def stat(self, s):
        return self.stats.setdefault(s["name"], {"kill": 0, "power": 0, "acked": [],
                                                 "replays": 0, "tails": 0, "torn": 0,
                                                 "db_opens": 0, "verified": 0})

    def fail(self, what):
        self.failures.append(what)
        print("FAIL: " + what, flush=True)

    def make_image(self, s):
        img = self.image(s)
        if os.path.exists(img):
            return True
        for argv in (["create", img] + s.get("create", ["--preset", "small"]),
                     ["mkfs", img] + s.get("mkfs", [])):
            p = subprocess.run([self.zonelab] + argv, capture_output=True, text=True)
            if p.returncode != 0:
                self.fail("%s: %s: %s" % (s["name"], argv[0], p.stderr[-400:]))
                return False
        for path in self.ack_logs(s):
            open(path, "w").close()
        return True

    def uri(self, s):
        return "zonelab://%s?timing=off&pacing=sleep&stats=none" % self.image(s)

    def fsck(self, s, where):
        p = subprocess.run([self.zonelab, "fs", "fsck", self.image(s)], capture_output=True,
                           text=True)
        st = self.stat(s)
        for note, key in (("replayed", "replays"), ("recovered from zone", "tails"),
                          ("not replayed", "torn")):
            if note in p.stdout + p.stderr:
                st[key] += 1
        if p.returncode != 0:
            self.fail("%s: fsck exit %d: %s %s" % (where, p.returncode, p.stdout[-800:],
                                                   p.stderr[-400:]))
            return False
        if "opens (" in p.stdout:
            st["db_opens"] += 1
        return True

    # --- kv

    def acked_lines(self, s):
        return sum(sum(1 for _ in open(path)) for path in self.ack_logs(s))

    def kv_crash(self, s, kind, where):
        lines_before = self.acked_lines(s)
        own_log = [] if "tenants" in s else ["--ack-log", self.acks(s)]
        argv = [self.zonelab, "kv", self.image(s)] + own_log + s["args"] + KV_COMMON + \
            self.tenant_flags(s, False)
        st = self.stat(s)
        if kind == "power":
            n = self.rng.randint(50, 4000)
            p = subprocess.run(argv + ["--power-cut-after", str(n)], capture_output=True,
                               text=True, timeout=300)
            if p.returncode not in (0, 3):
                self.fail("%s: exit %d: %s" % (where, p.returncode, p.stderr[-600:]))
                return False
        else:
            proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(self.rng.uniform(*s.get("window", [0.3, 2.5])))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        st[kind] += 1
        st["acked"].append(self.acked_lines(s) - lines_before)
        return True

    def kv_verify(self, s, where):
        own = [] if "tenants" in s else ["--ack-log", self.acks(s), "--value-size",
                                         value_size(s["args"])]
        p = subprocess.run([self.zonelab, "kv", self.image(s), "--workload", "verify"] + own +
                           KV_COMMON + self.tenant_flags(s, True), capture_output=True, text=True)
        found = re.findall(r"verify: (\d+) keys listed, (\d+) found, (\d+) missing, (\d+) wrong",
                           p.stdout)
        if p.returncode != 0 or len(found) != len(self.ack_logs(s)) or \
                any(int(m[2]) or int(m[3]) for m in found):
            self.fail("%s: verify exit %d: %s %s" % (where, p.returncode, p.stdout[-600:],
                                                     p.stderr[-600:]))
            return
        self.stat(s)["verified"] += 1

    # --- db_bench

    def bench_env(self):
        return dict(os.environ, LD_PRELOAD=self.plugin)

    def cf_count(self, s):
        for a in s["args"]:
            if a.startswith("--num_column_families="):
                return int(a.split("=")[1])
        return 1

    def db_dir(self, s):
        return "/" + s["name"]

    def bench_crash(self, s, where):
        common = [self.db_bench, "--fs_uri=" + self.uri(s), "--db=" + self.db_dir(s),
                  "--histogram=0", "--statistics=0", "--compression_type=none",
                  "--num_column_families=%d" % self.cf_count(s)]
        if s.get("fresh") or self.stat(s)["kill"] == 0:
            # A fresh, empty database, made by a run that is not killed:
            # RocksDB's DestroyDB deletes a database's files one by one in
            # listing order, so a kill in the middle of it leaves a
            # MANIFEST naming tables already gone -- on any file system.
            p = subprocess.run(common + ["--benchmarks=stats", "--use_existing_db=0"],
                               env=self.bench_env(), capture_output=True, text=True)
            if p.returncode != 0:
                self.fail("%s: making a fresh database: %s" % (where, p.stderr[-400:]))
                return False
        # fillseq and fillrandom start from an empty database (db_bench
        # destroys it first, and skips them on an existing one); the other
        # scenarios overwrite the database they keep.
        argv = common + ["--use_existing_db=%d" % (0 if s.get("fresh") else 1)] + s["args"]
        err_path = os.path.join(self.work, "db_bench.err")
        with open(err_path, "w") as err:
            proc = subprocess.Popen(argv, env=self.bench_env(), stdout=subprocess.DEVNULL,
                                    stderr=err)
            time.sleep(self.rng.uniform(*s.get("window", [0.5, 3.0])))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
        # "... finished N ops" goes to stderr after N operations returned.
        done = [int(x) for x in re.findall(rb"finished (\d+) ops", open(err_path, "rb").read())]
        st = self.stat(s)
        st["kill"] += 1
        st["acked"].append(max(done) if done else 0)
        return True

    def bench_verify(self, s, where):
        st = self.stat(s)
        if s.get("fresh"):
            # fillseq: the first `acked` keys of the key range are in the
            # database (spread over the column families, each its share).
            acked = st["acked"][-1]
            total = 0
            # The column families the database has (a kill before db_bench
            # made them all leaves fewer).
            p = subprocess.run([self.ldb, "--fs_uri=" + self.uri(s), "--db=" + self.db_dir(s),
                                "list_column_families"], env=self.bench_env(),
                               capture_output=True, text=True)
            m = re.search(r"\{(.*)\}", p.stdout)
            if m is None and acked == 0 and "CURRENT" in p.stdout + p.stderr:
                # Killed while db_bench destroyed the old database and made
                # the new one, before any write: there is no database yet.
                st["verified"] += 1
                return
            if p.returncode != 0 or m is None:
                self.fail("%s: ldb list_column_families exit %d: %s %s" % (
                    where, p.returncode, p.stdout[-400:], p.stderr[-400:]))
                return
            cfs = [c.strip() for c in m.group(1).split(",")]
            for cf in cfs:
                p = subprocess.run([self.ldb, "--fs_uri=" + self.uri(s), "--db=" + self.db_dir(s),
                                    "--column_family=" + cf, "dump", "--count_only"],
                                   env=self.bench_env(), capture_output=True, text=True)
                m = re.search(r"Keys in range: (\d+)", p.stdout)
                if p.returncode != 0 or m is None:
                    self.fail("%s: ldb dump of %s exit %d: %s %s" % (
                        where, cf, p.returncode, p.stdout[-400:], p.stderr[-400:]))
                    return
                total += int(m.group(1))
            if total < acked:
                self.fail("%s: %d keys in the database, %d acknowledged" % (where, total, acked))
                return
        else:
            p = subprocess.run([self.db_bench, "--fs_uri=" + self.uri(s),
                                "--db=" + self.db_dir(s), "--benchmarks=readrandom",
                                "--use_existing_db=1", "--reads=500", "--histogram=0",
                                "--num_column_families=%d" % self.cf_count(s)] +
                               [a for a in s["args"] if a.startswith("--num=")],
                               env=self.bench_env(), capture_output=True, text=True)
            if p.returncode != 0:
                self.fail("%s: the database does not open after the kill: %s" % (
                    where, (p.stdout + p.stderr)[-600:]))
                return
        st["verified"] += 1

    def iteration(self, s, i):
        if not self.make_image(s):
            return
        kind = s["crashes"][i % len(s["crashes"])]
        where = "%s %s %d" % (s["name"], kind, i)
        if s["tool"] == "kv":
            if self.kv_crash(s, kind, where) and self.fsck(s, where):
                self.kv_verify(s, where)
        elif self.bench_crash(s, where) and self.fsck(s, where):
            self.bench_verify(s, where)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zonelab")
    ap.add_argument("plugin")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--min-iterations", type=int, default=len(SCENARIOS))
    ap.add_argument("--iterations", type=int, default=0, help="stop after this many (0: time)")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--only", default="", help="scenario names, comma-separated")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    ap.add_argument("--max-failures", type=int, default=3,
                    help="stop after this many failures (1 with --keep leaves the failing image)")
    a = ap.parse_args()
    scenarios = [s for s in SCENARIOS if not a.only or s["name"] in a.only.split(",")]
    if not shutil.which("db_bench") or not shutil.which("ldb"):
        scenarios = [s for s in scenarios if s["tool"] == "kv"]
    work = tempfile.mkdtemp(prefix="zonelab-rocksdb-crash-")
    run = Run(os.path.abspath(a.zonelab), os.path.abspath(a.plugin), work, random.Random(a.seed))
    started = time.monotonic()
    i = 0
    try:
        while len(run.failures) < a.max_failures:
            if a.iterations:
                if i >= a.iterations:
                    break
            elif time.monotonic() - started >= a.seconds and i >= a.min_iterations:
                break
            run.iteration(scenarios[i % len(scenarios)], i // len(scenarios))
            i += 1
            if i % 25 == 0:
                print("  ... %d crashes in %.0f s, %d failures" % (
                    i, time.monotonic() - started, len(run.failures)), file=sys.stderr,
                    flush=True)
    finally:
        if a.keep:
            print("work directory: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print("seed %d: %d crashes in %.0f s" % (a.seed, i, time.monotonic() - started))
    for name, st in run.stats.items():
        acked = sorted(st["acked"])
        print("  %-26s %3d kills %3d power cuts; acknowledged at the crash %s; verified %d; "
              "fsck opened the database %d; recovery replayed the image journal %d, gave "
              "back a tail %d, left a torn journal tail %d" % (
                  name, st["kill"], st["power"],
                  "none" if not acked else "%d-%d (median %d)" % (acked[0], acked[-1],
                                                                   acked[len(acked) // 2]),
                  st["verified"], st["db_opens"], st["replays"], st["tails"], st["torn"]))
    for f in run.failures:
        print("FAIL: " + f)
    print("%d passed, %d failed" % (i - len(run.failures), len(run.failures)))
    return 1 if run.failures else 0


if __name__ == "__main__":
    sys.exit(main())
