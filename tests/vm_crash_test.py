#!/usr/bin/env python3
"""Crash consistency of `zonelab vm`: a kernel file system (ext4, xfs, ...)
in User-Mode Linux on a served block image, killed with SIGKILL at random
instants, over and over; after each kill the image must open, the file
system must check clean with its own tool, and every file whose fsync had
returned must read back with the data it was written with.

Per file system: one image, made with `zonelab create --set
interface=block` (xfs's with the production front end as well: a
write-back buffer, firmware cores, the mapping table's work, reads queued
by die, suspend) and a first `zonelab vm --fs FS -- mkdir /mnt/crash`
(mkfs). Then the
iterations, alternating the file systems, each `zonelab vm IMG --no-mkfs`
running a writer in the guest: files /mnt/crash/fITER_I of random sizes (a
few bytes to 2 MiB, most not a multiple of 4096) from /dev/urandom, each
fsync'd (with its directory), its sha256 appended to OUT/acked (a host file
through hostfs) only after the fsync returned; now and then an older file
(of this or an earlier iteration) removed, its removal logged in acked
("RM PATH" before the rm, "DEL PATH" after rm + fsync of the directory),
so the file system frees blocks. Each iteration ends one of three ways:
  session: SIGKILL to the whole session at a random instant (zonelab vm
           and, through PR_SET_PDEATHSIG, the guest): the FUSE mount of the
           killed server is left stale and is unmounted here;
  guest:   SIGKILL to the guest's kernel only (the main linux.uml, init of
           the guest's PID namespace, child of the keeper process zonelab vm
           forks): zonelab vm must notice, close the image and exit 1 on its
           own ("the guest was killed"), removing its private directory;
  clean:   no kill, a short writer that ends: exit 0.
However zonelab vm ended, no process of its guest may outlive it (10 s
grace): UML's helpers and its user processes are host processes, and a
user process whose UML kernel is gone goes on running on the host.
After each: `zonelab info IMG` must open the image, and `zonelab vm IMG
--no-mkfs --fsck -- sh -c VERIFY` must exit 0: the mount recovers the file
system, VERIFY checks the sha256 of every acknowledged file not removed
since (cumulative over all the iterations on that image), then the guest
runs e2fsck -fn / xfs_repair -n on it.

usage: vm_crash_test.py ZONELAB [--seconds S] [--min-iterations N]
                        [--fs ext4,xfs] [--seed X]
Prints one line per iteration and a summary; exit 0 when all consistent,
1 on a failure (with the logs), 77 when User-Mode Linux is missing."""
import argparse
import math
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import PRODUCTION_DRIVE, mounts_under, unmount_all  # noqa: E402

KILL_FROM_S = 2.0          # the guest boots in about 1-2 s
KILL_TO_S = 8.0
GUEST_KILL_EXIT_S = 20.0   # zonelab vm must end this soon after its guest is killed
LONG_WRITES = 400          # writes in a writer that is killed (never reached)
SHORT_WRITES = (8, 20)     # writes in a writer that ends on its own
MAX_BYTES = 2 << 20
LIVE_LIMIT = 600 << 20     # remove more often above this many live bytes
RUN_TIMEOUT_S = 240

WRITER = r'''
set -u
A="$ZONELAB_OUT/acked"
D=/mnt/crash
while read op p n; do
  case "$op" in
  w)
    head -c "$n" /dev/urandom > "$p" || { echo "writer: writing $p failed"; exit 10; }
    sync "$p" "$D" || { echo "writer: fsync $p failed"; exit 11; }
    s=$(sha256sum "$p") || exit 12
    echo "$s" >> "$A" || exit 13
    ;;
  d)
    echo "RM $p" >> "$A" || exit 13
    rm -f "$p" || { echo "writer: rm $p failed"; exit 14; }
    sync "$D" || exit 15
    echo "DEL $p" >> "$A" || exit 13
    ;;
  esac
done < "$ZONELAB_OUT/ops"
echo "writer: done"
'''

VERIFY = r'''
bad=0
n=0
while read sha p; do
  n=$((n + 1))
  if [ ! -f "$p" ]; then
    echo "verify: MISSING $p"
    bad=1
    continue
  fi
  got=$(sha256sum < "$p")
  got=${got%% *}
  if [ "$got" != "$sha" ]; then
    echo "verify: MISMATCH $p: want $sha got $got ($(stat -c %s "$p") bytes)"
    bad=1
  fi
done < "$ZONELAB_OUT/expect"
echo "verify: $n acknowledged files checked, $(ls /mnt/crash | wc -l) files in /mnt/crash, bad=$bad"
exit $bad
'''

