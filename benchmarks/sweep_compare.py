"""`--compare`'s verdicts on simulated pairs of runs: of one configuration, and of one change.

Usage: python benchmarks/sweep_compare.py [COUNT] [FIRST_SEED], from the repository's root.

Two sweeps of COUNT seeds each. *Same*: each configuration (`cuzksim.pairs.base_config`: 16-30
proofs on 1-4 GPUs, synthesis-starved to GPU-bound) run twice with different seeds; every
verdict is noise taken for a change, and the figures that gave them are counted. *Changed*:
`cuzksim.pairs.make_pair`, one setting changed between the runs; per setting, the pairs with a
verdict. The noise levels are docs/analysis.md#comparing-two-runs---compare-before-after's.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from cuzksim.pairs import base_config, make_pair
from parsers.compare import compare
from parsers.load import model_of_bytes
from parsers.model import LogModel
from tui.options import non_negative_int, positive_int

OTHER_SEED = 100_003  # the second run of one configuration: its seed this much further


def _model(config: SimConfig) -> LogModel:
    return model_of_bytes(simulate(config)[1], "run", drawn=False)


def _moved(a: SimConfig, b: SimConfig) -> list[str]:
    """The figures that moved beyond noise between runs `a` and `b` (by section kind)."""
    out = []
    for f in compare(_model(a), _model(b)):
        if f.moved:
            section = "GPU" if f.section.startswith("GPU") else f.section
            out.append(f"{section}: {f.name}")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("count", nargs="?", type=positive_int, default=250, help="pairs of each")
    ap.add_argument("first", nargs="?", type=non_negative_int, default=150, help="first seed")
    args = ap.parse_args()
    seeds = range(args.first, args.first + args.count)
    t0 = time.perf_counter()

    figures: Counter[str] = Counter()
    any_moved = 0
    for seed in seeds:
        config = base_config(seed)
        moved = _moved(config, replace(config, seed=config.seed + OTHER_SEED))
        figures.update(moved)
        any_moved += bool(moved)
    total = sum(figures.values())
    print(f"runs of one configuration, seeds {seeds.start}-{seeds.stop - 1}:")
    print(
        f"  {total} verdicts over {args.count} pairs ({total / args.count:.2f} a pair), "
        f"{any_moved} pairs with any (every one is noise)"
    )
    for name, n in figures.most_common():
        print(f"    {n:4d}  {name}")

    pairs: Counter[str] = Counter()
    judged: Counter[str] = Counter()
    for seed in seeds:
        pair = make_pair(seed)
        knob = pair.change.split("=")[0]
        pairs[knob] += 1
        judged[knob] += bool(_moved(pair.a, pair.b))
    print(f"runs with one setting changed, seeds {seeds.start}-{seeds.stop - 1}:")
    for knob in sorted(pairs):
        print(f"  {knob:<18} {judged[knob]:3d} of {pairs[knob]:3d} pairs with a verdict")
    print(f"({time.perf_counter() - t0:.0f} s)")


if __name__ == "__main__":
    main()
