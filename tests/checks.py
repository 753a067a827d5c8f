"""The reporting the end-to-end Python checks share: one line per failed
check, "N passed, N failed" at the end, exit status 1 on any failure."""

import csv
import hashlib
import sys


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
        if ok:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL: {name} {detail}")

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(0 if self.failed == 0 else 1)
