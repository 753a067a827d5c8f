#!/usr/bin/env python3
"""Power cuts on a drive with a write-back buffer lose exactly what the model
says, through the real command line.

(a) A volatile write cache (buffer.size=1MiB, buffer.power_loss_protection=
off): rounds of `zonelab batch` writes of random sizes (many end in a partly
written page) across a few zones, with a `flush` line now and then, and
`zonelab inject --power-loss` after some rounds. The test keeps its own
model of each zone and predicts every write pointer exactly: a clean end of
a process leaves the next one idle, so every full page written before the
cut is on flash, and only a zone's partly written last page is volatile --
unless a Flush covered it. Each zone keeps
    min(end, max(flushed, end - end % lbas_per_page))
LBAs. After each cut `report --json` gives those write pointers (a zone
that lost data is closed, or empty when it kept nothing), every kept write
reads back with --expect-seed, and every lost LBA reads as zeros.

(b) With power-loss protection on, `inject --power-loss` loses nothing:
every acknowledged write reads back and no zone lost data.

(c) `zonelab batch` on a protection-off image is killed (SIGKILL) in the
middle of a stream of write and flush lines. The next writable open
replays the journal and cuts the power: every write answered before the
last answered `flush` is there, no zone keeps more than was sent, the kept
data reads back, the lost LBAs read as zeros, and a second open changes
nothing. A read-only open right after the kill (report) must show the
same write pointers as the writable open that follows it.

usage: power_loss_test.py ZONELAB [--rounds N] [--kills N] [--seed X]
Prints each failure and a summary."""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ZONES = 4
SIZES = [1, 2, 3, 4, 5, 7, 8, 13, 16, 29]  # LBAs: partial pages and whole ones
BUFFER = ["--preset", "small", "--set", "buffer.size=1MiB"]


def size_bytes(text):
    m = re.fullmatch(r"(\d+)(B|KiB|MiB|GiB)?", text)
    return int(m.group(1)) << {"B": 0, None: 0, "KiB": 10, "MiB": 20, "GiB": 30}[m.group(2)]


class Zones:
    """What the test expects of each zone: the acknowledged data end, the
    last Flush mark, and the writes (from, blocks, seed) below the end."""

    def __init__(self, count):
        self.end = [0] * count
        self.flushed = [0] * count
        self.writes = [[] for _ in range(count)]

    def wrote(self, zone, blocks, seed):
        self.writes[zone].append((self.end[zone], blocks, seed))
        self.end[zone] += blocks

    def flush(self):
        self.flushed = list(self.end)

    def cut_to(self, zone, kept):
        """The zone keeps its first `kept` LBAs; returns the lost range."""
        lost = (kept, self.end[zone])
        self.end[zone] = kept
        self.flushed[zone] = min(self.flushed[zone], kept)
        out = []
        for first, blocks, seed in self.writes[zone]:
            if first < kept:
                out.append((first, min(blocks, kept - first), seed))
        self.writes[zone] = out
        return lost


