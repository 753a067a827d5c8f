#!/usr/bin/env python3
"""`zonelab serve` end to end: a block image as a file through FUSE.

Reads and writes at any offset and length (the server merges part-LBAs),
punched holes read as zeros and reach the device as deallocate, the size
is fixed, writes past the end are refused; SIGUSR1 writes statistics,
SIGTERM stops cleanly, an unmount from outside stops it too; bad input
(a ZNS image, an image in use, a missing or busy mount point, bad flags)
gets one line and exit 2 with the image untouched. Then a crash loop: a
writer fsyncs blocks through the served file while `zonelab serve` is
killed with SIGKILL at random instants; after each kill the image opens
and every acknowledged block reads back.

Everything runs in a private directory; mounts left by killed servers
are unmounted before it is removed.
"""
import argparse
import errno
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import mounts_under, unmount_all  # noqa: E402

ZONELAB = None
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}", flush=True)
    return condition


def run(*args, **kw):
    return subprocess.run([ZONELAB, *args], capture_output=True, text=True, timeout=120, **kw)


class Server:
    def __init__(self, image, mount, *extra):
        self.mount = mount
        self.file = os.path.join(mount, "disk")
        self.proc = subprocess.Popen([ZONELAB, "serve", image, mount, *extra],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 30
        while not os.path.exists(self.file):
            if self.proc.poll() is not None:
                raise RuntimeError(f"serve ended early: {self.proc.stderr.read()}")
            if time.monotonic() > deadline:
                raise RuntimeError("the served file did not appear")
            time.sleep(0.02)

    def stop(self, sig=signal.SIGTERM):
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=60)
        return self.proc.returncode, out, err


def create(path, *sets):
    args = ["create", path, "--preset", "small"]
    for s in sets:
        args += ["--set", s]
    r = run(*args)
    assert r.returncode == 0, r.stderr
    return path


