"""Parameter sweeps on Dask (docs/sweep.md).

    import zonelab.sweep
    summary = zonelab.sweep.run("open-zones.toml", out="results/open-zones")

A sweep spec expands into points (configurations x experiment members x
seeds); each point is a pure function of its configuration, its seed and
the zonelab build, so it runs on whichever Dask worker takes it and its
result is cached under a hash of exactly those. Points already in the cache
are not run again, so an interrupted sweep resumes where it stopped and a
repeated one runs nothing. The CSV and JSON are assembled from the results
in point order: the same bytes however the points were run.

`python3 -m zonelab.sweep SPEC ...` is what `zonelab sweep SPEC` runs.
"""

import argparse
import functools
import gc
import json
import logging
import os
import signal
import sys
import time
from typing import Any, Dict, List, Optional

from . import _zonelab

EXIT_OK = 0
EXIT_INTERNAL = 1
EXIT_BAD_INPUT = 2
# How long to try to reach a scheduler given by address.
CONNECT_TIMEOUT_S = 5
PROGRESS_INTERVAL_S = 2.0


class SweepError(Exception):
    """A sweep that cannot go on: the message, and the exit status it means."""

    def __init__(self, message: str, status: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.status = status


@functools.lru_cache(maxsize=8)
def _expanded(text: str, origin: str) -> Any:
    return _zonelab.Sweep.from_text(text, origin)


def run_point(text: str, origin: str, index: int, build_id: str) -> str:
    """A Dask task: runs point `index` of the spec `text` on this worker and
    returns its result document (JSON text). Refuses to run on a worker with
    another zonelab build, whose result would be cached under the wrong key."""
    if _zonelab.build_id() != build_id:
        raise RuntimeError(
            f"this worker runs zonelab {_zonelab.build_id()}, the client {build_id}: "
            "every worker needs the client's build")
    return _expanded(text, origin).run_point(index)


def _note(message: str) -> None:
    print(f"zonelab: note: {message}", file=sys.stderr, flush=True)


class _Progress:
    def __init__(self, name: str, total: int, quiet: bool):
        self.name, self.total, self.quiet = name, total, quiet
        self.start = time.monotonic()
        self.last = self.start
        self.done = self.computed = self.cached = 0

    def wall_s(self) -> float:
        return time.monotonic() - self.start

    def step(self, computed: bool) -> None:
        self.done += 1
        if computed:
            self.computed += 1
        else:
            self.cached += 1
        now = time.monotonic()
        if self.quiet or now - self.last < PROGRESS_INTERVAL_S:
            return
        self.last = now
        print(f"sweep {self.name}: {self.done}/{self.total} points ({self.computed} computed, "
              f"{self.cached} from the cache), {self.wall_s():.1f} s", file=sys.stderr, flush=True)


def _forget_failed_client(error: BaseException) -> None:
    """Frees the Client whose connection failed, which the error's frames
    hold, now and quietly: at exit its finalizer would print a traceback of
    its own about the connection it never had, after the one-line error."""
    hook = sys.unraisablehook
    sys.unraisablehook = lambda _unraisable: None
    try:
        error.__traceback__ = None
        gc.collect()
    finally:
        sys.unraisablehook = hook


def _client(scheduler: Optional[str], workers: int):
    """(client, cluster or None): the scheduler at `scheduler`, else a local
    cluster of `workers` processes with one thread each."""
    try:
        from distributed import Client, LocalCluster
    except ImportError as e:
        raise SweepError("Dask is not installed (Debian: apt install python3-distributed); "
                         f"or run with --serial ({e})") from e
    if scheduler:
        try:
            return Client(scheduler, timeout=CONNECT_TIMEOUT_S, set_as_default=False), None
        except (OSError, TimeoutError, ValueError, TypeError) as e:
            detail = str(e).splitlines()[0] if str(e) else type(e).__name__
            _forget_failed_client(e)
            raise SweepError(f"cannot reach the Dask scheduler at {scheduler}: {detail}") from e
    # Local workers are new processes: they import this package from where
    # this process did.
    package_parent = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [package_parent] + [p for p in os.environ.get("PYTHONPATH", "").split(":") if p]
    os.environ["PYTHONPATH"] = ":".join(dict.fromkeys(paths))
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, silence_logs=logging.ERROR)
    return Client(cluster, set_as_default=False), cluster


