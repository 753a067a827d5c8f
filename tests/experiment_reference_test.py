#!/usr/bin/env python3
"""The committed quick references are what the code produces: every
deterministic experiment set, rerun with --quick, gives the bytes committed
under experiments/SET/quick (CSV, JSON, README.md), every comparison row
states its kind, and the evidence table in docs/experiments.md counts the
committed full results. A stale reference fails this test with the file
and the first line that differs.

usage: experiment_reference_test.py ZONELAB SOURCE_DIR
"""
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile

from checks import Checks

KINDS = {"fitted", "closed form", "emerged"}


def run(args, cwd=None):
    return subprocess.run(args, capture_output=True, text=True, timeout=600, cwd=cwd)


def main():
    zonelab, source = sys.argv[1], pathlib.Path(sys.argv[2])
    checks = Checks()
    listing = json.loads(run([zonelab, "experiment", "list", "--json"]).stdout)
    sets = [s["name"] for s in listing["experiments"] if s["deterministic"]]
    checks.check("the deterministic sets are listed", "zn540" in sets and "confznspp" in sets,
                 str(sets))
    checks.check("the real-time sets are not deterministic",
                 all(not s["deterministic"] for s in listing["experiments"]
                     if s["name"] in ("rocksdb-zns-vs-block", "rocksdb-zenfsplus")))
    for name in sets:
        # From the repository root with the path the README names, as
        # `make experiments-check` runs it.
        ref = source / "experiments" / name / "quick"
        r = run([zonelab, "experiment", "check", name, "--quick", "--against",
                 f"experiments/{name}/quick"], cwd=source)
        checks.check(f"{name}: the committed quick reference is current", r.returncode == 0,
                     f"exit {r.returncode}\n{r.stdout}{r.stderr[-2000:]}\n(regenerate with "
                     f"`make experiments-quick`)")
        for path in sorted(ref.glob("*.json")):
            rows = json.loads(path.read_text())["comparison"]
            bad = [row["quantity"] for row in rows
                   if row.get("kind") not in KINDS
                   or (row["kind"] == "fitted" and not row.get("parameter"))
                   or (row["kind"] == "closed form" and not row.get("arithmetic"))]
            checks.check(f"{path.relative_to(source)}: every row states its kind", not bad,
                         str(bad[:5]))

    # A stale reference is caught and named: one changed byte, one missing file.
    with tempfile.TemporaryDirectory(prefix="zonelab-reference-") as tmp:
        # The same relative path as the committed copy, so its README matches.
        stale = pathlib.Path(tmp) / "experiments" / "confznspp" / "quick"
        shutil.copytree(source / "experiments" / "confznspp" / "quick", stale)
        against = ["--against", "experiments/confznspp/quick"]
        csv = stale / "reset_occupancy.csv"
        text = csv.read_text()
        lines = text.split("\n")
        lines[1] = lines[1] + "0"
        csv.write_text("\n".join(lines))
        (stale / "finish_occupancy.json").unlink()
        r = run([zonelab, "experiment", "check", "confznspp", "--quick", *against], cwd=tmp)
        checks.check("a changed and a missing file: exit 3", r.returncode == 3,
                     f"exit {r.returncode}: {r.stdout}{r.stderr}")
        checks.check("the changed file is named with its line",
                     "reset_occupancy.csv: line 2" in r.stdout, r.stdout)
        checks.check("the missing file is named", "finish_occupancy.json: missing" in r.stdout,
                     r.stdout)
        r = run([zonelab, "experiment", "check", "confznspp", "--quick", "--json", *against],
                cwd=tmp)
        doc = json.loads(r.stdout) if r.stdout.startswith("{") else {}
        checks.check("--json lists the differing files",
                     doc.get("current") is False and
                     {d["file"] for d in doc.get("differing", [])} ==
                     {"reset_occupancy.csv", "finish_occupancy.json"}, r.stdout[:500])
        r = run([zonelab, "experiment", "check", "confznspp", "--quick", "--against",
                 str(pathlib.Path(tmp) / "nowhere")])
        checks.check("a missing directory is bad input (exit 2, one line)",
                     r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1,
                     f"exit {r.returncode}: {r.stderr}")
        r = run([zonelab, "experiment", "check", "no-such-set", "--against", tmp])
        checks.check("an unknown set is bad input (exit 2)", r.returncode == 2, r.stderr)

    r = run([sys.executable, str(source / "scripts" / "evidence-summary.py"), "--check",
             str(source / "docs" / "experiments.md")])
    checks.check("docs/experiments.md's evidence table counts the committed results",
                 r.returncode == 0, r.stdout + r.stderr)
    checks.finish()


if __name__ == "__main__":
    main()
