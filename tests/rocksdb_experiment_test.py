#!/usr/bin/env python3
"""RocksDB on ZNS against block-interface SSDs (seed 000 §5.2) in its quick
form: real RocksDB runs on all four setups, every benchmark reports work
done, ZNS writes no more to flash than the host wrote (no device GC), the
file system's counters hold together, and the results carry the paper's
numbers beside the measured ones.

usage: rocksdb_experiment_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, csv_rows as rows  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
checks = Checks()
check = checks.check
SETUPS = {"ZNS", "block 7% OP", "block 28% OP", "block 28% OP, no discard"}


with tempfile.TemporaryDirectory() as out:
    run = subprocess.run([ZONELAB, "experiment", "run", "rocksdb-zns-vs-block", "--quick",
                          "--no-plots", "--out", out], capture_output=True, text=True)
    check("quick run exits 0", run.returncode == 0, run.stderr[-600:])
    if run.returncode == 0:
        w = rows(os.path.join(out, "write_throughput.csv"))
        check("write throughput: every setup, fillrandom and overwrite",
              len(w) == 8 and {r["setup"] for r in w} == SETUPS, str(w)[:400])
        check("write throughput: every run wrote", all(float(r["ops_per_s"]) > 0 for r in w))
        zns = [r for r in w if r["setup"] == "ZNS"]
        check("ZNS: the device writes what the host writes (no device GC)",
              all(float(r["device_write_amplification"]) <= 1.01 for r in zns), str(zns))
        check("the file system's write amplification is at least 1",
              all(float(r["fs_write_amplification"]) >= 0.99 for r in w), str(w)[:400])
        r = rows(os.path.join(out, "read_throughput.csv"))
        check("read throughput: three benchmarks a setup, reads done",
              len(r) == 12 and all(float(x["read_ops_per_s"]) > 0 for x in r), str(r)[:400])
        check("readwhilewriting writes beside the reads",
              all(float(x["write_ops_per_s"]) > 0 for x in r if x["benchmark_index"] != "1"))
        lat = rows(os.path.join(out, "read_latency.csv"))
        by_series = {}
        for x in lat:
            by_series.setdefault(x["series"], []).append(float(x["latency_us"]))
        check("latency percentiles rise with the percentile",
              len(by_series) == 12 and all(v == sorted(v) and v[0] > 0
                                           for v in by_series.values()), str(by_series)[:400])
        p = rows(os.path.join(out, "placement.csv"))
        check("placement: finish thresholds 0 and 10",
              [x["finish_threshold_pct"] for x in p] == ["0", "10"], str(p))
        check("placement: shares and amplification in range",
              all(0 <= float(x["reset_without_copy_share"]) <= 1 and
                  float(x["fs_write_amplification"]) >= 0.99 for x in p), str(p))
        doc = json.load(open(os.path.join(out, "write_throughput.json")))
        check("the paper's numbers stand beside the measured ones",
              any(c.get("paper") == 2.83 for c in doc["comparison"]),
              json.dumps(doc["comparison"])[:400])
        check("a report", os.path.exists(os.path.join(out, "README.md")))
sys.exit(checks.finish())
