"""What each record alone gives: its GPU interval's phase segments, lock and unlock, where a
failed or running prove is drawn to, and the helpers every later step shares (unions of
blocks, first free sub-rows, groups by key).

The figures are defined in docs/analysis.md, from docs/analysis.md#phase-segments on.
Everything here is vectorized over all intervals at once; Python loops run only over the
few things (GPUs, workers, gaps, proofs).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import TypeVar, cast

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.model import (
    F64,
    I8,
    I32,
    I64,
    ROW_FIELDS,
    Blocks,
    PartitionTable,
)
from parsers.records import FLOAT_FIELDS, Columns

# the core's arrays need numpy's C API: loaded here, where an interrupt raised while it loads
# is raised as itself (later, inside the core, it could only be an internal error)
_core.numpy_api()


NAN = float("nan")


EMPTY_F = np.zeros(0, dtype=np.float64)


EMPTY_I = np.zeros(0, dtype=np.int64)


_NO_PHASES = np.zeros(0, dtype=np.int8)


# the core's segments: start, end, phase, row, then each row's lock, unlock and drawn end
SegmentArrays = tuple[F64, F64, I8, I64, F64, F64, F64]


# From how many records the whole-log build makes the segments on a thread of their own
# while it reads the stamps. Measured: at 1,700 records the thread costs 0.5 ms more than
# it saves; at 2,700 it saves 0.7 ms, at 16,700 3.6 ms, at 164,000 ~60 ms.
SEGMENTS_APART_ROWS = 2_048

# The builder's float columns the rows keep once their segments are made: the stamps (the
# table's own columns) and the C++ durations the figures read (parsers/pieces.py). The
# others (the lock's hold, the barrier, the prove's total, the epilogue, the destructor)
# only shape the segments: let go with the builder's copy, not carried beside a long log's
# rows as its first model is made.
KEPT_FLOATS = frozenset(FLOAT_FIELDS) - {
    "mutex_held",
    "barrier",
    "gpu_total",
    "epilogue",
    "pre_destructor",
}


def _failed_proves(c: dict[str, F64], worker: I32, stopped: bool) -> F64:
    """Where each failed prove is drawn to (NaN: not failed).

    GPU_END is printed on success only: a prove that failed has GPU_START and nothing
    after. It failed once its worker started another prove without having unlocked the GPU
    (a worker runs one prove up to its unlock), or once a later prove of its worker ended,
    or when the log is complete. It is drawn up to its worker's next GPU_START (the worker
    was on it at most until then), else to its unlock, else to its start.
    """
    start, end = c["gpu_start"], c["gpu_end"]
    unlock_known = ~np.isnan(c["mutex_held"]) | ~np.isnan(c["tail_msm"])
    out = np.full(len(start), NAN)
    open_idx = np.flatnonzero(~np.isnan(start) & np.isnan(end))
    if len(open_idx) == 0:
        return out
    # every started prove of a worker, by worker then start; for each open prove, where the
    # proves after it begin (k) and where its worker's end (hi) in that order: one sort of
    # the proves and the open ones together, not a search per open prove (a flaky GPU's
    # thousands of failures made that a pass over every prove each)
    started = np.flatnonzero(~np.isnan(start) & (worker >= 0))
    order = started[np.lexsort((start[started], worker[started]))]
    w_sorted, s_sorted = worker[order], start[order]
    n, m = len(order), len(open_idx)
    w_open = worker[open_idx].astype(w_sorted.dtype)
    merged = np.lexsort(
        (
            np.repeat(np.array([0, 1], dtype=np.int8), (n, m)),  # a prove before an open one
            np.concatenate([s_sorted, start[open_idx]]),
            np.concatenate([w_sorted, w_open]),
        )
    )
    queries = merged >= n
    k = np.empty(m, dtype=np.int64)
    k[merged[queries] - n] = np.flatnonzero(queries) - np.arange(m)
    hi = np.searchsorted(w_sorted, w_open, side="right")  # a prove of no worker: k
    ended_before = np.concatenate([[0], np.cumsum(~np.isnan(end[order]))])
    later_ended = ended_before[hi] > ended_before[k]
    has_next = k < hi
    moved_on = has_next & ~unlock_known[open_idx]
    failed = later_ended | moved_on | stopped
    nxt = s_sorted[np.minimum(k, n - 1)] if n else np.full(m, NAN)  # where has_next
    i = open_idx
    lock = start[i] + np.nan_to_num(c["pre_lock"][i]) + np.nan_to_num(c["mutex_wait"][i])
    held = c["mutex_held"][i]
    unlocked = np.where(np.isnan(held), start[i], lock + held)
    drawn = np.where(has_next, nxt, np.where(unlock_known[i], unlocked, start[i]))
    out[i[failed]] = drawn[failed]
    return out


def _left_pickups(c: dict[str, F64], worker: I32) -> npt.NDArray[np.bool_]:
    """The pickups that failed before their prove began: picked up, never started nor
    ended, and their worker picked up or started another since (a worker pops the next
    partition only once it has begun the last or given it up)."""
    pickup, start = c["pickup"], c["gpu_start"]
    lone = ~np.isnan(pickup) & np.isnan(start) & np.isnan(c["gpu_end"]) & (worker >= 0)
    out = np.zeros(len(pickup), dtype=bool)
    if not lone.any():
        return out
    latest = np.fmax(pickup, start)  # each record's last step on its worker
    named = np.flatnonzero((worker >= 0) & ~np.isnan(latest))
    last_of = np.full(int(worker.max()) + 1, -np.inf)  # per worker number
    np.maximum.at(last_of, worker[named], latest[named])
    i = np.flatnonzero(lone)
    out[i] = last_of[worker[i]] > pickup[i]
    return out


def first_free_rows(starts: F64, ends: F64) -> I64:
    """Give each interval, in the order given, the first row free at its start (an interval
    that overlaps every row's last one opens a new row). The loop is the core's."""
    return _core.first_free_rows(
        np.ascontiguousarray(starts, dtype=np.float64), np.ascontiguousarray(ends, dtype=np.float64)
    )


def union_blocks(starts: np.ndarray, ends: np.ndarray) -> Blocks:
    """The union of [starts[i], ends[i]) as disjoint sorted blocks."""
    if len(starts) == 0:
        return Blocks(EMPTY_F, EMPTY_F)
    order = np.argsort(starts, kind="stable")
    s = np.asarray(starts, dtype=np.float64)[order]
    e = np.asarray(ends, dtype=np.float64)[order]
    run_end = np.maximum.accumulate(e)
    # a block starts where an interval begins after everything before it has ended
    new = np.empty(len(s), dtype=bool)
    new[0] = True
    new[1:] = s[1:] > run_end[:-1]
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(s) - 1)
    return Blocks(s[first], run_end[last])


def holes_of(blocks: Blocks) -> Blocks:
    """The stretches between consecutive blocks (views of the blocks' arrays: a long log's
    kernel gaps are millions, and nothing writes to either)."""
    if len(blocks.starts) < 2:
        return Blocks(EMPTY_F, EMPTY_F)
    return Blocks(blocks.ends[:-1], blocks.starts[1:])


def first_with(values: F64, workers: I32, idx: I64, wanted: F64) -> I64:
    """For each wanted value, the index (in idx, not empty) with that value and the lowest
    worker (-1: none has it)."""
    order = np.lexsort((workers[idx], values[idx]))
    sorted_vals = values[idx][order]
    pos = np.minimum(np.searchsorted(sorted_vals, wanted, side="left"), len(idx) - 1)
    # -1: no such value (a block's edge cut by a piece's window)
    return np.where(sorted_vals[pos] == wanted, idx[order][pos], -1)


IntArray = TypeVar("IntArray", bound=npt.NDArray[np.integer])


def distinct(values: IntArray) -> IntArray:
    """The distinct values of an integer array, ascending: numpy.unique's answer, without
    the import of numpy.ma that numpy.unique makes on its first plain call (13-22 ms of a
    report that needs nothing else of it)."""
    ordered = np.sort(values)
    keep = np.empty(len(ordered), dtype=bool)
    keep[:1] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return cast(IntArray, ordered[keep])


def groups_of(keys: npt.NDArray[np.integer], idx: I64) -> list[tuple[int, I64]]:
    """The indices `idx` (ascending) grouped by `keys[idx]`, by key, each group ascending:
    one sort, where a mask per key would read every row once per key (50,000 workers
    made that 50,000 passes over every row).

    Args:
        keys: a key per row (a GPU, a worker).
        idx: the rows to group, ascending.

    Returns:
        (key, the rows of idx with that key) for each key present, ascending by key.
    """
    if len(idx) == 0:
        return []
    k = keys[idx]
    lo, hi = int(k.min()), int(k.max())
    if lo == hi:  # one GPU, one worker: no sort
        return [(lo, idx)]
    if lo >= -(1 << 15) and hi < (1 << 15):
        # a stable sort of 16-bit keys is numpy's radix sort: 2-3x a 32-bit one
        k = k.astype(np.int16)
    order = np.argsort(k, kind="stable")
    k, rows = k[order], idx[order]
    firsts = np.flatnonzero(np.diff(k)) + 1
    bounds = [0, *firsts.tolist(), len(rows)]
    return [(int(k[lo]), rows[lo:hi]) for lo, hi in pairwise(bounds)]


@dataclass(frozen=True, slots=True)
class Rows:
    """Records of the builder with what each one alone gives: its phase segments, its lock
    and unlock, where it is drawn to."""

    table: PartitionTable
    seg_part: I64  # the row of each segment (row after row, as `table.seg_offsets` says)
    drawn_end: F64  # where each interval is drawn to (NaN: no GPU_START)
    failed_end: F64  # where a failed prove is drawn to (NaN: not failed)
    index: I64  # each row's record number in the builder
    floats: dict[str, F64]  # the builder's float columns of these rows

    def __len__(self) -> int:
        return len(self.index)

    def take(self, keep: npt.NDArray[np.bool_]) -> Rows:
        """The rows where `keep` is True, in their order."""
        idx = np.flatnonzero(keep)
        t = self.table
        seg_keep, seg_part, offsets = _kept_segments(keep, self.table.seg_offsets)
        table = PartitionTable(
            jobs=t.jobs,
            kinds=t.kinds,
            **{name: getattr(t, name)[idx] for name in ROW_FIELDS},
            seg_start=t.seg_start[seg_keep],
            seg_end=t.seg_end[seg_keep],
            seg_phase=t.seg_phase[seg_keep],
            seg_offsets=offsets,
        )
        return Rows(
            table,
            seg_part,
            self.drawn_end[idx],
            self.failed_end[idx],
            self.index[idx],
            {k: v[idx] for k, v in self.floats.items()},
        )


def _kept_rows_segments(keep: npt.NDArray[np.bool_], counts: I64) -> tuple[I64, I64]:
    """Of rows with `counts` segments each (row after row), the rows where `keep` is True:
    each of their segments' row among them, and where each one's segments begin."""
    kept_counts = counts[keep]
    kept_offsets = np.zeros(len(kept_counts) + 1, dtype=np.int64)
    np.cumsum(kept_counts, out=kept_offsets[1:])
    part = np.repeat(np.arange(len(kept_counts), dtype=np.int64), kept_counts)
    return part, kept_offsets


def _kept_segments(
    keep: npt.NDArray[np.bool_], offsets: I64
) -> tuple[npt.NDArray[np.bool_], I64, I64]:
    """Of the segments of rows whose segments begin at `offsets` (row after row), those of
    the rows where `keep` is True: which they are, each one's row among the kept rows, and
    where each kept row's segments begin."""
    counts = np.diff(offsets)
    return np.repeat(keep, counts), *_kept_rows_segments(keep, counts)


# A selection of rows is taken run by run (slices joined: a copy at memory speed) while it
# has at most one run of consecutive rows per this many rows, else by mask. The settled
# part of a long read is all but a few dozen rows: by mask its split took 0.13 s of the
# viewer's first model of a 685 MB log (3.4 M segments), by runs ~0.05 s.
RUN_ROWS = 64


class _Pick:
    """The rows where `keep` is True, and their segments (the rows' segments begin at
    `offsets`): where each picked row's segments begin, and each picked segment's row
    among the picked rows."""

    def __init__(self, keep: npt.NDArray[np.bool_], offsets: I64) -> None:
        self.keep = keep
        edges = np.flatnonzero(np.diff(keep, prepend=False, append=False))
        counts = np.diff(offsets)
        self.seg_part, self.offsets = _kept_rows_segments(keep, counts)
        self.runs: I64 | None = None
        self.seg_runs: I64 | None = None
        self.seg_keep: npt.NDArray[np.bool_] | None = None
        if len(edges) // 2 <= len(keep) // RUN_ROWS:
            self.runs = edges.reshape(-1, 2)  # [first, past the last) of each run
            self.seg_runs = offsets[self.runs]
        else:
            self.seg_keep = np.repeat(keep, counts)

    def rows(self, array: np.ndarray, in_place: bool = False) -> np.ndarray:
        """`array`'s picked rows: a copy, or (`in_place`, taken run by run) the runs moved
        to its front and the view of them (`_compacted`)."""
        if self.runs is None:
            return array[self.keep]
        return _compacted(array, self.runs) if in_place else _joined(array, self.runs)

    def segments(self, array: np.ndarray, in_place: bool = False) -> np.ndarray:
        """`array`'s picked segments, as `rows` gives the rows."""
        if self.seg_runs is None:
            assert self.seg_keep is not None
            return array[self.seg_keep]
        return _compacted(array, self.seg_runs) if in_place else _joined(array, self.seg_runs)


def _joined(array: np.ndarray, runs: I64) -> np.ndarray:
    """The slices [first, past) of `array` that `runs` gives, one after the other: a new
    array, never a view (the whole is let go once split)."""
    if len(runs) == 0:
        return array[:0].copy()
    return np.concatenate([array[lo:hi] for lo, hi in runs.tolist()])


def _compacted(array: np.ndarray, runs: I64) -> np.ndarray:
    """The slices [first, past) of `array` that `runs` gives (in order), moved one after the
    other to its front, and the view of them: no new memory is touched, where a copy of a
    long read's settled part wrote ~200 MB of fresh pages (`array` is the caller's own:
    nothing else may read it after)."""
    end = 0
    for lo, hi in runs.tolist():
        if lo != end:
            array[end : end + hi - lo] = array[lo:hi]  # numpy copies overlapping slices right
        end += hi - lo
    return array[:end]


def _movable(arrays: list[np.ndarray]) -> set[int]:
    """The ids of `arrays` whose memory is theirs alone, that `_compacted` may rewrite: not
    a view of another array, nor the memory another of them views, one-dimensional and
    contiguous (an array the core made owns its memory through a holder object)."""
    viewed = {id(a.base) for a in arrays if a.base is not None}
    return {
        id(a)
        for a in arrays
        if not isinstance(a.base, np.ndarray)
        and id(a) not in viewed
        and a.ndim == 1
        and a.flags.c_contiguous
        and a.flags.writeable
    }


def split_rows(held: list[Rows], keep: npt.NDArray[np.bool_]) -> tuple[Rows, Rows]:
    """The rows where `keep` is True and those where it is False, as `take(keep)` and
    `take(~keep)` give them, of the one Rows that `held` holds, taken out (nothing else may
    hold it or its arrays). Each of its arrays is let go once both of its parts are made, so
    that a long log's rows are never held twice over: the viewer's peak memory as a read
    ends. The part with more rows, when taken run by run, is moved to the front of the
    whole's own arrays, not copied (`_compacted`). An array the rows hold twice (a float
    column of both the table and `floats`) is split once, and its parts are shared the same
    way.
    """
    whole = held.pop()
    t = whole.table
    jobs, kinds = t.jobs, t.kinds
    segment_names = ("seg_start", "seg_end", "seg_phase")
    columns = {name: getattr(t, name) for name in ROW_FIELDS + segment_names}
    floats = dict(whole.floats)
    float_names = list(floats)
    drawn_end, failed_end, index = whole.drawn_end, whole.failed_end, whole.index
    seg_offsets = t.seg_offsets
    del whole, t
    picks = (_Pick(keep, seg_offsets), _Pick(~keep, seg_offsets))
    del seg_offsets
    # the part with more rows is moved to the front of the whole's own arrays once the
    # other is copied out (`_compacted`); an array held twice is split once
    big = 0 if np.count_nonzero(keep) * 2 >= len(keep) else 1
    movable = _movable([*columns.values(), *floats.values(), drawn_end, failed_end, index])
    parts: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def cut(array: np.ndarray, segments: bool) -> tuple[np.ndarray, np.ndarray]:
        if id(array) not in parts:
            both: list[np.ndarray] = [EMPTY_F, EMPTY_F]
            for k in (1 - big, big):
                in_place = k == big and id(array) in movable
                pick = picks[k]
                both[k] = pick.segments(array, in_place) if segments else pick.rows(array, in_place)
            parts[id(array)] = (both[0], both[1])
        return parts[id(array)]

    halves: tuple[dict[str, np.ndarray], dict[str, np.ndarray]] = ({}, {})
    float_halves: tuple[dict[str, F64], dict[str, F64]] = ({}, {})
    for name in list(columns):
        array = columns.pop(name)
        for half, part in zip(halves, cut(array, name in segment_names), strict=True):
            half[name] = part
        for key in [k for k, v in floats.items() if v is array]:
            del floats[key]
            for half, part in zip(float_halves, parts[id(array)], strict=True):
                half[key] = part
        del array
    for key in list(floats):
        values = floats.pop(key)
        for half, part in zip(float_halves, cut(values, False), strict=True):
            half[key] = part
        del values
    ends = (cut(drawn_end, False), cut(failed_end, False), cut(index, False))
    del drawn_end, failed_end, index
    out = []
    for k, pick in enumerate(picks):
        cols = halves[k]
        table = PartitionTable(
            jobs=jobs,
            kinds=kinds,
            **{name: cols[name] for name in ROW_FIELDS},
            seg_start=cols["seg_start"],
            seg_end=cols["seg_end"],
            seg_phase=cols["seg_phase"],
            seg_offsets=pick.offsets,
        )
        named = {key: float_halves[k][key] for key in float_names}  # in the order they came
        drawn, failed, idx = (e[k] for e in ends)
        out.append(Rows(table, pick.seg_part, drawn, failed, idx, named))
    return out[0], out[1]


def make_rows(cols: Columns, gpu: I32, now: float, stopped: bool, index: I64) -> Rows:
    """What each record of `cols` alone gives (`gpu`: each one's GPU, -1 unknown)."""
    table, failed_end = stamp_rows(cols, gpu, stopped)
    return with_segments(
        table, failed_end, record_segments(cols, now, failed_end), index, cols.floats
    )


def record_segments(cols: Columns, now: float, failed_end: F64) -> SegmentArrays:
    """Every interval split into phase segments (docs/analysis.md#phase-segments), in record
    order and, within one, in time order; they tile [gpu_start, drawn end] (drawn end:
    gpu_end, or where a failed or running interval is drawn to), a stretch the log does not
    explain is Phase.UNKNOWN, never guessed. The loop is the core's (segments.rs), which
    runs without the GIL."""
    return _core.reconstruct_segments(cols.floats, now, failed_end)


def with_segments(
    table: PartitionTable, failed_end: F64, segments: SegmentArrays, index: I64, c: dict[str, F64]
) -> Rows:
    """The rows of a table of stamps (`stamp_rows`) with their segments (of `c`, the
    KEPT_FLOATS)."""
    seg_s, seg_e, seg_p, seg_part, lock, unlock, drawn = segments
    n = len(index)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg_part, minlength=n), out=offsets[1:])
    table = table.replaced(
        lock_acquired=lock,
        unlock=unlock,
        seg_start=seg_s,
        seg_end=seg_e,
        seg_phase=seg_p,
        seg_offsets=offsets,
    )
    kept = {name: values for name, values in c.items() if name in KEPT_FLOATS}
    return Rows(table, seg_part, drawn, failed_end, index, kept)


