#!/usr/bin/env python3
"""Debian's stock fio through libzonelab_fio.so, end to end.

- fio's own example examples/zbd-rand-write.fio (from the fio source the
  engine is built against), changed only in its filename, ioengine and
  runtime lines, on a modeled ZNS image of its zone size: it runs, and
  afterwards `zonelab report` shows write pointers that add up to exactly
  the bytes fio says it wrote, in whole 512 KiB blocks, on at most 32 zones
  open at once.
- A zbd fill with verify=crc32c, then a second fio run that reads the zones
  back and verifies them; a zone rewritten with other checksums fails it.
- Four jobs (threads of one fio) writing their own zones of one image at
  once, verified.
- A block image: random writes verified, a trim, and the trimmed range
  reading back as zeros (verify_pattern=0).
- zonelab_time_scale is honoured: QD1 reads take about four times as long
  at scale 4 as at scale 1; the image is closed cleanly (no journal replay)
  and zonelab_stats counts exactly the bytes fio moved.
- fio's own write_iolog of a zbd job and of a random mix on a block image,
  replayed by `zonelab replay` on fresh images: the same operations, and on
  ZNS the same write pointers.
- Bad input: a zonesize that is not the image's, an offset past the image's
  end or not on an LBA, writes to a ZNS image
  without zonemode=zbd, a block size that is not whole LBAs, a missing
  image, an image in use by another process, bad engine options, two jobs
  on one image asking for different timing: fio exits non-zero with one
  line naming the problem, and the image is unchanged.
- fio's exit waits for the engine's job threads: with a preload that holds
  a job thread on its way out past the moment fio unmaps its jobs
  (tests/fio_exit_window.c), fio still exits 0 (without the wait, SIGSEGV).

Everything runs in a private directory.
usage: fio_engine_test.py ZONELAB ENGINE FIO_SOURCE EXIT_WINDOW_PRELOAD
"""
import json
import os
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ZONELAB = ENGINE = FIO_SOURCE = EXIT_WINDOW = None
CHECKS = Checks()


def check(condition, message):
    return CHECKS.check(message, condition)


def zonelab(*args):
    return subprocess.run([ZONELAB, *args], capture_output=True, text=True, timeout=120)


def create(path, *sets):
    args = ["create", path, "--preset", "small"]
    for s in sets:
        args += ["--set", s]
    r = zonelab(*args)
    assert r.returncode == 0, r.stderr
    return path


def fio(job_text, directory, name, *extra, timeout=180, env=None):
    path = os.path.join(directory, name + ".fio")
    with open(path, "w") as f:
        f.write(job_text)
    out = os.path.join(directory, name + ".json")
    # In the private directory: fio leaves its verify state files in the
    # working directory.
    r = subprocess.run(["fio", path, "--output-format=json", f"--output={out}", *extra],
                       capture_output=True, text=True, timeout=timeout, cwd=directory, env=env)
    data = None
    if os.path.exists(out) and os.path.getsize(out) > 0:
        text = open(out).read()
        # fio prints its own notes before the JSON document.
        start = text.find("{")
        if start >= 0:
            try:
                data = json.loads(text[start:])
            except json.JSONDecodeError:
                data = None
    return r, data


def written_by_zone(image):
    report = json.loads(zonelab("report", image, "--json").stdout)["zones"]
    out = {}
    for z in report:
        if z["state"] == "full":
            out[z["zone"]] = z["capacity"]
        else:
            out[z["zone"]] = z["wp"] - z["start"]
    return out, report


def lba_bytes(image):
    return json.loads(zonelab("info", image, "--json").stdout)["lba_size"]