def test_reads_writes_holes(d):
    image = create(os.path.join(d, "blk.img"), "interface=block")
    mount = os.path.join(d, "m")
    os.mkdir(mount)
    stats = os.path.join(d, "stats.json")
    s = Server(image, mount, "--timing", "off", "--stats", stats)
    size = os.stat(s.file).st_size
    rng = random.Random(1)
    expected = {}
    fd = os.open(s.file, os.O_RDWR)
    try:
        # Offsets and lengths of every alignment: sectors, odd bytes, across
        # LBAs, whole LBAs.
        for i in range(60):
            length = rng.choice([1, 7, 511, 512, 4095, 4096, 4097, 12288, 65536 + 3])
            offset = rng.randrange(0, 64 << 20)
            data = bytes(rng.getrandbits(8) for _ in range(length))
            check(os.pwrite(fd, data, offset) == length, f"pwrite {offset}+{length}")
            for k in range(length):
                expected[offset + k] = data[k]
        lo, hi = min(expected), max(expected) + 1
        back = os.pread(fd, hi - lo, lo)
        bad = [o for o, v in expected.items() if back[o - lo] != v]
        check(not bad, f"{len(bad)} bytes read back wrong after unaligned writes")
        zeros = [i for i in range(hi - lo) if (i + lo) not in expected and back[i] != 0]
        check(not zeros, f"{len(zeros)} unwritten bytes are not zero")
        # A hole from the middle of one LBA to the middle of another.
        os.pwrite(fd, b"\xab" * (5 * 4096), 100 << 20)
        r = subprocess.run(["fallocate", "-p", "-o", str((100 << 20) + 1000), "-l", str(3 * 4096),
                            s.file], capture_output=True, text=True)
        check(r.returncode == 0, f"fallocate -p: {r.stderr}")
        back = os.pread(fd, 5 * 4096, 100 << 20)
        check(back[:1000] == b"\xab" * 1000 and back[1000:1000 + 3 * 4096] == bytes(3 * 4096)
              and back[1000 + 3 * 4096:] == b"\xab" * (5 * 4096 - 1000 - 3 * 4096),
              "a punched hole reads as zeros and nothing around it changed")
        # The end of the device: a short read, a refused write, a fixed size.
        check(len(os.pread(fd, 8192, size - 100)) == 100, "a read across the end is short")
        try:
            os.pwrite(fd, b"x" * 200, size - 100)
            check(False, "a write across the end is refused")
        except OSError as e:
            check(e.errno == errno.ENOSPC, f"a write across the end: ENOSPC, got {e}")
        try:
            os.ftruncate(fd, size // 2)
            check(False, "truncate is refused")
        except OSError as e:
            check(e.errno == errno.EPERM, f"truncate: EPERM, got {e}")
        check(os.stat(s.file).st_size == size, "the size did not change")
        os.fsync(fd)
    finally:
        os.close(fd)
    check(sorted(os.listdir(mount)) == ["disk"], f"the mount holds one file: {os.listdir(mount)}")
    # SIGUSR1: statistics now.
    s.proc.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not os.path.exists(stats) and time.monotonic() < deadline:
        time.sleep(0.05)
    check(os.path.exists(stats), "SIGUSR1 wrote the statistics")
    code, out, err = s.stop()
    check(code == 0, f"SIGTERM stops serve with 0: {code} {err}")
    check("served " in out and "write amplification" in out, f"summary printed: {out}")
    st = json.load(open(stats))
    served = st["served"]
    check(served["writes"] >= 60 and served["partial_lbas"] > 0 and served["holes"] == 1
          and served["deallocated_lbas"] == 2 and served["flushes"] >= 1,
          f"counters: {served}")
    check(st["device"]["host_write_bytes"] > 0, "device counters present")
    check(not mounts_under(mount), "SIGTERM unmounted")
    # The data is in the image: served again, it reads back.
    s = Server(image, mount, "--timing", "off")
    fd = os.open(s.file, os.O_RDONLY)
    back = os.pread(fd, hi - lo, lo)
    os.close(fd)
    check(all(back[o - lo] == v for o, v in expected.items()), "data survived a restart")
    # Unmounted from outside: serve notices and ends with 0.
    subprocess.run(["fusermount3", "-u", mount], capture_output=True)
    try:
        s.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        s.proc.kill()
    check(s.proc.returncode == 0 and "unmounted from outside" in s.proc.stderr.read(),
          f"an outside unmount stops serve: {s.proc.returncode}")
    check(run("info", image).returncode == 0, "the image opens after")
    return image, mount


def test_bad_input(d, image, mount):
    def refused(args, needle, what):
        before = os.path.getsize(image) if os.path.exists(image) else None
        r = run("serve", *args)
        check(r.returncode == 2, f"{what}: exit 2, got {r.returncode} ({r.stderr.strip()})")
        lines = r.stderr.strip().splitlines()
        check(len(lines) == 1 and needle in lines[0], f"{what}: one line naming '{needle}': {lines}")
        check(not mounts_under(mount), f"{what}: nothing left mounted")
        return before
    zns = create(os.path.join(d, "zns.img"))
    refused([zns, mount], "zns device", "a ZNS image")
    refused([os.path.join(d, "missing.img"), mount], "missing.img", "a missing image")
    refused([image, os.path.join(d, "nowhere")], "does not exist", "a missing mount point")
    refused([image, image], "not a directory", "a mount point that is a file")
    refused([image, mount, "--timing", "sometimes"], "--timing", "a bad --timing")
    refused([image, mount, "--time-scale", "0"], "--time-scale", "a bad --time-scale")
    refused([image, mount, "--threads", "0"], "--threads", "no threads")
    refused([image, mount, "--file", "a/b"], "file name", "a file name with a slash")
    refused([image, mount, "--pacing", "fast"], "--pacing", "a bad --pacing")
    # An image in use, and a mount point in use.
    s = Server(image, mount, "--timing", "off")
    try:
        other = os.path.join(d, "m2")
        os.mkdir(other)
        r = run("serve", image, other)
        check(r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
              f"an image in use: exit 2, one line: {r.returncode} {r.stderr}")
        blk2 = create(os.path.join(d, "blk2.img"), "interface=block")
        r = run("serve", blk2, mount)
        check(r.returncode == 2 and "busy" in r.stderr, f"a busy mount point: {r.stderr}")
    finally:
        code, _, err = s.stop()
        check(code == 0, f"stopped: {err}")
    check(run("info", image).returncode == 0, "the image opens after the refusals")


def test_stream_hints(d):
    """--stream-hints: records appended to the hints file while serving send
    each later write to the stream its bytes were hinted for; bad lines are
    counted, not taken."""
    image = create(os.path.join(d, "streams.img"), "interface=block", "block.streams=4",
                   "block.overprovisioning=20%")
    mount = os.path.join(d, "sm")
    os.mkdir(mount)
    hints = os.path.join(d, "hints")
    open(hints, "w").close()
    stats = os.path.join(d, "hints-stats.json")
    s = Server(image, mount, "--timing", "off", "--stream-hints", hints, "--stats", stats)
    fd = os.open(s.file, os.O_RDWR)
    try:
        os.pwrite(fd, b"a" * 8192, 0)  # before any record: stream 0
        with open(hints, "a") as f:
            # 64 KiB at 1 MiB: hint 2; 32 KiB at 2 MiB: hint 5 (stream 3 of
            # 4); a record past the end and a line that is no record.
            f.write("1048576 65536 2\n2097152 32768 5\n%d 4096 1\nhello\n" % (1 << 50))
        # Across the first hinted range and past it: two pieces.
        os.pwrite(fd, b"b" * (80 << 10), 1 << 20)
        os.pwrite(fd, b"c" * (32 << 10), 2 << 20)
        os.pwrite(fd, b"d" * 10, (1 << 20) + 5)  # part of an LBA: its stream too
        back = os.pread(fd, 80 << 10, 1 << 20)
        check(back == b"b" * 5 + b"d" * 10 + b"b" * ((80 << 10) - 15),
              "data written in pieces by stream reads back whole")
    finally:
        os.close(fd)
    code, _, err = s.stop()
    check(code == 0, f"stream hints: serve stopped with 0: {err}")
    st = json.load(open(stats))
    h = st.get("stream_hints", {})
    by = h.get("write_bytes_by_stream", [])
    check(h.get("records") == 2 and h.get("ignored") == 2, f"records taken and ignored: {h}")
    # Stream 0: the first write and the 16 KiB past the hinted range; 2:
    # the hinted 64 KiB and the LBA the 10-byte write merged; 3: hint 5.
    check(by == [8192 + (16 << 10), 0, (64 << 10) + 4096, 32 << 10], f"bytes by stream: {by}")
    # Refused: a passed-through file has no streams; an image of one stream.
    r = run("serve", hints, mount, "--pass-through", "--stream-hints", hints)
    check(r.returncode == 2 and "--stream-hints" in r.stderr, f"pass-through: {r.stderr}")
    one = create(os.path.join(d, "one-stream.img"), "interface=block")
    r = run("serve", one, mount, "--stream-hints", hints)
    check(r.returncode == 2 and "block.streams" in r.stderr
          and len(r.stderr.strip().splitlines()) == 1, f"one stream: {r.stderr}")
    check(not mounts_under(mount), "nothing left mounted")


def crash_loop(d, seconds, min_iterations, seed):
    image = create(os.path.join(d, "crash.img"), "interface=block")
    mount = os.path.join(d, "cm")
    os.mkdir(mount)
    rng = random.Random(seed)
    acked = {}  # slot -> bytes
    slot_bytes = 3 * 4096 + 1000  # not a multiple of the LBA: merges at both ends
    next_slot = 0
    iterations = 0
    start = time.monotonic()
    while (time.monotonic() - start < seconds or iterations < min_iterations) and \
            time.monotonic() - start < 3 * seconds:
        timing = rng.choice([["--timing", "off"], []])
        s = Server(image, mount, *timing)
        stop = threading.Event()
        lock = threading.Lock()

        def writer(first_slot, wseed):
            wrng = random.Random(wseed)
            fd = os.open(s.file, os.O_RDWR)
            slot = first_slot
            try:
                while not stop.is_set():
                    data = wrng.randbytes(slot_bytes)
                    os.pwrite(fd, data, slot * slot_bytes)
                    os.fsync(fd)
                    with lock:
                        acked[slot] = data
                    slot += 1
            except OSError:
                pass  # the server went away
            finally:
                try:
                    os.close(fd)
                except OSError:
                    pass
            with lock:
                writer.last = slot
        writer.last = next_slot
        t = threading.Thread(target=writer, args=(next_slot, rng.random()))
        t.start()
        time.sleep(rng.uniform(0.05, 1.0))
        s.proc.kill()
        s.proc.wait()
        stop.set()
        unmount_all(mount)
        t.join(timeout=30)
        next_slot = writer.last + 1
        r = run("info", image)
        if not check(r.returncode == 0, f"crash iteration {iterations}: image opens: {r.stderr}"):
            return iterations
        s = Server(image, mount, "--timing", "off")
        fd = os.open(s.file, os.O_RDONLY)
        bad = [k for k, v in acked.items() if os.pread(fd, slot_bytes, k * slot_bytes) != v]
        os.close(fd)
        s.stop()
        if not check(not bad, f"crash iteration {iterations}: {len(bad)} acknowledged slots "
                              f"lost of {len(acked)}"):
            return iterations
        iterations += 1
    print(f"crash loop: {iterations} kills of zonelab serve, {len(acked)} acknowledged writes, "
          "all read back", flush=True)
    return iterations


def main():
    global ZONELAB
    ap = argparse.ArgumentParser()
    ap.add_argument("zonelab")
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--min-iterations", type=int, default=15)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    ZONELAB = os.path.abspath(args.zonelab)
    if not os.path.exists("/dev/fuse"):
        print("skip: no /dev/fuse (FUSE is not available here)")
        return 77
    print(f"seed {args.seed}", flush=True)
    d = tempfile.mkdtemp(prefix="zonelab-serve-test.")
    try:
        image, mount = test_reads_writes_holes(d)
        test_bad_input(d, image, mount)
        test_stream_hints(d)
        crash_loop(d, args.seconds, args.min_iterations, args.seed)
    finally:
        unmount_all(d)
        subprocess.run(["rm", "-rf", d])
    if FAILURES:
        print(f"{len(FAILURES)} failures", flush=True)
        return 1
    print("serve: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
