#!/usr/bin/env python3
"""Tests of plot.py. The table and spec handling needs only the standard
library; drawing a PNG is tested when matplotlib is importable and skipped
otherwise."""

import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import plot  # noqa: E402

HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None

SPEC = {"x": "occupancy_percent", "y": "latency_ms", "series": "erase",
        "xlabel": "zone occupancy (% of capacity)", "ylabel": "reset latency (ms)",
        "series_label": "erase", "title": "reset", "logx": False, "logy": False}
CSV = ("erase,occupancy_percent,latency_ms\n"
       "full,50,77.015\nfull,0.0015,77.015\npartial,0.0015,3.515\npartial,50,38.515\n")


def write_experiment(directory, csv_text=CSV, spec=SPEC):
    with open(os.path.join(directory, "e.csv"), "w", encoding="utf-8") as f:
        f.write(csv_text)
    path = os.path.join(directory, "e.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"plot": spec, "files": {"csv": "e.csv", "png": "e.png"}}, f)
    return path


class SeriesTest(unittest.TestCase):
    def test_groups_rows_by_series_in_first_seen_order_sorted_by_x(self):
        with tempfile.TemporaryDirectory() as d:
            rows = plot.read_table(os.path.join(os.path.dirname(write_experiment(d)), "e.csv"))
        series = plot.series_points(rows, SPEC)
        self.assertEqual(list(series), ["full", "partial"])
        self.assertEqual(series["full"], [(0.0015, 77.015), (50.0, 77.015)])
        self.assertEqual(series["partial"], [(0.0015, 3.515), (50.0, 38.515)])

    def test_an_order_column_orders_each_line(self):
        rows = [{"line": "a", "cl": "1", "kiops": "2", "p95": "1"},
                {"line": "a", "cl": "4", "kiops": "1.5", "p95": "3"},
                {"line": "a", "cl": "2", "kiops": "3", "p95": "2"}]
        spec = {"x": "kiops", "y": "p95", "series": "line", "order": "cl"}
        self.assertEqual(plot.series_points(rows, spec)["a"], [(2.0, 1.0), (3.0, 2.0), (1.5, 3.0)])
        spec["order"] = ""
        self.assertEqual(plot.series_points(rows, spec)["a"], [(1.5, 3.0), (2.0, 1.0), (3.0, 2.0)])

    def test_a_missing_column_is_bad_input(self):
        with self.assertRaises(plot.BadInput):
            plot.series_points([{"erase": "full", "latency_ms": "1"}], SPEC)

    def test_a_panel_column_splits_the_rows_in_first_seen_order(self):
        rows = [{"panel": "write", "v": "1"}, {"panel": "read", "v": "2"},
                {"panel": "write", "v": "3"}]
        panels = plot.panel_rows(rows, {"panel": "panel"})
        self.assertEqual(list(panels), ["write", "read"])
        self.assertEqual([r["v"] for r in panels["write"]], ["1", "3"])
        self.assertEqual(list(plot.panel_rows(rows, {})), [""])

    def test_heatmap_cells_have_a_row_per_x_and_a_column_per_series(self):
        rows = [{"fg": "write", "bg": "finish", "m": "0.26"},
                {"fg": "write", "bg": "reset", "m": "0.17"},
                {"fg": "read", "bg": "finish", "m": "1.17"}]
        labels_r, labels_c, cells = plot.heatmap_cells(rows, {"x": "fg", "series": "bg", "y": "m"})
        self.assertEqual(labels_r, ["write", "read"])
        self.assertEqual(labels_c, ["finish", "reset"])
        self.assertEqual(cells[("read", "finish")], 1.17)
        self.assertNotIn(("read", "reset"), cells)

    def test_bars_keep_table_order_and_a_text_cell_in_y_is_bad_input(self):
        rows = [{"t": "b", "r": "1.2", "ok": "false"}, {"t": "a", "r": "0.9", "ok": "true"}]
        spec = {"x": "t", "y": "r", "series": "ok"}
        self.assertEqual(plot.bars(rows, spec), [("b", 1.2, "false"), ("a", 0.9, "true")])
        with self.assertRaises(plot.BadInput):
            plot.bars([{"t": "a", "r": "not stated", "ok": "x"}], spec)

    def test_a_document_without_a_plot_spec_is_bad_input(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "e.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump({"files": {"csv": "e.csv", "png": "e.png"}}, f)
            with self.assertRaises(plot.BadInput):
                plot.load_experiment(path)

    def test_without_matplotlib_it_exits_3_with_one_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_experiment(d)
            code = ("import runpy, sys; sys.modules['matplotlib'] = None; "
                    f"sys.argv = ['plot.py', {path!r}]; "
                    f"runpy.run_path({os.path.join(HERE, 'plot.py')!r}, run_name='__main__')")
            done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
            self.assertEqual(done.returncode, plot.EXIT_NO_MATPLOTLIB)
            self.assertEqual(len(done.stderr.strip().splitlines()), 1, done.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "e.png")))