def test_zbd_example(d):
    image = create(os.path.join(d, "rand.img"), "zns.zone_size=256MiB",
                   "zns.zone_capacity=192MiB", "zns.max_open=32", "zns.max_active=32",
                   "flash.blocks_per_plane=128")
    example = open(os.path.join(FIO_SOURCE, "examples", "zbd-rand-write.fio")).read()
    lines = []
    for line in example.splitlines():
        if line.startswith("filename="):
            line = f"filename={image}"
        elif line.startswith("ioengine="):
            line = f"ioengine=external:{ENGINE}"
        elif line.startswith("runtime="):
            line = "runtime=2"
        lines.append(line)
    r, data = fio("\n".join(lines) + "\n", d, "zbd-rand-write")
    if not check(r.returncode == 0 and data is not None,
                 f"zbd-rand-write.fio: rc {r.returncode}: {r.stderr[-400:]}"):
        return
    job = data["jobs"][0]
    wrote = job["write"]["io_bytes"]
    check(job["error"] == 0, f"zbd-rand-write: error {job['error']}")
    check(wrote > 0, "zbd-rand-write wrote nothing")
    written, report = written_by_zone(image)
    lba = lba_bytes(image)
    total = sum(written.values()) * lba
    check(total == wrote,
          f"write pointers add up to {total} bytes, fio wrote {wrote}")
    check(all((w * lba) % (512 << 10) == 0 for w in written.values()),
          "a zone holds part of a 512 KiB block")
    touched = [z for z in report if written[z["zone"]] > 0]
    check(0 < len(touched) <= 32, f"{len(touched)} zones written (max_open_zones=32)")
    print(f"zbd-rand-write.fio: {wrote >> 20} MiB in {job['write']['total_ios']} writes over "
          f"{len(touched)} zones; write pointers agree", flush=True)


def test_verify_across_runs(d):
    image = create(os.path.join(d, "verify.img"))
    job = f"""[global]
ioengine=external:{ENGINE}
filename={image}
zonemode=zbd
direct=1
bs=16k
iodepth=8
verify=crc32c
zonelab_timing=off

[fill]
rw=write
offset=2z
size=3z
"""
    r, data = fio(job, d, "fill")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"fill with verify: rc {r.returncode}: {r.stderr[-300:]}")
    written, _ = written_by_zone(image)
    check([z for z, w in written.items() if w > 0] == [2, 3, 4],
          f"zones written: {[z for z, w in written.items() if w > 0]}")
    r, data = fio(job.replace("rw=write", "rw=read"), d, "readback")
    ok = r.returncode == 0 and data and data["jobs"][0]["error"] == 0
    check(ok, f"read-back verify in a second run: rc {r.returncode}: {r.stderr[-300:]}")
    if ok:
        check(data["jobs"][0]["read"]["io_bytes"] == 3 * 12288 * 4096,
              f"read back {data['jobs'][0]['read']['io_bytes']} bytes")
    # Zone 3 rewritten with other checksums: the crc32c read-back must fail.
    other = job.replace("verify=crc32c", "verify=md5").replace("offset=2z", "offset=3z") \
               .replace("size=3z", "size=1z")
    r, _ = fio(other, d, "rewrite")
    check(r.returncode == 0, f"rewrite of zone 3: {r.stderr[-300:]}")
    r, _ = fio(job.replace("rw=write", "rw=read"), d, "readback-bad")
    check(r.returncode != 0 and "verify" in (r.stderr + r.stdout),
          f"a rewritten zone passed verify (rc {r.returncode})")


def test_threads_share_an_image(d):
    image = create(os.path.join(d, "jobs.img"))
    job = f"""[global]
ioengine=external:{ENGINE}
filename={image}
zonemode=zbd
direct=1
bs=64k
iodepth=4
verify=crc32c
zonelab_timing=off
rw=write
size=2z
offset_increment=2z
numjobs=4
group_reporting
[writers]
"""
    r, data = fio(job, d, "jobs")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"four jobs on one image: rc {r.returncode}: {r.stderr[-300:]}")
    written, _ = written_by_zone(image)
    check([z for z, w in written.items() if w > 0] == list(range(8)),
          f"four jobs wrote zones {[z for z, w in written.items() if w > 0]}")
    r, data = fio(job.replace("rw=write", "rw=read"), d, "jobs-read")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"four readers verifying: rc {r.returncode}: {r.stderr[-300:]}")


