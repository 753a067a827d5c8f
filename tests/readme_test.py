#!/usr/bin/env python3
"""Runs README.md's first session exactly as printed, in a scratch directory:
each `$ zonelab ...` line runs with the zonelab under test, and the lines
printed after it must come out, in order ("..." stands for any lines). A
command may fail only where the session shows a device error.

usage: readme_test.py path/to/zonelab [README.md]"""
import os
import shlex
import subprocess
import sys
import tempfile


def session(readme):
    text = open(readme, encoding="utf-8").read()
    start = text.index("## A first session")
    block = text[text.index("```\n", start) + 4:]
    block = block[:block.index("```")]
    steps = []
    for line in block.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def matches(expected, got):
    """The expected lines appear in `got` in order; '...' skips any lines."""
    i = 0
    for want in expected:
        if want == "...":
            continue
        while i < len(got) and got[i] != want:
            i += 1
        if i == len(got):
            return False
        i += 1
    return True


def main():
    zonelab = os.path.abspath(sys.argv[1])
    readme = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
    steps = session(readme)
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="zonelab-readme-") as work:
        for command, expected in steps:
            words = shlex.split(command)
            assert words[0] == "zonelab", command
            run = subprocess.run([zonelab, *words[1:]], cwd=work, capture_output=True, text=True,
                                 timeout=120)
            got = run.stdout.splitlines()
            device_error = any("INVALID_WRITE" in line or "ZONE_IS" in line for line in expected)
            ok_exit = run.returncode == (3 if device_error else 0)
            # Without "...", the output is exactly what is printed.
            exact = "..." not in expected
            ok_out = got == expected if exact else matches(expected, got)
            if ok_exit and ok_out:
                passed += 1
            else:
                failed += 1
                print(f"FAIL: $ {command}\n  exit {run.returncode}\n  got:\n    "
                      + "\n    ".join(got) + "\n  stderr: " + run.stderr.strip())
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed == len(steps) and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
