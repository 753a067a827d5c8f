#!/usr/bin/env python3
"""Draws zonelab experiment results.

For each experiment JSON document given (written by `zonelab experiment
run`), reads the result table it names (NAME.csv) and its plot spec
("plot": x, y, series, labels, log axes, and optionally "order", the column
that orders a line's points) and writes the PNG it names (NAME.png) beside
it: one line per series, about 6 x 4 inches at 100 dpi.

Optional keys of the spec: "panel", a column whose values split the lines
into side-by-side panels (one per value, in first-seen order); "references",
values of y drawn as dashed lines across; and "kind":

- "heatmap": a grid with a row per value of x and a column per value of
  series, each cell coloured and labelled with y (ylabel names the scale);
- "bar": one horizontal bar per row, labelled with its x, of length y,
  coloured by series ("logy" makes the length axis logarithmic).

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


def column(row, key, number):
    """A row's cell, as a number if asked; bad input when missing or not one."""
    try:
        value = row[key]
    except KeyError as e:
        raise BadInput(f"no column {e}") from e
    if not number:
        return value
    try:
        return float(value)
    except (TypeError, ValueError) as e:
        raise BadInput(f"column {key}: '{value}' is not a number") from e


def panel_rows(rows, spec):
    """{panel value: rows}, panels in first-seen order; one panel ("") when
    the spec names no panel column."""
    key = spec.get("panel") or None
    panels = {}
    for row in rows:
        panels.setdefault(column(row, key, False) if key else "", []).append(row)
    return panels


def heatmap_cells(rows, spec):
    """(row labels, column labels, {(row, column): value}): a row per value
    of x, a column per value of series, both in first-seen order."""
    x_key, s_key, y_key = spec.get("x"), spec.get("series"), spec.get("y")
    labels_r, labels_c, cells = [], [], {}
    for row in rows:
        r, c = column(row, x_key, False), column(row, s_key, False)
        if r not in labels_r:
            labels_r.append(r)
        if c not in labels_c:
            labels_c.append(c)
        cells[(r, c)] = column(row, y_key, True)
    return labels_r, labels_c, cells


def bars(rows, spec):
    """[(label, length, series)] in table order."""
    s_key = spec.get("series") or None
    return [(column(row, spec.get("x"), False), column(row, spec.get("y"), True),
             column(row, s_key, False) if s_key else "") for row in rows]


# Series that coincide stay visible: each has its own marker and dashes.
MARKERS = ("o", "s", "^", "D", "v", "x")
LINESTYLES = ("-", "--", "-.", ":")


def draw_lines(ax, spec, series):
    for i, (name, points) in enumerate(series.items()):
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        ax.plot(xs, ys, marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.5,
                linestyle=LINESTYLES[i % len(LINESTYLES)], label=name or None)
    for value in spec.get("references") or ():
        ax.axhline(value, color="0.4", linestyle="--", linewidth=1)
    if spec.get("logx"):
        ax.set_xscale("log")
    if spec.get("logy"):
        ax.set_yscale("log")
    ax.set_xlabel(spec.get("xlabel") or spec.get("x", ""))
    ax.set_ylabel(spec.get("ylabel") or spec.get("y", ""))
    ax.grid(True, which="major", alpha=0.35)
    if len(series) > 1 or next(iter(series), ""):
        ax.legend(title=spec.get("series_label") or None, fontsize=8, title_fontsize=8)


def draw_heatmap(fig, ax, spec, rows):
    labels_r, labels_c, cells = heatmap_cells(rows, spec)
    grid = [[cells.get((r, c), float("nan")) for c in labels_c] for r in labels_r]
    image = ax.imshow(grid, cmap="viridis", aspect="auto")
    values = [v for line in grid for v in line if v == v]
    middle = (min(values) + max(values)) / 2 if values else 0
    for i, line in enumerate(grid):
        for j, value in enumerate(line):
            if value == value:
                ax.text(j, i, f"{value:.2f}", ha="center", va="center", fontsize=9,
                        color="black" if value > middle else "white")
    ax.set_xticks(range(len(labels_c)), labels_c)
    ax.set_yticks(range(len(labels_r)), labels_r)
    ax.set_xlabel(spec.get("series_label") or spec.get("series", ""))
    ax.set_ylabel(spec.get("xlabel") or spec.get("x", ""))
    fig.colorbar(image, ax=ax, label=spec.get("ylabel") or spec.get("y", ""))


def draw_bars(ax, spec, rows):
    items = bars(rows, spec)
    names = list(dict.fromkeys(s for _, _, s in items))
    colors = {name: f"C{i % 10}" for i, name in enumerate(names)}
    positions = range(len(items))
    ax.barh(positions, [length for _, length, _ in items],
            color=[colors[s] for _, _, s in items])
    ax.set_yticks(positions, [label for label, _, _ in items], fontsize=8)
    ax.invert_yaxis()  # table order from the top
    for value in spec.get("references") or ():
        ax.axvline(value, color="0.4", linestyle="--", linewidth=1)
    if spec.get("logy"):
        ax.set_xscale("log")
        plain = matplotlib_ticker().FuncFormatter(lambda value, _: f"{value:g}")
        ax.xaxis.set_major_formatter(plain)
        ax.xaxis.set_minor_formatter(plain)
    ax.set_xlabel(spec.get("ylabel") or spec.get("y", ""))
    ax.grid(True, axis="x", which="major", alpha=0.35)
    if len(names) > 1 or (names and names[0]):
        handles = [legend_patch(colors[name]) for name in names]
        ax.legend(handles, names, title=spec.get("series_label") or None, fontsize=8,
                  title_fontsize=8)


def matplotlib_ticker():
    import matplotlib.ticker
    return matplotlib.ticker


def legend_patch(color):
    from matplotlib.patches import Patch
    return Patch(color=color)


def figure_size(spec, rows, panels):
    if spec.get("kind") == "bar":
        return (7, 1.5 + 0.35 * len(rows))
    return (6 if panels == 1 else 4.5 * panels, 4)


def draw(plt, spec, rows, png_path):
    kind = spec.get("kind") or "lines"
    panels = panel_rows(rows, spec) if kind == "lines" else {"": rows}
    fig, axes = plt.subplots(1, len(panels), figsize=figure_size(spec, rows, len(panels)),
                             dpi=100, squeeze=False)
    for ax, (name, part) in zip(axes[0], panels.items()):
        if kind == "heatmap":
            draw_heatmap(fig, ax, spec, part)
        elif kind == "bar":
            draw_bars(ax, spec, part)
        else:
            draw_lines(ax, spec, series_points(part, spec))
        ax.set_title(name if len(panels) > 1 else spec.get("title", ""),
                     fontsize=9 if len(panels) > 1 else 10)
    if len(panels) > 1:
        fig.suptitle(spec.get("title", ""), fontsize=10)
    fig.tight_layout()
    # No "Software" text chunk: the same data and packages give the same bytes.
    fig.savefig(png_path, dpi=100, metadata={"Software": None})
    plt.close(fig)


KINDS = ("lines", "heatmap", "bar")


def plot_experiment(plt, json_path):
    doc, csv_path, png_path = load_experiment(json_path)
    spec = doc["plot"]
    if (spec.get("kind") or "lines") not in KINDS:
        raise BadInput(f"{json_path}: plot kind '{spec.get('kind')}' is not one of "
                       + ", ".join(KINDS))
    rows = read_table(csv_path)
    if not rows:
        raise BadInput(f"{csv_path}: no rows")
    draw(plt, spec, rows, png_path)
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
