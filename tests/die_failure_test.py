#!/usr/bin/env python3
"""Die failures on a FlexZNS image lose no acknowledged data.

A file-backed image formatted with two zone sets (1 MiB zones of 2 dies and
4 MiB zones of every die) and die-level parity, in-zone and separate, takes
rounds of a random mixed workload: a random die fails, `zonelab batch`
writes at the write pointers of random zones (the data a pattern of one seed
and each LBA), reads random written ranges back with --expect-seed, resets
a zone now and then; the die comes back or stays failed into the next
round, and each command runs in a new process, so the failed dies, the data
and the parity go through the image every time. Every write that was
answered SUCCESS must read back verified, always with one die failed; a
second failed die in the same stripes may make a read answer
UNRECOVERED_READ_ERROR (exit 3) but never a MISMATCH. Then batches of
writes on parity images are killed at random instants: with a die failed
afterwards, every answered write reads back. Last, the zoned file
system with RocksDB on a one-set image with parity: after a die fails,
every acknowledged key reads back and fsck is clean.

usage: die_failure_test.py ZONELAB [--rounds N] [--kills N] [--seed X]
Prints the rounds, the commands and the failures."""
import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

GEOMETRY = ["--preset", "small", "--set", "flash.blocks_per_plane=16",
            "--set", "flash.pages_per_block=64", "--set", "flash.page_size=4KiB",
            "--set", "zns.max_open=0", "--set", "zns.max_active=0"]