def test_block_image_trim(d):
    image = create(os.path.join(d, "block.img"), "interface=block")
    common = f"""[global]
ioengine=external:{ENGINE}
filename={image}
direct=1
iodepth=16
zonelab_timing=off
"""
    r, data = fio(common + "[w]\nrw=randwrite\nbs=8k\nsize=32m\nverify=crc32c\n", d, "bw")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"block randwrite+verify: rc {r.returncode}: {r.stderr[-300:]}")
    r, data = fio(common + "[t]\nrw=trim\nbs=1m\nsize=8m\n", d, "bt")
    check(r.returncode == 0 and data and data["jobs"][0]["trim"]["io_bytes"] == 8 << 20,
          f"trim: rc {r.returncode}: {r.stderr[-300:]}")
    r, data = fio(common + "[z]\nrw=read\nbs=64k\nsize=8m\nverify=pattern\n"
                  "verify_pattern=0x00\n", d, "bz")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"trimmed range does not read as zeros: rc {r.returncode}: {r.stderr[-300:]}")
    r, data = fio(common + "[nz]\nrw=read\nbs=64k\noffset=8m\nsize=8m\nverify=pattern\n"
                  "verify_pattern=0x00\n", d, "bnz")
    check(r.returncode != 0, "written data read as zeros (the zero check proves nothing)")


def test_time_scale_and_stats(d):
    image = create(os.path.join(d, "scale.img"))
    fill = f"""[global]
ioengine=external:{ENGINE}
filename={image}
zonemode=zbd
direct=1
zonelab_timing=off
[f]
rw=write
bs=128k
size=1z
"""
    r, _ = fio(fill, d, "scale-fill")
    check(r.returncode == 0, f"fill: {r.stderr[-300:]}")
    # Three runs at each scale, alternating; the least median of each scale
    # (the host's load only ever adds to a latency).
    means = {1: [], 4: []}
    for attempt in range(3):
        for scale in (1, 4):
            stats = os.path.join(d, f"stats{scale}.json")
            job = f"""[global]
ioengine=external:{ENGINE}
filename={image}
zonemode=zbd
direct=1
zonelab_time_scale={scale}
zonelab_stats={stats}
[r]
rw=randread
bs=4k
iodepth=1
size=1z
number_ios=200
"""
            r, data = fio(job, d, f"scale{scale}")
            if not check(r.returncode == 0 and data, f"scale {scale}: {r.stderr[-300:]}"):
                return
            read = data["jobs"][0]["read"]
            means[scale].append(read["clat_ns"]["percentile"]["50.000000"])
            counters = json.load(open(stats))
            host_read = counters["device"]["host_read_bytes"]
            check(counters["timing"] == "modeled", "stats: timing")
            check(read["io_bytes"] == 200 * 4096, f"read {read['io_bytes']} bytes")
            check(host_read == read["io_bytes"],
                  f"stats: the device read {host_read} bytes, fio {read['io_bytes']}")
    ratio = min(means[4]) / min(means[1])
    print(f"QD1 4 KiB read clat median (least of 3): {min(means[1]) / 1e3:.1f} us at scale 1, "
          f"{min(means[4]) / 1e3:.1f} us at scale 4 ({ratio:.2f}x)", flush=True)
    check(2.5 <= ratio <= 6.0, f"time scale 4 made reads {ratio:.2f}x as long")
    info = zonelab("info", image)
    check("replayed" not in info.stderr, f"the image was not closed: {info.stderr.strip()}")


