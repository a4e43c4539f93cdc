"""Time `cuzk-tui LOG --report --json` against the grep | sort | awk habit it replaces.

Run: python benchmarks/bench_report.py [--runs N] [--log PATH] [--text] [--base TREE]

Generates (once, with the package's simulator) a log of ~1,000,000 TIMELINE lines with
the C++ timing lines and a share of stdout lines interleaved, in /tmp; then, in the same
run and alternating, times the report and the shell pipeline computing only the gap
list, and prints both, their ratio, and the report's peak RSS. `--text` times the text
report instead; `--base TREE` also times the report of another checkout (a worktree at
main, its core built), alternated with the others.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import big_log, byte_compile, run_measured
from tui.options import positive_int

# The habit: TIMELINE lines sorted by stamp; a gap opens when the last running
# interval ends and closes at the next GPU_START (one GPU, workers pooled).
AWK_GAPS = (
    '$3=="GPU_START"{ if (busy==0 && seen && $2>last) print last "," $2 "," $2-last; busy++ }'
    ' $3=="GPU_END"{ busy--; if (busy<=0) { busy=0; last=$2; seen=1 } }'
)


def run_timed(cmd: list[str], tree: Path | None = None) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command, its output discarded (`tree`: run in
    that checkout, its modules first)."""
    env = None if tree is None else {**os.environ, "PYTHONPATH": str(tree)}
    run = run_measured(cmd, env=env, cwd=tree)
    if run.code != 0:
        raise SystemExit(f"command failed: {cmd}")
    return run.wall, run.peak_mb


def _runs(values: list[float]) -> str:
    return ", ".join(f"{x:.2f}" for x in values)


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=3)
    ap.add_argument("--log", type=Path, default=None)
    ap.add_argument("--text", action="store_true", help="the text report, not the JSON")
    ap.add_argument("--base", type=Path, default=None, help="a checkout to time beside this one")
    args = ap.parse_args()
    log = args.log or big_log()
    if not log.is_file():
        ap.error(f"not a file: {log}")
    byte_compile()
    size_mb = log.stat().st_size / 1e6
    timeline = int(
        subprocess.run(
            ["grep", "-c", "TIMELINE,", str(log)], capture_output=True, text=True, check=True
        ).stdout
    )
    tool = shutil.which("cuzk-tui")
    report_cmd = [tool] if tool else [sys.executable, "-m", "tui.cli"]
    options = ["--report"] if args.text else ["--report", "--json"]
    report_cmd += [str(log), *options]
    base_cmd = [sys.executable, "-m", "tui.cli", str(log), *options]
    habit = f"LC_ALL=C grep TIMELINE, {log} | LC_ALL=C sort -t, -k2 -n | awk -F, '{AWK_GAPS}'"
    print(f"log: {log} ({size_mb:.0f} MB, {timeline:,} TIMELINE lines)")
    print(f"habit: {habit}")
    ours: list[float] = []
    theirs: list[float] = []
    rss: list[float] = []
    base: list[float] = []
    base_rss: list[float] = []
    for _ in range(args.runs):
        wall, peak = run_timed(report_cmd)
        ours.append(wall)
        rss.append(peak)
        wall, _ = run_timed(["bash", "-c", habit])
        theirs.append(wall)
        if args.base is not None:
            wall, peak = run_timed(base_cmd, args.base.resolve())
            base.append(wall)
            base_rss.append(peak)
    a, b = statistics.median(ours), statistics.median(theirs)
    name = f"cuzk-tui {' '.join(options)}"
    print(f"{name:<26}: median {a:.2f} s  (runs: {_runs(ours)})")
    print(f"{'grep|sort|awk gap list':<26}: median {b:.2f} s  (runs: {_runs(theirs)})")
    print(f"{'ratio (ours / habit)':<26}: {a / b:.2f}   target <= 1.5 now, <= 1.0 later")
    print(f"{'peak RSS of the report':<26}: {max(rss):.0f} MB   target <= 300 MB")
    if base:
        c = statistics.median(base)
        print(f"{'the base ' + str(args.base):<26}: median {c:.2f} s  (runs: {_runs(base)})")
        print(f"{'ratio (base / habit)':<26}: {c / b:.2f}")
        print(f"{'peak RSS of the base':<26}: {max(base_rss):.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
