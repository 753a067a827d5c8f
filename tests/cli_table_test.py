#!/usr/bin/env python3
"""The command line as a table: every row of tests/cli_cases.txt is a command,
the exit code it must end with, and a pattern its first line of output must
match (stderr's when it fails with a message there, stdout's otherwise).

    cli_table_test.py path/to/zonelab [cases.txt]

Each row runs in a scratch directory holding `dev.img` (a fresh `small`
image) and `blk.img` (a block-interface one), through /bin/sh, with $Z the
zonelab binary and $SRC the source tree. Prints one line per failed row and
"N passed, N failed".
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 60


def parse(path):
    cases = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split(" | ", 2)
            if len(parts) != 3:
                sys.exit(f"{path}:{number}: expected 'EXIT | PATTERN | COMMAND'")
            exit_code, pattern, command = (p.strip() for p in parts)
            cases.append((number, int(exit_code), re.compile(pattern), command))
    return cases


def first_line(text):
    return text.split("\n", 1)[0]


def main():
    zonelab = os.path.abspath(sys.argv[1])
    src = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cases_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(src, "tests", "cli_cases.txt")
    cases = parse(cases_path)
    template = tempfile.mkdtemp(prefix="zonelab-cli-table-")
    try:
        for name, extra in (("dev.img", []), ("blk.img", ["--set", "interface=block"])):
            subprocess.run([zonelab, "create", os.path.join(template, name), "--preset", "small",
                            *extra], check=True, stdout=subprocess.DEVNULL)
        passed = failed = 0
        env = dict(os.environ, Z=zonelab, SRC=src)
        for number, want_exit, pattern, command in cases:
            work = tempfile.mkdtemp(prefix="case-", dir=template)
            for name in ("dev.img", "blk.img"):  # sparse: 4 GiB images, mostly holes
                subprocess.run(["cp", "--sparse=always", os.path.join(template, name),
                                os.path.join(work, name)], check=True)
            try:
                run = subprocess.run(command, shell=True, cwd=work, env=env, capture_output=True,
                                     text=True, errors="replace", timeout=TIMEOUT_S)
                code, out, err = run.returncode, run.stdout, run.stderr
            except subprocess.TimeoutExpired:
                code, out, err = "timeout", "", ""
            line = first_line(err if code != 0 and err.strip() else out)
            ok = code == want_exit and pattern.search(line) is not None
            if code != 0 and code != "timeout" and len(err.strip().split("\n")) > 1 \
                    and err.startswith("zonelab: error"):
                ok = False  # an error is one line
                line = f"{len(err.strip().splitlines())} lines on stderr: {err.strip()!r}"
            if ok:
                passed += 1
            else:
                failed += 1
                print(f"FAIL line {number}: {command}\n  exit {code} (want {want_exit}); "
                      f"first line {line!r} (want /{pattern.pattern}/)")
            shutil.rmtree(work, ignore_errors=True)
        print(f"{passed} passed, {failed} failed")
        return 0 if failed == 0 and passed > 0 else 1
    finally:
        shutil.rmtree(template, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
