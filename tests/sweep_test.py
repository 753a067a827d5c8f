#!/usr/bin/env python3
"""zonelab sweep end to end (docs/sweep.md): a sweep on a local Dask cluster
gives the same CSV and JSON bytes as a serial run; a rerun takes every point
from the cache; a sweep killed halfway resumes without repeating a finished
point; a damaged cache entry is recomputed and said so; a scheduler and
workers started with the dask commands run a sweep; experiment points and
run-point fill the cache a later sweep finds; the Python API; bad input.

usage: sweep_test.py ZONELAB PYTHON_DIR
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks  # noqa: E402

ZONELAB = os.path.abspath(sys.argv[1])
PYTHON_DIR = os.path.abspath(sys.argv[2])
PYTHON = "/usr/bin/python3"

# 4 x 3 configurations x 2 seeds: random writes with garbage collection, each
# point about a tenth of a second.
SPEC = """\
# a test sweep
name = "gc"
preset = "small"
set = ["interface=block"]
seeds = [1, 2]

[job]
rw = "randwrite"
bs = "4k"
size = "110%"

[grid]
"block.overprovisioning" = [7, 14, 28, 50]
"job.iodepth" = [1, 4, 16]

[plot]
x = "block.overprovisioning"
y = "write_amplification"
series = "job.iodepth"
"""
POINTS = 24

# A slower sweep, to kill while it runs: each point a few tenths of a second.
SLOW_SPEC = SPEC.replace('size = "110%"', 'size = "250%"').replace('name = "gc"',
                                                                   'name = "slow"')

checks = Checks()
work = tempfile.mkdtemp(prefix="zonelab-sweep-test-")
env = dict(os.environ)
env["XDG_CACHE_HOME"] = os.path.join(work, "xdg")  # never the user's cache


def path(*parts):
    return os.path.join(work, *parts)


def write(name, text):
    with open(path(name), "w") as f:
        f.write(text)
    return path(name)


def zonelab(*args, timeout=300):
    return subprocess.run([ZONELAB, *args], capture_output=True, text=True, timeout=timeout,
                          env=env, cwd=work)


def summary(result):
    try:
        return json.loads(result.stdout)
    except ValueError:
        return {}


def read(p):
    with open(p, "rb") as f:
        return f.read()


def same_files(a, b, name):
    return all(read(os.path.join(a, f"{name}.{ext}")) == read(os.path.join(b, f"{name}.{ext}"))
               for ext in ("csv", "json"))


def cache_entries(cache):
    found = set()
    for root, _, files in os.walk(cache):
        found.update(f[:-len(".json")] for f in files if f.endswith(".json"))
    return found


spec = write("gc.toml", SPEC)
slow = write("slow.toml", SLOW_SPEC)

# Serial, in the zonelab process.
r = zonelab("sweep", spec, "--serial", "--cache", path("c-serial"), "--out", path("serial"),
            "--json", "--no-plots")
s = summary(r)
checks.check("serial sweep runs", r.returncode == 0 and s.get("computed") == POINTS,
             r.stdout + r.stderr)
csv_lines = read(path("serial", "gc.csv")).decode().splitlines()
checks.check("one CSV row per point", len(csv_lines) == POINTS + 1, str(len(csv_lines)))
checks.check("the CSV's columns", csv_lines[0].startswith(
    "point,block.overprovisioning,job.iodepth,seed,job,rw,ops,iops"), csv_lines[0])
doc = json.loads(read(path("serial", "gc.json")))
wa = [doc["rows"][i][doc["columns"].index("write_amplification")] for i in range(POINTS)]
checks.check("the points differ (over-provisioning changes write amplification)",
             len(set(wa)) > 4, str(wa))

# On a local Dask cluster of 2 workers: the same bytes.
r = zonelab("sweep", spec, "--workers", "2", "--cache", path("c-dask"), "--out", path("dask"),
            "--json")
s = summary(r)
checks.check("dask sweep runs", r.returncode == 0 and s.get("executor") == "dask" and
             s.get("computed") == POINTS, r.stdout + r.stderr[-2000:])
checks.check("dask and serial write the same CSV and JSON bytes",
             same_files(path("serial"), path("dask"), "gc"))
checks.check("every point is in the cache", len(cache_entries(path("c-dask"))) == POINTS)

# A rerun takes everything from the cache, without Dask.
t = time.monotonic()
r = zonelab("sweep", spec, "--cache", path("c-dask"), "--out", path("rerun"), "--json",
            "--no-plots")
rerun_s = time.monotonic() - t
s = summary(r)
checks.check("a rerun computes nothing", r.returncode == 0 and s.get("computed") == 0 and
             s.get("cached") == POINTS, r.stdout + r.stderr)
checks.check("a rerun writes the same bytes", same_files(path("serial"), path("rerun"), "gc"))
print(f"rerun from the cache: {rerun_s:.2f} s")

# A damaged entry is recomputed, and said so.
victim = sorted(os.path.join(root, f) for root, _, files in os.walk(path("c-dask"))
                for f in files if f.endswith(".json"))[5]
with open(victim, "r+b") as f:
    f.seek(os.path.getsize(victim) // 2)
    f.write(b"#")
r = zonelab("sweep", spec, "--cache", path("c-dask"), "--out", path("repaired"), "--json",
            "--no-plots", "--workers", "1")
s = summary(r)
checks.check("a damaged entry is recomputed", r.returncode == 0 and s.get("computed") == 1 and
             len(s.get("recomputed", [])) == 1, r.stdout + r.stderr)
checks.check("... and said so on stderr", "unusable" in r.stderr and "recomputed" in r.stderr,
             r.stderr)
checks.check("... with the same bytes", same_files(path("serial"), path("repaired"), "gc"))
r = zonelab("sweep", spec, "--cache", path("c-dask"), "--out", path("repaired"), "--json",
            "--no-plots")
checks.check("... and repaired in the cache", summary(r).get("computed") == 0, r.stdout)

# Killed halfway (SIGTERM, then SIGKILL on another run), resumed: no finished
# point runs again.
for sig in (signal.SIGTERM, signal.SIGKILL):
    cache = path(f"c-kill-{sig.name}")
    proc = subprocess.Popen([ZONELAB, "sweep", slow, "--cache", cache, "--out", path("killed"),
                             "--quiet", "--no-plots"], env=env, cwd=work,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            start_new_session=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(cache_entries(cache)) < 6 and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, sig)
    proc.wait(timeout=60)
    if sig == signal.SIGKILL:
        # The cluster's processes go with the session.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    before = cache_entries(cache)
    checks.check(f"{sig.name}: killed halfway", 0 < len(before) < POINTS, str(len(before)))
    r = zonelab("sweep", slow, "--cache", cache, "--out", path(f"resumed-{sig.name}"), "--json",
                "--no-plots")
    s = summary(r)
    checks.check(f"{sig.name}: resumed, no finished point repeated",
                 r.returncode == 0 and s.get("cached") == len(before) and
                 s.get("computed") == POINTS - len(before), r.stdout + r.stderr[-2000:])
    checks.check(f"{sig.name}: the cache holds every point after",
                 len(cache_entries(cache)) == POINTS)
    leftovers = [n for n in os.listdir(cache) if not os.path.isdir(os.path.join(cache, n))]
    checks.check(f"{sig.name}: nothing but entries in the cache", not leftovers, str(leftovers))
r = zonelab("sweep", slow, "--serial", "--cache", path("c-kill-SIGTERM"), "--out",
            path("slow-serial"), "--json", "--no-plots")
checks.check("a resumed sweep writes what an uninterrupted one does",
             same_files(path("slow-serial"), path("resumed-SIGKILL"), "slow") and
             same_files(path("slow-serial"), path("resumed-SIGTERM"), "slow"))


# A scheduler and two workers started with the dask commands, as on two hosts.
def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


port = free_port()
cluster_env = dict(env, PYTHONPATH=PYTHON_DIR)
scheduler = subprocess.Popen(["dask", "scheduler", "--host", "127.0.0.1", "--port", str(port),
                              "--dashboard-address", ":0"], env=cluster_env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
workers = [subprocess.Popen(["dask", "worker", f"tcp://127.0.0.1:{port}", "--nthreads", "1",
                             "--no-dashboard"], env=cluster_env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)
           for _ in range(2)]
try:
    r = zonelab("sweep", spec, "--scheduler", f"tcp://127.0.0.1:{port}", "--cache",
                path("c-cluster"), "--out", path("cluster"), "--json", "--no-plots",
                timeout=180)
    s = summary(r)
    checks.check("a sweep on a scheduler started with `dask scheduler`",
                 r.returncode == 0 and s.get("computed") == POINTS, r.stdout + r.stderr[-2000:])
    checks.check("... the same bytes", same_files(path("serial"), path("cluster"), "gc"))
finally:
    for p in workers + [scheduler]:
        try:
            os.killpg(p.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    for p in workers + [scheduler]:
        p.wait(timeout=30)

# experiment points / run-point fill a cache that a serial sweep then reads.
r = zonelab("experiment", "points", spec, "--json")
listed = summary(r).get("points", [])
checks.check("experiment points lists every point", r.returncode == 0 and len(listed) == POINTS,
             r.stdout + r.stderr)
for index in (0, 7, 23):
    r = zonelab("experiment", "run-point", spec, str(index), "--cache", path("c-array"))
    checks.check(f"run-point {index}", r.returncode == 0 and "computed" in r.stdout,
                 r.stdout + r.stderr)
r = zonelab("experiment", "points", spec, "--cache", path("c-array"), "--json")
cached = [p["index"] for p in summary(r).get("points", []) if p.get("cached")]
checks.check("points says which are cached", cached == [0, 7, 23], str(cached))
r = zonelab("sweep", spec, "--serial", "--cache", path("c-array"), "--out", path("array"),
            "--json", "--no-plots")
s = summary(r)
checks.check("a sweep after run-point takes those points from the cache",
             s.get("cached") == 3 and s.get("computed") == POINTS - 3, r.stdout + r.stderr)
checks.check("... the same bytes", same_files(path("serial"), path("array"), "gc"))
r = zonelab("experiment", "run-point", spec, "24")
checks.check("run-point past the end: exit 2", r.returncode == 2 and "0 to 23" in r.stderr,
             r.stderr)

# An experiment set's members as points.
r = zonelab("experiment", "points", "block-tax", "--json")
members = summary(r).get("points", [])
checks.check("experiment points SET lists its members", r.returncode == 0 and len(members) > 1 and
             all("member" in p for p in members), r.stdout + r.stderr)

# The Python API, in this process: the same bytes.
code = f"""
import json, zonelab.sweep
s = zonelab.sweep.run({spec!r}, out={path('python')!r}, cache={path('c-python')!r},
                      serial=True, plots=False, quiet=True)
