"""The Python module `zonelab` (docs/python.md), with pytest.

Each test works in pytest's private tmp_path. The last one runs the
notebook-style example of docs/python.md as a script."""
import json
import os
import re
import subprocess
import sys

import pytest

import zonelab

SOURCE = os.environ.get("ZONELAB_SOURCE_DIR",
                        os.path.join(os.path.dirname(__file__), "..", ".."))


def test_presets_are_the_shipped_ones():
    names = zonelab.presets()
    assert "small" in names and "zn540" in names and "zenfsplus" in names


def test_an_image_keeps_its_data_and_zones_across_a_reopen(tmp_path):
    path = str(tmp_path / "dev.img")
    data = bytes(range(256)) * 32  # two 4 KiB LBAs
    with zonelab.create(path, preset="small") as dev:
        assert dev.info["interface"] == "zns"
        assert dev.info["stores_data"] is True
        result = dev.write(0, data)
        assert result["status"] == "SUCCESS" and result["latency_ns"] > 0
        zone = dev.zones(0, 1)[0]
        assert zone["wp"] == 2 and zone["state"] == "implicitly-opened"
    with zonelab.open(path) as dev:
        result, back = dev.read(0, 2)
        assert result["status"] == "SUCCESS"
        assert back == data
        assert dev.zones(0, 1)[0]["wp"] == 2
        assert dev.zone_action(0, "reset")["status"] == "SUCCESS"
        assert dev.zones(0, 1)[0]["state"] == "empty"


@pytest.mark.skipif(not os.environ.get("ZONELAB"), reason="ZONELAB (the command) not given")
def test_info_is_what_the_command_gives(tmp_path):
    # A device of two zone sets, so that every field has something to say.
    path = str(tmp_path / "sets.img")
    zonelab.create(path, preset="small", settings={
        "flash.blocks_per_plane": "16", "flash.pages_per_block": "64",
        "flash.page_size": "4KiB", "zns.format": "1MiB:8"}).close()
    subprocess.run([os.environ["ZONELAB"], "format", path, "--zones", "512KiB:8,2MiB:4"],
                   check=True, capture_output=True)
    with zonelab.open(path) as dev:
        info = dev.info
    out = subprocess.run([os.environ["ZONELAB"], "info", path, "--json"], check=True,
                         capture_output=True, text=True).stdout
    command = json.loads(out)
    assert info["stores_data"] is True
    assert len(info["zone_sets"]) == 2
    for key, value in info.items():
        if key != "stores_data":
            assert command[key] == value, key
    assert set(info) - {"stores_data"} == {
        "interface", "lba_size", "zone_size_lbas", "zone_capacity_lbas", "zone_count",
        "capacity_lbas", "max_open", "max_active", "zasl_lbas", "volatile_write_cache",
        "zone_sets"}


def test_device_errors_are_statuses_and_bad_input_raises(tmp_path):
    dev = zonelab.device("small")
    lba = dev.info["lba_size"]
    # Not at the write pointer: the device's answer, not an exception.
    assert dev.write(5, b"\0" * lba)["status"] == "ZONE_INVALID_WRITE"
    with pytest.raises(zonelab.ZonelabError, match="not a whole number of 4096-byte LBAs"):
        dev.write(0, b"\0" * 100)
    with pytest.raises(zonelab.ZonelabError, match="no zone action"):
        dev.zone_action(0, "explode")
    with pytest.raises(zonelab.ZonelabError, match="zone 9999 does not exist"):
        dev.zones(9999)
    with pytest.raises(zonelab.ZonelabError):
        zonelab.device("no-such-preset")
    with pytest.raises(zonelab.ZonelabError, match="zns.max_open"):
        zonelab.device("small", {"zns.max_open": "lots"})
    with pytest.raises(zonelab.ZonelabError, match="cannot open image"):
        zonelab.open(str(tmp_path / "missing.img"))
    dev.close()
    with pytest.raises(zonelab.ZonelabError, match="closed"):
        dev.info