# The files live in a directory of the guest's file system that the host
# does not have, so that a guest process which went on running on the host
# (see guest_processes) cannot write anything there.
DIR = "/mnt/crash"
ACK_RE = re.compile(r"^([0-9a-f]{64})  (/mnt/crash/\S+)$")


class Failure(Exception):
    pass


def read_stat(pid):
    """(comm, ppid) of a process, or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    close = text.rfind(")")
    comm = text[text.find("(") + 1:close]
    rest = text[close + 2:].split()
    return comm, int(rest[1])


def children_named(parent, name):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = read_stat(int(entry))
        if st is not None and st[1] == parent and st[0] == name:
            found.append(int(entry))
    return found


def guests_of(root):
    """linux.uml processes whose command line names a path under root."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        st = read_stat(int(entry))
        if st is None or st[0] != "linux.uml":
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmdline = f.read().decode(errors="replace")
        except OSError:
            continue
        if root in cmdline:
            found.append(int(entry))
    return found


def tail(path, lines=60):
    try:
        with open(path, errors="replace") as f:
            text = f.read().splitlines()
    except OSError:
        return f"({path}: missing)"
    return "\n".join(text[-lines:])


class Image:
    def __init__(self, fs, work):
        self.fs = fs
        self.path = os.path.join(work, f"{fs}.img")
        self.out = os.path.join(work, f"out-{fs}")
        self.acked = os.path.join(self.out, "acked")
        self.sizes = {}       # path in the guest -> bytes, every file ever written
        self.ops = 0

    def parse_acked(self):
        """The live acknowledged files {path: sha}, removed paths, ack count.
        A last line without its newline was cut by the kill: not an answer,
        and it is dropped so the next writer starts on a new line."""
        if not os.path.exists(self.acked):
            return {}, set(), 0
        with open(self.acked, "rb") as f:
            data = f.read()
        if data and not data.endswith(b"\n"):
            keep = data[:data.rfind(b"\n") + 1]
            with open(self.acked, "wb") as f:
                f.write(keep)
            data = keep
        live, removed, acks = {}, set(), 0
        for line in data.decode().splitlines():
            m = ACK_RE.match(line)
            if m:
                acks += 1
                live[m.group(2)] = m.group(1)
            elif line.startswith("RM ") or line.startswith("DEL "):
                path = line.split(" ", 1)[1]
                removed.add(path)
                live.pop(path, None)
            else:
                raise Failure(f"{self.acked}: a line that is no answer: {line!r}")
        return live, removed, acks


