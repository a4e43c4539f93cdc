"""Attribution across random simulated runs: kernel-utilization error against the truth.

Usage: python -m benchmarks.sweep_attribution [COUNT] [FIRST_SEED] [ERA] [--drop KIND --rate R]
(or python benchmarks/sweep_attribution.py ...), from the repository's root.

Prints, per era, the distribution of |kernel_util - truth| over every GPU of every run,
how often the truth falls inside kernel_util_range, and the runs whose gaps differ.
`--drop cpp` loses a share R of the C++ timing lines at random (as a rate limit would),
`--drop lock` only lock lines (`pre_lock_cpu_ms=`); the truth is what the engine did.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuzksim import reference as ref
from cuzksim.config import random_config
from cuzksim.logs import lose_lines, simulate
from parsers.builder import LogBuilder
from tui.options import non_negative_int, positive_int


def _share(text: str) -> float:
    """An argparse type: a share, 0 to 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be 0 to 1: {text}")
    return value


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("count", nargs="?", type=positive_int, default=100, help="runs")
    ap.add_argument("first", nargs="?", type=non_negative_int, default=1000, help="first seed")
    ap.add_argument("era", nargs="?", default=None, help="only the runs of this engine era")
    ap.add_argument("--drop", choices=("cpp", "lock"), help="lose some C++ lines (see above)")
    ap.add_argument("--rate", type=_share, default=0.005, help="share of them lost (0.005)")
    args = ap.parse_args()
    count, first, only = args.count, args.first, args.era
    errors: dict[str, list[float]] = defaultdict(list)
    outside: dict[str, int] = defaultdict(int)
    exact_misses: dict[str, int] = defaultdict(int)  # of those outside, shown as one number
    widths: dict[str, list[float]] = defaultdict(list)
    bias: dict[str, list[float]] = defaultdict(list)  # estimate - truth, where an estimate
    bad_gaps: list[int] = []
    misses: list[tuple[float, str]] = []  # (how far outside, what)
    worst: list[tuple[float, int, int]] = []
    t0 = time.perf_counter()
    for seed in range(first, first + count):
        cfg = random_config(seed)
        if only is not None and cfg.era != only:
            continue
        sim, data = simulate(cfg)
        if args.drop is not None:
            data = lose_lines(data, args.drop, args.rate, seed)
        builder = LogBuilder(
            source=f"seed {seed}", workers_per_gpu=cfg.gw if cfg.stdout == "none" else None
        )
        builder.feed(data)
        model = builder.build()
        # stderr-only logs name no GPU: workers map to 0, 1, .. by --workers-per-gpu
        base = cfg.gpu_base if cfg.stdout == "none" else 0
        got = [
            (g.gpu + base, g.start, g.end, g.before.job, g.after.job, g.cause) for g in model.gaps
        ]
        want = [(g.gpu, g.start, g.end, g.before_job, g.after_job, g.cause) for g in ref.gaps(sim)]
        if got != want:
            bad_gaps.append(seed)
        for g in model.gpus:
            if g.span is None:
                continue
            truth = ref.gpu_figures(sim, g.gpu + base)["kernel_util"]
            err = abs(g.kernel_util - truth)
            errors[cfg.era].append(err)
            lo, hi = g.kernel_util_range
            widths[cfg.era].append(hi - lo)
            if g.kernel_is_estimate:
                bias[cfg.era].append(g.kernel_util - truth)
            if not lo - 1e-9 <= truth <= hi + 1e-9:
                outside[cfg.era] += 1
                exact_misses[cfg.era] += not g.kernel_is_estimate
                by = max(lo - truth, truth - hi)
                misses.append(
                    (by, f"seed {seed} gpu {g.gpu}: {truth:.4f} not in [{lo:.4f}, {hi:.4f}]")
                )
            worst.append((err, seed, g.gpu))
    elapsed = time.perf_counter() - t0
    print(f"{count} runs (seeds {first}..{first + count - 1}) in {elapsed:.1f} s")
    for era, errs in sorted(errors.items()):
        errs.sort()
        n = len(errs)
        print(
            f"  {era:4}: {n:4} GPUs  |kernel err| median {errs[n // 2]:.4f}  "
            f"p90 {errs[int(n * 0.9)]:.4f}  max {errs[-1]:.4f}  "
            f"truth outside range: {outside[era]} ({exact_misses[era]} shown as exact)"
        )
        w = sorted(widths[era])
        print(
            f"        range width median {w[n // 2]:.4f}  max {w[-1]:.4f}  "
            f"shown as an estimate (> 0.005): {sum(x > 0.005 for x in w)}"
        )
        b = sorted(bias[era])
        if b:
            print(
                f"        estimates - truth: median {b[len(b) // 2]:+.4f}  "
                f"below {sum(x < 0 for x in b)}  above {sum(x > 0 for x in b)} of {len(b)}"
            )
    worst.sort(reverse=True)
    print("  worst:", ", ".join(f"seed {s} gpu {g}: {e:.3f}" for e, s, g in worst[:5]))
    print(f"  runs whose gaps differ from the truth: {bad_gaps or 'none'}")
    misses.sort(reverse=True)
    far = [by for by, _ in misses]
    print(
        f"  truth outside its range by > 0.002: {sum(b > 0.002 for b in far)}, "
        f"by 0.0005..0.002: {sum(0.0005 < b <= 0.002 for b in far)}, "
        f"by <= 0.0005: {sum(b <= 0.0005 for b in far)}"
    )
    for by, miss in misses[:8]:
        print(f"  outside by {by:.4f}:", miss)


if __name__ == "__main__":
    main()
