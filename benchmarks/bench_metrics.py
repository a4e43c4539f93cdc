"""What serving the metrics costs while the log grows: the exporter's share of a core beside
the viewer's (benchmarks/bench_follow_cost.py measures the viewer the same way).

Run: python benchmarks/bench_metrics.py [--seconds 60] [--warm-seconds 30] [--rounds 2]
     [--scrape-seconds 5] [--long]

Each measure runs in a process of its own, the two alternated (the figures are noisy on a
shared machine: compare them within one run). A copy of a log without its last lines is
read; then those lines are appended RATE a second (benchmarks/bench_follow_cost.py), and
after --warm-seconds the process's CPU time over --seconds of wall time is its share.

- viewer: the app, headless, following the copy (bench_follow_cost.follow_cost).
- exporter: tui/exporter.py's collector on the follower (LiveLog in a thread, as in the
  command), prometheus-client's server, and a scrape of /metrics every --scrape-seconds
  (Prometheus's default is 15 s).

Logs: GPU_BOUND_LOG (two GPUs of two workers, intervals overlapping at every moment); with
--long also the 100-hour one-GPU log (benchmarks/common.py).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__" and "--child" not in sys.argv:
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_follow_cost import RATE, TAIL_LINES, _cpu, follow_cost, split_tail  # noqa: E402
from benchmarks.common import gpu_bound_log, hours_100_log, positive_float  # noqa: E402


def exporter_cost(log: Path, seconds: float, warm: float, scrape_s: float) -> float:
    """The exporter's share of a core (this process) while it follows a copy of `log` whose
    last lines are appended RATE a second, scraped every `scrape_s`."""
    from prometheus_client import CollectorRegistry

    from tui.exporter import LiveCollector, bind, url_of
    from tui.follow import FileSource, LiveLog

    head, tail = split_tail(log, TAIL_LINES)
    with tempfile.TemporaryDirectory(prefix="cuzk-tui-metrics-") as d:
        path = Path(d) / log.name
        path.write_bytes(head)
        collector = LiveCollector("bench")
        registry = CollectorRegistry(auto_describe=False)
        registry.register(collector)
        source = FileSource(path)
        live = LiveLog(source, collector.take)
        collector.source, collector.budget = source, live.budget
        server = bind(("127.0.0.1", 0), registry)
        url = url_of(server)
        follower = threading.Thread(target=live.run, daemon=True)
        follower.start()
        t0 = time.perf_counter()
        while collector.latest is None or collector.latest.loading is not None:
            time.sleep(0.05)
            if time.perf_counter() - t0 > 900:
                raise SystemExit("the log was not read within 15 minutes")
        time.sleep(5.0)  # what reading it left to do
        stop = threading.Event()

        def grow() -> None:
            k = 0
            with path.open("ab") as out:
                while not stop.wait(1.0) and k < len(tail):
                    out.write(b"".join(tail[k : k + int(RATE)]))
                    out.flush()
                    k += int(RATE)

        def scrape() -> None:
            while not stop.wait(scrape_s):
                with urllib.request.urlopen(url, timeout=60) as response:
                    response.read()

        threads = [threading.Thread(target=grow), threading.Thread(target=scrape)]
        for t in threads:
            t.start()
        time.sleep(warm)
        c0, w0 = _cpu(), time.perf_counter()
        time.sleep(seconds)
        share = (_cpu() - c0) / (time.perf_counter() - w0)
        stop.set()
        for t in threads:
            t.join()
        live.halt()
        follower.join()
        server.shutdown()
        source.close()
        return share


def _child(what: str, log: Path, seconds: float, warm: float, scrape_s: float) -> float:
    """Measure in a process of its own."""
    out = subprocess.run(
        [sys.executable, __file__, "--child", what, str(log), *map(str, (seconds, warm, scrape_s))],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> int:
    """Print the figures."""
    if len(sys.argv) == 7 and sys.argv[1] == "--child":
        _, _, what, name, seconds, warm, scrape_s = sys.argv
        sys.path.insert(0, os.getcwd())
        if what == "viewer":
            share = follow_cost(Path(name), float(seconds), warm=float(warm))
        else:
            share = exporter_cost(Path(name), float(seconds), float(warm), float(scrape_s))
        print(json.dumps(share))
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("--seconds", type=positive_float, default=60.0)
    ap.add_argument("--warm-seconds", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--scrape-seconds", type=positive_float, default=5.0)
    ap.add_argument("--long", action="store_true", help="also the 100-hour log")
    args = ap.parse_args()
    logs = {"GPU-bound 2x2": gpu_bound_log()}
    if args.long:
        logs["100-hour"] = hours_100_log()
    print(f"alternated, {args.rounds} rounds; {RATE:.0f} lines/s appended")
    for name, log in logs.items():
        shares: dict[str, list[float]] = {"viewer": [], "exporter": []}
        for _ in range(args.rounds):
            for which in shares:
                shares[which].append(
                    _child(which, log, args.seconds, args.warm_seconds, args.scrape_seconds)
                )
        print(
            f"{name:14}: "
            + ", ".join(
                f"{which} {100 * statistics.median(v):.2f} % of a core "
                f"({' '.join(f'{100 * x:.2f}' for x in v)})"
                for which, v in shares.items()
            )
            + f"  ({args.seconds:.0f} s after {args.warm_seconds:.0f} s;"
            + f" a scrape every {args.scrape_seconds:g} s)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
