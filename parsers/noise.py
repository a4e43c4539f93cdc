"""How much a run's figures vary within the run: the standard errors `--compare` judges a
difference by (docs/analysis.md#comparing-two-runs---compare-before-after).

A share (of span, of busy, of interval time) and a gap rate are ratios of two sums over the
run's time. Each GPU's span is cut into BLOCKS stretches of equal length; both sums are taken
in each, and the spread of the stretches' sums around the whole's ratio gives the ratio's
standard error (batch means: stretches of a run's time are nearly independent, where
intervals side by side are not, as the partitions of one proof or the workers of one GPU).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from parsers.breakdown import clipped_split, kernel_scaled
from parsers.model import F64, I64, Blocks, GpuStats, LogModel, Phase

BLOCKS = 8  # stretches of each GPU's span


@dataclass(frozen=True, slots=True)
class Ratio:
    """A figure that is Σy / Σx over the run's stretches, with the stretches' sums."""

    y: F64
    x: F64

    @property
    def se(self) -> float:
        """The ratio's standard error by its stretches (the delta method over them; 0 with
        fewer than two stretches that hold any of x)."""
        total = float(self.x.sum())
        k = int(np.count_nonzero(self.x))
        if total <= 0 or k < 2:
            return 0.0
        r = float(self.y.sum()) / total
        resid = self.y - r * self.x
        return math.sqrt(float(resid @ resid) * k / (k - 1)) / total


def stretch_edges(span: tuple[int, int] | None) -> F64:
    """The BLOCKS + 1 edges of a span's stretches (none: no span)."""
    if span is None or span[1] <= span[0]:
        return np.zeros(0)
    return np.linspace(float(span[0]), float(span[1]), BLOCKS + 1)


def covered(starts: F64, ends: F64, edges: F64) -> F64:
    """Per stretch between `edges`, the time disjoint sorted [start, end) blocks cover."""
    if len(edges) < 2:
        return np.zeros(0)
    if len(starts) == 0:
        return np.zeros(len(edges) - 1)
    lens = np.maximum(ends - starts, 0.0)
    before = np.concatenate(([0.0], np.cumsum(lens)))  # covered before block k starts
    k = np.searchsorted(starts, edges, side="right") - 1
    at = np.where(
        k >= 0,
        before[np.maximum(k, 0)] + np.clip(edges - starts[np.maximum(k, 0)], 0.0, lens[k]),
        0.0,
    )
    return np.diff(at)


def _in_stretch(times: F64, edges: F64) -> I64:
    """The stretch each time falls in (-1: outside the span; the span's end is in the last)."""
    k = np.searchsorted(edges, times, side="right") - 1
    k = np.where(times == edges[-1], len(edges) - 2, k)
    return np.where((k >= 0) & (k < len(edges) - 1), k, -1)


def _binned(k: I64, weights: F64, blocks: int) -> F64:
    inside = k >= 0
    return np.bincount(k[inside], weights=weights[inside], minlength=blocks).astype(np.float64)


@dataclass(frozen=True, slots=True)
class GpuNoise:
    """One GPU's share figures, stretch by stretch."""

    timeline: Ratio  # busy / span
    kernel: Ratio  # kernel / span
    lock: Ratio  # the workers' lock wait / their interval time
    split: dict[Phase, Ratio]  # each phase / busy, as the run's busy split gives it


def _blocks_covered(b: Blocks, edges: F64) -> F64:
    return covered(b.starts, b.ends, edges)


def _kernel_by_stretch(g: GpuStats, edges: F64) -> F64:
    """The GPU's kernel time by stretch, adding up to its kernel figure: the kernel blocks',
    scaled where the figure is an estimate (it spreads as the blocks do)."""
    drawn = _blocks_covered(g.kernel, edges)
    total = float(drawn.sum())
    return drawn * (g.kernel_busy_ms / total) if total > 0 else drawn


def gpu_noise(model: LogModel) -> dict[int, GpuNoise]:
    """Per GPU of `model`, its share figures over its span's stretches."""
    t = model.parts
    seg_part = t.seg_rows()
    edges = {g.gpu: stretch_edges(g.span) for g in model.gpus if g.spanned}
    splits = [
        kernel_scaled(
            model,
            clipped_split(
                t, seg_part, {g: (float(e[b]), float(e[b + 1])) for g, e in edges.items()}
            ),
        )
        for b in range(BLOCKS)
    ]
    lock, spent = _interval_sums(model, seg_part)
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    out: dict[int, GpuNoise] = {}
    for g in model.gpus:
        e = edges.get(g.gpu)
        if e is None:
            continue
        length = np.diff(e)
        mine = done & (t.gpu == g.gpu)
        k = _in_stretch(t.gpu_start[mine], e)
        busy = np.array([s[g.gpu].busy_ms if g.gpu in s else 0.0 for s in splits])
        out[g.gpu] = GpuNoise(
            timeline=Ratio(_blocks_covered(g.busy, e), length),
            kernel=Ratio(_kernel_by_stretch(g, e), length),
            lock=Ratio(_binned(k, lock[mine], BLOCKS), _binned(k, spent[mine], BLOCKS)),
            split={
                p: Ratio(
                    np.array(
                        [s[g.gpu].phase_ms.get(p, 0.0) if g.gpu in s else 0.0 for s in splits]
                    ),
                    busy,
                )
                for p in Phase
            },
        )
    return out


def _interval_sums(model: LogModel, seg_part: I64) -> tuple[F64, F64]:
    """Per interval, its lock wait and its phases' time (its segments added)."""
    t = model.parts
    dur = t.seg_end - t.seg_start
    n = len(t)
    lock = t.seg_phase == Phase.LOCK_WAIT
    lock_ms = np.bincount(seg_part[lock], weights=dur[lock], minlength=n)
    spent_ms = np.bincount(seg_part, weights=dur, minlength=n)
    return lock_ms.astype(np.float64), spent_ms.astype(np.float64)


@dataclass(frozen=True, slots=True)
class GapNoise:
    """A set of gaps' figures over the stretches of the spans of the GPUs they are on."""

    share: Ratio  # gap time / span
    rate: Ratio  # gaps / hour of span


HOUR_MS = 3_600_000.0


def gap_noise(model: LogModel, keep: np.ndarray | None = None) -> GapNoise:
    """The gaps of `model` (`keep`: those of them) over its GPUs' stretches."""
    gaps = model.gaps
    y_share, y_count, x_span = (np.zeros(BLOCKS) for _ in range(3))
    chosen = np.ones(len(gaps), dtype=bool) if keep is None else keep
    for g in model.gpus:
        e = stretch_edges(g.span)
        if len(e) == 0:
            continue
        x_span += np.diff(e)
        mine = chosen & (gaps.gpu == g.gpu)
        starts = gaps.start[mine].astype(np.float64)
        ends = gaps.end[mine].astype(np.float64)
        order = np.argsort(starts, kind="stable")
        y_share += covered(starts[order], ends[order], e)
        k = _in_stretch(starts, e)
        y_count += _binned(k, np.ones(len(starts)), BLOCKS)
    return GapNoise(share=Ratio(y_share, x_span), rate=Ratio(y_count, x_span / HOUR_MS))


def combined(*ses: float) -> float:
    """The standard error of a difference (or sum) of independent figures."""
    return math.sqrt(sum(s * s for s in ses))
