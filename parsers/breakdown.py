"""Where each GPU's busy time went: its TIMELINE busy time split by phase, for any time range.

Workers of one GPU overlap (one waits for the lock while another runs kernels), so each
instant of busy time is given to one phase only, the first of BUSY_ORDER that is under way
then: the shares add up to 100 % of the busy time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from parsers.model import LogModel, Phase

BUSY_ORDER = (
    Phase.KERNEL,
    Phase.BARRIER,
    Phase.ALLOC,
    Phase.CLEANUP,
    Phase.LOCK_WAIT,
    Phase.PRE_LOCK,
    Phase.UNKNOWN,
)


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One GPU's busy time in a range, and how much of it each phase took."""

    gpu: int
    busy_ms: float
    phase_ms: dict[Phase, float]

    def share(self, phase: Phase) -> float:
        """The phase's share of the busy time (0 when nothing was busy)."""
        return self.phase_ms.get(phase, 0.0) / self.busy_ms if self.busy_ms else 0.0


def busy_breakdown(
    model: LogModel, t0: float = -np.inf, t1: float = np.inf
) -> dict[int, Breakdown]:
    """Per GPU, its completed intervals' time in [t0, t1) split by phase (see BUSY_ORDER)."""
    out: dict[int, Breakdown] = {}
    for g in model.gpus:
        starts, ends, kinds = [], [], []
        for lane in model.lanes:
            if lane.gpu != g.gpu:
                continue
            i, j = lane.covering(t0, t1) if np.isfinite(t0) else (0, len(lane.starts))
            starts.append(lane.starts[i:j])
            ends.append(lane.ends[i:j])
            kinds.append(lane.phases[i:j])
        s = np.clip(np.concatenate(starts) if starts else np.zeros(0), t0, t1)
        e = np.clip(np.concatenate(ends) if ends else np.zeros(0), t0, t1)
        k = np.concatenate(kinds) if kinds else np.zeros(0, dtype=np.int8)
        # running and failed intervals are not counted as busy
        keep = (e > s) & (k != Phase.IN_FLIGHT) & (k != Phase.FAILED)
        s, e, k = s[keep], e[keep], k[keep]
        out[g.gpu] = _split(g.gpu, s, e, k)
    return out


def _split(gpu: int, s: np.ndarray, e: np.ndarray, k: np.ndarray) -> Breakdown:
    if len(s) == 0:
        return Breakdown(gpu, 0.0, {})
    bounds = np.unique(np.concatenate((s, e)))
    n = len(bounds)
    chosen = np.full(n - 1, -1, dtype=np.int64)
    for phase in BUSY_ORDER:
        mine = k == phase
        if not mine.any():
            continue
        # how many of this phase's segments are under way on each elementary stretch
        opens = np.bincount(np.searchsorted(bounds, s[mine]), minlength=n)
        closes = np.bincount(np.searchsorted(bounds, e[mine]), minlength=n)
        under_way = np.cumsum(opens - closes)[:-1] > 0
        chosen = np.where((chosen < 0) & under_way, int(phase), chosen)
    lengths = np.diff(bounds)
    taken = chosen >= 0
    per_phase = np.bincount(chosen[taken], weights=lengths[taken], minlength=len(Phase))
    return Breakdown(
        gpu,
        float(lengths[taken].sum()),
        {phase: float(per_phase[phase]) for phase in BUSY_ORDER},
    )