def run(spec: str, *, out: Optional[str] = None, cache: Optional[str] = None,
        use_cache: bool = True, scheduler: Optional[str] = None, workers: int = 2,
        serial: bool = False, plots: bool = True, quiet: bool = False) -> Dict[str, Any]:
    """Runs the sweep `spec` (a spec file) and writes NAME.csv, NAME.json and
    NAME.png into `out` (default results/NAME). Points run on a local Dask
    cluster of `workers` processes, on the scheduler at `scheduler`, or in
    this process (`serial`); each is cached in `cache` (default
    zonelab.default_cache_dir()) unless use_cache is False. Returns the
    summary `zonelab sweep --json` prints. Raises SweepError."""
    if workers < 1 or workers > 1024:
        raise SweepError("--workers: from 1 to 1024")
    if serial and scheduler:
        raise SweepError("sweep: give --serial or --scheduler, not both")
    try:
        s = _zonelab.Sweep.load(spec)
    except _zonelab.ZonelabError as e:
        raise SweepError(str(e)) from e
    cache_dir = (cache or _zonelab.default_cache_dir()) if use_cache else None
    points = s.points
    progress = _Progress(s.name, len(points), quiet)
    results: List[Optional[str]] = [None] * len(points)
    recomputed: List[int] = []
    for p in points:
        if cache_dir is None:
            break
        hit, problem = s.lookup(cache_dir, p["index"])
        if problem:
            _note(f"sweep: point {p['index']} ({p['label']}): cache entry "
                  f"{s.cache_path(cache_dir, p['index'])} is unusable ({problem}); recomputed")
            recomputed.append(p["index"])
        if hit is not None:
            results[p["index"]] = hit
            progress.step(computed=False)
    missing = [i for i, r in enumerate(results) if r is None]

    def finished(index: int, result: str) -> None:
        results[index] = result
        if cache_dir is not None:
            try:
                s.store(cache_dir, index, result)
            except _zonelab.ZonelabError as e:
                raise SweepError(f"sweep: cache: {e}") from e
        progress.step(computed=True)

    # A point that fails does not stop the others (they run and are cached);
    # the sweep then writes no files and names the first failure.
    failures: Dict[int, str] = {}
    executor = "serial" if serial or not missing else "dask"
    if missing and serial:
        for index in missing:
            try:
                finished(index, s.run_point(index))
            except _zonelab.ZonelabError as e:
                failures[index] = str(e)
    elif missing:
        client, cluster = _client(scheduler, workers)
        try:
            from distributed import as_completed
            # The task by its importable name (this file may be running as
            # __main__, which a worker cannot import).
            from zonelab.sweep import run_point as task
            build = _zonelab.build_id()
            futures = {}
            for index in missing:
                future = client.submit(task, s.text, s.origin, index, build,
                                       key=f"zonelab-point-{points[index]['key']}",
                                       retries=0)
                futures[future] = index
            for future in as_completed(list(futures), loop=client.loop):
                index = futures[future]
                try:
                    result = future.result()
                except Exception as e:  # a point's error, raised on its worker
                    failures[index] = str(e).splitlines()[0] if str(e) else type(e).__name__
                    continue
                finished(index, result)
        finally:
            client.close()
            if cluster is not None:
                cluster.close()

    if failures:
        raise SweepError(f"sweep {s.name}: {len(failures)} of {len(points)} points failed, the "
                         f"first: {failures[min(failures)]}")
    out_dir = out or os.path.join("results", s.name)
    try:
        json_path, plottable = s.write(out_dir, results)
    except _zonelab.ZonelabError as e:
        raise SweepError(str(e)) from e
    plotted = "skipped"
    if plots and plottable:
        failure = _zonelab.plot(json_path)
        plotted = "failed" if failure else "written"
        if failure:
            _note(f"sweep: no plot ({failure}); CSV and JSON are written")
    return {
        "status": "success", "sct": 0, "sc": 0,
        "sweep": s.name,
        "out": out_dir,
        "files": {"csv": f"{s.name}.csv", "json": f"{s.name}.json",
                  "png": f"{s.name}.png" if plotted == "written" else None},
        "points": len(points),
        "computed": progress.computed,
        "cached": progress.cached,
        "recomputed": recomputed,
        "executor": executor,
        "plots": plotted,
        "wall_time_s": round(progress.wall_s(), 3),
    }


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="zonelab sweep", description="run a parameter sweep on Dask, cached (docs/sweep.md)")
    parser.add_argument("spec", metavar="SPEC")
    parser.add_argument("--out")
    parser.add_argument("--cache")
    parser.add_argument("--no-cache", action="store_true")
    parser.add_argument("--serial", action="store_true")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scheduler")
    parser.add_argument("--no-plots", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--quiet", action="store_true")
    parser.add_argument("--build-id", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build_id and args.build_id != _zonelab.build_id():
        print(f"zonelab: error: sweep: the Python module is build {_zonelab.build_id()}, the "
              f"zonelab command {args.build_id}: rebuild both (make)", file=sys.stderr)
        return EXIT_BAD_INPUT

    # SIGTERM ends the sweep as Ctrl-C does: the points already stored stay
    # in the cache, and the workers are stopped.
    def terminate(signum, frame):
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, terminate)
    try:
        summary = run(args.spec, out=args.out, cache=args.cache, use_cache=not args.no_cache,
                      scheduler=args.scheduler, workers=args.workers, serial=args.serial,
                      plots=not args.no_plots, quiet=args.quiet)
    except SweepError as e:
        print(f"zonelab: error: {e}", file=sys.stderr)
        return e.status
    except KeyboardInterrupt:
        print("zonelab: sweep interrupted; finished points are in the cache", file=sys.stderr)
        return 130
    if args.json:
        print(json.dumps(summary))
    else:
        print(f"sweep {summary['sweep']}: {summary['points']} points ({summary['computed']} "
              f"computed, {summary['cached']} from the cache) in {summary['wall_time_s']:.1f} s; "
              f"results in {summary['out']}")
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
