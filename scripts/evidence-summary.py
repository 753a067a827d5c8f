#!/usr/bin/env python3
"""Counts, per paper, the comparison rows of the committed experiment results
by kind (fitted, closed form, emerged) and the emerged rows that match the
paper (within 25 % of a non-zero paper number, as the reports count them).

  scripts/evidence-summary.py                 print the table
  scripts/evidence-summary.py --write DOC     replace the table in DOC
  scripts/evidence-summary.py --check DOC     exit 1 if DOC's table is stale

The table sits in DOC between the lines BEGIN and END below. Only the full
runs' JSON files count (not the quick references under experiments/*/quick).
"""
import argparse
import json
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BEGIN = "<!-- evidence table: scripts/evidence-summary.py --write docs/experiments.md -->"
END = "<!-- end of evidence table -->"
PAPERS = {
    "000": "seed 000, ZNS (ATC'21)",
    "001": "seed 001, FlexZNS",
    "002": "seed 002, ConfZNS",
    "003": "seed 003, ConfZNS++",
    "004": "seed 004, ZenFS+",
}
MATCH_WITHIN = 0.25
KINDS = ("fitted", "closed form", "emerged")


def is_match(row):
    paper = row.get("paper")
    if paper is None or paper == 0:
        return False
    return abs(row["measured"] - paper) <= MATCH_WITHIN * abs(paper)


def table(root):
    counts = {}
    for path in sorted((root / "experiments").rglob("*.json")):
        if "quick" in path.relative_to(root / "experiments").parts:
            continue
        doc = json.loads(path.read_text())
        if doc.get("quick") or "comparison" not in doc:
            continue
        seed = re.search(r"seed (\d{3})", doc.get("source", "")) or re.search(
            r"seed (\d{3})", doc.get("set", ""))
        paper = seed.group(1) if seed else "?"
        c = counts.setdefault(paper, {"sets": set(), "experiments": 0, "rows": 0,
                                      "with": 0, "matches": 0, **{k: 0 for k in KINDS}})
        c["sets"].add(doc["set"])
        c["experiments"] += 1
        for row in doc["comparison"]:
            kind = row.get("kind")
            if kind not in KINDS:
                raise SystemExit(f"{path}: a comparison row without a kind: {row.get('quantity')}")
            c["rows"] += 1
            c[kind] += 1
            if kind == "emerged" and row.get("paper") is not None:
                c["with"] += 1
                c["matches"] += is_match(row)
    lines = ["| paper | sets | experiments | rows | fitted | closed form | emerged | "
             "emerged with a paper number | emerged matches |",
             "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    total = {k: 0 for k in ("experiments", "rows", "with", "matches", *KINDS)}
    for paper in sorted(counts):
        c = counts[paper]
        for k in total:
            total[k] += c[k]
        lines.append(f"| {PAPERS.get(paper, 'seed ' + paper)} | {', '.join(sorted(c['sets']))} | "
                     f"{c['experiments']} | {c['rows']} | {c['fitted']} | {c['closed form']} | "
                     f"{c['emerged']} | {c['with']} | {c['matches']} |")
    lines.append(f"| all | | {total['experiments']} | {total['rows']} | {total['fitted']} | "
                 f"{total['closed form']} | {total['emerged']} | {total['with']} | "
                 f"{total['matches']} |")
    return "\n".join(lines) + "\n"


def replaced(doc_text, body):
    start = doc_text.find(BEGIN)
    end = doc_text.find(END)
    if start < 0 or end < start:
        raise SystemExit(f"the document has no evidence table markers ({BEGIN!r} ... {END!r})")
    return doc_text[: start + len(BEGIN)] + "\n" + body + doc_text[end:]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--write", metavar="DOC")
    group.add_argument("--check", metavar="DOC")
    args = parser.parse_args()
    body = table(ROOT)
    if args.write:
        path = pathlib.Path(args.write)
        path.write_text(replaced(path.read_text(), body))
    elif args.check:
        path = pathlib.Path(args.check)
        text = path.read_text()
        if replaced(text, body) != text:
            print(f"{args.check}: the evidence table is stale; regenerate it with "
                  f"`scripts/evidence-summary.py --write {args.check}`", file=sys.stderr)
            return 1
        print(f"{args.check}: the evidence table is current")
    else:
        sys.stdout.write(body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
