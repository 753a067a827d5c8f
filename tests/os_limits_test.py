#!/usr/bin/env python3
"""What the operating system refuses, answered in one line: a read-only image
file (read-only commands work on it, writers are refused and change nothing),
a read-only directory, a full file system (ENOSPC: the write fails, exit 2,
the image is unchanged and opens). Users and mounts need root: the user
parts run as `nobody` through setpriv, the full disk on a small tmpfs in a
private mount namespace (unshare); without root they are reported skipped.

usage: os_limits_test.py path/to/zonelab
"""
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import file_sha256 as digest  # noqa: E402

ZONELAB = os.path.abspath(sys.argv[1])
failures = []
skipped = []


def check(name, ok, detail=""):
    print(("ok    " if ok else "FAIL  ") + name)
    if not ok:
        failures.append(name)
        if detail:
            print("      " + detail[-1500:])


def one_line_error(p):
    err = p.stderr.strip()
    return err.startswith("zonelab: error:") and "\n" not in err


def as_nobody(*args, cwd):
    return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
                           ZONELAB, *args], cwd=cwd, capture_output=True, text=True)


def read_only_file_and_dir(work):
    os.chmod(work, 0o755)
    image = os.path.join(work, "ro.img")
    subprocess.run([ZONELAB, "create", image, "--preset", "small"], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([ZONELAB, "write", image, "--lba", "0", "--blocks", "8", "--seed", "3"],
                   check=True, stdout=subprocess.DEVNULL)
    os.chmod(image, 0o444)
    before = digest(image)
    for args in (["info", "ro.img"], ["report", "ro.img", "--limit", "2"],
                 ["read", "ro.img", "--lba", "0", "--blocks", "8", "--expect-seed", "3"]):
        p = as_nobody(*args, cwd=work)
        check("read-only image file: %s works" % args[0], p.returncode == 0, p.stderr)
    p = as_nobody("write", "ro.img", "--lba", "8", "--blocks", "1", cwd=work)
    check("read-only image file: write is refused in one line (exit 2)",
          p.returncode == 2 and one_line_error(p), p.stderr)
    check("read-only image file: unchanged", digest(image) == before)
    locked = os.path.join(work, "locked")
    os.mkdir(locked)
    os.chmod(locked, 0o555)
    p = as_nobody("create", os.path.join(locked, "new.img"), cwd=work)
    check("read-only directory: create is refused in one line (exit 2)",
          p.returncode == 2 and one_line_error(p), p.stderr)
    check("read-only directory: nothing left behind", os.listdir(locked) == [])


def full_disk(work):
    script = f"""
set -e
mount -t tmpfs -o size=24m zonelab-enospc {work}/mnt
cd {work}/mnt
{ZONELAB} create dev.img --preset small >/dev/null
# Fill the tmpfs behind the image's back, then write to the image.
head -c 20000000 /dev/zero > filler 2>/dev/null || true
set +e
{ZONELAB} write dev.img --lba 0 --blocks 1024 --seed 5 > ../out.txt 2> ../err.txt
echo "exit=$?" > ../result.txt
cat ../err.txt >> ../result.txt
# Output that cannot be written (stderr on the full disk) is no crash either.
{ZONELAB} write dev.img --lba 0 --blocks 1024 --seed 5 > out2.txt 2> err2.txt
echo "exit_unwritable=$?" >> ../result.txt
rm -f filler
{ZONELAB} report dev.img --limit 1 --json >> ../result.txt 2>&1
echo "report_exit=$?" >> ../result.txt
ls -a >> ../result.txt
"""
    os.mkdir(os.path.join(work, "mnt"))
    p = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True)
    if p.returncode != 0 and not os.path.exists(os.path.join(work, "result.txt")):
        skipped.append("full disk (%s)" % (p.stderr.strip().splitlines() or ["no unshare"])[-1])
        return
    result = open(os.path.join(work, "result.txt")).read()
    lines = result.splitlines()
    check("full disk: the write fails with exit 2", lines[0] == "exit=2", result)
    check("full disk: one line saying so",
          len(lines) > 1 and lines[1].startswith("zonelab: error:") and
          "No space left on device" in lines[1], result)
    check("full disk: output the disk cannot take is no crash (exit 2)",
          "exit_unwritable=2" in result, result)
    check("full disk: the image opens, the zone unchanged (empty)",
          "report_exit=0" in result and '"state":"empty"' in result, result)
    check("full disk: no temporary file left",
          not any(name.endswith(".tmp") or name.startswith(".zonelab") for name in lines), result)
    # (err2.txt and out2.txt are the redirections themselves, made by the shell.)


def main():
    if os.geteuid() != 0:
        print("skipped: needs root (setpriv, unshare, mount)")
        return 0
    work = tempfile.mkdtemp(prefix="zonelab-os-limits-")
    try:
        read_only_file_and_dir(work)
        full_disk(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for s in skipped:
        print("skipped: " + s)
    print("%d failed" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