FORMAT = "1MiB:8,4MiB:6"
DATA_SEED = 77
CHANNELS, DIES = 4, 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("zonelab")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kills", type=int, default=10)
    args = parser.parse_args()
    z = os.path.realpath(args.zonelab)
    rng = random.Random(args.seed)
    checks = Checks()
    commands = 0

    def run(*argv, stdin=None):
        nonlocal commands
        commands += 1
        return subprocess.run([z, *argv], input=stdin, capture_output=True, text=True)

    with tempfile.TemporaryDirectory() as tmp:
        for parity in ("in-zone", "separate"):
            img = os.path.join(tmp, parity + ".img")
            made = run("create", img, *GEOMETRY, "--set", "zns.format=" + FORMAT,
                       "--set", "zns.parity.placement=" + parity, "--json")
            checks.check(parity + ": create", made.returncode == 0, made.stderr)
            info = json.loads(run("info", img, "--json").stdout)
            sets = info["zone_sets"]
            zones = []  # (start, capacity)
            for s in sets:
                for i in range(s["count"]):
                    zones.append((s["first_lba"] + i * s["size_lbas"], s["capacity_lbas"]))
            written = [0] * len(zones)  # acknowledged LBAs from each zone's start
            failed = None
            for rnd in range(args.rounds):
                if failed is not None and rng.random() < 0.5:
                    back = run("inject", img, "--die", failed, "--state", "ok")
                    checks.check("%s round %d: die %s back" % (parity, rnd, failed),
                                 back.returncode == 0, back.stderr)
                    failed = None
                if failed is None:
                    failed = "%d:%d" % (rng.randrange(CHANNELS), rng.randrange(DIES))
                    out = run("inject", img, "--die", failed, "--state", "failed")
                    checks.check("%s round %d: die %s fails" % (parity, rnd, failed),
                                 out.returncode == 0, out.stderr)
                lines, expect = [], []
                for _ in range(40):
                    zone = rng.randrange(len(zones))
                    start, cap = zones[zone]
                    op = rng.random()
                    if op < 0.6 and written[zone] < cap:
                        n = min(cap - written[zone], rng.choice([1, 3, 8, 16, 64, 100]))
                        lines.append("write --lba %d --blocks %d --seed %d"
                                     % (start + written[zone], n, DATA_SEED))
                        expect.append(("write", zone, n))
                        written[zone] += n  # only if answered SUCCESS (checked below)
                    elif op < 0.95 and written[zone] > 0:
                        first = rng.randrange(written[zone])
                        n = rng.randint(1, min(64, written[zone] - first))
                        lines.append("read --lba %d --blocks %d --expect-seed %d"
                                     % (start + first, n, DATA_SEED))
                        expect.append(("read", zone, n))
                    elif written[zone] > 0 and rng.random() < 0.3:
                        lines.append("zone reset --zone %d" % zone)
                        expect.append(("reset", zone, 0))
                        written[zone] = 0
                out = run("batch", img, stdin="\n".join(lines) + "\n")
                answers = [json.loads(a) for a in out.stdout.splitlines() if a.strip()]
                checks.check("%s round %d: batch answers every line" % (parity, rnd),
                             out.returncode in (0, 3) and len(answers) == len(lines),
                             "%d of %d, %s" % (len(answers), len(lines), out.stderr[-300:]))
                for (kind, zone, n), answer, line in zip(expect, answers, lines):
                    ok = answer.get("status") == "SUCCESS"
                    if kind == "read":
                        ok = ok and answer.get("verified") is True
                    checks.check("%s round %d: %s" % (parity, rnd, line), ok, str(answer))
            # Everything acknowledged reads back, with the last die still failed,
            # in a new process.
            for zone, (start, cap) in enumerate(zones):
                for first in range(0, written[zone], 256):
                    n = min(256, written[zone] - first)
                    out = run("read", img, "--lba", str(start + first), "--blocks", str(n),
                              "--expect-seed", str(DATA_SEED), "--json")
                    answer = json.loads(out.stdout) if out.stdout else {}
                    checks.check("%s: zone %d LBAs %d+%d read back (die %s failed)"
                                 % (parity, zone, first, n, failed),
                                 out.returncode == 0 and answer.get("verified") is True,
                                 out.stdout + out.stderr)
            # A second failed die in the same stripes: reads fail or verify,
            # never return wrong data.
            if failed is None:
                failed = "0:0"
                run("inject", img, "--die", failed, "--state", "failed")
            second = "%d:%d" % ((int(failed.split(":")[0]) + 1) % CHANNELS,
                                int(failed.split(":")[1]))
            run("inject", img, "--die", second, "--state", "failed")
            lost = verified = 0
            for zone, (start, cap) in enumerate(zones):
                if written[zone] == 0:
                    continue
                out = run("read", img, "--lba", str(start), "--blocks",
                          str(min(written[zone], 256)), "--expect-seed", str(DATA_SEED), "--json")
                answer = json.loads(out.stdout) if out.stdout else {}
                if answer.get("status") == "UNRECOVERED_READ_ERROR":
                    lost += 1
                    checks.check("%s: a double failure is exit 3" % parity, out.returncode == 3)
                else:
                    verified += 1
                    checks.check("%s: zone %d reads back right or not at all" % (parity, zone),
                                 answer.get("verified") is True, out.stdout + out.stderr)
            checks.check("%s: the double failure is reported somewhere" % parity, lost > 0,
                         "%d verified, %d lost" % (verified, lost))
            print("%s: %d rounds, %d LBAs acknowledged at the end; with dies %s and %s failed: "
                  "%d zone reads verified, %d reported lost"
                  % (parity, args.rounds, sum(written), failed, second, verified, lost))
        # Killed while writing: a batch of writes on a parity image is
        # killed at a random instant; after it, with a die failed, every
        # answered write reads back (the open recomputes each zone's partly
        # written stripe from the data, whatever the killed write left).
        for kill in range(args.kills):
            parity = ("in-zone", "separate")[kill % 2]
            img = os.path.join(tmp, "kill.img")
            if os.path.exists(img):
                os.remove(img)
            run("create", img, *GEOMETRY, "--set", "zns.format=" + FORMAT,
                "--set", "zns.parity.placement=" + parity)
            zones = [(i * 256, 256) for i in range(8)] + [(2048 + i * 1024, 1024) for i in range(6)]
            fill = [0] * len(zones)
            lines = []
            for _ in range(600):
                zone = rng.randrange(len(zones))
                n = min(zones[zone][1] - fill[zone], rng.choice([1, 2, 5, 9]))
                if n == 0:
                    continue
                lines.append((zone, fill[zone], n))
                fill[zone] += n
            proc = subprocess.Popen([z, "batch", img], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
            proc.stdin.write("".join("write --lba %d --blocks %d --seed %d\n"
                                     % (zones[zone][0] + at, n, DATA_SEED)
                                     for zone, at, n in lines))
            proc.stdin.flush()
            time.sleep(rng.uniform(0.0, 0.08))
            proc.kill()
            out, _ = proc.communicate()
            answered = [json.loads(a) for a in out.splitlines() if a.strip().startswith("{")]
            acked = [0] * len(zones)
            for (zone, at, n), answer in zip(lines, answered):
                if answer.get("status") == "SUCCESS":
                    acked[zone] = at + n
            die = "%d:%d" % (rng.randrange(CHANNELS), rng.randrange(DIES))
            failed_die = run("inject", img, "--die", die, "--state", "failed")
            checks.check("kill %d (%s): the image opens and the die fails" % (kill, parity),
                         failed_die.returncode == 0, failed_die.stderr)
            good = True
            for zone, (start, cap) in enumerate(zones):
                if acked[zone] == 0:
                    continue
                out = run("read", img, "--lba", str(start), "--blocks", str(acked[zone]),
                          "--expect-seed", str(DATA_SEED), "--json")
                answer = json.loads(out.stdout) if out.stdout else {}
                good = good and answer.get("verified") is True
                checks.check("kill %d (%s): zone %d's %d answered LBAs read back, die %s failed"
                             % (kill, parity, zone, acked[zone], die),
                             answer.get("verified") is True, out.stdout + out.stderr)
            print("kill %d (%s): after %d of %d answered writes, die %s failed: %s"
                  % (kill, parity, len(answered), len(lines), die,
                     "all read back" if good else "LOST DATA"))

        # The file system (one zone set) survives a die: RocksDB's
        # acknowledged keys all read back, fsck is clean.
        img = os.path.join(tmp, "fs.img")
        acks = os.path.join(tmp, "acks")
        out = run("create", img, "--preset", "small", "--set", "flash.blocks_per_plane=32",
                  "--set", "flash.pages_per_block=64", "--set", "flash.page_size=4KiB",
                  "--set", "zns.max_open=0", "--set", "zns.max_active=0",
                  "--set", "zns.format=1MiB:80", "--set", "zns.parity.placement=separate")
        out = out if out.returncode != 0 else run("mkfs", img)
        out = out if out.returncode != 0 else run("kv", img, "--workload", "fillrandom",
                                                  "--ops", "20000", "--ack-log", acks)
        checks.check("fs: mkfs and 20,000 RocksDB writes", out.returncode == 0, out.stderr[-300:])
        for die in ("2:1", "0:0"):
            run("inject", img, "--die", die, "--state", "ok")
            failed = run("inject", img, "--die", die, "--state", "failed")
            verify = run("kv", img, "--workload", "verify", "--ack-log", acks, "--json")
            result = json.loads(verify.stdout).get("verify", {}) if verify.stdout else {}
            checks.check("fs: die %s failed, every acknowledged key reads back" % die,
                         failed.returncode == 0 and verify.returncode == 0 and
                         result.get("missing") == 0 and result.get("wrong") == 0 and
                         result.get("listed", 0) > 0, verify.stdout[-300:] + verify.stderr[-300:])
            fsck = run("fs", "fsck", img)
            checks.check("fs: die %s failed, fsck clean" % die, fsck.returncode == 0,
                         fsck.stdout + fsck.stderr)
            run("inject", img, "--die", die, "--state", "ok")
            print("fs: die %s failed: %s" % (die, result))
    print("%d commands" % commands)
    sys.exit(checks.finish())


main()
