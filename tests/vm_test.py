#!/usr/bin/env python3
"""`zonelab vm` end to end: User-Mode Linux on a served block image.

Each file system is made, mounted and used by a command inside the guest
that writes into the output directory on the host; the file system's own
check is clean afterwards, and the data is there in the next boot
(--no-mkfs); the default virtio disk counts its requests, passes syncs on
as flushes and keeps several requests in flight, and UML's ubd disk still
works. A command failing inside gives its status; --discard on
reaches the device as deallocations; bad input (an unknown file system, a
ZNS image, no UML, no command, memory out of bounds, a failing mkfs) gets
one line and the right exit code with the image left consistent. As an
ordinary user (nobody) the guest runs too, and kill -9 leaves nothing of it.
With --write-hints, db_bench's lifetime hints reach the device's streams
(the log and the tables apart from the file system's own writes).
Threads in the guest keep every vector register across its switches on a
host with AVX-512 (serve/uml_fp_shim.c; skipped on a host without).

Everything runs in a private directory (TMPDIR too, where zonelab vm
makes its own).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import unmount_all  # noqa: E402

ZONELAB = None
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print(f"FAIL: {message}", flush=True)
    return condition


def vm(env, image, *args, timeout=180):
    return subprocess.run([ZONELAB, "vm", image, *args], capture_output=True, text=True,
                          timeout=timeout, env=env)


def with_fake_kernel(env, d, image, name, script):
    """`zonelab vm IMAGE -- true` with a shell script in place of UML that
    runs `script` and then sleeps: the result and the seconds it took."""
    kernel = os.path.join(d, name)
    with open(kernel, "w") as f:
        f.write(f"#!/bin/sh\n{script}\nexec sleep 300\n")
    os.chmod(kernel, 0o755)
    t0 = time.monotonic()
    r = vm(dict(env, ZONELAB_UML=kernel), image, "--", "true")
    return r, time.monotonic() - t0


def uids_processes(uid):
    """The pids of the processes of `uid` now."""
    out = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.stat(f"/proc/{name}").st_uid == uid:
                out.add(int(name))
        except OSError:
            pass
    return out


def unprivileged(d):
    """As an ordinary user (nobody, through setpriv): the guest's PID
    namespace comes inside a user namespace, where the host's setuid
    mount(8) would run as nobody; the guest still runs its command as its
    root, the file system checks clean, and kill -9 of zonelab vm leaves no
    process of the guest behind."""
    nobody = 65534
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        print("skip unprivileged: not root, or no setpriv", flush=True)
        return
    probe = subprocess.run(["unshare", "--user", "--pid", "--fork", "true"], capture_output=True)
    if probe.returncode != 0:
        print("skip unprivileged: user namespaces are not allowed here", flush=True)
        return
    os.chmod(d, 0o711)  # the user passes through the test's directory to its own
    ud = os.path.join(d, "nobody")
    os.mkdir(ud)
    os.chown(ud, nobody, nobody)
    env = dict(os.environ, TMPDIR=ud, HOME=ud)
    as_nobody = ["setpriv", f"--reuid={nobody}", f"--regid={nobody}", "--clear-groups"]
    image = os.path.join(ud, "u.img")
    out = os.path.join(ud, "out")
    r = subprocess.run(as_nobody + [ZONELAB, "create", image, "--preset", "small", "--set",
                                    "interface=block"], capture_output=True, text=True, env=env)
    if not check(r.returncode == 0, f"unprivileged create: {r.stderr}"):
        return
    r = subprocess.run(as_nobody + [ZONELAB, "vm", image, "--fs", "xfs", "--out", out, "--fsck",
                                    "--json", "--", "sh", "-c",
                                    "id -u > uid && head -c 1000000 /dev/urandom > /mnt/d && "
                                    "sync && mount | grep -c ' /mnt ' > mounted"],
                       capture_output=True, text=True, env=env, timeout=180)
    if check(r.returncode == 0, f"unprivileged vm: exit 0, got {r.returncode}: "
                                f"{r.stderr[-400:]}"):
        j = json.loads(r.stdout.strip().splitlines()[-1])
        check(j["command_status"] == 0 and j["fsck_status"] == 0
              and j["device"]["host_write_bytes"] >= 1000000,
              f"unprivileged vm: command and fsck clean, data written: {j.get('error')}")
        check(open(os.path.join(out, "uid")).read().strip() == "0"
              and open(os.path.join(out, "mounted")).read().strip() == "1"
              and os.stat(os.path.join(out, "uid")).st_uid == nobody,
              "unprivileged vm: the guest's command ran as its root, the file system mounted, "
              "and its output on the host is the user's")
    # kill -9 while the guest runs: nothing of the guest stays.
    before = uids_processes(nobody)
    p = subprocess.Popen(as_nobody + [ZONELAB, "vm", image, "--fs", "ext4", "--", "sleep", "120"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + 60
    up = False
    while time.monotonic() < deadline and not up and p.poll() is None:
        up = any(os.path.exists(os.path.join(ud, n, "up")) for n in os.listdir(ud)
                 if n.startswith("zonelab-vm."))
        time.sleep(0.2)
    started = uids_processes(nobody) - before
    p.kill()
    p.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and (started & uids_processes(nobody)):
        time.sleep(0.2)
    left = started & uids_processes(nobody)
    check(up and len(started) > 3 and not left,
          f"unprivileged vm killed: the guest was up ({up}, {len(started)} processes) and "
          f"none is left: {sorted(left)}")
    r = subprocess.run([ZONELAB, "info", image], capture_output=True, text=True)
    check(r.returncode == 0, f"unprivileged vm killed: the image opens: {r.stderr}")


def main():
    global ZONELAB
    ap = argparse.ArgumentParser()
    ap.add_argument("zonelab")
    ap.add_argument("--fs", default="ext4,xfs,f2fs,btrfs")
    ap.add_argument("--vector-check", help="tests/vector_state_check.c, built")
    args = ap.parse_args()
    ZONELAB = os.path.abspath(args.zonelab)
    if not os.path.exists("/dev/fuse"):
        print("skip: no /dev/fuse (FUSE is not available here)")
        return 77
    d = tempfile.mkdtemp(prefix="zonelab-vm-test.")
    env = dict(os.environ, TMPDIR=d)
    try:
        image = os.path.join(d, "blk.img")
        r = subprocess.run([ZONELAB, "create", image, "--preset", "small", "--set",
                            "interface=block"], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        out = os.path.join(d, "out")
        for fs in args.fs.split(","):
            # Make, mount, write through the kernel's file system, check.
            discard = "on" if fs in ("ext4", "f2fs") else "off"
            r = vm(env, image, "--fs", fs, "--discard", discard, "--out", out, "--fsck", "--json",
                   "--", "sh", "-c",
                   "head -c 3000000 /dev/urandom > /mnt/data && sync && "
                   "sha256sum /mnt/data | cut -d' ' -f1 > \"$ZONELAB_OUT/sum.$(basename $0)\" && "
                   "head -c 8000000 /dev/zero > /mnt/gone && sync && rm /mnt/gone && sync && "
                   "echo \"$ZONELAB_FS\" > fs-was", fs)
            ok = check(r.returncode == 0, f"{fs}: exit 0, got {r.returncode}: {r.stderr[-400:]}")
            if ok:
                j = json.loads(r.stdout.strip().splitlines()[-1])
                check(j["command_status"] == 0 and j["fsck_status"] == 0,
                      f"{fs}: command and fsck clean: {j.get('error')}")
                check(j["fs"] == fs and j["served"]["writes"] > 0
                      and j["device"]["host_write_bytes"] >= 3000000,
                      f"{fs}: the guest's writes reached the device: {j['served']}")
                if discard == "on":
                    check(j["served"]["deallocated_lbas"] > 0,
                          f"{fs}: -o discard trims what rm freed: {j['served']}")
                # The default disk is virtio: its requests are counted, and the
                # guest's syncs reach the device as flushes (a ubd disk sends none).
                v = j["served"].get("virtio", {})
                check(j["disk"] == "virtio" and j["transport"] == "vhost-user"
                      and v.get("requests", 0) > 0 and v.get("writes", 0) > 0
                      and v.get("errors", 1) == 0 and v.get("unsupported", 1) == 0,
                      f"{fs}: served as a virtio disk: {j['served']}")
                check(j["served"]["flushes"] > 0 and v.get("flushes", 0) > 0,
                      f"{fs}: sync reaches the device as Flush: {j['served']}")
            check(open(os.path.join(out, "fs-was")).read().strip() == "/mnt",
                  f"{fs}: the command ran in --out with ZONELAB_FS set")
            # The next boot finds the data as written.
            r = vm(env, image, "--fs", fs, "--no-mkfs", "--out", out, "--", "sh", "-c",
                   "test \"$(sha256sum /mnt/data | cut -d' ' -f1)\" = \"$(cat sum.$(basename $0))\"",
                   fs)
            check(r.returncode == 0, f"{fs}: data intact in the next boot: {r.stderr[-300:]}")

        # UML's own disk (ubd) on a FUSE file still works, as one 4 KiB
        # request at a time; and the virtio disk keeps several in flight.
        r = vm(env, image, "--disk", "ubd", "--fs", "ext4", "--out", out, "--fsck", "--json",
               "--", "sh", "-c", "head -c 2000000 /dev/urandom > /mnt/u && sync")
        if check(r.returncode == 0, f"ubd: exit 0, got {r.returncode}: {r.stderr[-300:]}"):
            j = json.loads(r.stdout.strip().splitlines()[-1])
            check(j["disk"] == "ubd" and j["transport"] == "fuse" and "virtio" not in j["served"]
                  and j["fsck_status"] == 0 and j["device"]["host_write_bytes"] >= 2000000,
                  f"ubd: served through FUSE, fsck clean: {j['served']}")
        r = vm(env, image, "--fs", "ext4", "--out", out, "--json", "--", "sh", "-c",
               "fio --name=q --filename=/mnt/q --size=8M --rw=randread --bs=4k --iodepth=16 "
               "--ioengine=libaio --direct=1 --runtime=1 --time_based --output=/dev/null")
        if check(r.returncode == 0, f"virtio QD16: exit 0, got {r.returncode}: {r.stderr[-300:]}"):
            j = json.loads(r.stdout.strip().splitlines()[-1])
            check(j["served"]["virtio"]["max_in_flight"] >= 4,
                  f"virtio: fio's queue depth reaches the device: {j['served']['virtio']}")

        # Write hints: RocksDB's lifetime hints reach the block SSD's streams
        # through the preloaded shim (its fcntl mended, its fallocates
        # mapped), on an image with streams.
        streamed = os.path.join(d, "streams.img")
        r = subprocess.run([ZONELAB, "create", streamed, "--preset", "small", "--set",
                            "interface=block", "--set", "block.streams=6", "--set",
                            "block.overprovisioning=20%"], capture_output=True, text=True)
        check(r.returncode == 0, f"an image with 6 streams: {r.stderr}")
        r = vm(env, streamed, "--fs", "xfs", "--write-hints", "--out", out, "--fsck", "--json",
               "--", "sh", "-c",
               "db_bench --db=/mnt/db --benchmarks=fillrandom --num=20000 --value_size=400 "
               "--write_buffer_size=262144 --target_file_size_base=262144 > hints.txt 2>&1 "
               "&& sync", timeout=300)
        if check(r.returncode == 0, f"--write-hints: exit 0, got {r.returncode}: "
                                    f"{r.stderr[-300:]}"):
            j = json.loads(r.stdout.strip().splitlines()[-1])
            h = j.get("stream_hints", {})
            by_stream = h.get("write_bytes_by_stream", [])
            check(h.get("records", 0) > 0 and h.get("ignored", 1) == 0
                  and len(by_stream) == 6,
                  f"--write-hints: the shim's records arrived: {h}")
            # The log (hint 2, short) and the tables (3, medium) apart from
            # the file system's own writes (stream 0).
            check(by_stream[0] > 0 and by_stream[2] > 0 and by_stream[3] > 0,
                  f"--write-hints: the log and the tables in streams of their own: {by_stream}")
            check(j["fsck_status"] == 0, f"--write-hints: xfs_repair clean: {j.get('error')}")
        r = vm(env, streamed, "--fs", "ext4", "--out", out, "--json", "--", "true")
        if check(r.returncode == 0, f"without --write-hints: exit 0: {r.stderr[-300:]}"):
            j = json.loads(r.stdout.strip().splitlines()[-1])
            check("stream_hints" not in j, "without --write-hints: no stream_hints")

        # Guest threads of one process yielding to each other keep their
        # vector registers, those past AVX's included.
        if args.vector_check:
            r = vm(env, image, "--fs", "ext4", "--out", out, "--", args.vector_check, "8", "3000")
            if r.returncode == 77:
                print("vector registers: skipped (no AVX-512 here)", flush=True)
            else:
                check(r.returncode == 0, f"vector registers held across the guest's switches: "
                                         f"exit {r.returncode}: {r.stderr[-300:]}")

        unprivileged(d)

        # A kernel that powers off and then does not exit (Debian's UML has
        # been seen to spin after "Power down") is stopped after a grace.
        r, took = with_fake_kernel(
            env, d, image, "hung-uml",
            "for a in \"$@\"; do case \"$a\" in uml_dir=*) "
            "echo off > \"${a#uml_dir=}/off\";; esac; done")
        check(r.returncode == 1 and "did not exit within 15 s" in r.stderr and took < 60,
              f"a kernel stuck after power-off is stopped: exit {r.returncode} after "
              f"{took:.1f} s: {r.stderr[-300:]}")

        # A kernel that panics and then spins (as Debian's UML 6.1 does) is
        # stopped once its console has been silent 10 s; a command that
        # only prints such a line is not.
        r, took = with_fake_kernel(
            env, d, image, "panicking-uml",
            "echo 'Kernel panic - not syncing: Attempted to kill init!'\n"
            "echo 'CPU: 0 PID: 1 Comm: init.sh'")
        check(r.returncode == 1 and "kernel panicked (Kernel panic - not syncing: Attempted "
              "to kill init!) and was stopped" in r.stderr and "Attempted" in r.stdout
              and took < 60,
              f"a kernel that panicked is stopped: exit {r.returncode} after {took:.1f} s: "
              f"{r.stderr[-300:]}")
        r = vm(env, image, "--fs", "ext4", "--out", out, "--", "sh", "-c",
               "echo 'Kernel panic - not syncing: only words'; sleep 1")
        check(r.returncode == 0 and "only words" in r.stdout,
              f"a command printing a panic's line ends as it ends: exit {r.returncode}: "
              f"{r.stderr[-300:]}")

        # A command that fails inside: its status, one error line.
        r = vm(env, image, "--fs", "ext4", "--out", out, "--", "sh", "-c", "exit 7")
        check(r.returncode == 7 and "status 7" in r.stderr,
              f"a failing command: exit 7, got {r.returncode}: {r.stderr[-300:]}")

        def refused(extra_env, argv, code, needle, what):
            e = dict(env, **extra_env)
            r = vm(e, *argv)
            lines = [l for l in r.stderr.strip().splitlines() if l.startswith("zonelab:")]
            check(r.returncode == code, f"{what}: exit {code}, got {r.returncode}: {r.stderr}")
            check(any(needle in l for l in lines), f"{what}: says '{needle}': {lines}")
        zns = os.path.join(d, "zns.img")
        subprocess.run([ZONELAB, "create", zns, "--preset", "small"], capture_output=True)
        refused({}, [image, "--fs", "zfs", "--", "true"], 2, "--fs zfs", "an unknown fs")
        refused({}, [zns, "--", "true"], 2, "zns device", "a ZNS image")
        refused({"ZONELAB_UML": os.path.join(d, "no-uml")}, [image, "--", "true"], 2,
                "User-Mode Linux is not installed", "no UML")
        refused({}, [image], 2, "no command given", "no command")
        refused({}, [image, "--memory", "1MiB", "--", "true"], 2, "--memory", "too little memory")
        refused({}, [image, "--memory", "lots", "--", "true"], 2, "--memory", "memory not a size")
        refused({}, [image, "--discard", "maybe", "--", "true"], 2, "--discard", "bad --discard")
        refused({}, [image, "--disk", "scsi", "--", "true"], 2, "--disk scsi", "bad --disk")
        refused({}, [image, "--fs", "xfs", "--mkfs-options", "-b size=3", "--", "true"], 2,
                "mkfs.xfs failed", "a failing mkfs")
        refused({}, [image, "--write-hints", "--", "true"], 2, "block.streams",
                "--write-hints on an image of one stream")
        # The image is consistent after all of it, and nothing is left behind.
        r = subprocess.run([ZONELAB, "info", image], capture_output=True, text=True)
        check(r.returncode == 0, f"the image opens: {r.stderr}")
        left = [n for n in os.listdir(d) if n.startswith("zonelab-vm.")]
        check(not left, f"private directories removed: {left}")
    finally:
        unmount_all(d)
        subprocess.run(["rm", "-rf", d])
    if FAILURES:
        print(f"{len(FAILURES)} failures", flush=True)
        return 1
    print("vm: all checks passed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
