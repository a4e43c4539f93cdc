"""Time the first gap inspector on a long log: its raw lines, its description (whose CPU
path needs the run medians), and the screen that shows them, each in a fresh process, as a
user opening it first meets them.

Run: python benchmarks/bench_inspector.py [--runs N] [--log PATH] [--base TREE]

The screen: the headless viewer follows the log (as `cuzk-tui LOG` does, 120x36); once the
final model is shown, `n` selects the first gap and `enter` opens the inspector; the time
from `enter` until the inspector is drawn and the app idle (the `first inspector` row of
bench_paths.py), then the median of four more openings (escape between them).

`--base TREE` times a checkout of another version (e.g. a worktree at main, its core built)
alternately in the same run, and prints both.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def first_inspector_s(path: Path) -> dict[str, float]:
    """Seconds of the first inspector on `path`, once the model is loaded: `raw` the raw
    lines (the reader's first `lines()`) of the last gap (the newest, where a followed log's
    user looks; the farthest from the file's start), `describe` the largest gap's
    description (its CPU path needs the run medians), each with a fresh reader."""
    from parsers.load import read_log
    from parsers.rawlines import LineReader
    from tui.inspector import describe_gap, raw_context

    model = read_log(path)
    last = model.gaps[int(model.parts.end_line[model.gaps.before].argmax())]  # latest in the file
    largest = model.gaps[model.gaps.largest(1, 0)[0]]
    t0 = time.perf_counter()
    raw_context(model, LineReader(path=path), last)
    t1 = time.perf_counter()
    describe_gap(model, largest, LineReader(path=path))
    t2 = time.perf_counter()
    return {"raw": t1 - t0, "describe": t2 - t1}


async def _open_inspector_s(path: Path) -> dict[str, float]:
    from parsers.builder import LogBuilder
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.follow import FileSource, LiveLog

    live = LiveLog(FileSource(path), lambda _: None)
    app = make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)
    opens: list[float] = []
    async with app.run_test(size=(120, 36)) as pilot:
        t0 = time.perf_counter()
        while not (app.loading is None and app.model.gpus):
            await asyncio.sleep(0.01)
            if time.perf_counter() - t0 > 600:
                raise SystemExit("the log was not shown within 10 minutes")
        await pilot.pause(1.0)
        await pilot.press("n")
        while app.gantt.selected is None:
            await asyncio.sleep(0.001)
        await pilot.pause(0.5)
        for _ in range(5):
            i0 = time.perf_counter()
            await pilot.press("enter")
            while app.screen is app.screen_stack[0]:
                await asyncio.sleep(0.001)
            await pilot.pause()
            opens.append(time.perf_counter() - i0)
            await pilot.press("escape")
            await pilot.pause(0.5)
        live.halt()
    live.source.close()
    return {"screen": opens[0], "again": statistics.median(opens[1:])}


def screen_s(path: Path) -> dict[str, float]:
    """Seconds from `enter` until the inspector is drawn in the headless viewer following
    `path`: `screen` the first opening, `again` the median of the next four."""
    return asyncio.run(_open_inspector_s(path))


def _timed_in(tree: Path, log: Path, what: str = "first_inspector_s") -> dict[str, float]:
    """`first_inspector_s` (or another function of this file) in a fresh interpreter on
    the code of `tree`."""
    # this file loaded by its path: `parsers` and `tui` come from `tree` alone
    code = (
        "import importlib.util, json; from pathlib import Path; "
        f"spec = importlib.util.spec_from_file_location('bench', {__file__!r}); "
        "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench); "
        f"print(json.dumps(bench.{what}(Path({str(log)!r}))))"
    )
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, check=True
    )
    figures: dict[str, float] = json.loads(out.stdout.strip().splitlines()[-1])
    return figures


def main() -> int:
    """Print the figures."""
    sys.path.insert(0, str(ROOT))
    from benchmarks.common import hours_100_log
    from tui.options import positive_int

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=5)
    ap.add_argument("--log", type=Path, default=None)
    ap.add_argument("--base", type=Path, default=None, help="a checkout to time beside this one")
    args = ap.parse_args()
    log = args.log or hours_100_log()
    trees = {"this": ROOT} | ({"base": args.base.resolve()} if args.base else {})
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in trees}
    for _ in range(args.runs):
        for name, tree in trees.items():  # alternated: the machine's load hits both alike
            runs[name].append(_timed_in(tree, log) | _timed_in(tree, log, "screen_s"))
    print(f"log: {log} ({log.stat().st_size / 1e6:.0f} MB), median of {args.runs}")
    for name, figures in runs.items():
        for key, what in (
            ("raw", "raw lines (first lines())"),
            ("describe", "description"),
            ("screen", "screen (enter to drawn)"),
            ("again", "screen, opened again"),
        ):
            values = [f[key] for f in figures]
            print(
                f"{name:>4} {what:<26}: {statistics.median(values):.3f} s  "
                f"(runs: {', '.join(f'{v:.3f}' for v in values)})"
            )
    print("target: raw lines <= 0.3 s; screen (the first inspector) <= 0.3 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
