#!/usr/bin/env python3
"""End-to-end checks of `zonelab experiment`: the quick confznspp run writes
CSV, JSON and README.md that agree with each other and make physical sense,
byte for byte the same on a second run; bad names and output directories are
answered with exit 2 and one line; a missing plotting tool costs the plots
only. With matplotlib available (SOURCE_DIR/.venv), the PNGs are checked too.

usage: experiment_test.py path/to/zonelab [SOURCE_DIR]
Prints one line per failed check and "N passed, N failed" at the end."""

import csv
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

ZONELAB = os.path.realpath(sys.argv[1])
SOURCE_DIR = sys.argv[2] if len(sys.argv) > 2 else os.path.dirname(os.path.dirname(__file__))
EXPERIMENTS = ("finish_occupancy", "reset_occupancy", "finish_write_interference",
               "finish_read_interference", "reset_write_interference", "lazy_first_write")
passed = failed = skipped = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print(f"FAIL: {name}" + (f": {detail}" if detail else ""))


def zonelab(*args, env=None):
    return subprocess.run([ZONELAB, *args], capture_output=True, text=True, env=env, timeout=120)


def one_line(done):
    return len(done.stderr.strip().splitlines()) == 1


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def same_cell(text, value):
    if isinstance(value, str):
        return text == value
    return math.isclose(float(text), float(value), rel_tol=0, abs_tol=0)


def check_experiment(out, name):
    header, rows = read_csv(os.path.join(out, f"{name}.csv"))
    with open(os.path.join(out, f"{name}.json"), encoding="utf-8") as f:
        doc = json.load(f)
    check(f"{name}: JSON names it", doc["experiment"] == name and doc["set"] == "confznspp")
    check(f"{name}: quick recorded", doc["quick"] is True)
    check(f"{name}: JSON columns are the CSV header", doc["columns"] == header)
    check(f"{name}: JSON rows are the CSV rows", len(doc["rows"]) == len(rows) and all(
        len(r) == len(j) and all(same_cell(t, v) for t, v in zip(r, j))
        for r, j in zip(rows, doc["rows"])))
    plot = doc["plot"]
    check(f"{name}: plot spec names columns",
          all(plot[k] in header for k in ("x", "y", "series")) and plot["title"])
    check(f"{name}: files named", doc["files"] == {"csv": f"{name}.csv", "png": f"{name}.png"})
    check(f"{name}: parameters", doc["parameters"]["preset"] == "confznspp"
          and doc["parameters"]["config"]["zns"]["zone_capacity"] == "1056MiB")
    comparisons = doc["comparison"]
    check(f"{name}: paper beside measured", len(comparisons) >= 2 and all(
        (c["paper"] is None or math.isfinite(c["paper"])) and math.isfinite(c["measured"])
        and c["measured"] >= 0 and c["quantity"] for c in comparisons)
        and sum(c["paper"] is not None for c in comparisons) >= 2)
    return doc, [dict(zip(header, row)) for row in rows]


def occupancy_series(rows, series):
    by_series = {}
    for cells in rows:
        by_series.setdefault(cells[series], []).append(
            (float(cells["occupancy_percent"]), int(cells["latency_ns"])))
    return by_series


def by_line(rows):
    """{line: {cl: (iops, p95_ns)}} of an interference table."""
    lines = {}
    for cells in rows:
        lines.setdefault(cells["line"], {})[int(cells["cl"])] = (
            float(cells["iops"]), int(cells["p95_ns"]))
    return lines


def m_inter(rows, line):
    return {float(c["m_inter"]) for c in rows if c["line"] == line}.pop()


def check_interference(name, doc, rows, alone, lines, worse, better):
    """The isolated runs of every line agree; every interfered line at most
    as fast as `alone` at every level; the `worse` line's M^Inter above the
    `better` one's."""
    check(f"{name}: the isolated runs of every line agree",
          doc["parameters"]["isolated_runs_agree"] is True)
    got = by_line(rows)
    check(f"{name}: lines", set(got) == {alone, *lines}, sorted(got))
    if set(got) != {alone, *lines}:
        return
    for line in lines:
        check(f"{name}: {line} no faster than alone",
              all(got[line][cl][0] <= got[alone][cl][0] for cl in got[alone]))
    check(f"{name}: {worse} interferes more than {better}",
          m_inter(rows, worse) > m_inter(rows, better),
          (m_inter(rows, worse), m_inter(rows, better)))


