#!/usr/bin/env python3
"""SIGINT and SIGTERM to a RocksDB run on zonelab: `zonelab kv` stops its
workload, prints what ran marked interrupted, closes the DB and the image
and exits 130 / 143; stock db_bench (the plugin preloaded) writes its
statistics file and closes the image, then ends by the signal. A second
signal ends either at once. After each, `zonelab fs fsck` is clean and the
database opens again.

usage: interrupt_test.py ZONELAB PLUGIN.so [DB_BENCH]
"""
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CheckLines  # noqa: E402

ZONELAB = os.path.abspath(sys.argv[1])
PLUGIN = os.path.abspath(sys.argv[2])
DB_BENCH = sys.argv[3] if len(sys.argv) > 3 else shutil.which("db_bench")
# Long enough that only a signal ends the runs below.
ENDLESS = "100000000"
RUN_BEFORE_SIGNAL_S = 2.0
# A run stopped by its first signal closes the DB and the image in this time.
CLOSE_TIMEOUT_S = 60
LINES = CheckLines()
check = LINES.check
failures = LINES.failures


def zonelab(*args):
    return subprocess.run([ZONELAB] + list(args), capture_output=True, text=True, timeout=300)


def fsck_clean(image, what):
    p = zonelab("fs", "fsck", image)
    check("%s: fsck clean" % what, p.returncode == 0 and "clean" in p.stdout,
          p.stdout[-800:] + p.stderr[-800:])


def start(argv, env=None):
    return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def wait_for_progress(proc, timeout_s=120):
    """Reads kv's stderr until its first progress line: the run phase is
    then under way (opening a DB may replay a long log first). The lines
    read, or None when none came."""
    lines = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stderr], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stderr.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("progress: run"):
            return lines
    return None


def stop(proc, *signals, gap_s=0.0):
    """Sends the signals in turn (gap_s apart) and waits; (returncode,
    stdout, stderr, seconds from the first signal to the end)."""
    sent = time.monotonic()
    for i, sig in enumerate(signals):
        if i > 0 and gap_s > 0:
            time.sleep(gap_s)
        proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=CLOSE_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return "timeout", out, err, CLOSE_TIMEOUT_S
    return proc.returncode, out, err, time.monotonic() - sent


def kv_tests(work):
    image = os.path.join(work, "kv.img")
    p = zonelab("kv", image, "--create", "small", "--workload", "fillseq", "--num", "1000",
                "--timing", "off")
    check("kv: the image and its DB made", p.returncode == 0, p.stderr[-800:])
    # Progress lines from 2 s into the run, every 0.5 s: the signals below
    # come once the run phase is under way.
    kv = [ZONELAB, "kv", image, "--workload", "fillrandom", "--num", ENDLESS, "--timing", "off",
          "--report-interval", "0.5"]

    # SIGINT, --json: the run so far, marked, and exit 130.
    proc = start(kv + ["--json"])
    check("kv SIGINT: the run under way", wait_for_progress(proc) is not None)
    code, out, err, secs = stop(proc, signal.SIGINT)
    check("kv SIGINT: exit 130", code == 130, "exit %s after %.1f s; %s" % (code, secs, err[-800:]))
    try:
        d = json.loads(out)
    except ValueError:
        d = {}
    check("kv SIGINT: JSON marked interrupted by SIGINT",
          d.get("interrupted") is True and d.get("signal") == "SIGINT" and
          d.get("status") == "SUCCESS", out[-800:])
    run = d.get("run", {})
    check("kv SIGINT: the run cut short, its operations counted",
          run.get("interrupted") is True and 0 < run.get("ops", 0) < int(ENDLESS), out[-800:])
    check("kv SIGINT: the session's statistics in the JSON",
          "device" in d.get("session", {}) and "fs" in d.get("session", {}), out[-400:])
    print("      stopped after %s ops; closed %.2f s after the signal" % (run.get("ops"), secs))
    fsck_clean(image, "kv SIGINT")

    # SIGTERM, the table: the phase line marked, a last line, exit 143.
    proc = start(kv)
    check("kv SIGTERM: the run under way", wait_for_progress(proc) is not None)
    code, out, err, secs = stop(proc, signal.SIGTERM)
    check("kv SIGTERM: exit 143", code == 143, "exit %s; %s" % (code, err[-800:]))
    check("kv SIGTERM: the phase line marked (interrupted)",
          re.search(r"^fillrandom\s+:.* operations;.*MB/s \(interrupted\)$", out, re.M) is not None,
          out[-800:])
    check("kv SIGTERM: says it was interrupted",
          re.search(r"^interrupted by SIGTERM: ", out, re.M) is not None, out[-800:])
    check("kv SIGTERM: nothing on stderr but progress lines",
          all(line.startswith("progress: ") for line in err.splitlines()), err[-800:])
    fsck_clean(image, "kv SIGTERM")

    # A second signal ends the process at once, by that signal.
    proc = start(kv)
    check("kv second signal: the run under way", wait_for_progress(proc) is not None)
    code, out, err, secs = stop(proc, signal.SIGINT, signal.SIGTERM, gap_s=0.01)
    check("kv SIGINT then SIGTERM: ended by SIGTERM at once",
          code == -signal.SIGTERM and secs < 5, "exit %s after %.2f s" % (code, secs))
    fsck_clean(image, "kv second signal")

    # The DB opens again and reads.
    p = zonelab("kv", image, "--workload", "readrandom", "--num", "1000", "--ops", "1000",
                "--timing", "off")
    check("kv: the DB opens after the signals", p.returncode == 0, p.stderr[-800:])