class Device:
    def __init__(self, zonelab, checks):
        self.z = zonelab
        self.checks = checks
        self.commands = 0

    def run(self, *argv, stdin=None):
        self.commands += 1
        return subprocess.run([self.z, *argv], input=stdin, capture_output=True, text=True)

    def json(self, *argv, stdin=None):
        out = self.run(*argv, "--json", stdin=stdin)
        try:
            return out, json.loads(out.stdout) if out.stdout.strip() else {}
        except json.JSONDecodeError:
            return out, {}

    def batch(self, img, lines):
        out = self.run("batch", img, stdin="".join(line + "\n" for line in lines))
        answers = [json.loads(a) for a in out.stdout.splitlines() if a.strip()]
        return out, answers

    def report(self, img):
        out, answer = self.json("report", img, "--limit", str(ZONES))
        zones = answer.get("zones", [])
        self.checks.check("report %s" % os.path.basename(img),
                          out.returncode == 0 and len(zones) == ZONES, out.stdout + out.stderr)
        return zones

    def verify(self, img, starts, model, lost, what, tmp):
        """Every write the model keeps reads back; every lost range reads as
        zeros. One batch for all the reads."""
        lines, expect = [], []
        for zone, writes in enumerate(model.writes):
            for first, blocks, seed in writes:
                lines.append("read --lba %d --blocks %d --expect-seed %d"
                             % (starts[zone] + first, blocks, seed))
                expect.append(("data", zone, first, blocks, None))
        for zone, (first, last) in lost.items():
            if last > first:
                path = os.path.join(tmp, "lost%d.bin" % zone)
                lines.append("read --lba %d --blocks %d --data %s"
                             % (starts[zone] + first, last - first, path))
                expect.append(("zeros", zone, first, last - first, path))
        if not lines:
            return
        out, answers = self.batch(img, lines)
        self.checks.check("%s: the verifying batch answers every line" % what,
                          out.returncode == 0 and len(answers) == len(lines),
                          "%d of %d answers, exit %d: %s"
                          % (len(answers), len(lines), out.returncode, out.stderr[-300:]))
        for (kind, zone, first, blocks, path), answer in zip(expect, answers):
            if kind == "data":
                self.checks.check("%s: zone %d LBAs %d+%d read back" % (what, zone, first, blocks),
                                  answer.get("verified") is True, str(answer))
            else:
                with open(path, "rb") as f:
                    data = f.read()
                self.checks.check("%s: zone %d's lost LBAs %d+%d read as zeros"
                                  % (what, zone, first, blocks),
                                  answer.get("status") == "SUCCESS" and
                                  len(data) == blocks * self.lba_bytes and not any(data),
                                  str(answer))


def geometry(dev, img):
    out, info = dev.json("info", img)
    dev.checks.check("info", out.returncode == 0, out.stderr)
    lba = info["lba_size"]
    page = size_bytes(info["config"]["flash"]["page_size"])
    starts = [i * info["zone_size_lbas"] for i in range(ZONES)]
    return lba, page // lba, starts, info["zone_capacity_lbas"], info


def random_lines(rng, model, starts, cap, seed_base, count):
    """A round's batch lines: writes at the write pointers, some flushes."""
    lines, ops = [], []
    end = list(model.end)
    for i in range(count):
        if rng.random() < 0.25:
            lines.append("flush")
            ops.append(("flush",))
            continue
        zone = rng.randrange(ZONES)
        blocks = min(rng.choice(SIZES), cap - end[zone])
        if blocks == 0:
            continue
        lines.append("write --lba %d --blocks %d --seed %d"
                     % (starts[zone] + end[zone], blocks, seed_base + i))
        ops.append(("write", zone, blocks, seed_base + i))
        end[zone] += blocks
    return lines, ops