class Test:
    def __init__(self, args, work):
        self.args = args
        self.zonelab = os.path.abspath(args.zonelab)
        self.work = work
        self.rng = random.Random(args.seed)
        self.env = dict(os.environ, TMPDIR=work)
        self.procs = []
        self.iterations = 0
        self.kills = 0
        self.kinds = []

    def run(self, *args, timeout=RUN_TIMEOUT_S, log=None):
        out = open(log, "w") if log else subprocess.PIPE
        try:
            done = subprocess.run([self.zonelab, *args], stdin=subprocess.DEVNULL, stdout=out,
                                  stderr=subprocess.STDOUT if log else subprocess.PIPE,
                                  text=True, env=self.env, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"zonelab {' '.join(args[:3])} ...: no end after {timeout} s")
        finally:
            if log:
                out.close()
        return done

    def vm_dirs(self):
        return sorted(os.path.join(self.work, d) for d in os.listdir(self.work)
                      if d.startswith("zonelab-vm."))

    def setup(self, fs):
        img = Image(fs, self.work)
        os.makedirs(img.out)
        sets = ["interface=block"] + (PRODUCTION_DRIVE if fs == "xfs" else [])
        r = self.run("create", img.path, "--preset", "small",
                     *[a for kv in sets for a in ("--set", kv)])
        if r.returncode != 0:
            raise Failure(f"zonelab create: exit {r.returncode}: {r.stderr.strip()}")
        log = os.path.join(self.work, f"mkfs-{fs}.log")
        r = self.run("vm", img.path, "--fs", fs, "--out", img.out, "--", "mkdir", DIR, log=log)
        if r.returncode != 0:
            raise Failure(f"mkfs {fs}: zonelab vm exit {r.returncode}\n{tail(log)}")
        return img

    def size(self):
        roll = self.rng.random()
        if roll < 0.1:
            return self.rng.randint(1, 4095)
        n = int(math.exp(self.rng.uniform(math.log(4096), math.log(MAX_BYTES))))
        if roll < 0.35:
            n = max(4096, n // 4096 * 4096)
        return n

    def make_ops(self, img, iteration, writes):
        live, _, _ = img.parse_acked()
        old = sorted(live)
        live_bytes = sum(img.sizes.get(p, 0) for p in old)
        mine = []
        lines = []
        for i in range(1, writes + 1):
            path = f"{DIR}/f{iteration}_{i}"
            n = self.size()
            img.sizes[path] = n
            lines.append(f"w {path} {n}")
            mine.append(path)
            live_bytes += n
            chance = 0.6 if live_bytes > LIVE_LIMIT else 0.25
            if self.rng.random() < chance:
                pool = old if old and self.rng.random() < 0.5 else mine[:-1]
                if pool:
                    victim = pool.pop(self.rng.randrange(len(pool)))
                    live_bytes -= img.sizes.get(victim, 0)
                    lines.append(f"d {victim} 0")
        with open(os.path.join(img.out, "ops"), "w") as f:
            f.write("\n".join(lines) + "\n")

    def kill_guest(self, proc):
        """SIGKILL to the main linux.uml: the child of zonelab vm's keeper."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            guests = [g for keeper in children_named(proc.pid, "zonelab")
                      for g in children_named(keeper, "linux.uml")]
            if guests:
                os.kill(guests[0], signal.SIGKILL)
                return guests[0]
            if proc.poll() is not None:
                return None
            time.sleep(0.05)
        raise Failure(f"no linux.uml under zonelab vm (pid {proc.pid}) to kill")

    def guests_left(self):
        """The guest's processes still running 10 s after zonelab vm ended
        (killed here, each by its pid), as text; empty when none."""
        deadline = time.monotonic() + 10
        while True:
            left = guests_of(self.work)
            if not left or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        text = []
        for pid in left:
            st = read_stat(pid)
            try:
                with open(f"/proc/{pid}/wchan") as f:
                    wchan = f.read().strip()
            except OSError:
                wchan = "?"
            text.append(f"pid {pid} (parent {st[1] if st else '?'}, waiting in {wchan})")
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return ", ".join(text)

    def iteration(self, img, kind):
        n = self.iterations + 1
        live_before, _, acks_before = img.parse_acked()
        writes = LONG_WRITES if kind != "clean" else self.rng.randint(*SHORT_WRITES)
        self.make_ops(img, n, writes)
        instant = self.rng.uniform(KILL_FROM_S, KILL_TO_S) if kind != "clean" else None
        log = os.path.join(self.work, f"iter{n}-{img.fs}-writer.log")
        err = os.path.join(self.work, f"iter{n}-{img.fs}-writer.err")
        verify_log = os.path.join(self.work, f"iter{n}-{img.fs}-verify.log")
        logs = [log, err, verify_log]
        what = (f"iteration {n} (fs {img.fs}, kill {kind}"
                + (f" at {instant:.2f} s" if instant is not None else "") + f", seed {self.args.seed})")

        def fail(message):
            parts = [f"FAIL: {what}: {message}"]
            for path in logs:
                parts.append(f"--- {path}\n{tail(path, 120)}")
            raise Failure("\n".join(parts))

        before_dirs = set(self.vm_dirs())
        with open(log, "w") as out, open(err, "w") as errf:
            start = time.monotonic()
            proc = subprocess.Popen(
                [self.zonelab, "vm", img.path, "--fs", img.fs, "--no-mkfs", "--out", img.out,
                 "--", "sh", "-c", WRITER],
                stdin=subprocess.DEVNULL, stdout=out, stderr=errf, env=self.env,
                start_new_session=True)
            self.procs.append(proc)
            note = ""
            if kind == "clean":
                try:
                    code = proc.wait(timeout=RUN_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    fail(f"the writer did not end in {RUN_TIMEOUT_S} s")
                if code != 0:
                    fail(f"zonelab vm exit {code}, want 0")
                if "writer: done" not in tail(log, 1000):
                    fail("the writer did not finish")
            else:
                while time.monotonic() - start < instant and proc.poll() is None:
                    time.sleep(0.02)
                if proc.poll() is not None:
                    fail(f"zonelab vm ended (exit {proc.returncode}) before the kill")
                if kind == "session":
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    self.kills += 1
                else:
                    victim = self.kill_guest(proc)
                    if victim is None:
                        fail(f"zonelab vm ended (exit {proc.returncode}) before the kill")
                    self.kills += 1
                    killed_at = time.monotonic()
                    try:
                        code = proc.wait(timeout=GUEST_KILL_EXIT_S)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                        fail(f"zonelab vm did not exit within {GUEST_KILL_EXIT_S:.0f} s after "
                             f"its guest (pid {victim}) was killed")
                    note = f", zonelab vm exit {code} {time.monotonic() - killed_at:.1f} s after"
            self.procs.remove(proc)
        left = self.guests_left()
        if left:
            fail(f"linux.uml processes of the guest still running 10 s after zonelab vm "
                 f"ended: {left}")
        if kind == "guest" and proc.returncode != 1:
            fail(f"zonelab vm exit {proc.returncode} after its guest was killed, want 1")
        if kind == "guest" and "the guest was killed" not in tail(err, 1000):
            fail("zonelab vm's stderr does not say \"the guest was killed\"")
        # A killed server leaves its FUSE mount stale; zonelab vm itself
        # must leave nothing behind.
        new_dirs = [d for d in self.vm_dirs() if d not in before_dirs]
        if kind == "session":
            unmount_all(self.work)
            for d in new_dirs:
                shutil.rmtree(d, ignore_errors=True)
        elif new_dirs:
            fail(f"zonelab vm left its private directory {new_dirs} behind")
        if mounts_under(self.work):
            fail(f"mounts left under {self.work}: {mounts_under(self.work)}")

        r = self.run("info", img.path)
        if r.returncode != 0:
            fail(f"zonelab info on the image: exit {r.returncode}: {r.stderr.strip()}")

        live, removed, acks = img.parse_acked()
        acked_now = acks - acks_before
        with open(os.path.join(img.out, "expect"), "w") as f:
            for path, sha in sorted(live.items()):
                f.write(f"{sha}  {path}\n")
        t0 = time.monotonic()
        r = self.run("vm", img.path, "--fs", img.fs, "--no-mkfs", "--fsck", "--out", img.out,
                     "--", "sh", "-c", VERIFY, log=verify_log)
        verify_s = time.monotonic() - t0
        if r.returncode != 0:
            fail(f"verify: zonelab vm --fsck exit {r.returncode} (want 0): "
                 f"{'fsck found problems' if r.returncode == 3 else 'acknowledged data lost or bad'}")
        checked = re.search(r"verify: (\d+) acknowledged files checked", tail(verify_log, 1000))
        if not checked or int(checked.group(1)) != len(live):
            fail(f"verify did not check the {len(live)} files")
        self.iterations = n
        self.kinds.append(kind)
        when = f" at {instant:.2f} s" if instant is not None else ""
        print(f"iteration {n}: {img.fs:5} kill {kind:7}{when or ' (none)  '}: "
              f"{acked_now} files acked{note}; verify ok ({len(live)} live files, "
              f"{verify_s:.1f} s, fsck clean)", flush=True)

    def main(self):
        fss = [f for f in self.args.fs.split(",") if f]
        t0 = time.monotonic()
        images = [self.setup(fs) for fs in fss]
        print(f"made {', '.join(fss)} in {time.monotonic() - t0:.1f} s (seed {self.args.seed})",
              flush=True)
        start = time.monotonic()
        kinds = []
        while True:
            elapsed = time.monotonic() - start
            if elapsed >= 3 * self.args.seconds:
                break
            if elapsed >= self.args.seconds and self.iterations >= self.args.min_iterations:
                break
            if not kinds:
                kinds = ["session", "session", "guest", "guest", "clean"]
                self.rng.shuffle(kinds)
            self.iteration(images[self.iterations % len(images)], kinds.pop())
        if self.iterations < self.args.min_iterations:
            raise Failure(f"only {self.iterations} iterations in {3 * self.args.seconds} s, "
                          f"want {self.args.min_iterations}")
        counts = ", ".join(f"{k} {self.kinds.count(k)}" for k in ("session", "guest", "clean"))
        print(f"{self.iterations} iterations, {self.kills} kills, all consistent "
              f"({counts}; {time.monotonic() - t0:.0f} s)")

    def cleanup(self):
        for proc in self.procs:
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
        for pid in guests_of(self.work):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        unmount_all(self.work)
        shutil.rmtree(self.work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("zonelab")
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--min-iterations", type=int, default=8)
    ap.add_argument("--fs", default="ext4,xfs")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 32)
    if shutil.which("linux.uml") is None and not os.environ.get("ZONELAB_UML"):
        print("skip: User-Mode Linux (linux.uml) is not installed")
        return 77
    work = tempfile.mkdtemp(prefix="vm-crash-")
    test = Test(args, work)
    try:
        test.main()
    except Failure as e:
        print(str(e), file=sys.stderr)
        return 1
    finally:
        test.cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
