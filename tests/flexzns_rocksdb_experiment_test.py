#!/usr/bin/env python3
"""FlexZNS under real RocksDB (seed 001 §II, §IV) in its quick form: every
member writes its files, every format ran every workload, the formats are
the paper's (BaseZNS's parity inside its zones, FlexZNS's in the parity
area, FlexZNS-1/16 mixed), parity's share of the flash grows with the small
zones, the budget gives small zones more open zones, the level placements on a mixed format ran and
filled both zone sets, both tenant setups ran
both tenants over time, every comparison row states its kind, and the quick
run stays within CI's budget (3 minutes). It checks no fit to the paper:
the measured numbers come from the wall clock and move from run to run.

usage: flexzns_rocksdb_experiment_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, check_quick_set, csv_rows as rows  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
MEMBERS = ["fig2", "fig6", "hot_levels", "fig8", "tenants"]
QUICK_BUDGET_S = 180
checks = Checks()
check = checks.check

with tempfile.TemporaryDirectory() as out:
    if check_quick_set(checks, ZONELAB, "flexzns-rocksdb", MEMBERS, out, QUICK_BUDGET_S):
        f2 = rows(os.path.join(out, "fig2.csv"))
        check("fig2: 512 MiB and 2 GiB zones, each overwrote",
              [r["zone_size_mib"] for r in f2] == ["512", "2048"] and
              all(float(r["ops_per_s"]) > 0 for r in f2), str(f2))
        check("fig2: a zone of the paper's size / 128",
              all(int(r["model_zone_kib"]) * 128 == int(r["zone_size_mib"]) * 1024 for r in f2))
        check("fig2: collection's write amplification is at least 1",
              all(float(r["gc_write_amplification"]) >= 1 for r in f2))
        check("fig2: both ran to the end", all(r["outcome"] == "ok" for r in f2), str(f2))
        # The dies' busy share over the overwrite's own device time: above
        # nothing (the overwrite wrote), and at most a little over 1 (the
        # session's open and close are counted in the busy time).
        check("fig2: the dies were busy part of every overwrite",
              all(0 < float(r["die_busy_share"]) <= 1.2 for r in f2), str(f2))

        f6 = rows(os.path.join(out, "fig6.csv"))
        formats = {}
        for r in f6:
            formats.setdefault(r["format"], {})[r["workload"]] = r
        check("fig6: BaseZNS, FlexZNS and FlexZNS-1/16, each YCSB A, B and F",
              set(formats) == {"BaseZNS", "FlexZNS", "FlexZNS-1/16"} and
              all(set(w) == {"ycsb-a", "ycsb-b", "ycsb-f"} for w in formats.values()), str(f6))
        check("fig6: every workload ran", all(float(r["ops_per_s"]) > 0 for r in f6))
        check("fig6: the dies were busy part of every workload",
              all(0 < float(r["die_busy_share"]) <= 1.2 for r in f6), str(f6))
        check("fig6: every workload's reads and the device reads under them were timed",
              all(float(r["read_mean_us"]) > 0 and float(r["device_read_p99_us"]) > 0
                  for r in f6), str(f6))
        check("fig6: RocksDB's write stalls are given for every workload",
              all(r["stall_s"] != "" and float(r["stall_s"]) >= 0 for r in f6), str(f6))
        parity = {f: float(w["ycsb-a"]["parity_pct_of_flash"]) for f, w in formats.items()}
        check("fig6: parity's share grows with the small zones (BaseZNS < 1/16 < FlexZNS)",
              parity["BaseZNS"] < parity["FlexZNS-1/16"] < parity["FlexZNS"], str(parity))
        zones = {f: w["ycsb-a"]["zones"] for f, w in formats.items()}
        check("fig6: the formats' zones (2 GiB = 16 MiB, 512 MiB = 4 MiB here)",
              zones["BaseZNS"].startswith("16384KiB:") and
              zones["FlexZNS"].startswith("4096KiB:") and
              zones["FlexZNS-1/16"].startswith("4096KiB:8,16384KiB:"), str(zones))
        doc6 = json.load(open(os.path.join(out, "fig6.json")))
        closed = [c for c in doc6["comparison"] if c["kind"] == "closed form"]
        check("fig6: BaseZNS's parity is 1/64 of the flash (one die of 64)",
              any(abs(c["measured"] - 100 / 64) < 1e-9 for c in closed), str(closed))

        hl = rows(os.path.join(out, "hot_levels.csv"))
        points = [(r["format"], r["placement"], r["workload"]) for r in hl]
        check("hot_levels: BaseZNS, then FlexZNS-1/16 with wal,L0,L1 alone and spilling; "
              "each YCSB A, B and F",
              points == [(f, p, w) for f, p in [("BaseZNS", "-"), ("FlexZNS-1/16", "wal,L0,L1"),
                                                ("FlexZNS-1/16", "wal,L0,L1 + spill")]
                         for w in ("ycsb-a", "ycsb-b", "ycsb-f")], str(points))
        check("hot_levels: every point ran every workload",
              all(float(r["ops_per_s"]) > 0 for r in hl), str(hl))
        check("hot_levels: collection's write amplification is at least 1",
              all(float(r["gc_write_amplification"]) >= 1 for r in hl), str(hl))
        check("hot_levels: BaseZNS's rows are the base (gain 1)",
              all(float(r["gain_over_base"]) == 1 for r in hl if r["format"] == "BaseZNS"), str(hl))
        mixed = [r for r in hl if r["format"] != "BaseZNS"]
        check("hot_levels: on a mixed format the small set holds data, at most all of it",
              all(0 < float(r["small_set_live_pct"]) <= 100 and
                  0 <= float(r["large_set_live_pct"]) <= 100 for r in mixed), str(mixed))
        check("hot_levels: BaseZNS has one set (no per-set columns)",
              all(float(r["small_set_live_pct"]) == 0 and float(r["small_set_wa"]) == 0
                  for r in hl if r["format"] == "BaseZNS"), str(hl[:3]))
        doc_hl = json.load(open(os.path.join(out, "hot_levels.json")))
        check("hot_levels: the placements are in the parameters",
              [p["placement"] for p in doc_hl["parameters"]["placements"]] ==
              ["wal,L0,L1", "wal,L0,L1 + spill"], str(doc_hl["parameters"].get("placements")))

        f8 = rows(os.path.join(out, "fig8.csv"))
        open_zones = {(r["zone_size_mib"], r["open_block_budget"]): int(r["open_zones"])
                      for r in f8}
        check("fig8: 512 MiB zones open four times the 2 GiB zones' under one budget",
              open_zones.get(("512", "1024")) == 4 * open_zones.get(("2048", "1024"), -1),
              str(open_zones))
        check("fig8: every point wrote", all(float(r["mb_per_s"]) > 0 for r in f8), str(f8))
        check("fig8: the dies were busy part of every fill",
              all(0 < float(r["die_busy_share"]) <= 1.2 for r in f8), str(f8))

        t = rows(os.path.join(out, "tenants.csv"))
        setups = {(r["setup"], r["tenant"]) for r in t}
        check("tenants: both setups, both tenants",
              setups == {(s, n) for s in ("BaseZNS shared", "FlexZNS on separate dies")
                         for n in ("reader", "writer")}, str(setups))
        check("tenants: every tenant did work in its run",
              all(any(float(r["ops_per_s"]) > 0 for r in t if (r["setup"], r["tenant"]) == k)
                  for k in setups))

checks.finish()
