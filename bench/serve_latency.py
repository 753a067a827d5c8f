#!/usr/bin/env python3
"""What `zonelab serve` adds to FUSE's own cost, at queue depth 1.

Two servers in turn, paired round by round: `zonelab serve` of a block
image with timing off (the model answers at once: what is left is the
host's software) and `zonelab serve --pass-through` of a plain host file of
the same size (FUSE's own path, the host's page cache behind it). Each round
times N random 4 KiB writes, then N random 4 KiB reads, one at a time
(pwrite/pread on the served file, which the server opened with direct I/O,
so each one reaches it). Prints each round's median latencies, the ratio of
the pair, and the median of the ratios; --json for one object.
"""
import argparse
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time


def wait_for(path, proc, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server ended early: {proc.stderr.read()}")
        if os.path.exists(path):
            return
        time.sleep(0.02)
    raise SystemExit(f"{path} did not appear")


def time_ops(path, ops, seed):
    rng = random.Random(seed)
    fd = os.open(path, os.O_RDWR)
    try:
        size = os.fstat(fd).st_size
        blocks = size // 4096
        data = os.urandom(4096)
        offsets = [rng.randrange(blocks) * 4096 for _ in range(ops)]
        writes, reads = [], []
        for off in offsets:
            t = time.perf_counter_ns()
            os.pwrite(fd, data, off)
            writes.append(time.perf_counter_ns() - t)
        for off in offsets:
            t = time.perf_counter_ns()
            os.pread(fd, 4096, off)
            reads.append(time.perf_counter_ns() - t)
        return statistics.median(writes) / 1000.0, statistics.median(reads) / 1000.0
    finally:
        os.close(fd)


def serve_and_time(zonelab, target, mount, extra, ops, seed):
    proc = subprocess.Popen([zonelab, "serve", target, mount, "--timing", "off"] + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(os.path.join(mount, "disk"), proc)
        return time_ops(os.path.join(mount, "disk"), ops, seed)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("zonelab")
    ap.add_argument("--ops", type=int, default=4000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--pacing", default="auto", help="zonelab serve --pacing")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        image = os.path.join(d, "blk.img")
        subprocess.run([args.zonelab, "create", image, "--preset", "small", "--set",
                        "interface=block"], check=True, stdout=subprocess.DEVNULL)
        plain = os.path.join(d, "plain.bin")
        info = json.loads(subprocess.run([args.zonelab, "info", image, "--json"], check=True,
                                         capture_output=True, text=True).stdout)
        size = info["capacity_lbas"] * info["lba_size"]
        with open(plain, "wb") as f:
            f.truncate(size)
        mount = os.path.join(d, "m")
        os.mkdir(mount)
        rounds = []
        for r in range(args.rounds):
            # Which goes first alternates, so neither always meets a warm host.
            order = ["model", "pass"] if r % 2 == 0 else ["pass", "model"]
            got = {}
            for kind in order:
                if kind == "model":
                    got[kind] = serve_and_time(args.zonelab, image, mount,
                                               ["--pacing", args.pacing], args.ops, r)
                else:
                    got[kind] = serve_and_time(args.zonelab, plain, mount, ["--pass-through"],
                                               args.ops, r)
            rounds.append({"model_write_us": got["model"][0], "model_read_us": got["model"][1],
                           "pass_write_us": got["pass"][0], "pass_read_us": got["pass"][1],
                           "write_ratio": got["model"][0] / got["pass"][0],
                           "read_ratio": got["model"][1] / got["pass"][1]})
    summary = {k: statistics.median(r[k] for r in rounds) for k in rounds[0]}
    if args.json:
        print(json.dumps({"ops": args.ops, "rounds": rounds, "median": summary}))
        return
    print(f"serve vs pass-through FUSE, QD1 4 KiB, timing off, {args.ops} ops per round "
          "(median latency, us)")
    print(f"{'round':>5} {'write':>8} {'pass':>8} {'ratio':>6}   {'read':>8} {'pass':>8} "
          f"{'ratio':>6}")
    for i, r in enumerate(rounds):
        print(f"{i:>5} {r['model_write_us']:8.1f} {r['pass_write_us']:8.1f} "
              f"{r['write_ratio']:6.2f}   {r['model_read_us']:8.1f} {r['pass_read_us']:8.1f} "
              f"{r['read_ratio']:6.2f}")
    print(f"median: write {summary['write_ratio']:.2f}x, read {summary['read_ratio']:.2f}x of "
          "the pass-through path")


if __name__ == "__main__":
    sys.exit(main())