def check_first_writes(rows):
    lines = {}
    for cells in rows:
        lines.setdefault(cells["line"], []).append(cells)
    check("lazy_first_write: four lines", len(lines) == 4, sorted(lines))
    for line, fills in lines.items():
        firsts = [int(f["first_write_ns"]) for f in fills]
        others = [int(f["other_p95_ns"]) for f in fills]
        check(f"{line}: later writes cost a page program", all(700e3 < o < 800e3 for o in others))
        if line.startswith("direct"):
            check(f"{line}: first writes cost a page program", max(firsts) < 800e3, max(firsts))
        else:
            half = len(firsts) // 2
            check(f"{line}: first writes are plain while clean blocks last, then erase the zone",
                  max(firsts[:half]) < 800e3 and min(firsts[half:]) > 77e6, firsts)
    repeat = {f["line"].split(",")[0]: f for f in rows if f["line"].endswith("repeat zone")}
    check("repeat zone: direct wears zone 0's blocks, lazy spreads the erases",
          repeat["direct"]["erase_min"] == "0" and int(repeat["direct"]["erase_max"]) > 1
          and repeat["lazy"]["erase_min"] == repeat["lazy"]["erase_max"] == "1",
          (repeat["direct"], repeat["lazy"]))


def check_physics(finish, reset):
    for granularity, points in finish.items():
        latencies = [lat for _, lat in sorted(points)]
        check(f"finish {granularity}: latency falls with occupancy",
              all(a > b for a, b in zip(latencies, latencies[1:])), latencies)
    one_page = {g: min(points)[1] for g, points in finish.items()}
    check("finish: a coarser granularity is not slower",
          one_page["16KiB"] > one_page["32KiB"] > one_page["64KiB"] >= one_page["256KiB"])
    check("finish: 16 KiB, one page within 5% of the paper's 48.6 s",
          abs(one_page["16KiB"] / 1e9 - 48.6) / 48.6 < 0.05, one_page["16KiB"])
    full = [lat for _, lat in sorted(reset["full"])]
    partial = [lat for _, lat in sorted(reset["partial"])]
    check("reset full: the same at every occupancy", len(set(full)) == 1, full)
    check("reset partial: grows with occupancy",
          all(a < b for a, b in zip(partial, partial[1:])), partial)
    check("reset partial of a full zone costs a full erase", partial[-1] == full[-1])


def snapshot(out):
    result = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            result[name] = f.read()
    return result


