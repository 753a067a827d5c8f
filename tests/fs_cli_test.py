#!/usr/bin/env python3
"""The zoned file system from the command line, end to end: mkfs, a host tree
restored (empty, small and multi-MiB files, nested directories), listed, read
back with cat, backed up and compared byte for byte; fsck and df; read-only
commands that leave the image file byte-identical; a superblock corrupted in
the image file (fsck reports it, every other command refuses in one line);
and a restore larger than the device, which ends with "no space" and exit 3.

usage: fs_cli_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import filecmp
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, file_sha256 as sha256  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
checks = Checks()
check = checks.check

# A 64 MiB device: 16 zones of 4 MiB (2 for metadata), quick to hash.
DEVICE = ["--preset", "small", "--set", "zns.zone_count=16", "--set", "zns.zone_capacity=4MiB"]
# A 6 MiB device for the restore that does not fit.
TINY = ["--preset", "small", "--set", "zns.zone_count=8", "--set", "zns.zone_capacity=1MiB",
        "--set", "zns.max_open=4", "--set", "zns.max_active=5"]


def zonelab(*args):
    return subprocess.run([ZONELAB, *args], capture_output=True, timeout=60)


def one_error_line(run):
    """The command failed with exactly one "zonelab: error:" line on stderr."""
    lines = [line for line in run.stderr.decode(errors="replace").splitlines()
             if not line.startswith("zonelab: note:")]
    return len(lines) == 1 and lines[0].startswith("zonelab: error: ")


def make_tree(root):
    """Files of every shape, keyed by their path in the file system."""
    rng = random.Random(7)
    files = {
        "empty": b"",
        "one": b"x",
        "small.txt": b"hello, zoned world\n",
        "block": bytes(rng.getrandbits(8) for _ in range(4096)),
        "a/odd.bin": bytes(rng.getrandbits(8) for _ in range(12345)),
        "a/b/c/deep": b"deep\n" * 100,
        "a/b/several-mib": rng.randbytes(5 * 1024 * 1024 + 17),
        "z/three-mib": rng.randbytes(3 * 1024 * 1024),
    }
    for relative, data in files.items():
        path = os.path.join(root, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    os.makedirs(os.path.join(root, "a", "empty-dir"))
    os.symlink("/etc/passwd", os.path.join(root, "a", "link"))
    return files


def check_tree_round_trip(work, image):
    host = os.path.join(work, "host")
    files = make_tree(host)
    run = zonelab("fs", "restore", image, host, "--json")
    check("restore exits 0", run.returncode == 0, run.stderr[-300:])
    if run.returncode != 0:
        return files
    out = json.loads(run.stdout)
    check("restore counts the files", out["files"] == len(files), out)
    check("restore counts the directories (a, a/b, a/b/c, a/empty-dir, z)",
          out["directories"] == 5, out)
    check("restore skips the symlink", out["skipped"] == ["a/link"], out)
    check("restore notes the skipped symlink", b"a/link: a symlink, skipped" in run.stderr)

    run = zonelab("fs", "ls", image, "-R", "--json")
    listed = {e["name"]: e for e in json.loads(run.stdout)["entries"]} if run.returncode == 0 else {}
    check("ls -R lists every file", all(name in listed for name in files), sorted(listed))
    check("ls -R gives each file's size",
          all(listed.get(n, {}).get("size") == len(d) for n, d in files.items()))
    check("ls -R lists the empty directory", listed.get("a/empty-dir", {}).get("type") == "dir")
    check("ls -R leaves out the symlink", "a/link" not in listed)

    for name, data in files.items():
        run = zonelab("fs", "cat", image, name)
        check(f"cat {name} gives its bytes", run.returncode == 0 and run.stdout == data,
              f"exit {run.returncode}, {len(run.stdout)} of {len(data)} bytes")

    backup = os.path.join(work, "backup")
    run = zonelab("fs", "backup", image, backup)
    check("backup exits 0", run.returncode == 0, run.stderr[-300:])
    os.unlink(os.path.join(host, "a", "link"))  # the one thing not copied
    same = trees_equal(filecmp.dircmp(host, backup))
    check("backup is the host tree, byte for byte", same,
          "" if same else subprocess.run(["diff", "-r", host, backup], capture_output=True,
                                         text=True, errors="replace").stdout[-500:])
    return files


def trees_equal(compared):
    """Same names everywhere, and every file's bytes the same."""
    if compared.left_only or compared.right_only or compared.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(compared.left, compared.right, compared.common_files,
                                           shallow=False)
    if mismatch or errors:
        return False
    return all(trees_equal(sub) for sub in compared.subdirs.values())