def test_an_image_in_use_is_refused(tmp_path):
    path = str(tmp_path / "busy.img")
    holder = zonelab.create(path)
    try:
        # Another process, as a second notebook would be.
        code = ("import zonelab, sys\n"
                "try:\n    zonelab.open(sys.argv[1])\nexcept zonelab.ZonelabError as e:\n"
                "    print(e); sys.exit(7)\n")
        r = subprocess.run([sys.executable, "-c", code, path], capture_output=True, text=True,
                           env=dict(os.environ))
        assert r.returncode == 7 and "in use" in r.stdout, r.stdout + r.stderr
    finally:
        holder.close()
    zonelab.open(path).close()


def test_bench_runs_a_job_file_and_is_deterministic():
    job = '[global]\nbs = "16k"\niodepth = 4\n[w]\nrw = "write"\nzones = "0-1"\n'
    runs = []
    for _ in range(2):
        with zonelab.device("small") as dev:
            runs.append(dev.bench(job))
    assert runs[0] == runs[1]
    jobs = runs[0]["jobs"]
    assert jobs[0]["name"] == "w" and jobs[0]["errors"] == 0
    assert jobs[0]["bytes"] == 2 * 48 * 2**20  # two zones' capacity
    assert runs[0]["device"]["host_write_bytes"] == jobs[0]["bytes"]
    with pytest.raises(zonelab.ZonelabError, match="rw"):
        zonelab.device("small").bench('[w]\nrw = "sideways"\n')


SWEEP = """name = "qd"
seeds = [1, 2]
[job]
rw = "randread"
bs = "4k"
size = "1%"
[grid]
"job.iodepth" = [1, 8]
"""


def test_a_sweep_spec_expands_runs_and_caches_its_points(tmp_path):
    spec = zonelab.Sweep.from_text(SWEEP, "qd.toml")
    assert spec.name == "qd" and spec.axes == ["job.iodepth"] and len(spec) == 4
    labels = [p["label"] for p in spec.points]
    assert labels == ["job.iodepth=1 seed=1", "job.iodepth=1 seed=2", "job.iodepth=8 seed=1",
                      "job.iodepth=8 seed=2"]
    assert len({p["key"] for p in spec.points}) == 4
    first = spec.run_point(0)
    assert first == spec.run_point(0)  # deterministic
    cache = str(tmp_path / "cache")
    assert spec.lookup(cache, 0) == (None, "")
    spec.store(cache, 0, first)
    assert spec.lookup(cache, 0) == (first, "")
    results = [first] + [spec.run_point(i) for i in range(1, 4)]
    json_path, plottable = spec.write(str(tmp_path / "out"), results)
    assert plottable and json_path.endswith("qd.json")
    assert (tmp_path / "out" / "qd.csv").read_text().count("\n") == 5
    with pytest.raises(zonelab.ZonelabError, match=r"qd.toml:9: .*'zns.nope'"):
        zonelab.Sweep.from_text(SWEEP + '"zns.nope" = [1]\n', "qd.toml")
    with pytest.raises(zonelab.ZonelabError, match="no point 4"):
        spec.run_point(4)


def test_replay_and_counters(tmp_path):
    trace = tmp_path / "t.iolog"
    trace.write_text("fio version 3 iolog\n0 f add\n0 f write 0 65536\n"
                     "2000 f write 65536 65536\n4000 f read 0 4096\n")
    with zonelab.device("small") as dev:
        out = dev.replay(str(trace))
        assert out["write"]["ops"] == 2 and out["read"]["ops"] == 1 and out["errors"] == 0
        assert out["virtual_time_ns"] > 4_000_000  # the read is issued at 4 ms
        assert dev.counters()["host_write_bytes"] == 131072
    bad = tmp_path / "bad.iolog"
    bad.write_text("fio version 2 iolog\nf write 8192 4096\n")
    with pytest.raises(zonelab.ZonelabError, match="line 2: a write at LBA 2"):
        zonelab.device("small").replay(str(bad))


def test_the_example_in_the_docs_runs(tmp_path):
    text = open(os.path.join(SOURCE, "docs", "python.md")).read()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert blocks, "no python example in docs/python.md"
    script = tmp_path / "example.py"
    script.write_text("\n".join(blocks))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                       cwd=tmp_path, env=dict(os.environ), timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "write amplification" in r.stdout
