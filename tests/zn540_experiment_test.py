#!/usr/bin/env python3
"""The zn540 experiment set (seed 003's ZN540 interference study) in its quick
form: every file is written, every table has the rows and columns its
members promise, M^Inter is a finite non-negative number everywhere, the
calibration table's errors follow from its own columns, the observations'
verdicts follow from their margins, and a second run with the same seed
writes byte-identical CSV and JSON.

No check asserts how close the model comes to the paper: the zn540 preset
is calibrated separately, and its numbers move with it.

usage: zn540_experiment_test.py path/to/zonelab
Prints one line per failed check and "N passed, N failed" at the end."""

import json
import math
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Checks, csv_rows, file_sha256  # noqa: E402

ZONELAB = os.path.realpath(sys.argv[1])
MEMBERS = ("fig2", "fig3", "fig4", "fig7", "fig8", "observations", "calibration")
LEVEL_COLUMNS = ["panel", "series", "intensity_percent", "cl", "kiops", "p95_us", "iops",
                 "p95_ns", "ops", "distance", "m_inter", "background_ops",
                 "background_mean_ms", "background_p95_ms"]
FOREGROUNDS = ("write", "append", "read")
BACKGROUNDS = ("finish", "reset")
FINISH_VARIANTS = ("device finish", "softfinish 8 KiB", "softfinish 16 KiB",
                   "softfinish 256 KiB", "softfinish 8 KiB + 50 us pause")
CALIBRATION_TARGETS = 12
checks = Checks()
check = checks.check


def run(out, plots):
    args = [ZONELAB, "experiment", "run", "zn540", "--quick", "--json", "--out", out]
    if not plots:
        args.append("--no-plots")
    return subprocess.run(args, capture_output=True, text=True, timeout=600)


def finite(text):
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def load(out, name):
    with open(os.path.join(out, f"{name}.json"), encoding="utf-8") as f:
        doc = json.load(f)
    return doc, csv_rows(os.path.join(out, f"{name}.csv"))


def header(out, name):
    with open(os.path.join(out, f"{name}.csv"), encoding="utf-8") as f:
        return f.readline().rstrip("\n").split(",")


def check_files(out, summary):
    names = set(os.listdir(out))
    for member in MEMBERS:
        for ext in ("csv", "json"):
            check(f"{member}.{ext} written", f"{member}.{ext}" in names)
    check("README.md written", "README.md" in names)
    if summary.get("plots") == "written":
        for member in MEMBERS:
            check(f"{member}.png written", f"{member}.png" in names)
    else:
        print(f"skip: PNG files (plots {summary.get('plots')}; make plot-deps)")
    with open(os.path.join(out, "README.md"), encoding="utf-8") as f:
        readme = f.read()
    for member in MEMBERS:
        check(f"README has a section for {member}", f"## {member}:" in readme)


def check_documents(out):
    for member in MEMBERS:
        doc, rows = load(out, member)
        columns = header(out, member)
        check(f"{member}: JSON names its set and itself",
              doc["set"] == "zn540" and doc["experiment"] == member)
        check(f"{member}: JSON and CSV agree", doc["columns"] == columns
              and len(doc["rows"]) == len(rows), f"{len(doc['rows'])} vs {len(rows)}")
        plot = doc["plot"]
        named = [plot[k] for k in ("x", "y", "series", "order", "panel") if plot.get(k)]
        check(f"{member}: plot spec names columns", all(k in columns for k in named), named)
        check(f"{member}: comparisons measured finite",
              all(math.isfinite(c["measured"]) for c in doc["comparison"]))
        for c in doc["comparison"]:
            if "M^Inter" in c["quantity"] and c["unit"] == "":
                check(f"{member}: {c['quantity']} is >= 0", c["measured"] >= 0, c["measured"])


def levels(doc, foreground):
    key = "read" if foreground == "read" else "write_append"
    return doc["parameters"]["levels"][key]


def check_level_table(out, member, series_per_panel):
    """series_per_panel: {panel: [series, ...]}; every series has one row per level."""
    doc, rows = load(out, member)
    check(f"{member}: level columns", header(out, member) == LEVEL_COLUMNS, header(out, member))
    for panel, names in series_per_panel.items():
        cls = [int(c) for c in levels(doc, panel)]
        for name in names:
            got = [int(r["cl"]) for r in rows if r["panel"] == panel and r["series"] == name]
            check(f"{member}: {panel} / {name}: one row per level", got == cls, got)
    expected = sum(len(n) * len(levels(doc, p)) for p, n in series_per_panel.items())
    check(f"{member}: row count", len(rows) == expected, f"{len(rows)} vs {expected}")
    check(f"{member}: numbers finite", all(finite(r[c]) for r in rows for c in LEVEL_COLUMNS[2:]))
    check(f"{member}: M^Inter >= 0 and distances >= 0",
          all(float(r["m_inter"]) >= 0 and float(r["distance"]) >= 0 for r in rows))
    isolated = [r for r in rows if float(r["intensity_percent"]) == 0]
    check(f"{member}: isolated rows carry no distance",
          isolated and all(float(r["distance"]) == 0 for r in isolated))


