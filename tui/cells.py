"""What each screen cell of a Gantt row shows: sampling the model's columns per cell.

A row of W cells covering [t0, t0 + W * scale) is sampled at SUB points per cell with
`np.searchsorted`, so drawing costs O(W log n) whatever the size of the log, and a
cell can show the phase that dominates it plus how much of it is covered (for
eighth-block characters).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

SUB = 8  # samples per cell: sub-cell resolution in eighths
EMPTY = -1

I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]

LEFT_EIGHTHS = " ▏▎▍▌▋▊▉█"
LOWER_EIGHTHS = " ▁▂▃▄▅▆▇█"


def sample_times(t0: float, scale: float, width: int) -> F64:
    """The sample times of a row: SUB per cell, at the middle of each sub-cell."""
    return t0 + (np.arange(width * SUB, dtype=np.float64) + 0.5) * (scale / SUB)


def sample_segments(starts: F64, ends: F64, kinds: npt.NDArray[np.int8], times: F64) -> I64:
    """The kind of the segment covering each sample time, or EMPTY.

    Segments must not overlap and be sorted (so `ends` is sorted too).
    """
    if len(starts) == 0:
        return np.full(len(times), EMPTY, dtype=np.int64)
    idx = np.searchsorted(starts, times, side="right") - 1
    safe = np.maximum(idx, 0)
    covered = (idx >= 0) & (times < ends[safe])
    return np.where(covered, kinds[safe].astype(np.int64), EMPTY)


def sample_blocks(starts: F64, ends: F64, times: F64) -> npt.NDArray[np.bool_]:
    """Whether each sample time falls inside one of the sorted disjoint blocks."""
    if len(starts) == 0:
        return np.zeros(len(times), dtype=bool)
    idx = np.searchsorted(starts, times, side="right") - 1
    safe = np.maximum(idx, 0)
    result: npt.NDArray[np.bool_] = (idx >= 0) & (times < ends[safe])
    return result


def covered_before(starts: F64, ends: F64, at: F64) -> F64:
    """How much of the sorted disjoint blocks lies before each time in `at` (exact)."""
    if len(starts) == 0:
        return np.zeros(len(at), dtype=np.float64)
    before = np.concatenate(([0.0], np.cumsum(ends - starts)))
    idx = np.searchsorted(starts, at, side="right") - 1
    safe = np.maximum(idx, 0)
    inside = np.clip(at - starts[safe], 0.0, ends[safe] - starts[safe])
    result: F64 = np.where(idx >= 0, before[safe] + inside, 0.0)
    return result


def dominant(samples: I64, width: int, n_kinds: int) -> I64:
    """Per cell: the most frequent non-empty kind, or EMPTY."""
    # one histogram of (cell, kind) pairs; column 0 counts the empty samples
    cell = np.repeat(np.arange(width, dtype=np.int64), SUB)
    counts = np.bincount(cell * (n_kinds + 1) + samples + 1, minlength=width * (n_kinds + 1))
    counts = counts.reshape(width, n_kinds + 1)
    best = np.argmax(counts[:, 1:], axis=1)
    result: I64 = np.where(counts[:, 0] < SUB, best, EMPTY)
    return result


_LEFT = np.array(list(LEFT_EIGHTHS))
_LOWER = np.array(list(LOWER_EIGHTHS))


def coverage_chars(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.str_]:
    """A block character per cell of a (width, SUB) grid of covered samples.

    Full: `█`; empty: a space; covered from the left: a left eighth block of that width;
    from the right: `▐` or `▕`; covered in the middle: `█` or `▌` by how much.
    """
    k = grid.sum(axis=1)
    first, last = grid[:, 0], grid[:, -1]
    half = k >= SUB // 2
    out = np.where(half, "█", "▌")
    out = np.where(last & ~first, np.where(half, "▐", "▕"), out)
    out = np.where(first & ~last, _LEFT[k], out)
    out = np.where(k == SUB, "█", out)
    result: npt.NDArray[np.str_] = np.where(k == 0, " ", out)
    return result


def level_chars(levels: npt.NDArray[np.int64]) -> npt.NDArray[np.str_]:
    """Bars of 0..8 eighths as lower-block characters."""
    result: npt.NDArray[np.str_] = _LOWER[np.clip(levels, 0, SUB)]
    return result


def mark_spans(a: I64, b: I64, width: int) -> npt.NDArray[np.bool_]:
    """Cells covered by any of the cell ranges [a[i], b[i]) (clipped to the row)."""
    a = np.clip(a, 0, width)
    b = np.clip(b, 0, width)
    keep = b > a
    diff = np.bincount(a[keep], minlength=width + 1) - np.bincount(b[keep], minlength=width + 1)
    result: npt.NDArray[np.bool_] = np.cumsum(diff[:width]) > 0
    return result


def step_values(times: F64, values: npt.NDArray[np.integer[Any]], at: F64) -> I64:
    """A step function (value becomes values[i] at times[i], 0 before) sampled at `at`."""
    if len(times) == 0:
        return np.zeros(len(at), dtype=np.int64)
    idx = np.searchsorted(times, at, side="right") - 1
    return np.where(idx >= 0, values[np.maximum(idx, 0)], 0).astype(np.int64, copy=False)