def test_killed_fio_leaves_a_consistent_image(d):
    """fio killed (SIGKILL) in the middle of zbd random writes, again and again on
    one image: it opens each time (the journal replayed), every zone holds
    whole 64 KiB blocks, and a verify read of all written zones passes."""
    image = create(os.path.join(d, "kill.img"))
    job = f"""[global]
ioengine=external:{ENGINE}
filename={image}
zonemode=zbd
direct=1
bs=64k
iodepth=8
max_open_zones=8
[w]
rw=randwrite
size=24z
verify=crc32c
do_verify=0
time_based
runtime=30
"""
    path = os.path.join(d, "kill.fio")
    with open(path, "w") as f:
        f.write(job)
    rng = __import__("random").Random(7)
    replays = 0
    for i in range(6):
        proc = subprocess.Popen(["fio", path], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, cwd=d)
        time.sleep(0.6 + rng.random() * 0.8)
        proc.kill()
        proc.wait()
        info = zonelab("info", image)
        if not check(info.returncode == 0, f"kill {i}: the image does not open: {info.stderr}"):
            return
        replays += "replayed" in info.stderr
        written, _ = written_by_zone(image)
        lba = lba_bytes(image)
        check(all((w * lba) % (64 << 10) == 0 for w in written.values()),
              f"kill {i}: a zone holds part of a 64 KiB write")
    check(replays > 0, "no kill left commands in the journal (the kills came too late)")
    # Every block written before the kills reads back with its checksum.
    r, data = fio(job.replace("rw=randwrite", "rw=read").replace("time_based\nruntime=30\n", "")
                  .replace("do_verify=0\n", ""), d, "kill-verify")
    check(r.returncode == 0 and data and data["jobs"][0]["error"] == 0,
          f"verify after kills: rc {r.returncode}: {r.stderr[-300:]}")
    if data:
        print(f"after 6 kills ({replays} replayed the journal): "
              f"{data['jobs'][0]['read']['io_bytes'] >> 20} MiB verified", flush=True)


def test_iologs_fio_writes_replay(d):
    """fio's own write_iolog (version 3) of a zbd write job and of a random
    mix on a block image, replayed by `zonelab replay` on fresh images: the
    same operations, and on ZNS the same write pointers."""
    for name, sets, job in (
            ("zbd", [], "zonemode=zbd\nrw=write\nbs=64k\nsize=3z\niodepth=4\n"),
            ("block", ["interface=block"], "rw=randrw\nbs=8k\nsize=16m\niodepth=8\n")):
        a = create(os.path.join(d, f"log-{name}-a.img"), *sets)
        b = create(os.path.join(d, f"log-{name}-b.img"), *sets)
        log = os.path.join(d, f"{name}.iolog")
        r, data = fio(f"[global]\nioengine=external:{ENGINE}\nfilename={a}\ndirect=1\n"
                      f"zonelab_timing=off\n[j]\nwrite_iolog={log}\n{job}", d, f"log-{name}")
        if not check(r.returncode == 0 and data, f"{name}: fio: {r.stderr[-300:]}"):
            continue
        job_out = data["jobs"][0]
        rep = zonelab("replay", b, log, "--json", "--no-wall-clock", "--quiet")
        if not check(rep.returncode == 0, f"{name}: replay: {rep.stderr.strip()}"):
            continue
        out = json.loads(rep.stdout)
        check(out["trace"]["format"] == "fio iolog v3", f"{name}: {out['trace']['format']}")
        check(out["write"]["ops"] == job_out["write"]["total_ios"]
              and out["read"]["ops"] == job_out["read"]["total_ios"],
              f"{name}: replayed {out['read']['ops']}/{out['write']['ops']} reads/writes, "
              f"fio did {job_out['read']['total_ios']}/{job_out['write']['total_ios']}")
        check(out["errors"] == 0, f"{name}: replay errors: {out.get('first_error')}")
        if name == "zbd":
            check(written_by_zone(a)[0] == written_by_zone(b)[0],
                  "the replay left other write pointers than fio")
        print(f"{name}: fio's iolog of {job_out['read']['total_ios']} reads and "
              f"{job_out['write']['total_ios']} writes replayed in "
              f"{out['virtual_time_ns'] / 1e6:.1f} ms of device time", flush=True)


