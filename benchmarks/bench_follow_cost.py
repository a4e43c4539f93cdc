"""What following a growing log costs: the viewer's share of a core, and each snapshot's ms.

Run: python benchmarks/bench_follow_cost.py --base /work/wt-base [--seconds 60] [--rounds 2]
     [--warm-seconds 30]

`--base` is a checkout to compare with (its compiled core built), e.g. a worktree at main;
the two are measured one after the other, alternated, each in a process of its own (the
figures are noisy on a shared machine: compare them within one run).

- follow: the app runs headless (Textual's test driver, drawing every frame as on a
  terminal) following a copy of a log without its last lines; once it is read, those lines
  are appended in order, RATE a second (whole partitions' TIMELINE and C++ timing lines, as
  the daemon prints them), for --seconds (after --warm-seconds of it, in which the
  follower's burst allowance is spent); the CPU time of the whole process over wall time.
  Two logs: the 100-hour one-GPU log (benchmarks/common.py) and GPU_BOUND_LOG, two GPUs of
  two workers whose intervals overlap at every moment (GPU_BOUND_CONFIG).
- snapshot: a builder fed GPU_BOUND_LOG up to 15,000 and 145,000 records (of 150,000),
  then five lines at a time, a snapshot after each: the median snapshot time (ms).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and "--child" not in sys.argv:
    sys.path.insert(0, str(ROOT))

from benchmarks.common import (  # noqa: E402
    gpu_bound_log,
    hours_100_log,
    positive_float,
)

RATE = 5.0  # lines a second
TAIL_LINES = 2_000  # lines held back from the log, to be appended
SIZE = (120, 36)


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def split_tail(log: Path, tail_lines: int) -> tuple[bytes, list[bytes]]:
    """The log without its last `tail_lines` lines, and those lines."""
    data = log.read_bytes()
    cut = len(data)
    for _ in range(tail_lines + 1):
        cut = data.rindex(b"\n", 0, cut)
    return data[: cut + 1], data[cut + 1 :].splitlines(keepends=True)


def follow_cost(log: Path, seconds: float, rate: float = RATE, warm: float = 0.0) -> float:
    """The viewer's share of a core (this process) while it follows a copy of `log` whose
    last lines are appended `rate` a second for `seconds`, once the rest is read (`warm`:
    seconds of appending before the measure, which the follower's CPU burst allowance,
    full when the file is read, is spent in: the share of following for hours)."""
    from parsers.builder import LogBuilder
    from parsers.rawlines import LineReader
    from tui.app import make_app
    from tui.follow import FileSource, LiveLog

    head, tail = split_tail(log, TAIL_LINES)
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-follow-") as d:
        path = Path(d) / log.name
        path.write_bytes(head)

        async def run() -> float:
            live = LiveLog(FileSource(path), lambda _: None)
            app = make_app(LogBuilder(source=path.name).snapshot(), LineReader(path=path), live)
            async with app.run_test(size=SIZE):
                t0 = time.perf_counter()
                while app.loading is not None or not app.model.gpus:
                    await asyncio.sleep(0.05)
                    if time.perf_counter() - t0 > 900:
                        raise SystemExit("the log was not read within 15 minutes")
                await asyncio.sleep(5.0)  # what reading it left to do
                stop = threading.Event()

                def grow() -> None:
                    k = 0
                    with path.open("ab") as out:
                        while not stop.wait(1.0) and k < len(tail):
                            out.write(b"".join(tail[k : k + int(rate)]))
                            out.flush()
                            k += int(rate)

                writer = threading.Thread(target=grow)
                writer.start()
                await asyncio.sleep(warm)
                c0, w0 = _cpu(), time.perf_counter()
                await asyncio.sleep(seconds)
                share = (_cpu() - c0) / (time.perf_counter() - w0)
                stop.set()
                writer.join()
                live.halt()
                return share

        return asyncio.run(run())


def snapshot_ms(log: Path, records: int, snapshots: int = 40) -> float:
    """The median time (ms) of a snapshot of a builder fed `log` up to `records` records,
    then five lines of it at a time."""
    from parsers.builder import LogBuilder

    b = LogBuilder(source=log.name)
    fd = os.open(log, os.O_RDONLY)
    try:
        with os.fdopen(fd, "rb", closefd=False) as f:
            while b._core.record_count() < records:
                chunk = f.read(1 << 16)
                if not chunk:
                    break
                b.feed(chunk)
            b.snapshot()
            b.snapshot()
            times = []
            for _ in range(snapshots):
                for _ in range(int(RATE)):
                    b.feed(f.readline())
                t0 = time.perf_counter()
                b.snapshot()
                times.append(time.perf_counter() - t0)
    finally:
        os.close(fd)
    return 1000 * statistics.median(times)


def _child(tree: Path, what: str, log: Path, arg: float, warm: float = 0.0) -> float:
    """Measure in a process of its own, importing the project from `tree`."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, str(log), str(arg), str(warm)],
        env={**os.environ, "PYTHONPATH": str(tree)},
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    """Print the figures."""
    if len(sys.argv) == 6 and sys.argv[1] == "--child":
        _, _, what, name, arg, warm = sys.argv
        sys.path.insert(0, os.getcwd())
        if what == "follow":
            print(json.dumps(follow_cost(Path(name), float(arg), warm=float(warm))))
        else:
            print(json.dumps(snapshot_ms(Path(name), int(float(arg)))))
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="a checkout to compare with")
    ap.add_argument("--seconds", type=positive_float, default=60.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument(
        "--warm-seconds",
        type=float,
        default=0.0,
        help="append this long before measuring (the burst allowance spent: the long run)",
    )
    ap.add_argument("--skip-follow", action="store_true")
    args = ap.parse_args()
    trees = {"old": args.base.resolve(), "new": ROOT}
    logs = {"100-hour": hours_100_log(), "GPU-bound 2x2": gpu_bound_log()}
    print(f"trees: old = {trees['old']}, new = {trees['new']}; alternated, {args.rounds} rounds")
    for name, log in logs.items():
        if args.skip_follow:
            break
        shares: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for which, tree in trees.items():
                shares[which].append(_child(tree, "follow", log, args.seconds, args.warm_seconds))
        print(
            f"follow {name:14}: "
            + ", ".join(
                f"{which} {100 * statistics.median(v):.1f} % of a core "
                f"({' '.join(f'{100 * x:.1f}' for x in v)})"
                for which, v in shares.items()
            )
            + f"  ({RATE:.0f} lines/s for {args.seconds:.0f} s"
            + f" after {args.warm_seconds:.0f} s)"
        )
    for records in (15_000, 145_000):
        ms: dict[str, list[float]] = {"old": [], "new": []}
        for _ in range(args.rounds):
            for which, tree in trees.items():
                ms[which].append(_child(tree, "snapshot", gpu_bound_log(), records))
        print(
            f"snapshot at {records:>7,} records (GPU-bound 2x2): "
            + ", ".join(
                f"{which} {statistics.median(v):.1f} ms ({' '.join(f'{x:.1f}' for x in v)})"
                for which, v in ms.items()
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
