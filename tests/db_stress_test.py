#!/usr/bin/env python3
"""RocksDB's own stress test, db_stress (built from Debian's rocksdb 7.8.3
source against the shared librocksdb.so by scripts/build-db-stress.sh), on
zonelab:// with the plugin preloaded. Four parts, each in a private
temporary directory:

  posix     a short db_stress run on the host's file system, so that a
            failure below is told from one of db_stress itself;
  features  db_stress on a fresh image with reopens, checkpoints, backups
            and restores, external file ingestion, manual flushes and
            compactions, CompactFiles, GetLiveFiles, SetOptions and
            snapshots; it must verify every key against its expected state,
            and the database's LOG must show that each of those happened. A
            second process then reopens the database and verifies it again.
            Four column families: a checkpoint then flushes each with file
            deletions disabled and RocksDB holds a dozen idle write-ahead
            logs open, each with a zone of its own, so the file system must
            take their tokens back for the other writers;
  columns   4 column families with reopens, backups and ingestion;
  kills     db_crashtest's blackbox loop: db_stress started on one database
            over and over, killed with SIGKILL at a random instant once it
            has verified the database and started its operations. A kill
            loses what the process held unsynced, so these runs use
            --sync_fault_injection=1: RocksDB traces every write and accepts
            a recovered database at any point of the trace. After every
            kill `zonelab fs fsck` must find the file system clean, and the
            next start must pass RocksDB's crash-recovery verification; a
            last run goes to its end and verifies the whole database.

When the features part fails, a copy of its image is opened with ldb
(RocksDB's consistency check, every column family scanned for keys out of
order) and what it finds is printed, so that a failure inside the process
is told from a database damaged on the device.

fsck's database check reports a backup's private directory (its MANIFEST
names tables kept in the backup's shared/ directory) and, after a kill, the
half-made copy of a checkpoint or restore as databases RocksDB does not
open; those problems are counted and printed apart, not failed.

usage: db_stress_test.py ZONELAB PLUGIN [--kill-seconds S] [--min-kills N]
                         [--seed S] [--db-stress PATH]
"""
import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import CheckLines  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_SCRIPT = os.path.join(os.path.dirname(HERE), "scripts", "build-db-stress.sh")
# fsck problems that are not damage: a backup's private directory, and (after
# a kill) the half-made copy a backup, checkpoint or restore was writing.
SCRATCH_CLEAN = re.compile(r"^database \S*/\.backup\d+/private/\d+: RocksDB does not open it")
SCRATCH_KILLED = re.compile(r"^database \S*/\.(backup\d+/private/\d+(\.tmp)?|restore\d+|"
                            r"checkpoint\d+\.tmp): RocksDB does not open it")
DB = "/dbstress"
# Small memtables and tables, so that flushes and compactions run all the time;
# the database lives on from one process to the next (db_stress destroys it
# at start by default).
SMALL_LSM = ["--destroy_db_initially=0", "--write_buffer_size=262144", "--target_file_size_base=524288",
             "--max_bytes_for_level_base=2097152", "--value_size_mult=8",
             "--clear_column_family_one_in=0", "--verify_checksum=1"]
# Several column families where checkpoints run: a checkpoint's flushes
# (with file deletions disabled) leave RocksDB holding a dozen idle WALs
# open, each with a zone, more than the device's active zones.
ONE_CF = ["--column_families=1"]
SEVERAL_CF = ["--column_families=4"]
LINES = CheckLines(tail=True)
check = LINES.check
failures = LINES.failures
known_seen = []


def db_stress_binary(given):
    if given:
        return os.path.abspath(given)
    p = subprocess.run([BUILD_SCRIPT], stdout=subprocess.PIPE, text=True, timeout=3600)
    if p.returncode != 0:
        return None
    return p.stdout.strip().splitlines()[-1]