@unittest.skipUnless(HAS_MATPLOTLIB, "matplotlib is not installed (make plot-deps)")
class DrawTest(unittest.TestCase):
    def test_writes_a_small_png(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_experiment(d)
            self.assertEqual(plot.main(["plot.py", path]), 0)
            with open(os.path.join(d, "e.png"), "rb") as f:
                data = f.read()
            self.assertTrue(data.startswith(b"\x89PNG\r\n\x1a\n"))
            self.assertLess(len(data), 80 * 1024)

    def test_same_input_same_bytes(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_experiment(d, spec=dict(SPEC, logy=True))
            png = os.path.join(d, "e.png")
            self.assertEqual(plot.main(["plot.py", path]), 0)
            with open(png, "rb") as f:
                first = f.read()
            self.assertEqual(plot.main(["plot.py", path]), 0)
            with open(png, "rb") as f:
                self.assertEqual(f.read(), first)

    def test_draws_panels_heatmaps_and_bars(self):
        cases = [
            ("kind,panel,cl,kiops,p95\nx,write,1,1,10\nx,write,2,2,12\nx,read,1,3,20\n",
             {"x": "kiops", "y": "p95", "series": "kind", "order": "cl", "panel": "panel",
              "references": [15], "title": "panels"}),
            ("fg,bg,m,paper\nwrite,finish,0.26,0.26\nread,reset,0.05,not stated\n",
             {"x": "fg", "y": "m", "series": "bg", "kind": "heatmap", "title": "heat"}),
            ("t,r,ok\nreset peak,1.2,false\nfinish peak,0.95,true\n",
             {"x": "t", "y": "r", "series": "ok", "kind": "bar", "logy": True,
              "references": [0.85, 1, 1.15], "title": "bars"}),
        ]
        for csv_text, spec in cases:
            with self.subTest(spec["title"]), tempfile.TemporaryDirectory() as d:
                path = write_experiment(d, csv_text=csv_text, spec=spec)
                self.assertEqual(plot.main(["plot.py", path]), 0)
                with open(os.path.join(d, "e.png"), "rb") as f:
                    self.assertTrue(f.read().startswith(b"\x89PNG\r\n\x1a\n"))

    def test_an_unknown_kind_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_experiment(d, spec=dict(SPEC, kind="pie"))
            self.assertEqual(plot.main(["plot.py", path]), plot.EXIT_BAD_INPUT)

    def test_a_bad_table_exits_2(self):
        with tempfile.TemporaryDirectory() as d:
            path = write_experiment(d, csv_text="erase,occupancy_percent,latency_ms\nfull,x,1\n")
            self.assertEqual(plot.main(["plot.py", path]), plot.EXIT_BAD_INPUT)


if __name__ == "__main__":
    unittest.main()
