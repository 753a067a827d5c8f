#!/usr/bin/env python3
"""Kill-safety of device images: `zonelab batch` and `zonelab bench` on
file-backed images are killed with SIGKILL at random instants, over and
over; after each kill the image must open, hold every command whose answer
was printed, and hold no zone state that disagrees with its data.

batch: a random stream of writes (each with its own data seed), appends,
finishes, resets, opens and closes on a few zones runs until the kill. The
commands answered before the kill are `acked`; the one after may have been
taken too. So the image must equal, zone report and data alike, an unkilled
run of the first `acked` or `acked + 1` lines on a fresh image (the model
is deterministic, so that run is the oracle).

bench: sequential writers that fill and reset their zones many times, on
the ZNS and the block interface (the latter also with the production
front end: a write-back buffer, firmware cores, the mapping table's work,
reads queued by die, suspend), killed while they run (bench prints
nothing until it ends, so nothing is acknowledged): the image must open,
its zone report must be one a device can be in, and it must take and
verify new data in every zone.

usage: crash_loop_test.py ZONELAB [--seconds S] [--min-iterations N] [--seed X]
Prints the iterations, the kill instants covered and the failures."""
import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import PRODUCTION_DRIVE  # noqa: E402

ZONES = 6              # zones the batch stream uses
ZONE_CAP = 12288       # LBAs in a zone of the `small` preset
ZONE_SIZE = 16384
ZASL = 128
LINES = 400            # commands in one batch stream


def run(zonelab, *args, stdin=None, cwd=None, check=True):
    done = subprocess.run([zonelab, *args], input=stdin, capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"zonelab {' '.join(args)}: exit {done.returncode}: "
                             f"{done.stderr.strip()}")
    return done


def stream(rng):
    """A random batch stream; the writer keeps its own idea of each write
    pointer, so most commands are valid (the rest fail and change nothing)."""
    wp = [0] * ZONES
    lines = []
    for _ in range(LINES):
        zone = rng.randrange(ZONES)
        start = zone * ZONE_SIZE
        kind = rng.random()
        if kind < 0.55:
            nlb = rng.choice([1, 7, 16, 64, 250])
            nlb = min(nlb, ZONE_CAP - wp[zone]) or 1
            lines.append(f"write --lba {start + wp[zone]} --blocks {nlb} "
                         f"--seed {rng.randrange(1 << 30)}")
            wp[zone] = min(ZONE_CAP, wp[zone] + nlb)
        elif kind < 0.70:
            nlb = rng.choice([1, 8, ZASL])
            lines.append(f"append --zone {zone} --blocks {nlb} --seed {rng.randrange(1 << 30)}")
            wp[zone] = min(ZONE_CAP, wp[zone] + nlb)
        elif kind < 0.80:
            lines.append(f"zone reset --zone {zone}")
            wp[zone] = 0
        elif kind < 0.86:
            lines.append(f"zone finish --zone {zone}")
            wp[zone] = ZONE_CAP
        elif kind < 0.93:
            lines.append(f"zone {rng.choice(['open', 'close'])} --zone {zone}")
        else:
            lines.append(f"read --lba {start} --blocks 8")
    return lines


def snapshot(zonelab, image, work, tag):
    """The image's zone report of the stream's zones and the data of each up
    to its write pointer, through one batch process (which opens the image
    as a writer: it replays the journal and checkpoints)."""
    report = run(zonelab, "report", image, "--limit", str(ZONES), "--json")
    zones = json.loads(report.stdout)["zones"]
    lines = []
    for z in zones:
        written = min(z["wp"] - z["start"], z["capacity"])
        if written > 0:
            lines.append(f"read --lba {z['start']} --blocks {written} "
                         f"--data {tag}-{z['zone']}.bin")
    run(zonelab, "batch", image, stdin="\n".join(lines) + "\n", cwd=work)
    data = {}
    for z in zones:
        path = os.path.join(work, f"{tag}-{z['zone']}.bin")
        if os.path.exists(path):
            with open(path, "rb") as f:
                data[z["zone"]] = f.read()
            os.remove(path)
    return zones, data


