#!/usr/bin/env python3
"""ConfZNS's parallelism observations (seed 002) in their quick form: every
file is written, two quick runs write the same bytes, and the speedups keep
the paper's shape -- threads on distinct small zones scale almost linearly,
threads in one small zone do not, a large zone scales part way, and an
async queue brings a large zone near its maximum with one thread. The
one-thread throughputs are checked against the configuration's arithmetic
(docs/experiments.md, "confzns").

usage: confzns_experiment_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, csv_rows as rows, file_sha256  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
EXPERIMENTS = ("intra_zone", "inter_zone", "sync_async", "request_size")
checks = Checks()
check = checks.check


def run(out):
    return subprocess.run(
        [ZONELAB, "experiment", "run", "confzns", "--quick", "--no-plots", "--out", out],
        capture_output=True, text=True)


def speedup(out, experiment, config, threads):
    for r in rows(os.path.join(out, experiment + ".csv")):
        if r["config"] == config and int(r["threads"]) == threads:
            return float(r["speedup"])
    raise KeyError((experiment, config, threads))


def within(name, value, low, high):
    check(f"{name} in [{low}, {high}]", low <= value <= high, f"{value:.3f}")


with tempfile.TemporaryDirectory() as first, tempfile.TemporaryDirectory() as second:
    a, b = run(first), run(second)
    check("quick run exits 0", a.returncode == 0, a.stderr[-400:])
    check("second quick run exits 0", b.returncode == 0, b.stderr[-400:])
    if a.returncode == 0 and b.returncode == 0:
        for name in EXPERIMENTS:
            for ext in ("csv", "json"):
                path = os.path.join(first, f"{name}.{ext}")
                check(f"{name}.{ext} written", os.path.isfile(path))
                if os.path.isfile(path):
                    check(f"{name}.{ext} is the same bytes twice",
                          file_sha256(path) == file_sha256(os.path.join(second, f"{name}.{ext}")))
        # The README names the directory it was written to, and only that differs.
        readmes = [open(os.path.join(d, "README.md")).read().replace(d, "OUT")
                   for d in (first, second)]
        check("README.md the same twice, but for its directory", readmes[0] == readmes[1])
        for name in EXPERIMENTS:
            doc = json.load(open(os.path.join(first, name + ".json")))
            check(f"{name} compares with the paper", len(doc["comparison"]) > 0)

        # Observation 3: one small zone is one unit; a large zone is 8.
        within("SU intra-zone speedup at 8 threads",
               speedup(first, "intra_zone", "SU (1-to-1)", 8), 1.0, 1.6)
        within("MU^8 intra-zone speedup at 8 threads",
               speedup(first, "intra_zone", "MU^8 (1-to-all)", 8), 2.0, 5.0)
        # Observation 4: a thread per small zone is a thread per unit.
        within("SU inter-zone speedup at 8 threads",
               speedup(first, "inter_zone", "SU (1-to-1)", 8), 6.0, 8.05)
        within("MU^8 inter-zone speedup at 8 threads",
               speedup(first, "inter_zone", "MU^8 (1-to-all)", 8), 2.0, 5.0)
        su_any = speedup(first, "inter_zone", "SU, threads anywhere in the 16 zones", 8)
        check("threads meeting on units scale less than a thread per zone",
              su_any < speedup(first, "inter_zone", "SU (1-to-1)", 8), f"{su_any:.3f}")
        # Workload sensitivity: 16 reads queued bring a large zone near its
        # maximum with one thread; small zones still gain a die per thread.
        mu_async = speedup(first, "sync_async", "MU^8, async (queue depth 16)", 8)
        within("MU^8 async speedup at 8 threads", mu_async, 1.0, 1.5)
        within("SU async speedup at 8 threads",
               speedup(first, "sync_async", "SU, async (queue depth 16)", 8), 4.0, 8.05)

        # The one-thread numbers are the configuration's arithmetic (tR 65 us,
        # a 48 KiB page's transfer 40.96 us, 2 us overhead, 3.94 GB/s link).
        link_128k_us = 131072 / 3940.0
        mean_su_us = 2 + link_128k_us + (
            (3 * 65 + 40.96 * 32 / 48) + (4 * 65 + 40.96 * 16 / 48) + (3 * 65 + 40.96)) / 3
        expected = {
            ("intra_zone", "SU (1-to-1)"): 131072 / mean_su_us,
            ("intra_zone", "MU^8 (1-to-all)"): 131072 / (2 + 65 + 40.96 + link_128k_us),
            ("sync_async", "SU, async (queue depth 16)"): 3 * 131072 / (10 * 65),
            ("sync_async", "MU^8, async (queue depth 16)"): 3 * 131072 / (2 * 65),
        }
        for (name, config), bytes_per_us in expected.items():
            mib_s = bytes_per_us * 1e6 / 1048576
            got = [float(r["mib_s"]) for r in rows(os.path.join(first, name + ".csv"))
                   if r["config"] == config and r["threads"] == "1"][0]
            check(f"{name} {config}: one thread is the arithmetic's {mib_s:.1f} MiB/s",
                  abs(got - mib_s) <= 0.01 * mib_s, f"{got}")

checks.finish()