def expect_refusal(d, name, job_text, words, image=None, extra=()):
    before = open(image, "rb").read() if image else None
    r, _ = fio(job_text, d, name, *extra)
    text = r.stderr + r.stdout
    ok = check(r.returncode != 0, f"{name}: fio exited 0")
    ok = check(all(w in text for w in words), f"{name}: no {words} in: {text[-400:]}") and ok
    if image:
        check(open(image, "rb").read() == before, f"{name}: the image changed")
    return ok


def test_an_image_without_data(d):
    """store.backing=none: a job that verifies reads zeros (so a pattern it
    wrote fails, as nothing was stored); one that does not verify has its
    reads leave fio's buffers alone and completes every read."""
    image = create(os.path.join(d, "nodata.img"), "store.backing=none")
    head = (f"[global]\nioengine=external:{ENGINE}\nfilename={image}\ndirect=1\n"
            "zonemode=zbd\nzonelab_timing=off\n")
    # With verify=pattern fio writes the pattern and reads it back into the
    # same buffers: had the reads moved no data, the pattern would still be
    # there and verify would pass.
    r, _ = fio(head + "[w]\nrw=write\nbs=64k\nsize=1z\nverify=pattern\n"
               "verify_pattern=0xab\n", d, "nodata-verify")
    check(r.returncode != 0 and "verify" in (r.stderr + r.stdout).lower(),
          f"a pattern written to an image that stores nothing passed verify (rc {r.returncode})")
    r, data = fio(head + "[r]\nrw=read\nbs=4k\niodepth=16\nsize=1z\n", d, "nodata-read")
    ios = data["jobs"][0]["read"]["total_ios"] if data else 0
    written, _ = written_by_zone(image)
    want = written[0] * lba_bytes(image) // 4096
    check(r.returncode == 0 and want > 0 and ios == want,
          f"reads of an image without data: rc {r.returncode}, {ios} of {want} reads: "
          f"{r.stderr[-300:]}")


def test_exit_waits_for_job_threads(d):
    """A job thread held on its way out, past the moment fio's exit unmaps
    the structures of its jobs: fio waits for the engine's job threads, so
    it still exits 0, with its results written. fio's null engine in the
    same window is shown for comparison, not checked (its crash is fio's)."""
    image = create(os.path.join(d, "exit.img"))
    env = dict(os.environ, LD_PRELOAD=EXIT_WINDOW)
    for jobs in (1, 3):
        r, data = fio(f"[global]\nioengine=external:{ENGINE}\nfilename={image}\ndirect=1\n"
                      f"zonelab_timing=off\n[r]\nrw=randread\nbs=4k\nsize=4m\n"
                      f"numjobs={jobs}\niodepth=8\n", d, f"exit-{jobs}", env=env)
        held = "a job thread held on its way out" in r.stderr
        check(held, f"{jobs} jobs: the preload held no job thread: {r.stderr[-300:]}")
        check(r.returncode == 0 and data is not None and len(data["jobs"]) == jobs,
              f"{jobs} jobs: fio exited {r.returncode} with a job thread held on its way out: "
              f"{r.stderr[-300:]}")
    r, _ = fio("[j]\nioengine=null\nthread=1\nsize=4m\nbs=4k\n", d, "exit-null", env=env)
    print(f"fio's null engine with thread=1 in the same window: exit status {r.returncode}",
          flush=True)


