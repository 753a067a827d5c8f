#!/usr/bin/env python3
"""RocksDB on zonelab:// killed and power-cut, over and over. Three kinds of
crash, in turn, each on a database that lives on across the iterations:

  kill      `zonelab kv --workload fillrandom --sync --ack-log` killed with
            SIGKILL at a random instant (small memtables and tables, so that
            flushes and compactions run all the time);
  power     the same run with --power-cut-after N (random N): the device
            loses power between two commands, every I/O after fails;
  db_bench  stock db_bench (the plugin preloaded) filling with --sync=1,
            killed at a random instant;
  volatile  the kill on a second database whose device has a volatile
            write cache (buffer.power_loss_protection=off): the kill is a
            power cut that loses what the buffer held and no Flush covered,
            so what sync acknowledged must have been flushed.

After each: `zonelab fs fsck` must find the file system clean, and for kv
`zonelab kv --workload verify` must find every key the log lists (every
write RocksDB acknowledged, with sync on) with its value; for db_bench the
database must open and read. Prints the iterations, the acknowledged writes
at each kill, and what recovery had to do.

usage: rocksdb_crash_test.py ZONELAB PLUGIN [--seconds S] [--min-iterations N] [--seed S]
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zonelab")
    ap.add_argument("plugin")
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--min-iterations", type=int, default=15)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    a = ap.parse_args()
    zonelab = os.path.abspath(a.zonelab)
    plugin = os.path.abspath(a.plugin)
    db_bench = shutil.which("db_bench")
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="zonelab-rocksdb-crash-")
    kv_image = os.path.join(work, "kv.img")
    bench_image = os.path.join(work, "bench.img")
    ack = os.path.join(work, "acks.txt")
    open(ack, "w").close()
    vc_image = os.path.join(work, "volatile.img")
    vc_ack = os.path.join(work, "volatile-acks.txt")
    open(vc_ack, "w").close()
    small_lsm = ["--write-buffer-size", "256KiB", "--target-file-size", "512KiB",
                 "--timing", "off", "--pacing", "sleep", "--seed", "1", "--quiet"]
    failures = []
    stats = {"kill": 0, "power": 0, "db_bench": 0, "volatile": 0, "acked_at_kill": [],
             "replays": 0,
             "tails": 0, "torn_journal": 0, "power_cut_after": []}

    def fsck(image, what):
        p = subprocess.run([zonelab, "fs", "fsck", image], capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("%s: fsck exit %d: %s %s" % (what, p.returncode, p.stdout[-600:],
                                                        p.stderr[-600:]))
            return False
        return True

    def verify(what, image=kv_image, acks=ack):
        p = subprocess.run([zonelab, "kv", image, "--workload", "verify", "--ack-log", acks,
                            "--timing", "off", "--pacing", "sleep", "--seed", "1", "--quiet"],
                           capture_output=True, text=True)
        m = re.search(r"verify: (\d+) keys listed, (\d+) found, (\d+) missing, (\d+) wrong",
                      p.stdout)
        if p.returncode != 0 or m is None or int(m.group(3)) or int(m.group(4)):
            failures.append("%s: verify exit %d: %s %s" % (what, p.returncode, p.stdout[-800:],
                                                          p.stderr[-800:]))
            return
        for note, key in (("replayed", "replays"), ("recovered from zone", "tails"),
                          ("not replayed", "torn_journal")):
            if note in p.stderr:
                stats[key] += 1

    def kv_writer(extra, image=kv_image, acks=ack):
        return subprocess.Popen(
            [zonelab, "kv", image, "--create", "small", "--workload", "fillrandom",
             "--num", "200000", "--sync", "--ack-log", acks] + small_lsm + extra,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def lines(path):
        with open(path) as f:
            return sum(1 for _ in f)

    def kill_iteration(i):
        before = lines(ack)
        proc = kv_writer([])
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        stats["kill"] += 1
        stats["acked_at_kill"].append(lines(ack) - before)
        if fsck(kv_image, "kill %d" % i):
            verify("kill %d" % i)

    def power_iteration(i):
        n = rng.randint(50, 4000)
        stats["power_cut_after"].append(n)
        proc = kv_writer(["--power-cut-after", str(n)])
        try:
            _, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            failures.append("power %d: the run did not stop after the power cut" % i)
            return
        if proc.returncode not in (0, 3):
            failures.append("power %d: exit %d: %s" % (i, proc.returncode, err[-600:]))
            return
        stats["power"] += 1
        if fsck(kv_image, "power %d" % i):
            verify("power %d" % i)

    def db_bench_iteration(i):
        uri = "zonelab://%s?timing=off&pacing=sleep&create=small&stats=none" % bench_image
        env = dict(os.environ, LD_PRELOAD=plugin)
        common = [db_bench, "--fs_uri=" + uri, "--num=100000", "--write_buffer_size=262144",
                  "--target_file_size_base=524288", "--histogram=0"]
        proc = subprocess.Popen(common + ["--benchmarks=fillrandom", "--sync=1",
                                          "--use_existing_db=%d" % (1 if i > 2 else 0)],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(rng.uniform(0.5, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        stats["db_bench"] += 1
        if not fsck(bench_image, "db_bench %d" % i):
            return
        p = subprocess.run(common + ["--benchmarks=readrandom", "--use_existing_db=1",
                                     "--reads=2000"], env=env, capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("db_bench %d: the database does not open after the kill: %s" %
                            (i, (p.stdout + p.stderr)[-600:]))

    def volatile_iteration(i):
        if not os.path.exists(vc_image):
            for argv in (["create", vc_image, "--preset", "small", "--set", "buffer.size=1MiB",
                          "--set", "buffer.power_loss_protection=off"], ["mkfs", vc_image]):
                p = subprocess.run([zonelab] + argv, capture_output=True, text=True)
                if p.returncode != 0:
                    failures.append("volatile: %s: %s" % (argv[0], p.stderr[-600:]))
                    return
        proc = kv_writer([], vc_image, vc_ack)
        time.sleep(rng.uniform(0.3, 2.5))
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
        stats["volatile"] += 1
        if fsck(vc_image, "volatile %d" % i):
            verify("volatile %d" % i, vc_image, vc_ack)

    kinds = [kill_iteration, power_iteration, volatile_iteration] + \
        ([db_bench_iteration] if db_bench else [])
    started = time.monotonic()
    i = 0
    try:
        while (time.monotonic() - started < a.seconds or i < a.min_iterations) and \
                len(failures) < 3:
            kinds[i % len(kinds)](i)
            i += 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    acked = stats["acked_at_kill"]
    print("seed %d: %d crashes in %.0f s: %d kills of kv (acknowledged writes before the kill: "
          "%s), %d power cuts (after %s commands), %d kills of db_bench, %d kills of kv on a "
          "volatile write cache; recovery replayed the image's journal %d times, gave back a "
          "file's tail %d times, left a torn journal tail %d times" % (
              a.seed, i, time.monotonic() - started, stats["kill"],
              "none" if not acked else "%d-%d, median %d" % (min(acked), max(acked),
                                                            sorted(acked)[len(acked) // 2]),
              stats["power"], stats["power_cut_after"], stats["db_bench"], stats["volatile"],
              stats["replays"],
              stats["tails"], stats["torn_journal"]))
    for f in failures:
        print("FAIL: " + f)
    print("%d passed, %d failed" % (i - len(failures), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
