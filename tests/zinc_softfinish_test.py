#!/usr/bin/env python3
"""ZINC and softfinish (seed 003 §5.1) in their quick form: ZINC lowers the
interference of resets on writes against mq-deadline and makes resets wait;
softfinish at the device's fill size interferes as the device's finish does;
larger softfinish writes interfere more; pauses lower the interference on
writes.

usage: zinc_softfinish_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
checks = Checks()
check = checks.check


def measured(doc, quantity):
    for c in doc["comparison"]:
        if c["quantity"] == quantity:
            return c["measured"]
    raise KeyError(quantity)


with tempfile.TemporaryDirectory() as out:
    run = subprocess.run(
        [ZONELAB, "experiment", "run", "zinc-softfinish", "--quick", "--no-plots", "--out", out],
        capture_output=True, text=True)
    check("quick run exits 0", run.returncode == 0, run.stderr[-400:])
    if run.returncode == 0:
        zinc = json.load(open(os.path.join(out, "zinc_reset_write.json")))
        mq, zi = measured(zinc, "M^Inter, mq-deadline"), measured(zinc, "M^Inter, ZINC")
        check("ZINC lowers reset-on-write interference", zi < mq, f"{zi} vs {mq}")
        check("ZINC makes resets wait",
              measured(zinc, "P95 reset latency at the highest CL, ZINC") >
              measured(zinc, "P95 reset latency at the highest CL, mq-deadline"))
        write = json.load(open(os.path.join(out, "softfinish_write.json")))
        device = measured(write, "M^Inter, finish (device, 16 KiB)")
        soft16 = measured(write, "M^Inter, softfinish 16 KiB")
        soft256 = measured(write, "M^Inter, softfinish 256 KiB")
        soft8 = measured(write, "M^Inter, softfinish 8 KiB")
        paused = measured(write, "M^Inter, softfinish 8 KiB + 50 us pause")
        check("softfinish 16 KiB interferes as the device finish does",
              abs(soft16 - device) <= 0.05 * max(device, 1e-9), f"{soft16} vs {device}")
        check("larger softfinish writes interfere more", soft256 > soft16, f"{soft256} {soft16}")
        check("pauses lower softfinish interference on writes", paused < soft8,
              f"{paused} vs {soft8}")

checks.finish()
