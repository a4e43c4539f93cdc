"""Soak: follow a log that grows for minutes through rotations, a copytruncate and a restart.

Run: python benchmarks/soak_follow.py [--seconds 600] [--rate 70]

A writer thread appends simulated engine lines (two GPUs, two workers each, ANSI stdout,
splices, failures) at --rate lines a second, as a daemon would; the follower (the viewer's
reading thread and builder, without the screen) follows the file. On the way:
- at 20 % and 80 % of the time, a rotation: the file is renamed and a new one started;
- at 40 %, a copytruncate: the file is copied aside and truncated to 0 in place;
- at 60 %, a daemon restart: a new engine run is appended to the same file (its stamps
  start again from 0).
Every tenth of the time the process's RSS, the bytes of the current file and the follower's
updates and errors are printed. At the end the follower's model must equal a fresh load of
the same bytes of the current file.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.common import positive_float
from cuzksim.config import DEMO_CONFIG
from cuzksim.engine import EngineSim
from parsers.builder import LogBuilder
from parsers.report import report_dict
from tui.follow import FileSource, LiveLog, Update

BATCH_S = 0.05


def rss_mb() -> float:
    """The resident set size of this process, in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def engine_lines(seed: int) -> Iterator[bytes]:
    """Lines of simulated engine runs, one after another (each run restarts its stamps)."""
    while True:
        sim = EngineSim(replace(DEMO_CONFIG, seed=seed, proofs=60))
        for _, line in sim.lines():
            yield line.encode() + b"\n"
        seed += 1


class Writer:
    """Appends lines at a steady rate; rotates, truncates and restarts when told."""

    def __init__(self, path: Path, rate: float) -> None:
        self.path = path
        self.rate = rate
        self.lines = engine_lines(100)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.written = 0
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        start = time.monotonic()
        while not self.stop.is_set():
            due = int((time.monotonic() - start) * self.rate)
            with self.lock, self.path.open("ab") as out:
                while self.written < due:
                    out.write(next(self.lines))
                    self.written += 1
            self.stop.wait(BATCH_S)

    def rotate(self, n: int) -> None:
        """logrotate's default: rename, then the daemon opens a new file."""
        with self.lock:
            self.path.rename(self.path.with_name(f"{self.path.name}.{n}"))
            self.path.touch()

    def copytruncate(self) -> None:
        """logrotate's copytruncate: copy aside, truncate in place."""
        with self.lock:
            shutil.copyfile(self.path, self.path.with_name(f"{self.path.name}.copied"))
            os.truncate(self.path, 0)

    def restart(self) -> None:
        """The daemon restarts: a new run (stamps from 0) in the same file."""
        with self.lock:
            self.lines = engine_lines(1000 + self.written)


def comparable(model: Any) -> dict[str, Any]:
    """The report of a model, its source name aside."""
    doc: dict[str, Any] = report_dict(model)
    doc["source"] = "-"
    return doc


def main() -> int:
    """Run the soak; print the figures; exit 1 when the follower was wrong or failed."""
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=positive_float, default=600.0, help="how long (default 600)")
    ap.add_argument("--rate", type=positive_float, default=70.0, help="lines a second (default 70)")
    args = ap.parse_args()
    errors: list[str] = []
    statuses: set[str] = set()
    updates = 0

    def on_update(update: Update) -> None:
        # only counted: keeping every model would measure this script's memory, not the viewer's
        nonlocal updates
        updates += 1
        if update.status:
            statuses.add(update.status)

    with tempfile.TemporaryDirectory(prefix="cuzk-tui-soak-") as d:
        log = Path(d) / "soak.log"
        log.touch()
        writer = Writer(log, args.rate)
        live = LiveLog(FileSource(log), on_update)

        def follow() -> None:
            try:
                live.run()
            except Exception as exc:  # the soak counts what the viewer would report
                errors.append(f"{type(exc).__name__}: {exc}")

        follower = threading.Thread(target=follow, daemon=True)
        follower.start()
        writer.thread.start()
        events: dict[float, tuple[str, Callable[[], None]]] = {
            0.2: ("rotation", lambda: writer.rotate(1)),
            0.4: ("copytruncate", writer.copytruncate),
            0.6: ("restart", writer.restart),
            0.8: ("rotation", lambda: writer.rotate(2)),
        }
        start = time.monotonic()
        rss0 = rss_mb()
        print(f"{'t (s)':>7} {'RSS MB':>7} {'file KB':>8} {'lines':>8} {'updates':>8}  event")
        next_sample = 0.0
        while (elapsed := time.monotonic() - start) < args.seconds:
            share = elapsed / args.seconds
            for at in sorted(events):
                if share >= at:
                    name, act = events.pop(at)
                    act()
                    print(f"{elapsed:7.0f} {'':>7} {'':>8} {'':>8} {'':>8}  {name}")
            if elapsed >= next_sample:
                size = log.stat().st_size / 1024
                print(
                    f"{elapsed:7.0f} {rss_mb():7.1f} {size:8.0f} {writer.written:8d} {updates:8d}"
                )
                next_sample += args.seconds / 10
            time.sleep(0.2)
        writer.stop.set()
        writer.thread.join()
        data = log.read_bytes()
        deadline = time.monotonic() + 60
        while live.builder.bytes_read < len(data) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1.5)  # an idle flush
        live.halt()
        follower.join(10)
        live.source.close()
        fresh = LogBuilder(source="-")
        fresh.feed(data)
        fresh.flush_pending()
        followed = live.builder
        followed.flush_pending()
        same = comparable(followed.snapshot()) == comparable(fresh.snapshot())
        rss1 = rss_mb()
        print(
            f"written {writer.written:,} lines; current file {len(data) / 1024:.0f} KB; "
            f"{updates} updates; RSS {rss0:.1f} -> {rss1:.1f} MB"
        )
        print(f"statuses shown: {sorted(statuses)}")
        print(f"follower exceptions: {len(errors)} {errors[:3]}; builder errors: {live.errors}")
        print(f"final model equals a fresh load of the current file: {same}")
    return 0 if same and not errors and not live.errors else 1


if __name__ == "__main__":
    raise SystemExit(main())
