"""Live follow figures: append-to-screen latency, idle CPU, sustained ingest, key latency.

Run: python benchmarks/bench_live.py [--idle-seconds 30] [--ingest-mb 60]

The app runs headless (Textual's test driver, so it draws every frame as it would on a
terminal) following a file that this script appends to, as a daemon would.
- latency: one GPU interval is appended every 150 ms; the time from the write until
  the app shows a model that holds it (median, p95 of 40);
- idle CPU: the app follows a log that does not change, for --idle-seconds; CPU time
  of this process over wall time;
- ingest: the first --ingest-mb of the big benchmark log is appended as fast as the disk
  takes it; lines per second until the screen shows the last line; meanwhile a key is
  pressed every 0.5 s and the time until the view reacts is recorded.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
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
from tui.gantt import GanttView
from tui.options import positive_int

SIZE = (120, 36)


def _app(path: Path) -> CuzkApp:
    live = LiveLog(FileSource(path), lambda _: None)
    return make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


async def latency(tmp: Path, n: int = 40) -> list[float]:
    """Seconds from appending a GPU interval to the app showing it."""
    log = tmp / "latency.log"
    log.write_bytes(b"")
    app = _app(log)
    out: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        for k in range(n):
            start_ms, end_ms = 1000 * k + 10, 1000 * k + 600
            line = (
                f"TIMELINE,{start_ms},GPU_START,job-{k},worker=0,partition=0\n"
                f"TIMELINE,{end_ms},GPU_END,job-{k},worker=0,partition=0,gpu_ms=590\n"
            ).encode()
            with log.open("ab") as fh:
                fh.write(line)
            t0 = time.perf_counter()
            while app.model.now_ms < end_ms:
                await asyncio.sleep(0.001)
                if time.perf_counter() - t0 > 5:
                    raise SystemExit("the app did not show an appended line within 5 s")
            out.append(time.perf_counter() - t0)
            await pilot.pause(0.15)
    return out


async def idle_cpu(tmp: Path, seconds: float) -> float:
    """CPU share of one core while following a log that does not change."""
    log = tmp / "idle.log"
    log.write_bytes(
        (Path(__file__).resolve().parent.parent / "tests/samples/p9-c6.log").read_bytes()
    )
    app = _app(log)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(2.0)  # read and drawn; from here on nothing arrives
        cpu0, wall0 = _cpu(), time.perf_counter()
        await asyncio.sleep(seconds)
        return (_cpu() - cpu0) / (time.perf_counter() - wall0)


async def ingest(tmp: Path, megabytes: int) -> tuple[float, int, float, list[float], int]:
    """(lines per second, lines, seconds, key latencies, screen updates) for a fast append."""
    src = big_log()
    with src.open("rb") as fh:
        data = fh.read(megabytes << 20)
    data = data[: data.rfind(b"\n") + 1]
    lines = data.count(b"\n")
    log = tmp / "ingest.log"
    log.write_bytes(b"")
    app = _app(log)
    keys: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        view = app.query_one(GanttView)

        def write() -> None:
            with log.open("ab") as out:
                for pos in range(0, len(data), 1 << 20):
                    out.write(data[pos : pos + (1 << 20)])
                    out.flush()

        t0 = time.perf_counter()
        writer = threading.Thread(target=write)
        writer.start()
        last_key = t0
        while app.model.counts.total < lines:
            await asyncio.sleep(0.01)
            if time.perf_counter() - last_key > 0.5:
                before = view.generation
                k0 = time.perf_counter()
                # as the terminal would send it (pilot.press also waits for the app to idle)
                app.simulate_key("plus" if len(keys) % 2 == 0 else "minus")
                while view.generation == before:
                    await asyncio.sleep(0.001)
                keys.append(time.perf_counter() - k0)
                last_key = time.perf_counter()
            if time.perf_counter() - t0 > 600:
                raise SystemExit("ingest did not finish in 10 minutes")
        seconds = time.perf_counter() - t0
        writer.join()
        return lines / seconds, lines, seconds, keys, app.updates


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--idle-seconds", type=positive_float, default=30.0)
    ap.add_argument("--ingest-mb", type=positive_int, default=60)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-bench-") as d:
        tmp = Path(d)
        lat = sorted(asyncio.run(latency(tmp)))
        print(
            f"append-to-screen latency: median {1000 * statistics.median(lat):.0f} ms, "
            f"p95 {1000 * lat[int(len(lat) * 0.95) - 1]:.0f} ms, max {1000 * lat[-1]:.0f} ms "
            f"({len(lat)} appends; target: within 250 ms)"
        )
        share = asyncio.run(idle_cpu(tmp, args.idle_seconds))
        print(
            f"idle CPU while following an unchanged log: {100 * share:.2f} % of a core over "
            f"{args.idle_seconds:.0f} s (target <= 1 %)"
        )
        rate, lines, seconds, keys, updates = asyncio.run(ingest(tmp, args.ingest_mb))
        keys.sort()
        print(
            f"sustained ingest with redraws: {rate:,.0f} lines/s ({lines:,} lines, "
            f"{args.ingest_mb} MB in {seconds:.1f} s, {updates} screen updates)"
        )
        if keys:
            print(
                f"key latency during the burst: median {1000 * statistics.median(keys):.0f} ms, "
                f"max {1000 * keys[-1]:.0f} ms ({len(keys)} presses)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
