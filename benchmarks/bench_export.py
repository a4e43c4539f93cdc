"""Time the exports of a long log: the JSON trace, the Perfetto protobuf trace, the CSV files,
and the JSON trace with the CSV files in one process.

Run: python benchmarks/bench_export.py [--runs N] [--hours-250] [--base DIR]

Each export is `python -m tui.cli LOG --export-...` in its own process (its wall time and
peak RSS, the log's read included), on the 100-hour simulated log (and the 250-hour one with
--hours-250), printed beside the figures this export had before it was written from columns
and beside its goals. --base DIR times a checkout of the older code too (it has no protobuf
trace), alternated with this one in the same run: the machine's load changes between runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import byte_compile, hours_100_log, hours_250_log, run_measured
from tui.options import positive_int

ROOT = Path(__file__).resolve().parent.parent
CASES = {  # name: the export options (OUT: the folder they write into)
    "trace JSON": ["--export-trace", "{out}/t.json"],
    "trace protobuf": ["--export-trace", "{out}/t.perfetto-trace"],
    "CSV": ["--export-csv", "{out}/csv"],
    "JSON + CSV": ["--export-trace", "{out}/t.json", "--export-csv", "{out}/csv"],
}
# trace JSON + CSV in one process before the columnar export (s, MB), and the goals
BEFORE = {"hours-100": (31.7, 1860.0), "hours-250": (132.0, 5100.0)}
GOAL = (10.0, 800.0)  # hours-100, JSON + CSV and each alone


def run_timed(code: Path, log: Path, options: list[str], out: Path) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and MB written of one export by the code at `code`."""
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    cmd = [sys.executable, "-m", "tui.cli", str(log), *(o.format(out=out) for o in options)]
    env = {**os.environ, "PYTHONPATH": str(code)}
    run = run_measured(cmd, stderr=subprocess.DEVNULL, env=env, cwd=code)
    if run.code != 0:
        raise SystemExit(f"export failed: {cmd}")
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    shutil.rmtree(out, ignore_errors=True)
    return run.wall, run.peak_mb, size / 1e6


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=1)
    ap.add_argument("--hours-250", action="store_true", help="the 250-hour log too")
    ap.add_argument("--base", type=Path, default=None, help="a checkout of the older code")
    ap.add_argument("--only", choices=sorted(CASES), action="append", help="these cases only")
    args = ap.parse_args()
    logs = {"hours-100": hours_100_log()}
    if args.hours_250:
        logs["hours-250"] = hours_250_log()
    byte_compile()
    codes = {"new": ROOT}
    if args.base is not None:
        codes["old"] = args.base.resolve()
    cases = {k: v for k, v in CASES.items() if not args.only or k in args.only}
    with tempfile.TemporaryDirectory(prefix="bench-export-", dir="/tmp") as tmp:
        for name, log in logs.items():
            before_s, before_mb = BEFORE[name]
            print(f"\n{name}: {log} ({log.stat().st_size / 1e6:.0f} MB), {args.runs} run(s)")
            print(f"  before the columnar export, JSON + CSV: {before_s} s, {before_mb:.0f} MB")
            if name == "hours-100":
                print(f"  goal: each case and JSON + CSV <= {GOAL[0]:.0f} s, <= {GOAL[1]:.0f} MB")
            print(f"  {'case':<16} {'code':<4} {'s (median)':>10} {'peak MB':>8} {'out MB':>7}")
            for case, options in cases.items():
                runs: dict[str, list[tuple[float, float, float]]] = {c: [] for c in codes}
                for _ in range(args.runs):
                    for code, path in codes.items():  # alternated, run by run
                        if code == "old" and "perfetto" in " ".join(options):
                            continue
                        runs[code].append(run_timed(path, log, options, Path(tmp) / "out"))
                for code, got in runs.items():
                    if not got:
                        continue
                    wall = statistics.median(g[0] for g in got)
                    peak = max(g[1] for g in got)
                    print(f"  {case:<16} {code:<4} {wall:>10.1f} {peak:>8.0f} {got[0][2]:>7.0f}")
    load = os.getloadavg()[0]
    print(f"\nload average at the end: {load:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
