"""The reporting the end-to-end Python checks share: one line per failed
check, "N passed, N failed" at the end, exit status 1 on any failure
(Checks); or every check on a line of its own (CheckLines)."""

import csv
import hashlib
import json
import os
import re
import subprocess
import sys
import time

# The kinds every comparison row of an experiment states.
EVIDENCE_KINDS = {"fitted", "closed form", "emerged"}

# The production drive's front end on the block interface (docs/device-model.md,
# "The same front end on the block interface"), as `--set` pairs for the crash
# loops.
PRODUCTION_DRIVE = ["buffer.size=1MiB", "controller.cores=2", "controller.write=5us",
                    "controller.read=3us", "controller.map_update=1us", "controller.unmap=20ms",
                    "controller.read_dispatch=die", "flash.suspend.program=true",
                    "flash.suspend.latency=30us"]


def csv_rows(path):
    """A CSV file's rows as dictionaries keyed by its header."""
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def file_sha256(path):
    """The SHA-256 of a file's bytes, read a MiB at a time."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class Checks:
    def __init__(self):
        self.passed = 0
        self.failed = 0

    def check(self, name, ok, detail=""):
        """Counts the check; prints it when it failed; returns `ok`."""
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {name} {detail}", flush=True)
        return ok

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(0 if self.failed == 0 else 1)


class CheckLines:
    """Every check on a line of its own, "ok    NAME" or "FAIL  NAME", a
    failure's detail indented below it (its first `detail_chars`, or its
    last with tail=True); the failed names in `failures`."""

    def __init__(self, detail_chars=3000, tail=False):
        self.passed = 0
        self.failures = []
        self.detail_chars = detail_chars
        self.tail = tail

    def check(self, name, ok, detail=""):
        print(("ok    " if ok else "FAIL  ") + name, flush=True)
        if ok:
            self.passed += 1
            return
        self.failures.append(name)
        if detail:
            body = str(detail).replace("\n", "\n      ")
            body = body[-self.detail_chars:] if self.tail else body[:self.detail_chars]
            print("      " + body, flush=True)


def check_quick_set(checks, zonelab, name, members, out, budget_s):
    """Runs `zonelab experiment run NAME --quick --no-plots --out OUT` and
    checks what every set's quick run owes: exit 0 within `budget_s`, each
    member's CSV and JSON, the report, a kind on every comparison row, and
    no emerged number equal to the paper's (a paper number copied into the
    measured column would match it exactly; a closed-form count may).
    True when the run succeeded, so the set's own checks can read its
    files."""
    start = time.monotonic()
    run = subprocess.run([zonelab, "experiment", "run", name, "--quick", "--no-plots",
                          "--out", out], capture_output=True, text=True)
    took = time.monotonic() - start
    checks.check("quick run exits 0", run.returncode == 0, run.stderr[-800:])
    checks.check(f"quick run within {budget_s} s", took < budget_s, f"{took:.0f} s")
    if run.returncode != 0:
        return False
    for m in members:
        checks.check(f"{m}: CSV and JSON", os.path.exists(os.path.join(out, m + ".csv")) and
                     os.path.exists(os.path.join(out, m + ".json")))
    checks.check("a report", os.path.exists(os.path.join(out, "README.md")))
    for m in members:
        with open(os.path.join(out, m + ".json")) as f:
            doc = json.load(f)
        bad = [c["quantity"] for c in doc["comparison"] if c.get("kind") not in EVIDENCE_KINDS]
        checks.check(f"{m}: every comparison row states its kind", not bad, str(bad))
        same = [c["quantity"] for c in doc["comparison"] if c.get("kind") == "emerged"
                and c.get("paper") is not None and c["measured"] == c["paper"]]
        checks.check(f"{m}: no measured number is the paper's", not same, str(same))
    return True


# Mounts: what a test leaves mounted (a FUSE mount of a killed server) is
# found and unmounted before its directory goes.
def unescape_mount(path):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), path)


def mounts_under(root):
    found = []
    with open("/proc/mounts") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 2:
                continue
            point = unescape_mount(fields[1])
            if point == root or point.startswith(root + "/"):
                found.append(point)
    # Deepest first.
    return sorted(found, key=len, reverse=True)


def unmount_all(root):
    """Unmounts every mount under root; the mount points it unmounted."""
    done = []
    for point in mounts_under(root):
        r = subprocess.run(["fusermount3", "-u", "-z", point], capture_output=True, text=True)
        if r.returncode != 0:
            r = subprocess.run(["umount", "-l", point], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"warning: cannot unmount {point}: {r.stderr.strip()}", file=sys.stderr)
        else:
            done.append(point)
    return done