def check_tables(out):
    for member, bg in (("fig2", "finish"), ("fig3", "reset")):
        check_level_table(out, member, {
            op: [f"{op}, 0%", f"{op}, 25% {bg}", f"{op}, 50% {bg}"] for op in ("write", "read")})
    check_level_table(out, "fig7", {
        op: [f"{op}, no finish"] + [f"{op}, {v}" for v in FINISH_VARIANTS]
        for op in ("write", "read")})
    check_level_table(out, "fig8", {"write": [
        "mq-deadline, no reset", "mq-deadline, 50% reset", "ZINC, no reset", "ZINC, 50% reset"]})

    doc, rows = load(out, "fig4")
    check("fig4: columns", header(out, "fig4") ==
          ["foreground", "background", "m_inter", "paper_m_inter", "paper_source"])
    cells = {(r["foreground"], r["background"]) for r in rows}
    check("fig4: one cell per foreground and background",
          len(rows) == 6 and cells == {(f, b) for f in FOREGROUNDS for b in BACKGROUNDS}, cells)
    check("fig4: M^Inter finite and >= 0",
          all(finite(r["m_inter"]) and float(r["m_inter"]) >= 0 for r in rows))
    check("fig4: a number or \"not stated\" beside each cell",
          all(finite(r["paper_m_inter"]) or r["paper_m_inter"] == "not stated" for r in rows))
    check("fig4: append cells have no paper number",
          all(r["paper_m_inter"] == "not stated" for r in rows if r["foreground"] == "append"))
    check("fig4: drawn as a heatmap", doc["plot"].get("kind") == "heatmap")


def check_observations(out):
    doc, rows = load(out, "observations")
    check("observations: columns", header(out, "observations") ==
          ["obs", "statement", "criterion", "measured", "margin", "model_shows_it"])
    check("observations: Obs #1-#8 in order",
          [r["obs"] for r in rows] == [f"Obs #{i}" for i in range(1, 9)])
    for r in rows:
        ok = r["model_shows_it"] in ("true", "false") and finite(r["margin"])
        check(f"observations: {r['obs']} has a verdict and a margin", ok, r)
        if ok:
            check(f"observations: {r['obs']} verdict follows from its margin",
                  (float(r["margin"]) > 1) == (r["model_shows_it"] == "true"), r)
        check(f"observations: {r['obs']} states its criterion and values",
              r["statement"] and r["criterion"] and r["measured"])


def check_calibration(out):
    doc, rows = load(out, "calibration")
    check("calibration: columns", header(out, "calibration") ==
          ["target", "source", "unit", "paper", "model", "relative_error", "model_over_paper",
           "within_15_percent"])
    check("calibration: every target", len(rows) == CALIBRATION_TARGETS, len(rows))
    for r in rows:
        name = r["target"]
        if not all(finite(r[c]) for c in ("paper", "model", "relative_error", "model_over_paper")):
            check(f"calibration: {name}: numbers finite", False, r)
            continue
        paper, model, error = float(r["paper"]), float(r["model"]), float(r["relative_error"])
        check(f"calibration: {name}: relative error = (model - paper) / paper",
              math.isclose(error, (model - paper) / paper, rel_tol=1e-12, abs_tol=1e-12), r)
        check(f"calibration: {name}: model / paper",
              math.isclose(float(r["model_over_paper"]), model / paper, rel_tol=1e-12), r)
        check(f"calibration: {name}: within 15% follows from the error",
              r["within_15_percent"] == ("true" if abs(error) <= 0.15 else "false"), r)


with tempfile.TemporaryDirectory() as tmp:
    first, second = os.path.join(tmp, "first"), os.path.join(tmp, "second")
    done = run(first, plots=True)
    check("quick run exits 0", done.returncode == 0, done.stderr[-600:])
    if done.returncode == 0:
        check_files(first, json.loads(done.stdout))
        check_documents(first)
        check_tables(first)
        check_observations(first)
        check_calibration(first)
        again = run(second, plots=False)
        check("second quick run exits 0", again.returncode == 0, again.stderr[-600:])
        if again.returncode == 0:
            for member in MEMBERS:
                for ext in ("csv", "json"):
                    name = f"{member}.{ext}"
                    check(f"{name}: same bytes on a second run",
                          file_sha256(os.path.join(first, name)) ==
                          file_sha256(os.path.join(second, name)))

checks.finish()
