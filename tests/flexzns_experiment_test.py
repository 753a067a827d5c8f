#!/usr/bin/env python3
"""The flexzns experiment set (seed 001's zone formats and parity, from the
layout plan): every file written, the numbers hold together with the
geometry they came from, and a second run writes the same bytes.

usage: flexzns_experiment_test.py path/to/zonelab
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


def run(out):
    return subprocess.run([ZONELAB, "experiment", "run", "flexzns", "--no-plots", "--out", out],
                          capture_output=True, text=True)


with tempfile.TemporaryDirectory() as tmp:
    a, b = os.path.join(tmp, "a"), os.path.join(tmp, "b")
    first = run(a)
    check("run exits 0", first.returncode == 0, first.stderr[-600:])
    if first.returncode == 0:
        t = rows(os.path.join(a, "table_i.csv"))
        geometry = json.load(open(os.path.join(a, "table_i.json")))["parameters"]["geometry"]
        chunk_mib = geometry["chunk_bytes"] / 2**20
        check("table_i: five widths, two placements", len(t) == 10, str(t)[:300])
        for r in t:
            zone = float(r["zone_size_mib"])
            n = zone / chunk_mib
            want = 100 * (n - 1) / n if r["placement"] == "in-zone" else 100.0
            check("table_i %s %s: utilization from the stripe width" % (r["placement"], r["stripe"]),
                  abs(float(r["utilization_percent"]) - want) < 1e-9 and
                  r["stripe"] == "%d+1p" % (n - 1), str(r))
        e = {r["area"]: r for r in rows(os.path.join(a, "format_example.csv"))}
        ex_geometry = json.load(open(os.path.join(a, "format_example.json")))["parameters"]["geometry"]
        total = sum(float(e[k]["gib"]) for k in ("data", "parity", "unused"))
        check("format_example: data + parity + unused = the flash",
              abs(total * 2**30 - ex_geometry["flash_bytes"]) < 1, str(e))
        check("format_example: 64 x 512 MiB + 480 x 2 GiB of data",
              float(e["data"]["gib"]) == 64 * 0.5 + 480 * 2, str(e["data"]))
        check("format_example: one chunk a zone, two for a superblock-wide one",
              float(e["parity"]["gib"]) * 2**30 ==
              (64 + 2 * 480) * ex_geometry["chunk_bytes"], str(e["parity"]))
        p = rows(os.path.join(a, "parity_cost.csv"))
        flex = [r for r in p if r["format"].startswith("FlexZNS")]
        shares = [float(r["small_zone_share_percent"]) for r in flex]
        costs = [float(r["parity_per_zone_bytes_percent"]) for r in flex]
        check("parity_cost: more small zones, more parity", shares == sorted(shares) and
              costs == sorted(costs) and costs[0] < costs[-1], str(list(zip(shares, costs))))
        base = p[0]
        check("parity_cost: BaseZNS's parity is one chunk in 64",
              abs(float(base["parity_per_zone_bytes_percent"]) - 100 / 64) < 1e-9, str(base))
        o = rows(os.path.join(a, "open_block_budget.csv"))
        sizes = sorted({int(r["zone_size_mib"]) for r in o})
        check("open_block_budget: three zone sizes", sizes == [512, 1024, 2048], str(sizes))
        for r in o:
            per_zone = int(r["zone_size_mib"]) // int(chunk_mib) * 4  # planes a die
            zones_on_flash = geometry["flash_bytes"] // (int(r["zone_size_mib"]) << 20)
            want = min(int(r["open_block_budget"]) // per_zone, zones_on_flash)
            check("open_block_budget %s MiB / %s blocks: open zones = budget / blocks a zone"
                  % (r["zone_size_mib"], r["open_block_budget"]),
                  int(r["open_blocks_per_zone"]) == per_zone and int(r["open_zones"]) == want,
                  str(r))
        for size in sizes:
            line = [float(r["write_mib_s"]) for r in o if int(r["zone_size_mib"]) == size]
            check("open_block_budget %d MiB: throughput grows with the budget" % size,
                  all(x <= y * 1.0001 for x, y in zip(line, line[1:])) and line[0] < line[-1],
                  str(line))
        by = {(int(r["zone_size_mib"]), int(r["open_block_budget"])): float(r["write_mib_s"])
              for r in o}
        check("open_block_budget: on one budget smaller zones write faster",
              all(by[(512, bud)] >= by[(1024, bud)] >= by[(2048, bud)]
                  for (_, bud) in by if (512, bud) in by), str(by)[:300])
        d = rows(os.path.join(a, "die_failure.csv"))
        by_phase = {(r["parity"], int(r["phase_index"])): r for r in d}
        check("die_failure: three placements, three phases", len(d) == 9 and
              {k[0] for k in by_phase} == {"none", "in-zone", "separate"}, str(d)[:300])
        check("die_failure: no block ever read back wrong",
              all(int(r["mismatched_blocks"]) == 0 for r in d), str(d)[:300])
        for parity in ("none", "in-zone", "separate"):
            healthy, one, two = (by_phase[(parity, i)] for i in range(3))
            check("die_failure %s: every block readable before the failure" % parity,
                  int(healthy["unreadable_blocks"]) == 0 and int(healthy["verified_blocks"]) > 0,
                  str(healthy))
            written = int(one["verified_blocks"]) + int(one["unreadable_blocks"])
            check("die_failure %s: the read-back covers every written block" % parity,
                  written == int(two["verified_blocks"]) + int(two["unreadable_blocks"]) and
                  written > int(healthy["verified_blocks"]), str(one))
            if parity == "none":
                check("die_failure none: a failed die loses data",
                      int(one["unreadable_blocks"]) > 0 and int(one["rebuilt_pages"]) == 0, str(one))
            else:
                check("die_failure %s: one failure loses nothing, rebuilt from the stripe" % parity,
                      int(one["unreadable_blocks"]) == 0 and int(one["rebuilt_pages"]) > 0 and
                      int(one["rebuild_flash_reads"]) > int(one["rebuilt_pages"]), str(one))
                check("die_failure %s: a second failure in the stripes is reported" % parity,
                      int(two["unreadable_blocks"]) > 0, str(two))
                check("die_failure %s: rebuilds make the slowest reads slower" % parity,
                      float(one["read_latency_p99_us"]) > float(healthy["read_latency_p99_us"]),
                      str(one))
        second = run(b)
        same = second.returncode == 0 and all(
            open(os.path.join(a, f), "rb").read() == open(os.path.join(b, f), "rb").read()
            for f in sorted(os.listdir(a)) if f.endswith((".csv", ".json")))
        check("a second run writes the same CSV and JSON bytes", same)
sys.exit(checks.finish())
