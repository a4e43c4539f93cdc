"""Every path a user takes on a long log, against the shell habit or the stated limit.

Run: python benchmarks/bench_paths.py [--runs 5] [--log hours-100|hours-250|PATH]
     [--follow-seconds 60] [--only reports,exports,viewer,follow]

On the simulated 100-hour log of benchmarks/common.py (one GPU, two workers, ~1 M TIMELINE
lines; `--log hours-250` for the 250-hour two-GPU one), each figure from fresh processes:

- the text report and the JSON report, alternated with the gap-list pipeline
  (`LC_ALL=C grep TIMELINE, LOG | LC_ALL=C sort -t, -k2 -n | awk ...`), medians and ratios;
- the trace and CSV exports in one command, and the Perfetto protobuf trace: seconds and
  peak RSS, against the limits;
- the viewer (headless, following the log as `cuzk-tui LOG` does): time until the final
  figures are shown, its peak RSS against the limit and against twice the model's columns
  (and what it takes above the viewer on an empty log), the first inspector (`n`, then
  `enter`) until its text is drawn;
- the viewer following the log and a GPU-bound log of two GPUs with two workers each, each
  growing by 5 lines a second with the lines of further partitions, and the log growing with
  a restarted daemon's lines (a second run, shown beside the first): CPU of the whole
  process, measured after 30 s of growth (the follower's burst allowance spent).

The limits are printed beside every figure; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import fields, is_dataclass, replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from benchmarks.bench_report import AWK_GAPS
from benchmarks.common import (
    GPU_BOUND_CONFIG,
    HOURS_100_CONFIG,
    HOURS_250_CONFIG,
    byte_compile,
    gpu_bound_log,
    hours_100_log,
    hours_250_log,
    peak_rss_mb,
)
from benchmarks.common import run_measured as measured
from cuzksim.config import SimConfig
from cuzksim.logs import write_log
from tui.options import positive_int

ROOT = Path(__file__).resolve().parent.parent
LINES_PER_S = 5.0
WARM_S = 30.0  # of growth before the follower's CPU is measured
# The limits (and the figures on main before this benchmark's commit, 2 cores, a 252 MB
# 100-hour log): what each row must reach.
LIMITS = {
    "text report": "<= 1.0x the pipeline (was 2.99x)",
    "json report": "<= 0.6x the pipeline (was 0.78-0.84x)",
    "export trace+csv": "<= 10 s, <= 800 MB (was 31.7 s, 1.86 GB)",
    "export protobuf": "<= 10 s, <= 800 MB",
    "viewer final": "<= 2 s (was 2.94 s)",
    "viewer peak": "<= 600 MB and <= 2x the model's columns (was 506 MB)",
    "first inspector": "<= 0.3 s (was 1.27 s)",
    "follow": "<= 2 % of a core (was 11.5 %; GPU-bound 2x2: 8.5 %)",
}


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def run_measured(args: Sequence[str]) -> tuple[float, float, int, str]:
    """Run `args` in a fresh process: (wall s, its own peak RSS MB, exit code, its stderr)."""
    with tempfile.TemporaryFile() as err:
        run = measured(args, stderr=err, env=_env(), cwd=ROOT)
        err.seek(0)
        text = err.read().decode(errors="replace")
    return run.wall, run.peak_mb, run.code, text


def cli(*args: str) -> list[str]:
    """`cuzk-tui ARGS` from this checkout."""
    return [sys.executable, "-m", "tui.cli", *args]


def pipeline(log: Path) -> list[str]:
    """The shell habit: the gap list from sorted TIMELINE lines."""
    return [
        "bash",
        "-c",
        f"LC_ALL=C grep TIMELINE, {log} | LC_ALL=C sort -t, -k2 -n | awk -F, '{AWK_GAPS}'",
    ]


def against_pipeline(name: str, ours: list[str], log: Path, runs: int) -> None:
    """`ours` and the pipeline alternated, `runs` times each: medians and ratio."""
    mine: list[float] = []
    theirs: list[float] = []
    peak = 0.0
    for _ in range(runs):
        wall, rss, code, err = run_measured(ours)
        if code:
            print(f"  {name:<18} failed (exit {code}): {err.strip().splitlines()[-1:]}")
            return
        mine.append(wall)
        peak = max(peak, rss)
        theirs.append(run_measured(pipeline(log))[0])
    a, b = statistics.median(mine), statistics.median(theirs)
    print(
        f"  {name:<18} {a:6.2f} s  pipeline {b:5.2f} s  ratio {a / b:4.2f}x  peak {peak:5.0f} MB"
        f"   limit {LIMITS[name]}"
    )


def exports(log: Path) -> None:
    """The exports: seconds and peak RSS."""
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-paths-") as d:
        runs = [
            ("export trace+csv", cli(str(log), "--export-trace", f"{d}/t.json", "--export-csv", d)),
            ("export protobuf", cli(str(log), "--export-trace", f"{d}/t.perfetto-trace")),
        ]
        for name, args in runs:
            wall, rss, code, err = run_measured(args)
            if code:
                last = err.strip().splitlines()[-1:] or [""]
                print(f"  {name:<18} exit {code}: {last[0]}   limit {LIMITS[name]}")
                continue
            sizes = ", ".join(
                f"{p.name} {p.stat().st_size / 1e6:.0f} MB"
                for p in sorted(Path(d).iterdir())
                if p.suffix in (".json", ".perfetto-trace")
            )
            print(
                f"  {name:<18} {wall:6.2f} s  peak {rss:5.0f} MB  ({sizes})   limit {LIMITS[name]}"
            )
            for p in Path(d).iterdir():
                if p.suffix in (".json", ".perfetto-trace"):
                    p.unlink()


# -- the viewer, in a process of its own ---------------------------------------------------


def column_bytes(obj: object) -> int:
    """Bytes of the numpy arrays a model holds: each buffer counted once, as far as the
    model's arrays reach into it (a buffer with room for more counts what is in it)."""
    reach: dict[int, int] = {}
    stack: list[object] = [obj]
    visited: set[int] = set()
    while stack:
        x = stack.pop()
        if id(x) in visited:
            continue
        visited.add(id(x))
        if isinstance(x, np.ndarray):
            base = x
            while isinstance(base.base, np.ndarray):
                base = base.base
            reach[id(base)] = max(reach.get(id(base), 0), x.nbytes)
        elif is_dataclass(x) and not isinstance(x, type):
            stack.extend(getattr(x, f.name) for f in fields(x))
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            if len(x) and not isinstance(x[0], (int, float, str)):
                stack.extend(x)
        elif hasattr(x, "__slots__"):
            stack.extend(getattr(x, s) for s in x.__slots__ if hasattr(x, s))
    return sum(reach.values())


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