print(json.dumps(s))
"""
r = subprocess.run([PYTHON, "-c", code], capture_output=True, text=True, env=dict(
    env, PYTHONPATH=PYTHON_DIR), timeout=120)
checks.check("zonelab.sweep.run from Python", r.returncode == 0 and
             summary(r).get("computed") == POINTS, r.stdout + r.stderr[-2000:])
checks.check("... the same bytes", same_files(path("serial"), path("python"), "gc"))

# Bad input: one line, exit 2, nothing written.
bad = {
    "unknown top-level key": ("name = \"x\"\nworkers = 3\n[job]\nrw = \"write\"\n", ":2:"),
    "unknown configuration key": (SPEC.replace('"block.overprovisioning"', '"block.nope"'),
                                  ":13:"),
    "unknown preset": (SPEC.replace('preset = "small"', 'preset = "huge"'), ":3:"),
    "unknown job option": (SPEC.replace('bs = "4k"', 'bsz = "4k"'), ":9:"),
    "bad value": (SPEC.replace("[7, 14, 28, 50]", "[7, 14, 28, 5000]"), "point"),
    "malformed TOML": (SPEC.replace("[grid]", "[grid"), ":12:"),
}
for name, (text, where) in bad.items():
    p = write("bad.toml", text)
    r = zonelab("sweep", p, "--cache", path("c-bad"), "--out", path("bad-out"))
    lines = r.stderr.strip().splitlines()
    checks.check(f"bad spec ({name}): exit 2, one line naming the place",
                 r.returncode == 2 and len(lines) == 1 and where in lines[0], r.stderr)
checks.check("bad specs wrote nothing", not os.path.exists(path("bad-out")) and
             not os.path.exists(path("c-bad")))
r = zonelab("sweep", spec, "--scheduler", "tcp://127.0.0.1:1", "--cache", path("c-unreach"),
            "--out", path("unreach"), "--quiet", timeout=120)
checks.check("an unreachable scheduler: exit 2, said in one line",
             r.returncode == 2 and "cannot reach the Dask scheduler at tcp://127.0.0.1:1" in
             r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:])
# An address Dask cannot parse fails inside its Client: still one line, and
# no traceback of the half-made client at exit.
r = zonelab("sweep", spec, "--scheduler", "bogus", "--cache", path("c-bogus"),
            "--out", path("bogus"), "--quiet", timeout=120)
checks.check("a scheduler address without a port: exit 2, said in one line",
             r.returncode == 2 and "cannot reach the Dask scheduler at bogus" in r.stderr and
             len(r.stderr.strip().splitlines()) == 1, r.stderr[-2000:])
r = zonelab("sweep", path("missing.toml"))
checks.check("a missing spec: exit 2", r.returncode == 2 and "missing.toml" in r.stderr, r.stderr)
r = zonelab("sweep", spec, "--workers", "0")
checks.check("--workers 0: exit 2", r.returncode == 2 and "--workers" in r.stderr, r.stderr)
r = zonelab("sweep", spec, "--serial", "--scheduler", "tcp://127.0.0.1:1")
checks.check("--serial with --scheduler: exit 2", r.returncode == 2, r.stderr)

# A point that fails when it runs (an experiment's override only the
# member's own configuration refuses) does not stop the others: they are
# cached, no files are written, the failure is named in one line.
failing = write("failing.toml", 'experiment = "block-tax"\nquick = true\n'
                'members = ["capacity_and_wa"]\n[grid]\n"zns.max_open" = [4, 100000]\n')
for mode in ("--serial", "--workers=2"):
    cache = path(f"c-fail{mode}")
    r = zonelab("sweep", failing, mode, "--cache", cache, "--out", path("failed-out"),
                "--quiet")
    lines = r.stderr.strip().splitlines()
    checks.check(f"a failing point ({mode}): exit 2, one line naming it",
                 r.returncode == 2 and len(lines) == 1 and
                 "1 of 2 points failed, the first: point 1 (capacity_and_wa zns.max_open=100000)"
                 in lines[0], r.stderr[-2000:])
    checks.check(f"a failing point ({mode}): the other point is cached, no files written",
                 len(cache_entries(cache)) == 1 and not os.path.exists(path("failed-out")))

shutil.rmtree(work, ignore_errors=True)
checks.finish()
