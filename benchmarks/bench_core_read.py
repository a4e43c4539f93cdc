"""The compiled core's read of a long log, CPU and wall, against another checkout's core.

Run: python benchmarks/bench_core_read.py --base DIR [--runs N] [--logs 100,250]

DIR is another checkout (a worktree at main, say) with its own core built
(`parsers/_core.abi3.so`). For the 100-hour and 250-hour simulated logs of
benchmarks/common.py, base and this checkout alternate, --runs times each, and the
medians are printed side by side:
- the read alone (`Scanner.feed_fd` then `finish`, in a fresh interpreter): wall, user and
  system CPU seconds of the read (the interpreter's start-up not counted), peak RSS;
- `cuzk-tui LOG --report --json` end to end: wall, CPU (user + system), peak RSS;
- the shell habit it competes with (`LC_ALL=C grep | sort | awk`): wall and CPU.
The machine is shared: figures are only comparable within one run, base and new alternated.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_report import AWK_GAPS
from benchmarks.common import byte_compile, event_counts, hours_100_log, hours_250_log
from tui.options import positive_int

HERE = Path(__file__).resolve().parent.parent
TIME = "/usr/bin/time"  # GNU time: a child's own CPU and peak RSS
# the figures the core's read was first measured at (hours-100.log, main before this work)
BASELINE = "read alone: ~1.2 s user + 0.15 s sys, 2.6 s wall; habit ~1.25 CPU-s; rg 0.08 s"

READ = """
import resource, sys, time
from parsers import _core
before = resource.getrusage(resource.RUSAGE_SELF)
t0 = time.perf_counter()
s = _core.Scanner(None)
with open(sys.argv[1], "rb") as f:
    s.feed_fd(f.fileno())
s.finish()
wall = time.perf_counter() - t0
after = resource.getrusage(resource.RUSAGE_SELF)
user, system = after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime
print(wall, user, system, after.ru_maxrss / 1024)
"""

LOGS: dict[int, Callable[[], Path]] = {100: hours_100_log, 250: hours_250_log}


def read_alone(root: Path, log: Path) -> list[float]:
    """Wall, user, system seconds and peak RSS (MB) of the core's read, under `root`."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    out = subprocess.run(
        [sys.executable, "-c", READ, str(log)], env=env, capture_output=True, text=True, check=True
    )
    return [float(x) for x in out.stdout.split()]


def timed(cmd: list[str], root: Path | None = None) -> list[float]:
    """Wall, CPU (user + system) seconds and peak RSS (MB) of one command, output dropped."""
    env = dict(os.environ)
    if root is not None:
        env["PYTHONPATH"] = str(root)
    done = subprocess.run(
        [TIME, "-f", "%e %U %S %M", *cmd],
        env=env,
        cwd=root,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        check=True,
    )
    wall, user, system, rss = done.stderr.decode().strip().splitlines()[-1].split()
    return [float(wall), float(user) + float(system), int(rss) / 1024]


def median(runs: list[list[float]], k: int) -> float:
    """The median of field `k` of the runs."""
    return statistics.median(r[k] for r in runs)


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--base", type=Path, required=True, help="another checkout, core built")
    ap.add_argument("--runs", type=positive_int, default=5)
    ap.add_argument("--logs", type=event_counts, default="100,250", help="hours: 100, 250")
    args = ap.parse_args()
    base = args.base.resolve()
    for root in (base, HERE):
        if not (root / "parsers" / "_core.abi3.so").exists():
            print(f"no core built under {root}/parsers", file=sys.stderr)
            return 2
    if any(h not in LOGS for h in args.logs):
        print(f"--logs takes {', '.join(map(str, LOGS))}", file=sys.stderr)
        return 2
    byte_compile()
    print(f"baseline (main, as first measured): {BASELINE}")
    print(f"base: {base}\nnew:  {HERE}\nruns: {args.runs} each, base and new alternated")
    for hours in args.logs:
        log = LOGS[hours]()
        habit = f"LC_ALL=C grep TIMELINE, {log} | LC_ALL=C sort -t, -k2 -n | awk -F, '{AWK_GAPS}'"
        report = [sys.executable, "-m", "tui.cli", str(log), "--report", "--json"]
        reads: dict[str, list[list[float]]] = {"base": [], "new": []}
        reports: dict[str, list[list[float]]] = {"base": [], "new": []}
        habits: list[list[float]] = []
        for _ in range(args.runs):
            for name, root in (("base", base), ("new", HERE)):
                reads[name].append(read_alone(root, log))
                reports[name].append(timed(report, root))
            habits.append(timed(["bash", "-c", habit]))
        print(f"\n{log.name} ({log.stat().st_size / 1e6:.0f} MB), medians of {args.runs}:")
        print("                      wall s   user s    sys s   CPU s   peak RSS MB")
        for name in ("base", "new"):
            r = reads[name]
            cpu = statistics.median(x[1] + x[2] for x in r)
            print(
                f"  read alone, {name:<4}  {median(r, 0):7.3f}  {median(r, 1):7.3f}  "
                f"{median(r, 2):7.3f}  {cpu:6.3f}  {median(r, 3):8.0f}"
            )
        for name in ("base", "new"):
            r = reports[name]
            print(
                f"  --report --json, {name:<4}  {median(r, 0):6.2f}        CPU {median(r, 1):6.2f}"
                f"         {median(r, 2):8.0f}"
            )
        wall, cpu = median(habits, 0), median(habits, 1)
        print(f"  grep|sort|awk habit    {wall:6.2f}        CPU {cpu:6.2f}")
        for name in ("base", "new"):
            ratio = median(reports[name], 0) / median(habits, 0)
            print(f"  report / habit wall, {name:<4}: {ratio:.2f}   (goal <= 0.6)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
