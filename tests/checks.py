"""The reporting the end-to-end Python checks share: one line per failed
check, "N passed, N failed" at the end, exit status 1 on any failure
(Checks); or every check on a line of its own (CheckLines)."""

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
