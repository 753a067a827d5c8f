#!/usr/bin/env python3
"""Draws zonelab experiment results.

For each experiment JSON document given (written by `zonelab experiment
run`), reads the result table it names (NAME.csv) and its plot spec
("plot": x, y, series, labels, log axes, and optionally "order", the column
that orders a line's points) and writes the PNG it names (NAME.png) beside
it: one line per series, about 6 x 4 inches at 100 dpi.

usage: plot.py EXPERIMENT.json...

Exit status: 0 every PNG written, 2 bad input, 3 matplotlib is missing
(`make plot-deps` installs it into .venv).
"""

import csv
import json
import os
import sys

EXIT_BAD_INPUT = 2
EXIT_NO_MATPLOTLIB = 3


class BadInput(Exception):
    pass


def load_experiment(json_path):
    """The experiment document, with its CSV and PNG paths made absolute."""
    try:
        with open(json_path, encoding="utf-8") as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        raise BadInput(f"{json_path}: {e}") from e
    for key in ("plot", "files"):
        if not isinstance(doc.get(key), dict):
            raise BadInput(f"{json_path}: no '{key}' object")
    base = os.path.dirname(os.path.abspath(json_path))
    files = doc["files"]
    for key in ("csv", "png"):
        if not isinstance(files.get(key), str):
            raise BadInput(f"{json_path}: files.{key} is missing")
    return doc, os.path.join(base, files["csv"]), os.path.join(base, files["png"])


def read_table(csv_path):
    """The CSV's rows as dictionaries of column name to text."""
    try:
        with open(csv_path, newline="", encoding="utf-8") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise BadInput(f"{csv_path}: {e}") from e


def series_points(rows, spec):
    """{series name: [(x, y), ...]}, series in first-seen order, each line's
    points sorted by the spec's "order" column if it names one, else by x."""
    x_key, y_key, s_key = spec.get("x"), spec.get("y"), spec.get("series")
    order_key = spec.get("order") or None
    series = {}
    for number, row in enumerate(rows, start=2):
        try:
            x, y = float(row[x_key]), float(row[y_key])
            order = float(row[order_key]) if order_key else x
        except KeyError as e:
            raise BadInput(f"no column {e}") from e
        except (TypeError, ValueError) as e:
            raise BadInput(f"line {number}: {x_key}, {y_key} or the order column is not a "
                           "number") from e
        name = row.get(s_key, "") if s_key else ""
        series.setdefault(name, []).append((order, x, y))
    return {name: [(x, y) for _, x, y in sorted(points)] for name, points in series.items()}


# Series that coincide stay visible: each has its own marker and dashes.
MARKERS = ("o", "s", "^", "D", "v", "x")
LINESTYLES = ("-", "--", "-.", ":")


def draw(plt, spec, series, png_path):
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    for i, (name, points) in enumerate(series.items()):
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.5,
                linestyle=LINESTYLES[i % len(LINESTYLES)], label=name or None)
    if spec.get("logx"):
        ax.set_xscale("log")
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(spec.get("xlabel") or spec.get("x", ""))
    ax.set_ylabel(spec.get("ylabel") or spec.get("y", ""))
    ax.set_title(spec.get("title", ""), fontsize=10)
    ax.grid(True, which="major", alpha=0.35)
    if len(series) > 1 or next(iter(series), ""):
        ax.legend(title=spec.get("series_label") or None, fontsize=8, title_fontsize=8)
    fig.tight_layout()
    # No "Software" text chunk: the same data and packages give the same bytes.
    fig.savefig(png_path, dpi=100, metadata={"Software": None})
    plt.close(fig)


def plot_experiment(plt, json_path):
    doc, csv_path, png_path = load_experiment(json_path)
    series = series_points(read_table(csv_path), doc["plot"])
    if not series:
        raise BadInput(f"{csv_path}: no rows")
    draw(plt, doc["plot"], series, png_path)
    return png_path


def main(argv):
    if len(argv) < 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip(), file=sys.stderr)
        return 0 if len(argv) >= 2 else EXIT_BAD_INPUT
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"plot.py: matplotlib is not installed for {sys.executable}", file=sys.stderr)
        return EXIT_NO_MATPLOTLIB
    try:
        for json_path in argv[1:]:
            plot_experiment(plt, json_path)
    except BadInput as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