_STAMP = re.compile(rb"^(TIMELINE,)(\d+)(,.*)$")


def more_lines(config: SimConfig, after_ms: int) -> Iterator[bytes]:
    """Further partitions' lines: the config's run again (another seed, another miner's job
    ids, no TIMELINE line cut by another) from its first TIMELINE line, its TIMELINE stamps
    moved past `after_ms`. A cut line's stamp is in its second part, which the stamps'
    move would miss: its old stamp, hours back, read as the daemon restarting."""
    import io

    more = replace(config, seed=config.seed + 7919, miner=config.miner + 1, proofs=200, splice=0.0)
    buf = io.StringIO()
    write_log(more, buf)
    begun = False
    for raw in buf.getvalue().encode().splitlines():
        m = _STAMP.match(raw)
        # the engine's start-up lines would say the daemon restarted: a new run
        begun = begun or m is not None
        if not begun:
            continue
        if m is not None:
            raw = m.group(1) + str(int(m.group(2)) + after_ms).encode() + m.group(3)
        yield raw + b"\n"


# What the daemon prints first when it starts again (the appended lines of a restart).
ENGINE_START = b"2026-03-20T09:08:44.409318Z  INFO cuzk_core::engine: starting cuzk engine\n"


async def drive_viewer(
    path: Path, config: SimConfig, follow_s: float, inspect: bool, restart: bool = False
) -> dict[str, Any]:
    """Follow `path` headless as `cuzk-tui LOG` does (`restart`: the log grows with a new
    run of the daemon, its stamps from 0 again); the figures as a dict."""
    from parsers.builder import LogBuilder
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.follow import FileSource, LiveLog

    out: dict[str, Any] = {}
    live = LiveLog(FileSource(path), lambda _: None)
    t0 = time.perf_counter()
    app = make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)
    async with app.run_test(size=(120, 36)) as pilot:
        while not (app.loading is None and app.model.gpus):
            await asyncio.sleep(0.01)
            if time.perf_counter() - t0 > 600:
                raise SystemExit("the log was not shown within 10 minutes")
        out["final_s"] = time.perf_counter() - t0
        await pilot.pause(1.0)
        out["columns_mb"] = column_bytes(app.model) / 1e6
        if inspect:
            await pilot.press("n")
            while app.gantt.selected is None:
                await asyncio.sleep(0.001)
            await pilot.pause(0.5)
            i0 = time.perf_counter()
            await pilot.press("enter")
            while app.screen is app.screen_stack[0]:
                await asyncio.sleep(0.001)
            await pilot.pause()
            out["inspector_s"] = time.perf_counter() - i0
            await pilot.press("escape")
            await pilot.pause(0.5)
        if follow_s > 0:
            lines = (
                itertools.chain([ENGINE_START], more_lines(config, 0))
                if restart
                else more_lines(config, app.model.now_ms + 1000)
            )
            stop = threading.Event()

            def grow() -> None:
                with path.open("ab") as fh:
                    while not stop.wait(1 / LINES_PER_S):
                        fh.write(next(lines, b""))
                        fh.flush()

            writer = threading.Thread(target=grow, daemon=True)
            writer.start()
            # the follower's burst allowance (0.9 s of CPU) is spent in the first seconds:
            # measured after WARM_S, the figure is what following costs in the long run
            await asyncio.sleep(WARM_S)
            c0, w0 = _cpu_s(), time.perf_counter()
            await asyncio.sleep(follow_s)
            out["follow_cpu"] = (_cpu_s() - c0) / (time.perf_counter() - w0)
            stop.set()
            writer.join()
        out["state"] = app.state_text()
        live.halt()
    live.source.close()
    out["peak_mb"] = peak_rss_mb()
    return out