def new_image(zonelab, path):
    for cmd in (["create", path, "--preset", "small"], ["mkfs", path]):
        p = subprocess.run([zonelab] + cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != 0:
            raise RuntimeError("zonelab %s: %s" % (cmd[0], p.stdout + p.stderr))


def fsck(zonelab, image, what, killed):
    """zonelab fs fsck; clean but for the known scratch directories."""
    p = subprocess.run([zonelab, "fs", "fsck", image, "--json"], capture_output=True, text=True,
                       timeout=300)
    try:
        report = json.loads(p.stdout)
    except ValueError:
        check("fsck %s" % what, False, p.stdout + p.stderr)
        return
    scratch = SCRATCH_KILLED if killed else SCRATCH_CLEAN
    problems = report.get("problems", [])
    unknown = [x for x in problems if not scratch.match(x)]
    known_seen.extend(x for x in problems if scratch.match(x))
    main_db = [d for d in report.get("databases", []) if d.get("dir") == DB]
    opens = all(d.get("opened") for d in main_db)
    ok = (p.returncode == 0 or (problems and not unknown)) and opens
    check("fsck %s" % what, ok, p.stdout + p.stderr)


def run(work, name, cmd, env, timeout):
    """Runs db_stress with its output in WORK/NAME.out (kept on failure);
    returns the exit code and the output without the progress lines."""
    path = os.path.join(work, name + ".out")
    with open(path, "w") as out:
        p = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work,
                           timeout=timeout)
    return p.returncode, quiet(open(path, errors="replace").read())


def quiet(text):
    """db_stress's output less its '... finished N ops' progress."""
    return re.sub(r"\.\.\. finished \d+ ops *", "", text)


def stress_cmd(db_stress, image, expected, args):
    uri = "zonelab://%s?timing=off&pacing=sleep" % image
    return [db_stress, "--fs_uri=" + uri, "--db=" + DB, "--expected_values_dir=" + expected] + args


def log_events(zonelab, image):
    """The database's info logs (LOG and LOG.old.*), read out of the image."""
    p = subprocess.run([zonelab, "fs", "ls", image, DB], capture_output=True, text=True,
                       timeout=60)
    text = ""
    for name in p.stdout.split():
        if name.startswith("LOG"):
            q = subprocess.run([zonelab, "fs", "cat", image, DB + "/" + name],
                               capture_output=True, text=True, errors="replace", timeout=60)
            text += q.stdout
    return text


def posix_part(db_stress, work, env):
    db = os.path.join(work, "posix-db")
    expected = os.path.join(work, "posix-expected")
    os.mkdir(expected)
    started = time.monotonic()
    rc, out = run(work, "posix", [db_stress, "--db=" + db, "--expected_values_dir=" + expected,
                                  "--max_key=10000", "--threads=4", "--ops_per_thread=1000",
                                  "--reopen=2", "--checkpoint_one_in=500", "--backup_one_in=1000",
                                  "--ingest_external_file_one_in=500"] + SMALL_LSM + ONE_CF,
                  env, 300)
    check("posix: db_stress verifies (exit %d, %.0f s)" % (rc, time.monotonic() - started),
          rc == 0 and "Verification successful" in out, out)


def disk_state(image, plugin, work):
    """After a failed run: is the database on the image consistent? A copy
    of the image is opened with ldb (RocksDB's consistency check, and every
    column family scanned for keys out of order), so that a failure inside
    the process is told from damage on the device."""
    ldb = shutil.which("ldb")
    if ldb is None:
        return "ldb not found"
    copy = os.path.join(work, "after-failure.img")
    subprocess.run(["cp", "--sparse=always", image, copy], check=True, timeout=300)
    env = dict(os.environ, LD_PRELOAD=plugin)
    base = [ldb, "--fs_uri=zonelab://%s?timing=off" % copy, "--db=" + DB]

    def ldb_run(*args):
        return subprocess.run(base + list(args), capture_output=True, text=True, env=env,
                              errors="replace", timeout=300)

    said = []
    p = ldb_run("checkconsistency")
    lines = (p.stdout + p.stderr).strip().splitlines()
    said.append("checkconsistency: " + (lines[-1] if lines else "(nothing)"))
    p = ldb_run("list_column_families")
    names = re.findall(r"[^{},\s]+", p.stdout.split("{", 1)[-1]) if "{" in p.stdout else []
    for cf in names:
        q = ldb_run("--column_family=" + cf, "--hex", "scan")
        keys = [line.split(" ", 1)[0] for line in q.stdout.splitlines() if line.startswith("0x")]
        # Hex keeps the bytewise order of db_stress's comparator.
        ordered = all(a < b for a, b in zip(keys, keys[1:]))
        said.append("%s: %d keys%s%s" % (cf, len(keys), ", in order" if ordered else
                                        ", OUT OF ORDER", "" if q.returncode == 0 else
                                        " (ldb exit %d)" % q.returncode))
    os.unlink(copy)
    return "; ".join(said)


