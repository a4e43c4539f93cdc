"""How near --what-if predictions land: simulated pairs of runs (cuzksim/pairs.py), each a host
run with configuration A and, with another seed, the same host with one setting changed (B).
B is predicted from A's log alone and compared with B's truth (the simulator's exact times).

Run: python benchmarks/bench_whatif.py [--pairs 150] [--first 1]

Printed per knob and in all, beside the limits they are held to: the median and the worst
error on s/proof, how often B's s/proof lies inside the predicted range, the worst error on a
GPU's kernel and TIMELINE utilization and of the GPUs' mean TIMELINE utilization (points),
how often B's utilizations lie inside their
ranges, and the time a prediction takes. The last rows are the floor no prediction can beat:
B against B run again with a third seed (the truth's own run-to-run spread).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))

from cuzksim.logs import simulate  # noqa: E402
from cuzksim.pairs import KNOB_NAMES, Truth, make_pair, truth_of  # noqa: E402
from parsers.load import model_of_bytes  # noqa: E402
from parsers.whatif import checked_changes, predict  # noqa: E402

LIMITS = {"median": 0.05, "worst": 0.12, "util": 0.05}


@dataclass
class Row:
    knob: str
    load: str
    error: float  # predicted / B's truth - 1
    inside: bool
    kernel: float  # worst |kernel util error| over the GPUs
    timeline: float
    mean_timeline: float  # |error| of the GPUs' mean TIMELINE utilization
    util_inside: bool
    seconds: float


def _util_errors(truth: Truth, other: Truth) -> tuple[float, float]:
    kernel = max(
        abs(truth.kernel_util[g] - other.kernel_util.get(g, 0.0)) for g in truth.kernel_util
    )
    timeline = max(
        abs(truth.timeline_util[g] - other.timeline_util.get(g, 0.0)) for g in truth.timeline_util
    )
    return kernel, timeline


def run_pair(seed: int) -> tuple[Row | None, str, float, float, float, float]:
    """One pair: its row (None: no prediction, and why), and B against B again."""
    pair = make_pair(seed, KNOB_NAMES[seed % len(KNOB_NAMES)])
    _, data = simulate(pair.a)
    truth = truth_of(simulate(pair.b)[0])
    again = truth_of(simulate(replace(pair.b, seed=pair.b.seed + 1))[0])
    floor_s = abs(again.s_per_proof / truth.s_per_proof - 1)
    floor_k, floor_t = _util_errors(truth, again)
    floor_m = abs(
        statistics.mean(truth.timeline_util.values())
        - statistics.mean(again.timeline_util.values())
    )
    t0 = time.perf_counter()
    p = predict(model_of_bytes(data, "a.log"), checked_changes([pair.change]))
    seconds = time.perf_counter() - t0
    if p.predicted is None or p.predicted.s_range is None:
        return None, f"{seed} {pair.change}: {p.cannot}", floor_s, floor_k, floor_t, floor_m
    lo, hi = p.predicted.s_range
    kernel = timeline = 0.0
    util_inside = True
    for g in p.predicted.gpus:
        kernel = max(kernel, abs(g.kernel_util - truth.kernel_util[g.gpu]))
        timeline = max(timeline, abs(g.timeline_util - truth.timeline_util[g.gpu]))
        assert g.kernel_range is not None and g.timeline_range is not None
        util_inside &= g.kernel_range[0] <= truth.kernel_util[g.gpu] <= g.kernel_range[1]
        util_inside &= g.timeline_range[0] <= truth.timeline_util[g.gpu] <= g.timeline_range[1]
    mean_pred = statistics.mean(g.timeline_util for g in p.predicted.gpus)
    mean_truth = statistics.mean(truth.timeline_util.values())
    row = Row(
        pair.change.split("=")[0],
        pair.load,
        p.predicted.s_per_proof / truth.s_per_proof - 1,
        lo <= truth.s_per_proof <= hi,
        kernel,
        timeline,
        abs(mean_pred - mean_truth),
        util_inside,
        seconds,
    )
    return row, "", floor_s, floor_k, floor_t, floor_m


def _line(name: str, rows: list[Row]) -> str:
    errs = [abs(r.error) for r in rows]
    mean_tl = max(r.mean_timeline for r in rows)
    return (
        f"{name:<20}{len(rows):>6}{100 * statistics.median(errs):>9.1f}{100 * max(errs):>8.1f}"
        f"{sum(r.inside for r in rows):>6}/{len(rows):<4}{100 * max(r.kernel for r in rows):>8.1f}"
        f"{100 * max(r.timeline for r in rows):>9.1f}{100 * mean_tl:>8.1f}"
        f"{sum(r.util_inside for r in rows):>6}/"
        f"{len(rows):<4}{1000 * statistics.median(r.seconds for r in rows):>8.0f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=150)
    ap.add_argument("--first", type=int, default=1, help="the first pair's seed")
    args = ap.parse_args()
    rows: list[Row] = []
    refused: list[str] = []
    floors: list[tuple[float, float, float, float]] = []
    for seed in range(args.first, args.first + args.pairs):
        row, why, *floor = run_pair(seed)
        floors.append((floor[0], floor[1], floor[2], floor[3]))
        if row is None:
            refused.append(why)
        else:
            rows.append(row)
    last = args.first + args.pairs - 1
    print(f"what-if on {args.pairs} simulated pairs (seeds {args.first}..{last})")
    print(
        f"{'':<20}{'pairs':>6}{'median%':>9}{'worst%':>8}{'in range':>11}"
        f"{'kern pt':>8}{'tl pt':>9}{'tl mean':>8}{'utils in':>11}{'ms':>8}"
    )
    for knob in KNOB_NAMES:
        mine = [r for r in rows if r.knob == knob]
        if mine:
            print(_line(knob, mine))
    for load in ("starved", "balanced", "gpu-bound"):
        mine = [r for r in rows if r.load == load]
        if mine:
            print(_line(load, mine))
    print(_line("all", rows))
    print(
        f"{'limit':<20}{'':>6}{100 * LIMITS['median']:>9.1f}{100 * LIMITS['worst']:>8.1f}"
        f"{'all':>11}{100 * LIMITS['util']:>8.1f}{100 * LIMITS['util']:>9.1f}"
        f"{100 * LIMITS['util']:>8.1f}{'all':>11}"
    )
    fs = [f[0] for f in floors]
    print(
        f"{'B against B again':<20}{len(floors):>6}{100 * statistics.median(fs):>9.1f}"
        f"{100 * max(fs):>8.1f}{'':>11}{100 * max(f[1] for f in floors):>8.1f}"
        f"{100 * max(f[2] for f in floors):>9.1f}{100 * max(f[3] for f in floors):>8.1f}"
    )
    print(f"no prediction: {len(refused)}")
    for why in refused:
        print(f"  {why}")


if __name__ == "__main__":
    main()