def stamp_rows(cols: Columns, gpu: I32, stopped: bool) -> tuple[PartitionTable, F64]:
    """The records' table without what their segments give (no segments, lock or unlock
    yet), and where each failed prove is drawn to (`stopped`: the daemon restarted after
    these records; where the log just ends, what is under way there is not failed)."""
    c = cols.floats
    failed_end = _failed_proves(c, cols.worker, stopped)
    # the daemon stopped: whatever never ended (synthesis, the queue, a pickup, a prove)
    # failed with it; else a pickup whose worker moved on without it
    failed = np.isnan(c["gpu_end"]) if stopped else _left_pickups(c, cols.worker)
    failed |= ~np.isnan(failed_end)  # a prove whose worker moved on without it
    table = PartitionTable(
        jobs=cols.jobs,
        kinds=cols.kinds,
        job=cols.job,
        partition=cols.partition,
        kind=cols.kind,
        worker=cols.worker,
        gpu=gpu,
        synth_start=c["synth_start"],
        synth_end=c["synth_end"],
        queued=c["queued"],
        pickup=c["pickup"],
        gpu_start=c["gpu_start"],
        gpu_end=c["gpu_end"],
        lock_acquired=EMPTY_F,
        unlock=EMPTY_F,
        failed=failed,
        start_line=cols.start_line,
        end_line=cols.end_line,
        seg_start=EMPTY_F,
        seg_end=EMPTY_F,
        seg_phase=_NO_PHASES,
        seg_offsets=EMPTY_I,
    )
    return table, failed_end


def in_mask(mask: npt.NDArray[np.bool_], ids: I64) -> npt.NDArray[np.bool_]:
    inside = ids < len(mask)
    out = np.zeros(len(ids), dtype=bool)
    out[inside] = mask[ids[inside]]
    return out