def check_df_and_fsck(image, files):
    run = zonelab("fs", "fsck", image)
    check("fsck of the restored tree exits 0", run.returncode == 0, run.stdout + run.stderr)
    run = zonelab("fs", "df", image, "--json")
    check("df --json exits 0", run.returncode == 0, run.stderr)
    if run.returncode != 0:
        return
    df = json.loads(run.stdout)
    for field in ("free_bytes", "used_bytes", "reclaimable_bytes", "write_amplification",
                  "data_zones", "empty_zones", "active_zones", "lost_bytes", "files",
                  "file_bytes"):
        check(f"df --json has {field}", field in df, df)
    check("df counts the files", df.get("files") == len(files), df)
    check("df sums the files' sizes", df.get("file_bytes") == sum(map(len, files.values())), df)
    check("df: 14 data zones", df.get("data_zones") == 14, df)
    parts = sum(df.get(k, 0) for k in ("free_bytes", "used_bytes", "reclaimable_bytes",
                                       "lost_bytes"))
    check("df: free + used + reclaimable + lost is the data zones' size",
          parts == df.get("size_bytes"), df)
    check("df: files hold at least their bytes", df.get("used_bytes", 0) >= df["file_bytes"], df)
    check("df: write amplification of at least 1", df.get("write_amplification", 0) >= 1.0, df)


def check_read_only(work, image):
    before = sha256(image)
    commands = [["ls", image, "-R", "-l"], ["ls", image, "/a", "--json"],
                ["stat", image, "a/b/several-mib", "--json"], ["cat", image, "/small.txt"],
                ["df", image], ["fsck", image, "--json"], ["dump", image, "--json"],
                ["backup", image, os.path.join(work, "backup-2")]]
    for args in commands:
        run = zonelab("fs", *args)
        check(f"fs {args[0]} exits 0", run.returncode == 0, run.stderr[-300:])
    check("read-only commands leave the image byte-identical", sha256(image) == before)


def data_offset(image):
    """Where LBA 0 lives in the image file (docs/image-format.md, Header)."""
    with open(image, "rb") as f:
        header = f.read(40)
    return struct.unpack_from("<Q", header, 24)[0]


def check_corrupt_superblock(work, image):
    broken = os.path.join(work, "broken.img")
    shutil.copyfile(image, broken)
    # Zone 0's first block holds the metadata header; the superblock sits
    # 32 bytes in (magic, version, length, sequence, next file id).
    with open(broken, "r+b") as f:
        f.seek(data_offset(broken) + 32 + 24)
        flipped = bytes(b ^ 0xFF for b in f.read(8))
        f.seek(-8, os.SEEK_CUR)
        f.write(flipped)
    before = sha256(broken)
    run = zonelab("fs", "fsck", broken)
    check("fsck of a corrupt superblock exits 2 or 3", run.returncode in (2, 3), run.returncode)
    check("fsck says why", b"checksum mismatch" in run.stdout + run.stderr, run.stderr)
    check("fsck's error is one line", one_error_line(run), run.stderr)
    for args in (["ls", broken], ["df", broken, "--json"], ["cat", broken, "/one"]):
        run = zonelab("fs", *args)
        check(f"fs {args[0]} refuses a corrupt superblock with exit 2", run.returncode == 2,
              run.returncode)
        check(f"fs {args[0]} refuses in one line", one_error_line(run), run.stderr)
    check("refusals leave the corrupt image as it was", sha256(broken) == before)


def check_no_space(work):
    tiny = os.path.join(work, "tiny.img")
    zonelab("create", tiny, *TINY)
    zonelab("mkfs", tiny)
    host = os.path.join(work, "too-much")
    os.makedirs(host)
    for i in range(8):  # 12 MB for 6 MiB of data zones
        with open(os.path.join(host, f"f{i}"), "wb") as f:
            f.write(os.urandom(1500 * 1000))
    run = zonelab("fs", "restore", tiny, host)
    check("a restore larger than the device exits 3", run.returncode == 3, run.returncode)
    check("it says there is no space", b"no space" in run.stderr, run.stderr)
    check("its error is one line", one_error_line(run), run.stderr)
    run = zonelab("fs", "fsck", tiny)
    check("the full file system is still clean", run.returncode == 0, run.stdout + run.stderr)
    run = zonelab("fs", "ls", tiny, "--json")
    names = [e["name"] for e in json.loads(run.stdout)["entries"]] if run.returncode == 0 else []
    check("the files that fit are whole", names and all(
        zonelab("fs", "cat", tiny, n).stdout == open(os.path.join(host, n), "rb").read()
        for n in names), names)


with tempfile.TemporaryDirectory(prefix="zonelab-fs-cli-") as work:
    image = os.path.join(work, "dev.img")
    run = zonelab("create", image, *DEVICE)
    check("create exits 0", run.returncode == 0, run.stderr)
    run = zonelab("mkfs", image, "--uuid-seed", "5", "--json")
    check("mkfs exits 0", run.returncode == 0, run.stderr)
    if run.returncode == 0:
        check("mkfs: 14 data zones", json.loads(run.stdout)["data_zones"] == 14, run.stdout)
        tree = check_tree_round_trip(work, image)
        check_df_and_fsck(image, tree)
        check_read_only(work, image)
        check_corrupt_superblock(work, image)
    check_no_space(work)

checks.finish()
