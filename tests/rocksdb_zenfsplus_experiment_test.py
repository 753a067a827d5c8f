#!/usr/bin/env python3
"""ZenFS+ against ZenFS under real RocksDB (seed 004 §III, §V) in its quick
form: every member writes its files, the zone-group scan shows the three
bands in order, every setup ran every benchmark and wrote, latency
percentiles rise, the bandwidth series cover the classes, garbage
collection's bytes only grow, every comparison row states its kind, and the
quick run stays within CI's budget (3 minutes). It checks no fit to the
paper: the measured numbers come from the wall clock and move from run to
run.

usage: rocksdb_zenfsplus_experiment_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, check_quick_set, csv_rows as rows  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
MEMBERS = ["fig3", "fig3b", "fig8", "table1", "fig10", "fig9", "fig11", "fig13", "table3", "largezone",
           "host"]
QUICK_BUDGET_S = 180
checks = Checks()
check = checks.check


def by(table, key):
    out = {}
    for r in table:
        out.setdefault(r[key], []).append(r)
    return out


with tempfile.TemporaryDirectory() as out:
    if check_quick_set(checks, ZONELAB, "rocksdb-zenfsplus", MEMBERS, out, QUICK_BUDGET_S):
        scan = [r for r in rows(os.path.join(out, "fig3.csv"))
                if r["series"] == "beside zone 0's reads"]
        bands = {b: [float(r["latency_us"]) for r in v] for b, v in by(scan, "band").items()}
        check("fig3: needles 1-128", len(scan) == 128, str(len(scan)))
        check("fig3: same die slower than same channel, slower than another group",
              set(bands) == {"same die", "same channel", "other group"} and
              min(bands["same die"]) > max(bands["same channel"]) >= 0 and
              min(bands["same channel"]) > max(bands["other group"]),
              str({b: (min(v), max(v)) for b, v in bands.items()}))
        fig3 = json.load(open(os.path.join(out, "fig3.json")))
        check("fig3: the probe finds 32 groups", fig3["parameters"]["groups_found"] == 32)

        writes = rows(os.path.join(out, "fig3b.csv"))
        alone = {r["zone"]: float(r["latency_us"]) for r in writes if r["series"] == "alone"}
        beside = {r["zone"]: float(r["latency_us"]) for r in writes
                  if r["series"] == "beside zone 0's reads"}
        check("fig3b: zones 1-128, alone and beside", len(alone) == 128 and len(beside) == 128)
        check("fig3b: a write beside the reads is never faster than alone",
              all(beside[z] >= alone[z] for z in alone))
        check("fig3b: zones on zone 0's channel slowed, the others not",
              all((beside[z] > alone[z]) == (int(z) % 8 == 0) for z in alone),
              str({z: (alone[z], beside[z]) for z in list(alone)[:10]}))

        f10 = by(rows(os.path.join(out, "fig10.csv")), "setup")
        check("fig10: ZenFS, (S,R) and (S,I,R), buckets of 100 ms each",
              set(f10) == {"ZenFS", "ZenFS+ (S,R)", "ZenFS+ (S,I,R)"} and
              all(len(v) >= 2 for v in f10.values()), str({k: len(v) for k, v in f10.items()}))
        check("fig10: P99 <= P99.9 <= P99.99 in every bucket, puts in each",
              all(float(r["p99_us"]) <= float(r["p999_us"]) <= float(r["p9999_us"]) and
                  int(r["puts"]) > 0 for v in f10.values() for r in v))

        f8 = rows(os.path.join(out, "fig8.csv"))
        check("fig8: ZenFS and ZenFS+ (S,R), (S,I,R)",
              {r["setup"] for r in f8} == {"ZenFS", "ZenFS+ (S,R)", "ZenFS+ (S,I,R)"}, str(f8))
        check("fig8: every run wrote", all(float(r["mb_per_s"]) > 0 for r in f8), str(f8))

        t1 = by(rows(os.path.join(out, "table1.csv")), "setup")
        check("table1: three setups, four percentiles each",
              len(t1) == 3 and all(len(v) == 4 for v in t1.values()), str(t1)[:300])
        check("table1: percentiles rise",
              all([float(r["latency_us"]) for r in v] == sorted(float(r["latency_us"]) for r in v)
                  and float(v[0]["latency_us"]) > 0 for v in t1.values()), str(t1)[:400])

        f9 = rows(os.path.join(out, "fig9.csv"))
        classes = by(f9, "class")
        check("fig9: put, flush, compaction and WAL series",
              set(classes) == {"put", "flush", "compaction", "wal"}, str(set(classes)))
        for setup in ("ZenFS", "ZenFS+ (S,I,R)"):
            mine = [r for r in f9 if r["setup"] == setup]
            flushed = sum(float(r["mb_per_s"]) for r in mine if r["class"] == "flush")
            put = sum(float(r["mb_per_s"]) for r in mine if r["class"] == "put")
            check(f"fig9: {setup} flushed and put", flushed > 0 and put > 0, str(mine)[:300])
            times = [float(r["t_s"]) for r in mine if r["class"] == "put"]
            check(f"fig9: {setup} time rises", times == sorted(times) and len(times) >= 1)

        f11 = rows(os.path.join(out, "fig11.csv"))
        check("fig11: five benchmarks, two setups",
              len(f11) == 10 and len({r["benchmark"] for r in f11}) == 5, str(f11)[:300])
        check("fig11: every benchmark did work", all(float(r["ops_per_s"]) > 0 for r in f11),
              str(f11)[:400])

        f13 = by(rows(os.path.join(out, "fig13.csv")), "setup")
        check("fig13: ZenFS with full GC, ZenFS+ full GC only and proactive", len(f13) == 3,
              str(list(f13)))
        for setup, points in f13.items():
            put = [float(p["put_mib"]) for p in points]
            copied = [float(p["copied_mib"]) for p in points]
            check(f"fig13: {setup}: put and copied bytes only grow",
                  put == sorted(put) and copied == sorted(copied) and put[0] > 0,
                  str(points))
            check(f"fig13: {setup}: the layout counts tables in zones, files in zones",
                  all(int(p["tables"]) > 0 and float(p["zones_per_table"]) >= 1 and
                      float(p["files_per_zone"]) >= 1 and
                      int(p["zones_under_half_live"]) <= int(p["zones_with_data"])
                      for p in points), str(points))
        spans = {setup: float(points[-1]["zones_per_table"]) for setup, points in f13.items()}
        check("fig13: ZenFS+'s striped tables lie in more zones than ZenFS's",
              all(spans[s] > spans["full GC, ZenFS"] for s in spans if "ZenFS+" in s), str(spans))

        t3 = rows(os.path.join(out, "table3.csv"))
        check("table3: four setups x YCSB A-F",
              len(t3) == 24 and {r["workload"] for r in t3} == set("abcdef"), str(t3)[:300])
        check("table3: every workload ran", all(float(r["runtime_s"]) > 0 for r in t3))

        lz = rows(os.path.join(out, "largezone.csv"))
        check("largezone: ZenFS and ZenFS+ wrote",
              len(lz) == 2 and all(float(r["mb_per_s"]) > 0 for r in lz), str(lz))

        fit = json.load(open(os.path.join(out, "fig8.json")))["parameters"]
        puts = fit["time_scale_fit"]["untimed_puts_per_s"]
        want = 204300 / puts if puts > 0 else 0
        held = min(16.0, max(1.0, want))
        check("the time scale is fitted when the set runs: 204,300 over this host's puts",
              puts > 0 and fit["time_scale_fit"]["clamped"] == (held != want) and
              abs(fit["time_scale"] - held) <= 0.005 + 1e-9, str(fit["time_scale_fit"]))
        check("the erase shrinks with the block: tBERS x 24/384 and x 6/384",
              fit["erase_latency_ns"] == 3500000 * 24 // 384 and
              fit["gc_erase_latency_ns"] == 3500000 * 6 // 384,
              str((fit["erase_latency_ns"], fit["gc_erase_latency_ns"])))
        host = rows(os.path.join(out, "host.csv"))
        check("host: two setups, log on and off, at host x1 and x4",
              {(r["setup"], r["wal"], float(r["host_speed"])) for r in host} ==
              {(s, w, x) for s in ("ZenFS", "ZenFS+ (S,I,R)") for w in ("on", "off")
               for x in (1.0, 4.0)}, str(host)[:300])
        check("host: the time scale is the fit's times the host speed",
              all(abs(float(r["time_scale"]) - fit["time_scale"] * float(r["host_speed"])) < 1e-6
                  for r in host), str(host)[:300])
        check("host: every run wrote", all(float(r["mb_per_s"]) > 0 for r in host))
sys.exit(checks.finish())
