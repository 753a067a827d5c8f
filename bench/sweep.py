#!/usr/bin/env python3
"""A 64-point sweep on a local Dask cluster of 2 workers against the same
sweep run serially, in alternating rounds, each on an empty cache; then the
sweep rerun from its full cache.

Each round runs, in turn, `zonelab sweep SPEC --serial` and `zonelab sweep
SPEC --workers 2` (the cluster's start and stop included), both into fresh
caches and output directories, and checks that they wrote the same CSV and
JSON bytes. Prints the median wall time of each, the median of the
per-round ratios Dask / serial, and the median time of a rerun that finds
every point cached; --json for one object with every round.

usage: sweep.py ZONELAB [--spec SPEC] [--rounds N] [--json]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_SPEC = os.path.join(HERE, "..", "examples", "sweep-block-gc.toml")


def timed(args, env):
    start = time.monotonic()
    r = subprocess.run(args, capture_output=True, text=True, env=env)
    elapsed = time.monotonic() - start
    if r.returncode != 0:
        sys.exit(f"sweep.py: {' '.join(args)} failed ({r.returncode}): {r.stderr[-2000:]}")
    return elapsed, json.loads(r.stdout)


def same(a, b, name):
    for ext in ("csv", "json"):
        with open(os.path.join(a, f"{name}.{ext}"), "rb") as f, \
                open(os.path.join(b, f"{name}.{ext}"), "rb") as g:
            if f.read() != g.read():
                return False
    return True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("zonelab")
    parser.add_argument("--spec", default=DEFAULT_SPEC)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    a = parser.parse_args()
    work = tempfile.mkdtemp(prefix="zonelab-sweep-bench-")
    env = dict(os.environ, XDG_CACHE_HOME=os.path.join(work, "xdg"))
    rounds = []
    try:
        for i in range(a.rounds):
            row = {}
            for mode in ("serial", "dask"):
                cache, out = os.path.join(work, f"c-{mode}-{i}"), os.path.join(work, f"o-{mode}-{i}")
                extra = ["--serial"] if mode == "serial" else ["--workers", "2"]
                row[mode], summary = timed([a.zonelab, "sweep", a.spec, "--cache", cache, "--out",
                                            out, "--json", "--quiet", "--no-plots", *extra], env)
                row["points"] = summary["points"]
                row["name"] = summary["sweep"]
            row["same_bytes"] = same(os.path.join(work, f"o-serial-{i}"),
                                     os.path.join(work, f"o-dask-{i}"), row["name"])
            row["ratio"] = row["dask"] / row["serial"]
            row["rerun"], summary = timed([a.zonelab, "sweep", a.spec, "--cache",
                                           os.path.join(work, f"c-dask-{i}"), "--out",
                                           os.path.join(work, f"r-{i}"), "--json", "--quiet",
                                           "--no-plots"], env)
            row["rerun_computed"] = summary["computed"]
            rounds.append(row)
            if not a.json:
                print(f"round {i + 1}: serial {row['serial']:.2f} s, dask (2 workers) "
                      f"{row['dask']:.2f} s, ratio {row['ratio']:.3f}, rerun {row['rerun']:.3f} s, "
                      f"same bytes {row['same_bytes']}", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = {
        "points": rounds[0]["points"],
        "serial_s": statistics.median(r["serial"] for r in rounds),
        "dask_s": statistics.median(r["dask"] for r in rounds),
        "ratio": statistics.median(r["ratio"] for r in rounds),
        "rerun_s": statistics.median(r["rerun"] for r in rounds),
        "same_bytes": all(r["same_bytes"] for r in rounds),
        "rounds": rounds,
    }
    if a.json:
        print(json.dumps(result))
    else:
        print(f"{result['points']} points: serial {result['serial_s']:.2f} s, dask 2 workers "
              f"{result['dask_s']:.2f} s (median): dask/serial {result['ratio']:.3f} (median of "
              f"rounds); rerun from the cache {result['rerun_s']:.3f} s; same bytes "
              f"{result['same_bytes']}")
    return 0 if result["same_bytes"] else 1


if __name__ == "__main__":
    sys.exit(main())
