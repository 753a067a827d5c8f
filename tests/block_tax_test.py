#!/usr/bin/env python3
"""The block-interface tax (seed 000) in its quick form: the shape must come
from the model. ZNS throughput stays flat while the conventional SSD's falls
once GC starts, more at 7 % than at 28 % over-provisioning; ZNS writes
exactly what the host writes; more over-provisioning leaves less capacity;
under writes, random reads wait longer on the conventional SSD.

usage: block_tax_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, csv_rows as rows  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
checks = Checks()
check = checks.check


with tempfile.TemporaryDirectory() as out:
    run = subprocess.run(
        [ZONELAB, "experiment", "run", "block-tax", "--quick", "--no-plots", "--out", out],
        capture_output=True, text=True)
    check("quick run exits 0", run.returncode == 0, run.stderr[-400:])
    if run.returncode == 0:
        series = {}
        for r in rows(os.path.join(out, "overwrite_throughput.csv")):
            series.setdefault(r["setup"], []).append(float(r["throughput_mib_s"]))
        zns, b7, b28 = series["ZNS 0% OP"], series["block 7% OP"], series["block 28% OP"]

        def tail(values):
            part = values[-max(1, len(values) // 4):]
            return sum(part) / len(part)

        check("ZNS stays flat", min(zns) > 0.9 * max(zns), f"{min(zns)} .. {max(zns)}")
        check("block 7% falls once GC starts", tail(b7) < 0.8 * b7[0], f"{b7[0]} -> {tail(b7)}")
        check("7% ends below 28%", tail(b7) < tail(b28), f"{tail(b7)} vs {tail(b28)}")
        check("28% ends below ZNS", tail(b28) < tail(zns), f"{tail(b28)} vs {tail(zns)}")
        check("ZNS writes more in all (more capacity)",
              len(zns) > len(b28) and len(b7) > len(b28), f"{len(zns)} {len(b7)} {len(b28)}")

        cap = {r["setup"]: r for r in rows(os.path.join(out, "capacity_and_wa.csv"))}
        check("ZNS write amplification is 1", float(cap["ZNS 0% OP"]["write_amplification"]) == 1.0)
        wa7 = float(cap["block 7% OP"]["write_amplification"])
        wa28 = float(cap["block 28% OP"]["write_amplification"])
        check("GC amplifies writes, more at 7%", wa7 > wa28 > 1.0, f"{wa7} {wa28}")
        shares = [float(cap[s]["host_share_percent"]) for s in ("ZNS 0% OP", "block 7% OP",
                                                               "block 28% OP")]
        check("over-provisioning costs capacity", shares[0] > shares[1] > shares[2], str(shares))

        sweep = rows(os.path.join(out, "rate_sweep_read_latency.csv"))
        top = max(float(r["target_mib_s"]) for r in sweep)
        at_top = {r["setup"]: float(r["read_mean_us"]) for r in sweep
                  if float(r["target_mib_s"]) == top}
        check("reads wait longer on the block interface under writes",
              at_top["ZNS 0% OP"] < at_top["block 28% OP"] < at_top["block 7% OP"], str(at_top))
        idle = {r["setup"]: float(r["read_mean_us"]) for r in sweep
                if float(r["target_mib_s"]) == 0}
        # Reads of a zone a writer has just reset cost no flash read on either
        # interface, so the two differ by which zones the writers left open.
        check("idle reads cost about the same on both",
              max(idle.values()) < 1.02 * min(idle.values()), str(idle))

checks.finish()
