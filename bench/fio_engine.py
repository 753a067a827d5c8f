#!/usr/bin/env python3
"""fio through libzonelab_fio.so against zonelab's own bench, the same job.

Each round runs one job twice, in turn: Debian's fio with the engine at
zonelab_timing=off (virtual time on fio's thread, journal records batched as
bench writes them) and `zonelab bench` in virtual time, each on a fresh
image of the same configuration. fio's figure is its own IOPS (ops over the
job's run time); bench's is its simulated commands per wall second
(sim_commands_per_s). Prints each job's median of each and the median of
the per-round ratios; --json for one object with every round.

fio's own work per I/O (its null engine: about 0.14 us at queue depth 1 and
0.2 us at 16 on the development machine) is part of fio's figure; where the
model's work per command is smaller than that (a read in virtual time
costs bench about 0.06 us), no engine brings fio near bench's rate.

Each job runs through fio twice per round: with fio's defaults, and with
fio's own options for its cheapest path per I/O (gtod_reduce=1,
clocksource=cpu, and at queue depth above 1 iodepth_batch_submit and
iodepth_batch_complete_min at the depth). The images store no data and the
jobs do not verify, so the engine's reads leave fio's buffers as they were.

Jobs (the small preset, ZNS; bench moves no data, so the images store none,
which fio's writes then move to no file either):
  write-4k-qd1     sequential writes of 16 zones, 4 KiB, queue depth 1
  write-4k-qd8     the same at queue depth 8
  read-4k-qd16     sequential reads of those 16 zones, 4 KiB, queue depth 16
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

JOBS = {
    "write-4k-qd1": ("write", "4k", 1),
    "write-4k-qd8": ("write", "4k", 8),
    "read-4k-qd16": ("read", "4k", 16),
}
ZONES = 16


def create(zonelab, path):
    subprocess.run([zonelab, "create", path, "--preset", "small", "--set", "store.backing=none",
                    "--force"], check=True, capture_output=True)


def fill(zonelab, path):
    subprocess.run([zonelab, "bench", path, "--rw", "write", "--bs", "128k", "--zones",
                    f"0-{ZONES - 1}", "--quiet", "--json"], check=True, capture_output=True)


# fio's options for its cheapest path per I/O (fio(1): gtod_reduce,
# clocksource, iodepth_batch_submit, iodepth_batch_complete_min).
def fast_path(depth):
    lines = ["gtod_reduce=1", "clocksource=cpu"]
    if depth > 1:
        lines += [f"iodepth_batch_submit={depth}", f"iodepth_batch_complete_min={depth}"]
    return "\n".join(lines) + "\n"


def run_fio(engine, image, rw, bs, depth, directory, fast):
    job = os.path.join(directory, "job.fio")
    with open(job, "w") as f:
        f.write(f"""[global]
ioengine=external:{engine}
filename={image}
zonemode=zbd
direct=1
zonelab_timing=off
zonelab_journal=batched
{fast_path(depth) if fast else ""}[j]
rw={rw}
bs={bs}
iodepth={depth}
size={ZONES}z
""")
    out = subprocess.run(["fio", job, "--output-format=json"], check=True, capture_output=True,
                         text=True, cwd=directory).stdout
    data = json.loads(out[out.find("{"):])
    side = data["jobs"][0]["read" if rw == "read" else "write"]
    return side["iops"], side["total_ios"]


def run_bench(zonelab, image, rw, bs, depth):
    out = subprocess.run([zonelab, "bench", image, "--rw", rw, "--bs", bs, "--iodepth",
                          str(depth), "--zones", f"0-{ZONES - 1}", "--quiet", "--json"],
                         check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    return data["sim_commands_per_s"], data["commands"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("zonelab")
    parser.add_argument("engine")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    zonelab, engine = os.path.abspath(args.zonelab), os.path.abspath(args.engine)
    results = {}
    variants = (("defaults", False), ("fast path", True))
    with tempfile.TemporaryDirectory(prefix="zonelab-fio-bench-") as d:
        a, b = os.path.join(d, "fio.img"), os.path.join(d, "bench.img")
        for name, (rw, bs, depth) in JOBS.items():
            rounds = []
            for _ in range(args.rounds):
                row = {}
                for variant, fast in variants:
                    create(zonelab, a)
                    if rw == "read":
                        fill(zonelab, a)
                    row[variant] = run_fio(engine, a, rw, bs, depth, d, fast)
                create(zonelab, b)
                if rw == "read":
                    fill(zonelab, b)
                bench_ops_s, bench_ops = run_bench(zonelab, b, rw, bs, depth)
                for variant, (_, fio_ops) in row.items():
                    if fio_ops != bench_ops:
                        sys.exit(f"{name}: fio ({variant}) did {fio_ops} I/Os, bench {bench_ops}: "
                                 "not the same job")
                rounds.append((row, bench_ops_s))
            result = {
                "ops": bench_ops,
                "bench_ops_per_s": [r[1] for r in rounds],
                "bench_median": statistics.median(r[1] for r in rounds),
            }
            for variant, _ in variants:
                ratios = [r[0][variant][0] / r[1] for r in rounds]
                result[variant] = {
                    "fio_iops": [r[0][variant][0] for r in rounds],
                    "fio_median": statistics.median(r[0][variant][0] for r in rounds),
                    "ratio_median": statistics.median(ratios),
                    "ratio_min": min(ratios),
                    "ratio_max": max(ratios),
                }
            results[name] = result
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for name, r in results.items():
        for variant, _ in variants:
            v = r[variant]
            print(f"{name:<14} {variant:<9} {r['ops']:>7} ops: fio {v['fio_median']:>10,.0f} IOPS, "
                  f"bench {r['bench_median']:>10,.0f} ops/s; fio/bench median "
                  f"{v['ratio_median']:.2f} (min {v['ratio_min']:.2f}, max {v['ratio_max']:.2f}; "
                  f"target >= 0.50) -> {'ok' if v['ratio_median'] >= 0.5 else 'BELOW TARGET'}")


if __name__ == "__main__":
    main()
