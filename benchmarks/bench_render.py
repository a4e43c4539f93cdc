"""Time a full redraw of a 200x50 Gantt on a small log and on the 1,000,000-line log.

Run: python benchmarks/bench_render.py [--repeats N]

A redraw is every line of the view rendered with the strip cache emptied (what a
zoom or pan costs). Drawing samples the model's columns per cell with searchsorted,
so the cost should not grow with the size of the log; the ratio says whether it does.
The small log is the big one's configuration cut to 60 proofs (same GPUs, workers and
concurrency, so the same lanes fill the view); the sample curio-mixed.log is timed too.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import BIG_CONFIG, big_log
from parsers.rawlines import LineReader
from parsers.report import read_log
from parsers.simulate import write_log
from tui.app import make_app
from tui.gantt import GanttView

SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "samples" / "curio-mixed.log"
SMALL = Path("/tmp/cuzk-tui-bench/small-60-proofs.log")
SIZE = (200, 50)


async def redraw_ms(path: Path, repeats: int) -> tuple[float, float, int]:
    """Median and p95 of a full redraw (ms), at the whole-run view and zoomed in on a gap."""
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    times: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        views = [(view.t0, view.scale)]
        if model.gaps:
            gap = model.gaps[len(model.gaps) // 2]
            views.append((gap.start - 50 * 20.0, 20.0))
        for _ in range(repeats):
            for t0, scale in views:
                view.t0, view.scale = t0, scale
                view.generation += 1  # a new view: nothing cached
                start = time.perf_counter()
                for y in range(view.size.height):
                    view.render_line(y)
                times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95) - 1], len(model.parts)


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeats", type=int, default=20)
    args = ap.parse_args()
    big_path = big_log()
    if not SMALL.exists():
        with SMALL.open("w") as out:
            write_log(dataclasses.replace(BIG_CONFIG, proofs=60), out)
    sample = asyncio.run(redraw_ms(SAMPLE, args.repeats))
    small = asyncio.run(redraw_ms(SMALL, args.repeats))
    big = asyncio.run(redraw_ms(big_path, args.repeats))
    print(f"view {SIZE[0]}x{SIZE[1]}, whole run and zoomed in, {args.repeats} redraws each")
    print(
        f"sample curio-mixed.log ({sample[2]:,} partitions): median {sample[0]:.2f} ms, "
        f"p95 {sample[1]:.2f} ms"
    )
    print(f"small log ({small[2]:,} partitions): median {small[0]:.2f} ms, p95 {small[1]:.2f} ms")
    print(f"1M-line log ({big[2]:,} partitions): median {big[0]:.2f} ms, p95 {big[1]:.2f} ms")
    print(f"ratio big/small (median): {big[0] / small[0]:.2f}   target: each <= 8 ms, ratio <= 1.5")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
