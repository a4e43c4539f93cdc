"""The compiled core on a long log: report time against grep|sort|awk, memory, scaling.

Run: python benchmarks/bench_core.py [--runs N] [--scales 10000,100000,1000000,3000000]

Uses the big simulated log of benchmarks/common.py (generated once in /tmp). Prints, side by
side in one run:
- `cuzk-tui LOG --report --json` against the shell habit computing only a gap list
  (`LC_ALL=C grep | sort | awk`), alternating, median of --runs, and the ratio;
- the report's peak RSS;
- the bytes the builder keeps per TIMELINE event, above the interpreter's baseline (its RSS
  after reading the whole log, in a fresh process);
- the report's time at 10 k / 100 k / 1 M / 3 M TIMELINE events (the big log cut, or
  repeated with its stamps and job ids moved on, so that the runs follow each other).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_report import AWK_GAPS
from benchmarks.common import big_log, byte_compile, event_counts
from tui.options import positive_int

TIME = "/usr/bin/time"  # GNU time: a child's own peak RSS (a fork would count ours too)


def run_timed(cmd: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of one command, its output discarded."""
    t0 = time.perf_counter()
    done = subprocess.run(
        [TIME, "-f", "%M", *cmd], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True
    )
    wall = time.perf_counter() - t0
    return wall, int(done.stderr.decode().strip().splitlines()[-1]) / 1024


KEPT = """
import sys
from parsers.builder import LogBuilder
import parsers.analysis, numpy
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS"):
            return int(line.split()[1]) * 1024
    return 0
base = rss()
b = LogBuilder()
with open(sys.argv[1], "rb") as f:
    while chunk := f.read(1 << 22):
        b.feed(chunk)
b.finish()
print(rss() - base, b.counts.timeline)
"""

_STAMP = re.compile(rb"^(TIMELINE,)(\d+)(,[A-Z_]+,)([^,]*)", re.M)


def scaled_log(base: Path, events: int) -> Path:
    """A log of about `events` TIMELINE events: the base log cut, or repeated with its
    stamps moved past the previous copy's and its job ids renamed."""
    out = base.with_name(f"scaled-{events}.log")
    if out.exists():
        return out
    data = base.read_bytes()
    have = data.count(b"TIMELINE,")
    if events <= have:
        cut = 0
        for _ in range(events):
            cut = data.index(b"TIMELINE,", cut) + 1
        end = data.find(b"\n", cut)
        out.write_bytes(data[: end + 1])
        return out
    last = max(int(m.group(2)) for m in _STAMP.finditer(data))
    with out.open("wb") as fh:
        copies = events // have
        for k in range(copies):
            shift = k * (last + 60_000)
            suffix = f"~{k}".encode() if k else b""

            def moved(m: re.Match[bytes], shift: int = shift, suffix: bytes = suffix) -> bytes:
                stamp = str(int(m.group(2)) + shift).encode()
                return m.group(1) + stamp + m.group(3) + m.group(4) + suffix

            fh.write(_STAMP.sub(moved, data))
    more = events - copies * have
    if more:
        fh_path = scaled_log(base, more)
        with out.open("ab") as fh, fh_path.open("rb") as part:
            shift = copies * (last + 60_000)
            fh.write(
                _STAMP.sub(
                    lambda m: (
                        m.group(1)
                        + str(int(m.group(2)) + shift).encode()
                        + m.group(3)
                        + m.group(4)
                        + f"~{copies}".encode()
                    ),
                    part.read(),
                )
            )
    return out


def main() -> int:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=positive_int, default=3)
    ap.add_argument(
        "--scales", type=event_counts, default="10000,100000,1000000,3000000", help="events"
    )
    args = ap.parse_args()
    log = big_log()
    byte_compile()
    report = [sys.executable, "-m", "tui.cli", str(log), "--report", "--json"]
    habit = f"LC_ALL=C grep TIMELINE, {log} | LC_ALL=C sort -t, -k2 -n | awk -F, '{AWK_GAPS}'"
    print(f"log: {log} ({log.stat().st_size / 1e6:.0f} MB)")
    ours, theirs, rss = [], [], []
    for _ in range(args.runs):
        wall, peak = run_timed(report)
        ours.append(wall)
        rss.append(peak)
        wall, _ = run_timed(["bash", "-c", habit])
        theirs.append(wall)
    a, b = statistics.median(ours), statistics.median(theirs)
    runs_a, runs_b = ", ".join(f"{x:.2f}" for x in ours), ", ".join(f"{x:.2f}" for x in theirs)
    print(f"cuzk-tui --report --json : median {a:.2f} s (runs {runs_a})")
    print(f"grep|sort|awk gap list   : median {b:.2f} s (runs {runs_b})")
    print(f"ratio (ours / habit)     : {a / b:.2f}   (goal <= 1.0)")
    print(f"peak RSS of the report   : {max(rss):.0f} MB   (goal <= 250 MB)")
    kept = subprocess.run(
        [sys.executable, "-c", KEPT, str(log)], capture_output=True, text=True, check=True
    ).stdout.split()
    kept_bytes, events = int(kept[0]), int(kept[1])
    print(
        f"kept by the builder      : {kept_bytes / 1e6:.0f} MB = {kept_bytes / events:.0f} bytes "
        f"per TIMELINE event ({events:,} events; goal <= 64)"
    )
    print("scaling (report --json):")
    for events in args.scales:
        path = scaled_log(log, events)
        wall, peak = run_timed([sys.executable, "-m", "tui.cli", str(path), "--report", "--json"])
        size = path.stat().st_size / 1e6
        events = path.read_bytes().count(b"TIMELINE,")
        print(
            f"  {events:>9,} events ({size:6.0f} MB): {wall:6.2f} s  "
            f"{events / wall / 1e6:5.2f} M events/s  peak RSS {peak:5.0f} MB"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