def main():
    global skipped
    tmp = tempfile.mkdtemp()
    try:
        done = zonelab("experiment", "list")
        check("list", done.returncode == 0 and "confznspp" in done.stdout, done.stderr)
        done = zonelab("experiment", "list", "--json")
        listed = json.loads(done.stdout) if done.returncode == 0 else {}
        check("list --json", listed.get("status") == "SUCCESS" and any(
            e["name"] == "confznspp" and [m["name"] for m in e["members"]] == list(EXPERIMENTS)
            for e in listed.get("experiments", [])), done.stdout)

        out = os.path.join(tmp, "quick")
        args = ("experiment", "run", "confznspp", "--quick", "--out", out, "--no-plots")
        done = zonelab(*args, "--json")
        check("run --quick --no-plots", done.returncode == 0, done.stderr)
        summary = json.loads(done.stdout) if done.returncode == 0 else {}
        check("run --json summary", summary.get("status") == "SUCCESS"
              and summary.get("plots") == "skipped"
              and [e["name"] for e in summary.get("experiments", [])] == list(EXPERIMENTS))
        check("progress on stderr", "confznspp/finish_occupancy" in done.stderr
              and "warning" not in done.stderr, done.stderr[-300:])
        expected = {"README.md", ".zonelab-experiment"} | {
            f"{e}.{x}" for e in EXPERIMENTS for x in ("csv", "json")}
        check("files written", set(os.listdir(out)) == expected, sorted(os.listdir(out)))
        if set(os.listdir(out)) != expected:
            return
        _, finish = check_experiment(out, "finish_occupancy")
        _, reset = check_experiment(out, "reset_occupancy")
        check_physics(occupancy_series(finish, "granularity"), occupancy_series(reset, "erase"))
        doc, rows = check_experiment(out, "finish_write_interference")
        check_interference("finish on write", doc, rows, "no finish",
                           ["16 KiB finish", "256 KiB finish"], "256 KiB finish", "16 KiB finish")
        doc, rows = check_experiment(out, "finish_read_interference")
        check_interference("finish on read", doc, rows, "no finish",
                           ["16 KiB finish", "256 KiB finish"], "256 KiB finish", "16 KiB finish")
        doc, rows = check_experiment(out, "reset_write_interference")
        check_interference("reset on write", doc, rows, "no reset", ["sync reset", "async reset"],
                           "sync reset", "async reset")
        _, rows = check_experiment(out, "lazy_first_write")
        check_first_writes(rows)
        with open(os.path.join(out, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        check("README: every experiment, paper and measured, the command",
              all(f"## {e}" in readme for e in EXPERIMENTS) and "| quantity | paper | measured |"
              in readme and "zonelab experiment run confznspp --quick --out" in readme)
        check("README: no image without plots", ".png)" not in readme)

        first = snapshot(out)
        done = zonelab(*args)
        check("second run", done.returncode == 0, done.stderr)
        check("deterministic: same bytes", snapshot(out) == first)

        done = zonelab("experiment", "run", "no-such-experiment", "--out", out)
        check("unknown experiment: exit 2", done.returncode == 2 and one_line(done)
              and "confznspp" in done.stderr, done.stderr)
        blocker = os.path.join(tmp, "a-file")
        open(blocker, "w").close()
        done = zonelab("experiment", "run", "confznspp", "--quick", "--out",
                       os.path.join(blocker, "sub"))
        check("unwritable --out: exit 2", done.returncode == 2 and one_line(done), done.stderr)
        done = zonelab("experiment", "run", "confznspp", "--quick", "--out", out, "--only", "x")
        check("--only unknown: exit 2", done.returncode == 2 and one_line(done), done.stderr)

        env = dict(os.environ, ZONELAB_PYTHON=os.path.join(tmp, "no-python-here"))
        no_plot = os.path.join(tmp, "no-plot")
        done = zonelab("experiment", "run", "confznspp", "--quick", "--out", no_plot, env=env)
        warnings = [line for line in done.stderr.splitlines() if "warning" in line]
        check("no plotter: still exit 0", done.returncode == 0, done.stderr)
        check("no plotter: one warning naming make plot-deps",
              len(warnings) == 1 and "make plot-deps" in warnings[0], warnings)
        check("no plotter: data written, no PNG",
              set(os.listdir(no_plot)) == expected, sorted(os.listdir(no_plot)))

        python = os.environ.get("ZONELAB_PYTHON") or os.path.join(SOURCE_DIR, ".venv/bin/python")
        has_matplotlib = os.path.exists(python) and subprocess.run(
            [python, "-c", "import matplotlib"], capture_output=True).returncode == 0
        if not has_matplotlib:
            skipped += 1
            print(f"skip: plots (no matplotlib for {python}; make plot-deps)")
            return
        plots = os.path.join(tmp, "plots")
        done = zonelab("experiment", "run", "confznspp", "--quick", "--out", plots)
        check("with plots: exit 0, no warning",
              done.returncode == 0 and "warning" not in done.stderr, done.stderr[-300:])
        for name in EXPERIMENTS:
            png = os.path.join(plots, f"{name}.png")
            ok = os.path.exists(png)
            with open(png, "rb") if ok else open(os.devnull, "rb") as f:
                data = f.read()
            check(f"{name}.png written and small",
                  data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) < 80 * 1024, len(data))
        with open(os.path.join(plots, "README.md"), encoding="utf-8") as f:
            readme = f.read()
        check("README links the plots", all(f"({e}.png)" in readme for e in EXPERIMENTS))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))


if __name__ == "__main__":
    main()
    sys.exit(1 if failed else 0)