def db_bench_tests(work):
    image = os.path.join(work, "bench.img")
    stats = image + ".stats.json"
    env = dict(os.environ, LD_PRELOAD=PLUGIN)
    uri = "zonelab://%s?timing=off&pacing=sleep&create=small" % image
    # A private path in the image: nothing of the host's default test
    # directory is used.
    common = [DB_BENCH, "--fs_uri=" + uri, "--db=/interrupt/db", "--histogram=0",
              "--write_buffer_size=%d" % (1 << 20)]

    for sig in (signal.SIGINT, signal.SIGTERM):
        name = signal.Signals(sig).name
        if os.path.exists(stats):
            os.remove(stats)
        proc = start(common + ["--benchmarks=fillrandom", "--num=" + ENDLESS], env=env)
        time.sleep(RUN_BEFORE_SIGNAL_S + 1)
        check("db_bench %s: no statistics before the signal" % name, not os.path.exists(stats))
        code, out, err, secs = stop(proc, sig)
        check("db_bench %s: ended by the signal (the shell's %d)" % (name, 128 + sig),
              code == -sig, "exit %s after %.1f s; %s" % (code, secs, err[-800:]))
        try:
            s = json.load(open(stats))
        except (OSError, ValueError) as e:
            s = {"error": str(e)}
        check("db_bench %s: statistics file written" % name,
              s.get("fs", {}).get("space", {}).get("files", 0) > 0 and
              s.get("device", {}).get("host_write_bytes", 0) > 0, json.dumps(s)[:800])
        print("      closed %.2f s after the signal" % secs)
        fsck_clean(image, "db_bench %s" % name)
        p = subprocess.run(common + ["--benchmarks=readrandom", "--use_existing_db=1",
                                     "--num=1000", "--reads=1000"],
                           env=env, capture_output=True, text=True, timeout=300)
        check("db_bench %s: the database opens again" % name, p.returncode == 0,
              (p.stdout + p.stderr)[-800:])

    # A second signal while the first closes: the process ends at once.
    proc = start(common + ["--benchmarks=fillrandom", "--num=" + ENDLESS], env=env)
    time.sleep(RUN_BEFORE_SIGNAL_S + 1)
    code, out, err, secs = stop(proc, signal.SIGINT, signal.SIGTERM, gap_s=0.002)
    check("db_bench SIGINT then SIGTERM: ended by a signal at once",
          code in (-signal.SIGINT, -signal.SIGTERM) and secs < 5,
          "exit %s after %.2f s" % (code, secs))
    fsck_clean(image, "db_bench second signal")


def main():
    work = tempfile.mkdtemp(prefix="zonelab-interrupt-")
    try:
        kv_tests(work)
        if DB_BENCH is None:
            print("db_bench not found (Debian package rocksdb-tools): its checks are skipped")
        else:
            db_bench_tests(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
