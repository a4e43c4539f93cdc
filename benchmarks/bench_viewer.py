"""The viewer on a long log: first data, final figures, the gap list, appends, CPU.

Run: python benchmarks/bench_viewer.py [--cpu-seconds 30]

The app runs headless (Textual's test driver, drawing every frame as on a terminal),
following a copy of the big simulated log of benchmarks/common.py (~1 M TIMELINE lines,
~68 hours of engine time). It prints:
- time to first data: from start until the Gantt shows a model with GPU intervals;
- time to final figures: until the whole file has been read and shown;
- gap-list open time: from `g` until the list is on screen (median of 5 openings);
- append-to-screen latency: one GPU interval appended to the big log, until the app shows a
  model that holds it (median of 10);
- CPU while the log grows by 5 lines a second, for --cpu-seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import big_log, positive_float
from parsers.builder import LogBuilder
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.follow import FileSource, LiveLog

SIZE = (120, 36)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def run(path: Path, cpu_seconds: float) -> None:
    """Drive the app and print the figures."""
    live = LiveLog(FileSource(path), lambda _: None)
    t0 = time.perf_counter()
    app: CuzkApp = make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)
    async with app.run_test(size=SIZE) as pilot:
        first = final = None
        while final is None:
            await asyncio.sleep(0.01)
            if first is None and app.model.gpus:
                first = time.perf_counter() - t0
            if app.loading is None and app.model.gpus:
                final = time.perf_counter() - t0
            if time.perf_counter() - t0 > 600:
                raise SystemExit("the log was not read within 10 minutes")
        print(f"time to first data     : {first:.2f} s  (goal: soon)")
        print(f"time to final figures  : {final:.2f} s  (goal <= 3 s)")
        opens = []
        for _ in range(5):
            g0 = time.perf_counter()
            await pilot.press("g")
            while app.screen is app.screen_stack[0]:
                await asyncio.sleep(0.001)
            opens.append(time.perf_counter() - g0)
            await pilot.press("escape")
            await pilot.pause(0.2)
        print(
            f"gap list opens in      : median {1000 * statistics.median(opens):.0f} ms "
            f"({len(app.model.gaps):,} gaps; goal <= 500 ms)"
        )
        lat = []
        base = app.model.now_ms + 1000
        for k in range(10):
            start, end = base + 1000 * k, base + 1000 * k + 500
            with path.open("ab") as fh:
                fh.write(
                    f"TIMELINE,{start},GPU_START,bench-{k},worker=0,partition=0\n"
                    f"TIMELINE,{end},GPU_END,bench-{k},worker=0,partition=0,gpu_ms=500\n".encode()
                )
            a0 = time.perf_counter()
            while app.model.now_ms < end:
                await asyncio.sleep(0.002)
                if time.perf_counter() - a0 > 60:
                    raise SystemExit("an appended line did not reach the screen within 60 s")
            lat.append(time.perf_counter() - a0)
        print(
            f"append-to-screen       : median {1000 * statistics.median(lat):.0f} ms, "
            f"max {1000 * max(lat):.0f} ms (goal <= 250 ms)"
        )
        stop = threading.Event()
        base = app.model.now_ms + 1000

        def grow() -> None:
            k = 0
            while not stop.wait(0.2):  # 5 lines a second
                with path.open("ab") as fh:
                    fh.write(
                        f"TIMELINE,{base + 200 * k},SYNTH_START,grow-{k},partition=0\n".encode()
                    )
                k += 1

        writer = threading.Thread(target=grow)
        writer.start()
        c0, w0 = _cpu(), time.perf_counter()
        await asyncio.sleep(cpu_seconds)
        share = (_cpu() - c0) / (time.perf_counter() - w0)
        stop.set()
        writer.join()
        print(
            f"CPU while growing 5/s  : {100 * share:.1f} % of a core over {cpu_seconds:.0f} s "
            "(goal <= 5 %)"
        )
        live.halt()


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--cpu-seconds", type=positive_float, default=30.0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-bench-") as d:
        path = Path(d) / "big.log"
        shutil.copyfile(big_log(), path)
        print(f"log: a copy of {big_log()} ({path.stat().st_size / 1e6:.0f} MB)")
        asyncio.run(run(path, args.cpu_seconds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