def test_bad_input(d):
    # No data stored: the image is its metadata, read whole before and after.
    image = create(os.path.join(d, "bad.img"), "store.backing=none")
    head = f"[global]\nioengine=external:{ENGINE}\nfilename={image}\ndirect=1\n"
    expect_refusal(d, "zonesize", head + "zonemode=zbd\nzonesize=128m\n[j]\nrw=write\nsize=1z\n",
                   ["zonesize", "does not match"], image)
    expect_refusal(d, "offset-past-end", head + "zonemode=zbd\n[j]\nrw=write\noffset=100z\n"
                   "size=1z\n", ["offset 6710886400 is past the end", "64 zones"], image)
    expect_refusal(d, "offset-unaligned", head + "[j]\nrw=read\noffset=1000\nsize=1m\n",
                   ["offset 1000", "4096-byte LBAs"], image)
    expect_refusal(d, "no-zbd", head + "[j]\nrw=randwrite\nbs=4k\nsize=1m\n",
                   ["zoned namespace", "zonemode=zbd"], image)
    expect_refusal(d, "bs", head + "zonemode=zbd\n[j]\nrw=write\nbs=6k\nsize=1z\n",
                   ["6144", "4096-byte LBAs"], image)
    expect_refusal(d, "scale", head + "zonelab_time_scale=fast\n[j]\nrw=read\nsize=1m\n",
                   ["zonelab_time_scale=fast"], image)
    expect_refusal(d, "timing", head + "zonelab_timing=sometimes\n[j]\nrw=read\nsize=1m\n",
                   ["zonelab_timing"], image)
    expect_refusal(d, "mixed", head + "[a]\nrw=read\nsize=1m\n"
                   "zonelab_timing=off\n[b]\nrw=read\nsize=1m\n",
                   ["already open", "zonelab_timing"], image)
    expect_refusal(d, "processes", head + "create_serialize=0\n[j]\nrw=read\nsize=1m\n",
                   ["thread=1"], image)
    missing = os.path.join(d, "missing.img")
    expect_refusal(d, "missing", head.replace(image, missing) + "[j]\nrw=read\nsize=1m\n",
                   ["missing.img"])
    check(not os.path.exists(missing), "a missing image was created")
    # In use: a second fio while a first runs on the image.
    busy = f"""[global]
ioengine=external:{ENGINE}
filename={image}
direct=1
[j]
rw=randread
bs=4k
size=1z
time_based
runtime=60
"""
    fill = head + "zonemode=zbd\nzonelab_timing=off\n[f]\nrw=write\nbs=128k\nsize=1z\n"
    fio(fill, d, "busy-fill")
    path = os.path.join(d, "busy.fio")
    with open(path, "w") as f:
        f.write(busy)
    log = open(os.path.join(d, "busy.log"), "w")
    first = subprocess.Popen(["fio", path], stdout=log, stderr=subprocess.STDOUT, cwd=d)
    # Until the first fio's job has the image open. (Asking zonelab whether
    # it is in use would take the image's lock for a moment, and a fio
    # starting then would find it in use itself.)
    deadline = time.monotonic() + 30
    while not held_open(image):
        if time.monotonic() > deadline or first.poll() is not None:
            first.kill()
            first.wait()
            log.close()
            check(False, f"the first fio never held the image: {open(log.name).read()[-600:]}")
            return
        time.sleep(0.1)
    time.sleep(0.5)  # past the moment between its open and its lock
    expect_refusal(d, "in-use", head + "[j]\nrw=read\nsize=1m\n", ["in use"])
    first.terminate()
    first.wait(timeout=60)
    log.close()


def held_open(path):
    """Whether some process has `path` open (its /proc/PID/fd)."""
    target = os.path.realpath(path)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") == target:
                    return True
            except OSError:
                pass
    return False


def main():
    global ZONELAB, ENGINE, FIO_SOURCE, EXIT_WINDOW
    ZONELAB, ENGINE, FIO_SOURCE, EXIT_WINDOW = (os.path.abspath(a) for a in sys.argv[1:5])
    with tempfile.TemporaryDirectory(prefix="zonelab-fio-") as d:
        for test in (test_zbd_example, test_verify_across_runs, test_threads_share_an_image,
                     test_block_image_trim, test_time_scale_and_stats,
                     test_killed_fio_leaves_a_consistent_image, test_iologs_fio_writes_replay,
                     test_an_image_without_data, test_exit_waits_for_job_threads,
                     test_bad_input):
            start = time.monotonic()
            test(d)
            print(f"{test.__name__}: {time.monotonic() - start:.1f} s", flush=True)
    CHECKS.finish()


if __name__ == "__main__":
    sys.exit(main())