def features_part(db_stress, zonelab, plugin, work, env):
    image = os.path.join(work, "features.img")
    expected = os.path.join(work, "features-expected")
    os.mkdir(expected)
    new_image(zonelab, image)
    env = dict(env, LD_PRELOAD=plugin)
    args = ["--max_key=20000", "--threads=4", "--ops_per_thread=4000", "--reopen=4",
            "--checkpoint_one_in=800", "--backup_one_in=1500",
            "--ingest_external_file_one_in=400", "--flush_one_in=500",
            "--compact_range_one_in=800", "--compact_files_one_in=800",
            "--get_live_files_one_in=500", "--set_options_one_in=800",
            "--acquire_snapshot_one_in=300", "--verify_db_one_in=2000"] + SMALL_LSM + SEVERAL_CF
    started = time.monotonic()
    rc, out = run(work, "features", stress_cmd(db_stress, image, expected, args), env, 600)
    check("zonelab://: db_stress with reopens, checkpoints, backups, ingestion verifies "
          "(exit %d, %.0f s)" % (rc, time.monotonic() - started),
          rc == 0 and "Verification successful" in out, out)
    if rc != 0:
        print("      the database on the image after the failure: " +
              disk_state(image, plugin, work), flush=True)
    check("zonelab://: no errors counted", "Got errors 0 times" in out, out[-2000:])
    reopens = len(re.findall(r"Reopening database for the \d+th time", out))
    check("zonelab://: %d reopens" % reopens, reopens == 4, out[-2000:])
    log = log_events(zonelab, image)
    events = {
        "checkpoints": log.count("Snapshot DONE"),
        "backups": log.count("Backup DONE"),
        "restores": len(re.findall(r"Restor(ing|e)", log)),
        "ingested files": log.count("ingest_finished"),
        "manual compactions": log.count("[CompactRange]") + log.count("Manual compaction"),
    }
    print("      LOG: " + ", ".join("%s %d" % kv for kv in events.items()))
    for name in ("checkpoints", "backups", "ingested files"):
        check("zonelab://: LOG shows %s" % name, events[name] > 0)
    fsck(zonelab, image, "after the run with checkpoints and backups", killed=False)

    rc, out = run(work, "features-reopen",
                  stress_cmd(db_stress, image, expected,
                             ["--max_key=20000", "--threads=2", "--ops_per_thread=200",
                              "--reopen=0"] + SMALL_LSM + SEVERAL_CF), env, 300)
    check("zonelab://: a new process verifies the database",
          rc == 0 and "Verification successful" in out, out)
    fsck(zonelab, image, "after the second process", killed=False)


def column_families_part(db_stress, zonelab, plugin, work, env):
    image = os.path.join(work, "column-families.img")
    expected = os.path.join(work, "column-families-expected")
    os.mkdir(expected)
    new_image(zonelab, image)
    env = dict(env, LD_PRELOAD=plugin)
    args = ["--max_key=20000", "--threads=4", "--ops_per_thread=4000", "--reopen=4",
            "--column_families=4", "--backup_one_in=1500", "--ingest_external_file_one_in=400",
            "--flush_one_in=500", "--compact_range_one_in=800", "--compact_files_one_in=800",
            "--get_live_files_one_in=500", "--acquire_snapshot_one_in=300"] + SMALL_LSM
    started = time.monotonic()
    rc, out = run(work, "column-families", stress_cmd(db_stress, image, expected, args), env, 600)
    check("zonelab://: 4 column families with reopens, backups, ingestion verify "
          "(exit %d, %.0f s)" % (rc, time.monotonic() - started),
          rc == 0 and "Verification successful" in out and "Got errors 0 times" in out, out)
    fsck(zonelab, image, "after the run with 4 column families", killed=False)


def kill_round_args(rng):
    """Options db_crashtest.py draws per run, where they matter here."""
    disable_wal = rng.choice([0, 0, 0, 1])
    args = ["--disable_wal=%d" % disable_wal,
            "--manual_wal_flush_one_in=%d" % rng.choice([0, 0, 1000]),
            "--compression_type=" + rng.choice(["none", "snappy", "lz4", "zstd"]),
            "--wal_compression=" + rng.choice(["none", "zstd"])]
    if disable_wal:
        args += ["--atomic_flush=1", "--sync=0"]
    return args