def batch_iteration(zonelab, work, rng, stats):
    image = os.path.join(work, "crash.img")
    for leftover in (image,):
        if os.path.exists(leftover):
            os.remove(leftover)
    run(zonelab, "create", image, "--preset", "small")
    lines = stream(rng)
    proc = subprocess.Popen([zonelab, "batch", image], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdin.write("\n".join(lines) + "\n")
    proc.stdin.flush()
    delay = rng.uniform(0, stats["batch_seconds"])
    time.sleep(delay)
    # kill -9, the terminal's Ctrl-C and a plain kill end the process alike.
    sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
    stats["signals"][sig.name] = stats["signals"].get(sig.name, 0) + 1
    proc.send_signal(sig)
    out, _ = proc.communicate()
    answered = [l for l in out.splitlines() if l.strip()]
    # A line cut by the kill is not an answer.
    acked = 0
    for l in answered:
        try:
            json.loads(l)
            acked += 1
        except json.JSONDecodeError:
            break
    stats["acked"].append(acked)
    opened = run(zonelab, "info", image, "--json", check=False)
    if opened.returncode != 0:
        return f"the killed image does not open: {opened.stderr.strip()}"
    if "replayed" in opened.stderr:
        stats["replays"] += 1
    got = snapshot(zonelab, image, work, "got")
    candidates = []
    for prefix in (acked, acked + 1):
        if prefix > len(lines):
            continue
        reference = os.path.join(work, "reference.img")
        if os.path.exists(reference):
            os.remove(reference)
        run(zonelab, "create", reference, "--preset", "small")
        run(zonelab, "batch", reference, stdin="\n".join(lines[:prefix]) + "\n", check=False)
        candidates.append((prefix, snapshot(zonelab, reference, work, "want")))
    for prefix, want in candidates:
        if got == want:
            stats["matched_prefix"][prefix - acked] += 1
            return None
    zones_got = [(z["zone"], z["wp"], z["state"]) for z in got[0]]
    zones_want = [(z["zone"], z["wp"], z["state"]) for z in candidates[0][1][0]]
    return (f"after {acked} answered lines the image matches no run of {acked} or {acked + 1} "
            f"lines: got {zones_got}, want (prefix {acked}) {zones_want}")


def bench_iteration(zonelab, work, rng, stats, kind):
    image = os.path.join(work, f"bench-{kind}.img")
    if os.path.exists(image):
        os.remove(image)
    interface = "zns" if kind == "zns" else "block"
    extra = ["--set", "interface=block"] if interface == "block" else []
    if kind == "blockdrive":
        for kv in PRODUCTION_DRIVE:
            extra += ["--set", kv]
    run(zonelab, "create", image, "--preset", "small", *extra)
    bs = rng.choice(["4KiB", "16KiB", "64KiB"])
    proc = subprocess.Popen([zonelab, "bench", image, "--rw", "write", "--bs", bs,
                             "--iodepth", "4", "--numjobs", "2", "--zones", "0-5",
                             "--size", "500%", "--quiet"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    delay = rng.uniform(0, stats["bench_seconds"][bs])
    time.sleep(delay)
    sig = rng.choice([signal.SIGKILL, signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
    stats["signals"][sig.name] = stats["signals"].get(sig.name, 0) + 1
    proc.send_signal(sig)
    proc.communicate()
    opened = run(zonelab, "report", image, "--json", check=False)
    if opened.returncode != 0:
        return f"the killed {kind} bench image does not open: {opened.stderr.strip()}"
    if "replayed" in opened.stderr:
        stats["replays"] += 1
    if "slot" in opened.stderr:
        stats["fallbacks"] += 1
    zones = json.loads(opened.stdout)["zones"]
    for z in zones:
        if not (0 <= z["wp"] - z["start"] <= z["capacity"] or z["state"] == "full"):
            return f"zone {z['zone']} has write pointer {z['wp']} outside it"
    # The image takes new data everywhere: reset a used zone, write, verify.
    lines = []
    for zone in range(6):
        start = zone * zones[zone]["capacity"] if interface == "block" else zone * ZONE_SIZE
        lines += [f"zone reset --zone {zone}", f"write --lba {start} --blocks 64 --seed {zone + 1}",
                  f"read --lba {start} --blocks 64 --expect-seed {zone + 1}"]
    done = run(zonelab, "batch", image, stdin="\n".join(lines) + "\n", check=False)
    if done.returncode != 0:
        return f"the killed {kind} bench image fails new work: {done.stdout[-400:]}"
    return None


def timed(fn):
    start = time.monotonic()
    fn()
    return time.monotonic() - start


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("zonelab")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--min-iterations", type=int, default=40)
    parser.add_argument("--seed", type=int, default=20261123)
    args = parser.parse_args()
    zonelab = os.path.abspath(args.zonelab)
    rng = random.Random(args.seed)
    work = tempfile.mkdtemp(prefix="zonelab-crash-")
    failures = []
    stats = {"acked": [], "replays": 0, "fallbacks": 0, "matched_prefix": {0: 0, 1: 0},
             "bench_seconds": {}, "kills": {"batch": 0, "bench-zns": 0, "bench-block": 0,
                                               "bench-blockdrive": 0},
             "signals": {}}
    try:
        # How long an unkilled run takes: kills fall anywhere inside it.
        image = os.path.join(work, "probe.img")
        run(zonelab, "create", image, "--preset", "small")
        lines = stream(random.Random(1))
        stats["batch_seconds"] = timed(
            lambda: run(zonelab, "batch", image, stdin="\n".join(lines) + "\n", check=False))
        for bs in ("4KiB", "16KiB", "64KiB"):
            os.remove(image)
            run(zonelab, "create", image, "--preset", "small")
            stats["bench_seconds"][bs] = timed(lambda: run(
                zonelab, "bench", image, "--rw", "write", "--bs", bs, "--iodepth", "4",
                "--numjobs", "2", "--zones", "0-5", "--size", "500%", "--quiet"))
        os.remove(image)
        deadline = time.monotonic() + args.seconds
        iteration = 0
        while iteration < args.min_iterations or time.monotonic() < deadline:
            kind = ("batch", "bench-zns", "bench-block", "bench-blockdrive")[iteration % 4]
            if kind == "batch":
                failure = batch_iteration(zonelab, work, rng, stats)
            else:
                failure = bench_iteration(zonelab, work, rng, stats, kind.split("-")[1])
            stats["kills"][kind] += 1
            if failure:
                failures.append(f"iteration {iteration} ({kind}): {failure}")
                print("FAIL:", failures[-1])
            iteration += 1
            if len(failures) >= 5:
                break
    finally:
        shutil.rmtree(work, ignore_errors=True)
    acked = stats["acked"]
    print(f"{iteration} kills: {stats['kills']}; batch: an unkilled stream of {LINES} lines takes "
          f"{stats['batch_seconds'] * 1000:.0f} ms, kills came after 0-{max(acked or [0])} answered "
          f"lines (median {sorted(acked)[len(acked) // 2] if acked else 0}), the image held the "
          f"answered lines alone {stats['matched_prefix'][0]} times and one more "
          f"{stats['matched_prefix'][1]} times; journals replayed {stats['replays']} times; "
          f"older-slot fallbacks {stats['fallbacks']}; signals {stats['signals']}; bench runs take "
          + ", ".join(f"{bs} {s * 1000:.0f} ms" for bs, s in stats["bench_seconds"].items()))
    print(f"{iteration - len(failures)} passed, {len(failures)} failed")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