def run_rounds(dev, img, rng, rounds, protected, tmp):
    """Parts (a) and (b): batches, flushes and cuts; the model predicts
    every write pointer."""
    checks = dev.checks
    name = "protected" if protected else "volatile"
    lba_bytes, lpp, starts, cap, info = geometry(dev, img)
    dev.lba_bytes = lba_bytes
    checks.check("%s: info tells the cache" % name,
                 info.get("volatile_write_cache") is (not protected), str(info)[:300])
    model = Zones(ZONES)
    cuts = lost_zones = 0
    for rnd in range(rounds):
        lines, ops = random_lines(rng, model, starts, cap, 1000 * (rnd + 1), rng.randint(3, 12))
        out, answers = dev.batch(img, lines)
        checks.check("%s round %d: batch answers every line" % (name, rnd),
                     out.returncode == 0 and len(answers) == len(lines),
                     "%d of %d, exit %d %s" % (len(answers), len(lines), out.returncode,
                                               out.stderr[-300:]))
        for op, answer, line in zip(ops, answers, lines):
            checks.check("%s round %d: %s" % (name, rnd, line),
                         answer.get("status") == "SUCCESS", str(answer))
            if op[0] == "write":
                model.wrote(op[1], op[2], op[3])
            else:
                checks.check("%s round %d: flush tells the cache" % (name, rnd),
                             answer.get("volatile_write_cache") is (not protected), str(answer))
                model.flush()
        if rng.random() >= 0.6 and rnd != rounds - 1:
            continue
        # The cut, in a process of its own.
        cuts += 1
        if protected:
            kept = list(model.end)
        else:
            kept = [min(end, max(flushed, end - end % lpp))
                    for end, flushed in zip(model.end, model.flushed)]
        losing = [zone for zone in range(ZONES) if kept[zone] < model.end[zone]]
        lost_zones += len(losing)
        out, answer = dev.json("inject", img, "--power-loss")
        checks.check("%s round %d: inject --power-loss" % (name, rnd),
                     out.returncode == 0 and answer.get("power_loss") is True, out.stderr)
        checks.check("%s round %d: %d zone(s) lose data" % (name, rnd, len(losing)),
                     answer.get("zones_lost_data") == len(losing), str(answer))
        lost = {zone: model.cut_to(zone, kept[zone]) for zone in losing}
        zones = dev.report(img)
        for zone, z in enumerate(zones):
            want_state = None
            if zone in losing:
                want_state = "closed" if kept[zone] else "empty"
            elif model.end[zone] == 0:
                want_state = "empty"
            checks.check("%s round %d: zone %d's write pointer is %d" % (name, rnd, zone, kept[zone]),
                         z["wp"] == starts[zone] + kept[zone], str(z))
            if want_state is not None:
                checks.check("%s round %d: zone %d is %s" % (name, rnd, zone, want_state),
                             z["state"] == want_state, str(z))
        dev.verify(img, starts, model, lost, "%s round %d" % (name, rnd), tmp)
    # Writing goes on at the kept write pointers.
    zone = rng.randrange(ZONES)
    out = dev.run("write", img, "--lba", str(starts[zone] + model.end[zone]), "--blocks", "3",
                  "--seed", "5")
    checks.check("%s: a write at zone %d's kept write pointer" % (name, zone), out.returncode == 0,
                 out.stdout + out.stderr)
    print("%s: %d rounds, %d cuts, %d zone losses, %d LBAs kept"
          % (name, rounds, cuts, lost_zones, sum(model.end)))
    return lost_zones


def kill_batch(z, img, lines, answered_before_kill):
    """Feeds `lines` to `zonelab batch` and SIGKILLs it once that many are
    answered (or it ends); returns the answers read."""
    proc = subprocess.Popen([z, "batch", img], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True, bufsize=1)

    def feed():
        try:
            for line in lines:
                proc.stdin.write(line + "\n")
            proc.stdin.close()
        except (BrokenPipeError, ValueError, OSError):
            pass  # killed

    feeder = threading.Thread(target=feed)
    feeder.start()
    raw = []
    while len(raw) < answered_before_kill:
        line = proc.stdout.readline()
        if not line:
            break
        raw.append(line)
    proc.kill()  # SIGKILL
    raw += proc.stdout.readlines()
    proc.stdout.close()
    proc.wait()
    feeder.join()
    answers = []
    for line in raw:
        if not line.endswith("\n"):
            break  # cut in the middle of an answer
        answers.append(json.loads(line))
    return answers


