"""Time the first gap inspector on a long log: its raw lines, and its description (whose CPU
path needs the run medians), each in a fresh process, as a user opening it first meets them.

Run: python benchmarks/bench_inspector.py [--runs N] [--log PATH] [--base TREE]

`--base TREE` times a checkout of another version (e.g. a worktree at main, its core built)
alternately in the same run, and prints both.
"""

from __future__ import annotations

import argparse
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


def _timed_in(tree: Path, log: Path) -> dict[str, float]:
    """`first_inspector_s` in a fresh interpreter on the code of `tree`."""
    # this file loaded by its path: `parsers` and `tui` come from `tree` alone
    code = (
        "import importlib.util, json; from pathlib import Path; "
        f"spec = importlib.util.spec_from_file_location('bench', {__file__!r}); "
        "bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench); "
        f"print(json.dumps(bench.first_inspector_s(Path({str(log)!r}))))"
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
            runs[name].append(_timed_in(tree, log))
    print(f"log: {log} ({log.stat().st_size / 1e6:.0f} MB), median of {args.runs}")
    for name, figures in runs.items():
        for key, what in (("raw", "raw lines (first lines())"), ("describe", "description")):
            values = [f[key] for f in figures]
            print(
                f"{name:>4} {what:<26}: {statistics.median(values):.3f} s  "
                f"(runs: {', '.join(f'{v:.3f}' for v in values)})"
            )
    print("target: raw lines <= 0.3 s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
