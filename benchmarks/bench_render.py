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
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import BIG_CONFIG, big_log
from cuzksim.logs import write_log
from parsers.load import read_log
from parsers.rawlines import LineReader
from tui.app import make_app
from tui.gantt import GanttView
from tui.options import positive_int

SAMPLE = Path(__file__).resolve().parent.parent / "tests" / "samples" / "curio-mixed.log"
SMALL = Path("/tmp/cuzk-tui-bench/small-60-proofs.log")
SIZE = (200, 50)


@dataclass
class Figures:
    """Redraw times (ms) of one log."""

    partitions: int
    whole: list[float]  # the whole run in view
    zoomed: list[float]  # 20 ms per cell, around a gap in the middle of the run

    @staticmethod
    def median(values: list[float]) -> float:
        return statistics.median(values)

    @property
    def all(self) -> list[float]:
        return sorted(self.whole + self.zoomed)


async def redraw_ms(path: Path, repeats: int) -> Figures:
    """Full redraws at the whole-run view and zoomed in on a gap."""
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    figures = Figures(len(model.parts), [], [])
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        views = [(view.t0, view.scale, figures.whole)]
        if model.gaps:
            gap = model.gaps[len(model.gaps) // 2]
            views.append((gap.start - 50 * 20.0, 20.0, figures.zoomed))
        for _ in range(repeats):
            for t0, scale, out in views:
                view.t0, view.scale = t0, scale
                view.generation += 1  # a new view: nothing cached
                start = time.perf_counter()
                for y in range(view.size.height):
                    view.render_line(y)
                out.append((time.perf_counter() - start) * 1000)
    return figures


def _line(name: str, f: Figures) -> str:
    p95 = f.all[int(len(f.all) * 0.95) - 1]
    return (
        f"{name} ({f.partitions:,} partitions): median {f.median(f.all):.2f} ms, p95 {p95:.2f} ms "
        f"(whole run {f.median(f.whole):.2f}, zoomed {f.median(f.zoomed):.2f})"
    )


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--repeats", type=positive_int, default=20)
    args = ap.parse_args()
    big_path = big_log()
    if not SMALL.exists():
        with SMALL.open("w") as out:
            write_log(dataclasses.replace(BIG_CONFIG, proofs=60), out)
    sample = asyncio.run(redraw_ms(SAMPLE, args.repeats))
    small = asyncio.run(redraw_ms(SMALL, args.repeats))
    big = asyncio.run(redraw_ms(big_path, args.repeats))
    print(f"view {SIZE[0]}x{SIZE[1]}, whole run and zoomed in, {args.repeats} redraws each")
    print(_line("sample curio-mixed.log", sample))
    print(_line("small log", small))
    print(_line("1M-line log", big))
    print(
        f"ratio big/small (median): {big.median(big.all) / small.median(small.all):.2f} "
        f"(whole run {big.median(big.whole) / small.median(small.whole):.2f}, "
        f"zoomed {big.median(big.zoomed) / small.median(small.zoomed):.2f})   "
        "target: each <= 8 ms, ratio <= 1.5"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