def run_kills(dev, tmp, rng, kills):
    """Part (c)."""
    checks = dev.checks
    for kill in range(kills):
        img = os.path.join(tmp, "kill.img")
        if os.path.exists(img):
            os.remove(img)
        out = dev.run("create", img, *BUFFER, "--set", "buffer.power_loss_protection=off")
        checks.check("kill %d: create" % kill, out.returncode == 0, out.stderr)
        lba_bytes, lpp, starts, cap, _ = geometry(dev, img)
        dev.lba_bytes = lba_bytes
        sent = Zones(ZONES)
        lines, ops = [], []
        for i in range(1500):
            if rng.random() < 0.12:
                lines.append("flush")
                ops.append(("flush",))
                continue
            zone = rng.randrange(ZONES)
            blocks = min(rng.choice(SIZES), cap - sent.end[zone])
            if blocks == 0:
                continue
            seed = 100000 * (kill + 1) + i
            lines.append("write --lba %d --blocks %d --seed %d"
                         % (starts[zone] + sent.end[zone], blocks, seed))
            ops.append(("write", zone, blocks, seed))
            sent.wrote(zone, blocks, seed)
        answers = kill_batch(dev.z, img, lines, rng.randint(10, 900))
        dev.commands += 1
        # What was answered, in line order; the marks of the last flush.
        acked = Zones(ZONES)
        marks = [0] * ZONES
        flushes = 0
        for op, answer, line in zip(ops, answers, lines):
            checks.check("kill %d: %s answered SUCCESS" % (kill, line),
                         answer.get("status") == "SUCCESS" and
                         answer.get("command") == op[0], str(answer))
            if op[0] == "write":
                acked.wrote(op[1], op[2], op[3])
            else:
                marks = list(acked.end)
                flushes += 1
        # A read-only look first, then the writable open that cuts the power.
        before = [z["wp"] - starts[i] for i, z in enumerate(dev.report(img))]
        out, answer = dev.json("flush", img)
        checks.check("kill %d: the image opens for writing after the kill" % kill,
                     out.returncode == 0 and answer.get("status") == "SUCCESS",
                     out.stdout + out.stderr)
        kept = [z["wp"] - starts[i] for i, z in enumerate(dev.report(img))]
        states = [z["state"] for z in dev.report(img)]
        for zone in range(ZONES):
            checks.check("kill %d: zone %d keeps the %d LBAs the last answered flush covered "
                         "(has %d)" % (kill, zone, marks[zone], kept[zone]),
                         marks[zone] <= kept[zone] <= sent.end[zone],
                         "sent %d, answered %d" % (sent.end[zone], acked.end[zone]))
            checks.check("kill %d: zone %d is empty exactly when it keeps nothing" % (kill, zone),
                         (states[zone] == "empty") == (kept[zone] == 0), states[zone])
        # The kept data is the data sent, in order; what is gone reads as
        # zeros.
        lost = {}
        for zone in range(ZONES):
            lost[zone] = sent.cut_to(zone, kept[zone])
        dev.verify(img, starts, sent, lost, "kill %d" % kill, tmp)
        # Nothing more goes at the next open.
        again = [z["wp"] - starts[i] for i, z in enumerate(dev.report(img))]
        checks.check("kill %d: a second open keeps the same write pointers" % kill,
                     again == kept, "%s then %s" % (kept, again))
        checks.check("kill %d: the read-only open after the kill showed what the writable open "
                     "kept" % kill, before == kept, "read-only %s, writable %s" % (before, kept))
        print("kill %d: %d of %d lines answered (%d flushes); marks %s, kept %s, read-only view %s"
              % (kill, len(answers), len(lines), flushes, marks, kept, before))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("zonelab")
    parser.add_argument("--rounds", type=int, default=40)
    parser.add_argument("--kills", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    checks = Checks()
    dev = Device(os.path.realpath(args.zonelab), checks)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        # (a) A volatile write cache.
        img = os.path.join(tmp, "volatile.img")
        out = dev.run("create", img, *BUFFER, "--set", "buffer.power_loss_protection=off")
        checks.check("create a volatile-cache image", out.returncode == 0, out.stderr)
        losses = run_rounds(dev, img, rng, args.rounds, False, tmp)
        checks.check("some cut lost data", losses > 0, "no zone ever lost data")
        # (b) Power-loss protection.
        img = os.path.join(tmp, "protected.img")
        out = dev.run("create", img, *BUFFER, "--set", "buffer.power_loss_protection=on")
        checks.check("create a protected image", out.returncode == 0, out.stderr)
        run_rounds(dev, img, rng, max(args.rounds // 3, 2), True, tmp)
        # (c) Killed in the middle of writes and flushes.
        run_kills(dev, tmp, rng, args.kills)
    print("%d commands" % dev.commands)
    sys.exit(checks.finish())


main()
