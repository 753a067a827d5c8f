#!/usr/bin/env python3
"""RocksDB's own tools on zonelab://, where they lean on the FileSystem
contract (docs/rocksdb.md, "The FileSystem contract"): stock db_bench fills
a database; stock `ldb checkpoint` builds a checkpoint (a directory made as
"dir.tmp", tables linked, the rest copied, the directory renamed into place);
the checkpoint opens with ldb and db_bench and holds every key; a second
checkpoint to the same place is refused; `zonelab fs fsck` finds the file
system clean. Each run works in a private temporary directory (the image,
its statistics, TEST_TMPDIR for the tools).

usage: rocksdb_contract_test.py PLUGIN.so ZONELAB [LDB] [DB_BENCH]
Prints one line per failed check and "N passed, N failed" at the end."""

import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

PLUGIN = os.path.abspath(sys.argv[1])
ZONELAB = os.path.abspath(sys.argv[2])
LDB = sys.argv[3] if len(sys.argv) > 3 else shutil.which("ldb")
DB_BENCH = sys.argv[4] if len(sys.argv) > 4 else shutil.which("db_bench")
NUM = 20000
checks = Checks()
check = checks.check


def run(cmd, work, timeout=300):
    env = dict(os.environ, LD_PRELOAD=PLUGIN, TEST_TMPDIR=work)
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)


def tail(p, chars=1500):
    return "\n" + (p.stdout + p.stderr)[-chars:]


def db_bench(uri, work, *args):
    return run([DB_BENCH, "--fs_uri=" + uri, "--num=%d" % NUM, "--compression_type=none",
                "--write_buffer_size=%d" % (1 << 20), "--target_file_size_base=%d" % (2 << 20),
                "--stats_per_interval=0", "--histogram=0"] + list(args), work)


def ldb(uri, work, db, *args):
    return run([LDB, "--fs_uri=" + uri, "--db=" + db] + list(args), work)


def found(out, name):
    m = re.search(r"^%s\s*:.*\((\d+) of (\d+) found\)" % re.escape(name), out, re.M)
    return (int(m.group(1)), int(m.group(2))) if m else None


def main():
    if LDB is None or DB_BENCH is None:
        print("ldb or db_bench not found (Debian package rocksdb-tools)")
        return 1
    work = tempfile.mkdtemp(prefix="zonelab-rocksdb-contract-")
    try:
        image = os.path.join(work, "dev.img")
        uri = "zonelab://%s?timing=off&pacing=sleep" % image
        p = db_bench(uri + "&create=small", work, "--db=/db", "--benchmarks=fillseq")
        check("db_bench fills /db (exit 0)", p.returncode == 0, tail(p))

        p = ldb(uri, work, "/db", "checkpoint", "--checkpoint_dir=/ckpt")
        check("ldb checkpoint on zonelab:// (exit 0)", p.returncode == 0, tail(p))
        p = ldb(uri, work, "/db", "checkpoint", "--checkpoint_dir=/ckpt")
        check("a second checkpoint to the same directory is refused",
              p.returncode != 0 and "exists" in (p.stdout + p.stderr), tail(p))

        p = run([ZONELAB, "fs", "ls", image, "/"], work)
        names = p.stdout.split()
        check("the checkpoint has its name and no staging directory left",
              p.returncode == 0 and "ckpt/" in names and "ckpt.tmp/" not in names, tail(p))
        p = run([ZONELAB, "fs", "ls", image, "/ckpt"], work)
        listing = p.stdout.split()
        check("the checkpoint holds CURRENT, a manifest and tables",
              p.returncode == 0 and "CURRENT" in listing and
              any(n.startswith("MANIFEST-") for n in listing) and
              any(n.endswith(".sst") for n in listing), tail(p))

        p = ldb(uri, work, "/ckpt", "dump", "--count_only")
        m = re.search(r"Keys in range: (\d+)", p.stdout)
        check("ldb reads every key of the checkpoint",
              p.returncode == 0 and m is not None and int(m.group(1)) == NUM, tail(p))
        p = ldb(uri, work, "/ckpt", "checkconsistency")
        check("the checkpoint is consistent (ldb checkconsistency)",
              p.returncode == 0 and "OK" in p.stdout, tail(p))
        p = db_bench(uri, work, "--db=/ckpt", "--use_existing_db=1", "--benchmarks=readrandom",
                     "--reads=%d" % NUM, "--verify_checksum=1")
        got = found(p.stdout, "readrandom")
        check("db_bench finds every key in the checkpoint",
              p.returncode == 0 and got == (NUM, NUM), "found %s%s" % (got, tail(p)))
        # The database it came from goes on, apart from its checkpoint.
        p = db_bench(uri, work, "--db=/db", "--use_existing_db=1", "--benchmarks=overwrite")
        check("the source database takes writes after the checkpoint", p.returncode == 0, tail(p))
        p = ldb(uri, work, "/ckpt", "dump", "--count_only")
        m = re.search(r"Keys in range: (\d+)", p.stdout)
        check("the checkpoint still opens after its source changed",
              p.returncode == 0 and m is not None and int(m.group(1)) == NUM, tail(p))

        p = run([ZONELAB, "fs", "fsck", image], work)
        check("zonelab fs fsck finds the file system clean",
              p.returncode == 0 and "clean" in p.stdout, tail(p))
        check("nothing of the databases on the host",
              not os.path.exists(os.path.join(work, "dbbench")) and
              not os.path.exists("/db/CURRENT") and not os.path.exists("/ckpt/CURRENT"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    checks.finish()


if __name__ == "__main__":
    sys.exit(main())
