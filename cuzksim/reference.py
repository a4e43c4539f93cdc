"""An independent, naive reference for the figures of docs/analysis.md, from the simulator's truth.

Written plainly (sorted lists, no numpy) so that it checks the model rather than
repeating it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from cuzksim.engine import EngineSim, SimPartition


@dataclass
class RefGap:
    gpu: int
    start: int
    end: int
    before_job: str
    after_job: str
    crosses: bool
    cause: str | None


def _union(intervals: list[tuple[float, float]]) -> list[tuple[float, float]]:
    out: list[tuple[float, float]] = []
    for s, e in sorted(intervals):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def completed(sim: EngineSim) -> list[SimPartition]:
    return [p for p in sim.partitions if "GPU_START" in p.stamps and "GPU_END" in p.stamps]


def gpu_figures(sim: EngineSim, gpu: int) -> dict[str, float]:
    done = [p for p in completed(sim) if p.gpu == gpu]
    ivs = [(p.stamps["GPU_START"], p.stamps["GPU_END"]) for p in done]
    span = (min(s for s, _ in ivs), max(e for _, e in ivs))
    busy = sum(e - s for s, e in _union([(float(s), float(e)) for s, e in ivs]))
    kern = sum(e - s for s, e in _union([k for p in done for k in p.kernel_spans]))
    length = span[1] - span[0]
    return {"timeline_util": busy / length, "kernel_util": kern / length, "span": length}


def gaps(sim: EngineSim) -> list[RefGap]:
    out: list[RefGap] = []
    for gpu in sorted({p.gpu for p in completed(sim) if p.gpu is not None}):
        done = [p for p in completed(sim) if p.gpu == gpu]
        blocks = _union([(float(p.stamps["GPU_START"]), float(p.stamps["GPU_END"])) for p in done])
        for (_, a), (b, _) in itertools.pairwise(blocks):
            before = min((p for p in done if p.stamps["GPU_END"] == a), key=lambda p: p.worker or 0)
            after = min(
                (p for p in done if p.stamps["GPU_START"] == b), key=lambda p: p.worker or 0
            )
            q = after.stamps.get("GPU_QUEUE", after.stamps.get("CHAN_SEND"))
            cause = None if q is None else ("synthesis" if q > a else "dispatch")
            out.append(
                RefGap(gpu, int(a), int(b), before.job, after.job, before.job != after.job, cause)
            )
    return sorted(out, key=lambda g: (g.start, g.gpu))


def proofs_completed(sim: EngineSim) -> int:
    jobs: dict[str, bool] = {}
    for p in sim.partitions:
        if not p.stamps:
            continue
        jobs[p.job] = jobs.get(p.job, True) and "GPU_END" in p.stamps
    return sum(jobs.values())
