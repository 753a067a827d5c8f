#!/usr/bin/env python3
"""Stock db_bench (Debian's rocksdb-tools) on zonelab://, with the plugin
preloaded: fillseq, fillrandom, overwrite, readrandom and readwhilewriting
with checksums verified; then a new process reopens the database and reads
every key back; the same through --env_uri; a second process on the same
image is refused while the first holds it; a bad URI is one clear line.

Every db_bench names its database (--db) by a path of this run's own
temporary directory, so the test depends on nothing another db_bench left
on the host (its default /tmp/rocksdbtest-UID/dbbench), and can tell that
the database went into the image and not to that host path.

usage: db_bench_test.py PLUGIN.so [DB_BENCH]
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CheckLines  # noqa: E402

PLUGIN = os.path.abspath(sys.argv[1])
DB_BENCH = sys.argv[2] if len(sys.argv) > 2 else shutil.which("db_bench")
# The command-line tool is built beside the plugin; used only when there.
ZONELAB = os.path.join(os.path.dirname(PLUGIN), "zonelab")
NUM = 20000
LINES = CheckLines()
check = LINES.check
failures = LINES.failures


def db_bench(uri, db, *args, env_uri=False, timeout=300):
    cmd = [DB_BENCH, ("--env_uri=" if env_uri else "--fs_uri=") + uri, "--db=" + db,
           "--num=%d" % NUM, "--verify_checksum=1", "--compression_type=snappy",
           "--write_buffer_size=%d" % (1 << 20), "--target_file_size_base=%d" % (2 << 20),
           "--max_bytes_for_level_base=%d" % (8 << 20), "--stats_per_interval=0",
           "--histogram=0"] + list(args)
    env = dict(os.environ, LD_PRELOAD=PLUGIN)
    started = time.monotonic()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - started


def ops_line(out, name):
    m = re.search(r"^%s\s*:\s*([\d.]+) micros/op (\d+) ops/sec.*$" % re.escape(name), out, re.M)
    return m


def found(out, name):
    m = re.search(r"^%s\s*:.*\((\d+) of (\d+) found\)" % re.escape(name), out, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main():
    if DB_BENCH is None:
        print("db_bench not found (Debian package rocksdb-tools)")
        return 1
    work = tempfile.mkdtemp(prefix="zonelab-db-bench-")
    try:
        image = os.path.join(work, "dev.img")
        uri = "zonelab://%s?timing=off&pacing=sleep&create=small" % image
        # A path in the file system that names this run's own host directory:
        # were the database to go to the host, it would be found there.
        db = os.path.join(work, "db")

        p, secs = db_bench(uri, db, "--benchmarks=fillseq,fillrandom,overwrite,readrandom,"
                           "readwhilewriting", "--duration=3", "--threads=2")
        out = p.stdout + p.stderr
        check("db_bench writes and reads on zonelab:// (exit 0)", p.returncode == 0, out[-2000:])
        for name in ("fillseq", "fillrandom", "overwrite", "readrandom", "readwhilewriting"):
            m = ops_line(out, name)
            check("%s reports ops/sec" % name, m is not None and int(m.group(2)) > 0, out[-1500:])
            if m:
                print("      %s: %s ops/sec" % (name, m.group(2)))
        check("no database on the host", not os.path.exists(db), "%s exists" % db)
        if os.path.exists(ZONELAB):
            ls = subprocess.run([ZONELAB, "fs", "ls", image, db], capture_output=True, text=True)
            check("the database is in the image", ls.returncode == 0 and
                  re.search(r"^CURRENT$", ls.stdout, re.M) is not None,
                  ls.stdout[-800:] + ls.stderr[-800:])
        stats_path = image + ".stats.json"
        check("statistics written at close", os.path.exists(stats_path))
        if os.path.exists(stats_path):
            stats = json.load(open(stats_path))
            by_class = stats["fs"]["files"]["by_class"]
            check("flush and compaction bytes counted apart",
                  by_class["flush"]["appended_bytes"] > 0 and
                  by_class["compaction"]["appended_bytes"] > 0 and
                  by_class["wal"]["appended_bytes"] > 0, json.dumps(by_class))
            check("device and driver in the statistics",
                  stats["device"]["host_write_bytes"] > 0 and
                  "loop_cpu_ns" in stats["realtime"], json.dumps(stats["realtime"]))
            check("no device error answered", stats["fs"]["device_io"]["failed"] == 0)

        # Every key of a sequential fill, read back by a new process.
        p, _ = db_bench(uri, db, "--benchmarks=fillseq")
        check("fillseq of %d keys (exit 0)" % NUM, p.returncode == 0, p.stderr[-1500:])
        p, _ = db_bench(uri, db, "--benchmarks=readrandom", "--use_existing_db=1",
                        "--reads=%d" % NUM)
        got = found(p.stdout, "readrandom")
        check("a new process finds every key", p.returncode == 0 and got == (NUM, NUM),
              "found %s\n%s" % (got, (p.stdout + p.stderr)[-1500:]))
        # The same database through --env_uri (RocksDB's option parser takes
        # '=' itself there, hence id=).
        p, _ = db_bench("id=" + uri, db, "--benchmarks=readrandom", "--use_existing_db=1",
                        "--reads=%d" % NUM, env_uri=True)
        got = found(p.stdout, "readrandom")
        check("--env_uri reads the same keys", p.returncode == 0 and got == (NUM, NUM),
              "found %s\n%s" % (got, (p.stdout + p.stderr)[-1500:]))

        # The image is locked while a process holds it.
        holder = subprocess.Popen(
            [DB_BENCH, "--fs_uri=" + uri, "--db=" + db, "--benchmarks=readrandom",
             "--use_existing_db=1", "--num=%d" % NUM, "--duration=6"],
            env=dict(os.environ, LD_PRELOAD=PLUGIN), stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        time.sleep(2)
        p, _ = db_bench(uri, db, "--benchmarks=readrandom", "--use_existing_db=1", "--reads=10")
        out = p.stdout + p.stderr
        check("a second process is refused while the image is held",
              p.returncode != 0 and "in use by another process" in out, out[-800:])
        holder.wait(timeout=60)

        # A bad URI: one clear line from zonelab, db_bench stops.
        p, _ = db_bench("zonelab://%s?timing=sometimes" % image, db, "--benchmarks=fillseq")
        out = p.stdout + p.stderr
        check("a bad URI is refused with its reason",
              p.returncode != 0 and "timing=sometimes" in out, out[-800:])
        # A preset that does not exist is refused though the image exists
        # (create= is not looked at then, but a misspelling is still one).
        p, _ = db_bench("zonelab://%s?timing=off&create=bogus" % image, db,
                        "--benchmarks=readrandom", "--use_existing_db=1", "--reads=10")
        out = p.stdout + p.stderr
        check("create= with no such preset is refused on an existing image",
              p.returncode != 0 and "create=bogus: not a preset" in out, out[-800:])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