async def drive_empty(path: Path) -> dict[str, Any]:
    """The viewer on an empty log for a second: what the interpreter, Textual and the app
    take before any log is read (the floor under the viewer's peak)."""
    from parsers.builder import LogBuilder
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.follow import FileSource, LiveLog

    live = LiveLog(FileSource(path), lambda _: None)
    app = make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause(1.0)
        live.halt()
    live.source.close()
    return {"peak_mb": peak_rss_mb()}


def viewer_figures(args: list[str]) -> dict[str, Any]:
    """Run a viewer process of this script's (`args`): the figures it printed last."""
    _, _, code, err = run_measured(args)
    lines = err.strip().splitlines()
    if code or not lines:
        raise SystemExit(f"viewer run failed (exit {code}): {err[-2000:]}")
    figures: dict[str, Any] = json.loads(lines[-1])
    return figures


def empty_viewer() -> float:
    """The empty viewer's peak RSS (MB), in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-paths-") as d:
        empty = Path(d) / "empty.log"
        empty.write_bytes(b"")
        args = [sys.executable, str(Path(__file__).resolve()), "--viewer", str(empty), "--empty"]
        peak: float = viewer_figures(args)["peak_mb"]
        return peak


def viewer(
    log: Path, config: SimConfig, follow_s: float, inspect: bool, restart: bool = False
) -> dict[str, Any]:
    """One viewer run on a copy of `log` (it is appended to), in a fresh process."""
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-paths-") as d:
        copy = Path(d) / log.name
        shutil.copyfile(log, copy)
        args = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--viewer",
            str(copy),
            "--viewer-config",
            "hours-250"
            if config is HOURS_250_CONFIG
            else "gpu-bound"
            if config is GPU_BOUND_CONFIG
            else "hours-100",
            "--follow-seconds",
            str(follow_s),
        ]
        if inspect:
            args.append("--inspect")
        if restart:
            args.append("--restart")
        # the copy written to disk before the run, not by the kernel's flusher during it
        # (writing back 685 MB took ~0.5 s of the viewer's final figures)
        with copy.open("rb") as fh:
            os.fsync(fh.fileno())
        subprocess.run(["cat", str(copy)], stdout=subprocess.DEVNULL, check=True)  # page cache
        return viewer_figures(args)


VIEWER_RUNS = 5
VIEWER_FIGURES = ("final_s", "peak_mb", "columns_mb", "inspector_s")

CONFIGS = {
    "hours-100": HOURS_100_CONFIG,
    "hours-250": HOURS_250_CONFIG,
    "gpu-bound": GPU_BOUND_CONFIG,
}


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=5)
    ap.add_argument("--log", default="hours-100", help="hours-100, hours-250 or a path")
    ap.add_argument("--follow-seconds", type=float, default=60.0)
    ap.add_argument("--only", default="", help="comma-separated: reports,exports,viewer,follow")
    ap.add_argument("--viewer", metavar="LOG", help=argparse.SUPPRESS)
    ap.add_argument("--viewer-config", default="hours-100", help=argparse.SUPPRESS)
    ap.add_argument("--inspect", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--restart", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--empty", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.viewer and args.empty:
        print(json.dumps(asyncio.run(drive_empty(Path(args.viewer)))), file=sys.stderr)
        return 0
    if args.viewer:
        config = CONFIGS[args.viewer_config]
        follow = args.follow_seconds if args.follow_seconds > 0.5 else 0.0
        figures = asyncio.run(
            drive_viewer(Path(args.viewer), config, follow, args.inspect, args.restart)
        )
        print(json.dumps(figures), file=sys.stderr)
        return 0
    only = {part.strip() for part in args.only.split(",") if part.strip()}

    def wanted(part: str) -> bool:
        return not only or part in only

    if args.log == "hours-100":
        log, config = hours_100_log(), HOURS_100_CONFIG
    elif args.log == "hours-250":
        log, config = hours_250_log(), HOURS_250_CONFIG
    else:
        log, config = Path(args.log), HOURS_100_CONFIG
        if not log.is_file():
            ap.error(f"not a file: {log}")
    byte_compile()
    head = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=ROOT
    )
    print(
        f"{log} ({log.stat().st_size / 1e6:.0f} MB) at {head.stdout.strip()}, "
        f"{os.cpu_count()} cores"
    )
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)  # page cache
    if wanted("reports"):
        against_pipeline("text report", cli("--report", str(log)), log, args.runs)
        against_pipeline("json report", cli("--report", "--json", str(log)), log, args.runs)
    if wanted("exports"):
        exports(log)
    if wanted("viewer"):
        # a viewer run's figures vary by a tenth from one to the next, and one run in three
        # or four is slower by a third on this machine (the whole read and model): the
        # median of up to VIEWER_RUNS runs (each in a fresh process, on a fresh copy), and
        # their spread
        runs = [viewer(log, config, 0.0, inspect=True) for _ in range(min(args.runs, VIEWER_RUNS))]
        v = {key: statistics.median(r[key] for r in runs) for key in VIEWER_FIGURES}
        finals = sorted(r["final_s"] for r in runs)
        floor = empty_viewer()
        cols = max(v["columns_mb"], 1e-9)
        print(
            f"  {'viewer final':<18} {v['final_s']:6.2f} s   "
            f"({len(runs)} runs, {finals[0]:.2f}-{finals[-1]:.2f} s)   "
            f"limit {LIMITS['viewer final']}"
        )
        print(
            f"  {'viewer peak':<18} {v['peak_mb']:6.0f} MB  model columns {v['columns_mb']:.0f} MB "
            f"({v['peak_mb'] / cols:.1f}x; the empty viewer {floor:.0f} MB, the rest "
            f"{(v['peak_mb'] - floor) / cols:.1f}x)   limit {LIMITS['viewer peak']}"
        )
        print(
            f"  {'first inspector':<18} {v['inspector_s']:6.2f} s   "
            f"limit {LIMITS['first inspector']}"
        )
    if wanted("follow"):
        for name, path, cfg, restart in (
            (log.name, log, config, False),
            ("gpu-bound 2x2", gpu_bound_log(), GPU_BOUND_CONFIG, False),
            (f"{log.name}, then the daemon restarted", log, config, True),
        ):
            v = viewer(path, cfg, args.follow_seconds, inspect=False, restart=restart)
            print(
                f"  {'follow':<18} {100 * v['follow_cpu']:5.1f} % of a core, {name}, "
                f"{LINES_PER_S:g} lines/s over {args.follow_seconds:g} s ({v['state']})"
                f"   limit {LIMITS['follow']}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