def wait_for(path, text, proc, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        with open(path, errors="replace") as f:
            if text in f.read():
                return True
        time.sleep(0.1)
    return False


def kills_part(db_stress, zonelab, plugin, work, env, rng, seconds, min_kills):
    image = os.path.join(work, "kills.img")
    expected = os.path.join(work, "kills-expected")
    os.mkdir(expected)
    new_image(zonelab, image)
    env = dict(env, LD_PRELOAD=plugin)
    base = ["--max_key=50000", "--threads=4", "--reopen=0", "--sync_fault_injection=1",
            "--checkpoint_one_in=3000", "--backup_one_in=6000", "--flush_one_in=3000",
            "--compact_range_one_in=3000", "--acquire_snapshot_one_in=1000"] + SMALL_LSM + SEVERAL_CF
    started = time.monotonic()
    kills = 0
    verified = 0
    replays = 0
    while kills < min_kills or time.monotonic() - started < seconds:
        if kills >= 4 * min_kills:
            break
        round_args = kill_round_args(rng)
        out_path = os.path.join(work, "kill-%d.out" % kills)
        with open(out_path, "w") as out:
            proc = subprocess.Popen(stress_cmd(db_stress, image, expected,
                                               base + round_args + ["--ops_per_thread=100000000"]),
                                    stdout=out, stderr=subprocess.STDOUT, env=env, cwd=work)
            running = wait_for(out_path, "Starting database operations", proc, 120)
            if running:
                time.sleep(rng.uniform(0.5, 4.0))
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=60)
        text = quiet(open(out_path, errors="replace").read())
        if proc.returncode != -signal.SIGKILL or not running:
            check("kill %d: db_stress ran until killed (%s)" % (kills, " ".join(round_args)),
                  False, text[-3000:])
            return
        kills += 1
        if kills > 1:
            verified += "Crash-recovery verification passed" in text
        replays += "replayed" in text
        fsck(zonelab, image, "after kill %d (%s)" % (kills, " ".join(round_args)), killed=True)
    check("kills: %d restarts passed crash-recovery verification" % verified,
          verified == kills - 1)
    rc, out = run(work, "kills-last",
                  stress_cmd(db_stress, image, expected,
                             base + kill_round_args(rng) + ["--ops_per_thread=2000"]), env, 300)
    check("kills: a last run recovers, runs to its end and verifies",
          rc == 0 and "Crash-recovery verification passed" in out
          and "Verification successful" in out, out)
    fsck(zonelab, image, "at the end", killed=False)
    print("      %d kills in %.0f s; the file system replayed its journal at %d starts"
          % (kills, time.monotonic() - started, replays))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("zonelab")
    ap.add_argument("plugin")
    ap.add_argument("--kill-seconds", type=float, default=50)
    ap.add_argument("--min-kills", type=int, default=6)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--db-stress", help="a db_stress binary (default: build-db-stress.sh)")
    a = ap.parse_args()
    zonelab = os.path.abspath(a.zonelab)
    plugin = os.path.abspath(a.plugin)
    db_stress = db_stress_binary(a.db_stress)
    if db_stress is None:
        print("FAIL  scripts/build-db-stress.sh did not build db_stress")
        print("0 passed, 1 failed")
        return 1
    print("db_stress: %s; seed %d" % (db_stress, a.seed), flush=True)
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="zonelab-db-stress-")
    # db_stress's own temporary paths (RocksDB's test directory) stay here
    # too, not in a shared /tmp/rocksdbtest-UID.
    env = dict(os.environ, TEST_TMPDIR=work)
    started = time.monotonic()
    try:
        posix_part(db_stress, work, env)
        features_part(db_stress, zonelab, plugin, work, env)
        column_families_part(db_stress, zonelab, plugin, work, env)
        kills_part(db_stress, zonelab, plugin, work, env, rng, a.kill_seconds, a.min_kills)
    finally:
        if failures:
            print("work directory kept: " + work)
        else:
            shutil.rmtree(work, ignore_errors=True)
    if known_seen:
        print("known (not failed): fsck named %d scratch directories as databases RocksDB does "
              "not open, e.g. %s" % (len(known_seen), known_seen[0][:200]))
    print("seed %d, %.0f s" % (a.seed, time.monotonic() - started))
    for f in failures:
        print("FAIL: " + f)
    print("%d passed, %d failed" % (LINES.passed, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
