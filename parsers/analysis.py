"""From the builder's columns to the model: phase segments, unions, gaps, proofs.

The figures are defined in docs/analysis.md, from docs/analysis.md#phase-segments on.

Everything here is vectorized over all intervals at once; Python loops run only over
the few things (GPUs, workers, gaps, proofs).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.breakdown import add_breakdowns, clipped_split, segments_split, with_kernel
from parsers.later import Later
from parsers.model import (
    F64,
    I8,
    I32,
    I64,
    NO_STAMP,
    PHASE_KEYS,
    ROW_FIELDS,
    Blocks,
    Breakdown,
    GapStats,
    GapTable,
    GpuStats,
    Lane,
    LineCounts,
    LogModel,
    PartitionTable,
    Phase,
    Proof,
    ProofList,
    ProofSpans,
    ProofTable,
    Segments,
    Summary,
    WorkerStats,
)
from parsers.records import Columns, LiveRecords, LiveSnapshot, RunRecords

# the core's arrays need numpy's C API: loaded here, where an interrupt raised while it loads
# is raised as itself (later, inside the core, it could only be an internal error)
_core.numpy_api()

NAN = float("nan")
_EMPTY_F = np.zeros(0, dtype=np.float64)
_EMPTY_I = np.zeros(0, dtype=np.int64)
_NO_PHASES = np.zeros(0, dtype=np.int8)
# the core's segments: start, end, phase, row, then each row's lock, unlock and drawn end
SegmentArrays = tuple[F64, F64, I8, I64, F64, F64, F64]
# From how many records the whole-log build makes the segments on a thread of their own
# while it reads the stamps. Measured: at 1,700 records the thread costs 0.5 ms more than
# it saves; at 2,700 it saves 0.7 ms, at 16,700 3.6 ms, at 164,000 ~60 ms.
SEGMENTS_APART_ROWS = 2_048


def _failed_proves(c: dict[str, F64], worker: I32, finished: bool) -> F64:
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
    started = np.flatnonzero(~np.isnan(start) & (worker >= 0))
    order = started[np.lexsort((start[started], worker[started]))]
    w_sorted, s_sorted = worker[order], start[order]
    for i in open_idx.tolist():
        w = int(worker[i])
        lo = int(np.searchsorted(w_sorted, w, side="left"))
        hi = int(np.searchsorted(w_sorted, w, side="right"))
        k = lo + int(np.searchsorted(s_sorted[lo:hi], start[i], side="right"))
        later = order[k:hi]
        nxt = float(s_sorted[k]) if k < hi else NAN
        moved_on = k < hi and not unlock_known[i]
        later_ended = bool(np.any(~np.isnan(end[later])))
        if not (finished or moved_on or later_ended):
            continue
        if nxt == nxt:
            out[i] = nxt
        elif unlock_known[i]:
            lock = start[i] + np.nan_to_num(c["pre_lock"][i]) + np.nan_to_num(c["mutex_wait"][i])
            held = c["mutex_held"][i]
            out[i] = lock + held if held == held else start[i]
        else:
            out[i] = start[i]
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
        return Blocks(_EMPTY_F, _EMPTY_F)
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


def _holes(blocks: Blocks) -> Blocks:
    """The stretches between consecutive blocks."""
    if len(blocks.starts) < 2:
        return Blocks(_EMPTY_F, _EMPTY_F)
    return Blocks(blocks.ends[:-1].copy(), blocks.starts[1:].copy())


def _first_with(values: F64, workers: I32, idx: I64, wanted: F64) -> I64:
    """For each wanted value, the index (in idx, not empty) with that value and the lowest
    worker (-1: none has it)."""
    order = np.lexsort((workers[idx], values[idx]))
    sorted_vals = values[idx][order]
    pos = np.minimum(np.searchsorted(sorted_vals, wanted, side="left"), len(idx) - 1)
    # -1: no such value (a block's edge cut by a piece's window)
    return np.where(sorted_vals[pos] == wanted, idx[order][pos], -1)


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


# -- rows: what each record alone gives ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class Rows:
    """Records of the builder with what each one alone gives: its phase segments, its lock
    and unlock, where it is drawn to."""

    table: PartitionTable
    seg_part: I64  # the row of each segment
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
        seg_keep = keep[self.seg_part]
        new_row = np.cumsum(keep) - 1
        seg_part = new_row[self.seg_part[seg_keep]]
        offsets = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(np.bincount(seg_part, minlength=len(idx)), out=offsets[1:])
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


def make_rows(cols: Columns, gpu: I32, now: float, finished: bool, index: I64) -> Rows:
    """What each record of `cols` alone gives (`gpu`: each one's GPU, -1 unknown)."""
    table, failed_end = _stamp_rows(cols, gpu, finished)
    return _with_segments(table, failed_end, _segments(cols, now, failed_end), index, cols.floats)


def _segments(cols: Columns, now: float, failed_end: F64) -> SegmentArrays:
    """Every interval split into phase segments (docs/analysis.md#phase-segments), in record
    order and, within one, in time order; they tile [gpu_start, drawn end] (drawn end:
    gpu_end, or where a failed or running interval is drawn to), a stretch the log does not
    explain is Phase.UNKNOWN, never guessed. The loop is the core's (segments.rs), which
    runs without the GIL."""
    return _core.reconstruct_segments(cols.floats, now, failed_end)


def _with_segments(
    table: PartitionTable, failed_end: F64, segments: SegmentArrays, index: I64, c: dict[str, F64]
) -> Rows:
    """The rows of a table of stamps (`_stamp_rows`) with their segments."""
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
    return Rows(table, seg_part, drawn, failed_end, index, c)


def _stamp_rows(cols: Columns, gpu: I32, finished: bool) -> tuple[PartitionTable, F64]:
    """The records' table without what their segments give (no segments, lock or unlock
    yet), and where each failed prove is drawn to."""
    c = cols.floats
    failed_end = _failed_proves(c, cols.worker, finished)
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
        lock_acquired=_EMPTY_F,
        unlock=_EMPTY_F,
        # picked up (or started) but never ended, in a finished log; or a prove whose
        # worker moved on without it
        failed=(
            finished & ~(np.isnan(c["pickup"]) & np.isnan(c["gpu_start"])) & np.isnan(c["gpu_end"])
        )
        | ~np.isnan(failed_end),
        start_line=cols.start_line,
        end_line=cols.end_line,
        seg_start=_EMPTY_F,
        seg_end=_EMPTY_F,
        seg_phase=_NO_PHASES,
        seg_offsets=_EMPTY_I,
    )
    return table, failed_end


# -- pieces: what a set of rows gives, to be put together with the rows after it ----------


@dataclass(frozen=True, slots=True)
class GpuPart:
    """One GPU's figures over the rows of a piece (indices local to the piece)."""

    busy: Blocks
    kernel: Blocks
    gap_before: I64  # per hole of `busy`: the interval before and after it
    gap_after: I64
    first_after: int  # the interval that opens the first block (-1: none, or the window's)
    last_before: int  # the interval that closes the last block (-1: none, or the window's)
    span: tuple[int, int] | None
    in_flight: int
    kernel_sums: tuple[float, float, float]  # line kernel ms, truncation longer, shorter
    # the time its ended intervals' segments leave unexplained (UNKNOWN), as a union: kernels
    # may have run there, printed in lines the log lost
    unknown_ms: float = 0.0
    # the most allocation its intervals' NTT blocks may hide, on an engine that prints none
    # (see hidden_alloc_ms): each block's share, and the first block's ms (a first use)
    hidden_alloc_ms: float = 0.0
    first: tuple[float, int] | None = None  # the first ended interval: start, record number
    first_hidden_ntt_ms: float = 0.0
    # the kernel ms of lines given to its intervals that never ended: kernels that ran, on
    # one GPU or another, had the lines gone to an interval that ended
    unended_kernel_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Jobs:
    """Per job (its number in the builder) over the rows of a piece."""

    ids: I64  # sorted
    parts: I64
    open_parts: I64
    first: F64  # first SYNTH_START
    last: F64  # last GPU_END
    seen: F64  # latest stamp
    first_row: I64  # lowest record number
    kind: I64  # kind of that record


@dataclass(frozen=True, slots=True)
class Synth:
    """Synthesis over the rows of a piece: the steps of the ended ones, the others' starts."""

    times: F64  # sorted by (time, delta)
    deltas: I64
    durations: F64  # sorted
    open_starts: F64  # SYNTH_START without SYNTH_END


NO_SYNTH = Synth(_EMPTY_F, _EMPTY_I, _EMPTY_F, _EMPTY_F)


@dataclass(frozen=True, slots=True)
class Piece:
    """What a set of rows gives. The pieces of a live model are split in time: per worker,
    every interval of one starts before any of the next; per GPU, its time figures cover a
    window of time of their own (`Window`, see `LiveAnalysis`)."""

    rows: Rows
    gpus: dict[int, GpuPart]
    lanes: dict[tuple[int, int], Lane]  # (worker, sub_row) -> lane (partition local)
    workers: dict[int, tuple[int, int, F64]]  # worker -> (gpu, intervals, ms per phase)
    jobs: Jobs
    synth: Synth
    gaps: tuple[I32, I64, I64, I64, I64]  # gpu, start, end, before, after: by (start, gpu)
    split: dict[int, Breakdown]  # per GPU, where its busy time went
    gpu_workers: dict[int, frozenset[int]]  # the workers its records put on each GPU
    mid_run: tuple[float, float]  # `mid_run_stamps` of its rows
    # the model's row numbers of the rows before it its time figures count (`Window`): its
    # gaps' and its GPUs' interval numbers count those first, then its own rows
    before: I64
    lane_ends: dict[int, F64]  # with a window: as `Window.lane_ends` after its rows
    drawn: bool = True  # its lanes were made (`make_piece`)


@dataclass(frozen=True, slots=True)
class _Stamped:
    """What the stamps of a piece's rows give (`make_piece` adds what the segments give):
    each GPU's figures but its kernel blocks (`GpuPart.kernel` empty), jobs, synthesis,
    gaps and workers."""

    gpus: dict[int, GpuPart]
    jobs: Jobs
    synth: Synth
    gaps: tuple[I32, I64, I64, I64, I64]
    gpu_workers: dict[int, frozenset[int]]


@dataclass(frozen=True, slots=True)
class _Segmented:
    """What the segments of a piece's rows give: each GPU's kernel blocks, and per worker
    its GPU, intervals ended and time per phase."""

    kernel: dict[int, Blocks]
    workers: dict[int, tuple[int, int, F64]]
    unknown_ms: dict[int, float]  # per GPU, as GpuPart.unknown_ms
    split: dict[int, Breakdown]  # per GPU, where its busy time went


def _gpus_of(t: PartitionTable) -> list[int]:
    """The GPUs the rows started intervals on."""
    started = ~np.isnan(t.gpu_start)
    gpus: list[int] = np.unique(t.gpu[started & (t.gpu >= 0)]).tolist()
    return gpus


# Where each GPU's time figures of a piece lie (see `LiveAnalysis`): [lo, hi) per GPU
Bounds = dict[int, tuple[float, float]]


@dataclass(frozen=True, slots=True)
class Window:
    """The time a piece's time figures (its busy and kernel blocks, gaps, unexplained time,
    busy split) cover, and the rows of the pieces before it whose intervals reach into it:
    those count in its time figures (not in its rows, lanes, workers or sums)."""

    bounds: Bounds
    before: Rows | None  # None: no earlier rows reach into it
    before_index: I64  # their row numbers in the model's table
    # per worker, where the last interval of each of its sub-rows before the piece is drawn
    # to (its lanes go on from there)
    lane_ends: dict[int, F64]


@dataclass(frozen=True, slots=True)
class _Busy:
    """One GPU's busy blocks over a piece's time rows and the intervals around them: per
    hole, the interval before and after it; the ones opening and closing the blocks (-1:
    none, or cut by the window)."""

    blocks: Blocks
    holes: Blocks
    before: I64
    after: I64
    first_after: int
    last_before: int


_NO_BLOCKS = Blocks(_EMPTY_F, _EMPTY_F)
_NO_BUSY = _Busy(_NO_BLOCKS, _NO_BLOCKS, _EMPTY_I, _EMPTY_I, -1, -1)


def clip_blocks(blocks: Blocks, lo: float, hi: float) -> Blocks:
    """The part of `blocks` in [lo, hi); a block ending at `lo` stays as [lo, lo], so that it
    meets the block the time before `lo` ends with."""
    keep = (blocks.starts < hi) & (blocks.ends >= lo)
    return Blocks(np.maximum(blocks.starts[keep], lo), np.minimum(blocks.ends[keep], hi))


def _busy_figures(t: PartitionTable, bounds: Bounds | None) -> dict[int, _Busy]:
    """Per GPU, the union of the ended intervals of `t` (within `bounds`) and the intervals
    around its holes (the lowest worker of those ending or starting there)."""
    done_mask = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end) & (t.gpu >= 0)
    out: dict[int, _Busy] = {}
    for g, done in groups_of(t.gpu, np.flatnonzero(done_mask)):
        busy = union_blocks(t.gpu_start[done], t.gpu_end[done])
        if bounds is not None and g in bounds:
            busy = clip_blocks(busy, *bounds[g])
        if len(busy.starts) == 0:
            continue
        holes = _holes(busy)
        # one sort by end and one by start; a block's edge the window cut has no interval
        ends_at = _first_with(t.gpu_end, t.worker, done, np.append(holes.starts, busy.ends[-1]))
        starts_at = _first_with(t.gpu_start, t.worker, done, np.append(holes.ends, busy.starts[0]))
        out[g] = _Busy(
            busy, holes, ends_at[:-1], starts_at[:-1], int(starts_at[-1]), int(ends_at[-1])
        )
    return out


def _stamped(
    t: PartitionTable,
    c: dict[str, F64],
    index: I64,
    synth: bool = True,
    timed: tuple[PartitionTable, Bounds] | None = None,
) -> _Stamped:
    """What the stamps of rows give (`t`'s segment columns are not read: `_stamp_rows`;
    `synth`: with the synthesis steps, which only the viewer, the text report and the
    export read; `timed`: the rows and the window of the busy blocks and gaps, when not
    `t`'s own over all time)."""
    done_mask = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    kernel_ms = _line_kernel_ms(c)
    ntt = np.nan_to_num(c["ntt_msm_h"])
    hides_alloc = _hides_alloc(c)
    blocks = np.nan_to_num(c["ntt_blocks"])
    started = ~np.isnan(t.gpu_start)
    gpus: dict[int, GpuPart] = {}
    gap_cols: list[tuple[int, F64, F64, I64, I64]] = []
    busy_of = _busy_figures(t, None) if timed is None else _busy_figures(*timed)
    wanted = set(_gpus_of(t)) | set(busy_of)
    open_mask = started & np.isnan(t.gpu_end) & ~t.failed
    own = dict(groups_of(t.gpu, np.arange(len(t), dtype=np.int64)))
    for g in sorted(wanted):
        rows_of_g = own.get(g, _EMPTY_I)
        done = rows_of_g[done_mask[rows_of_g]]
        b = busy_of.get(g, _NO_BUSY)
        gap_cols.append((g, b.holes.starts, b.holes.ends, b.before, b.after))
        mine = done[kernel_ms[done] > 0]
        n_blocks = blocks[mine]
        hidden = mine[hides_alloc[mine]]
        first = int(done[np.argmin(t.gpu_start[done])]) if len(done) else -1
        first_hides = first >= 0 and bool(hides_alloc[first]) and kernel_ms[first] > 0
        unended = rows_of_g[started[rows_of_g] & ~done_mask[rows_of_g]]
        gpus[g] = GpuPart(
            busy=b.blocks,
            kernel=Blocks(_EMPTY_F, _EMPTY_F),
            gap_before=b.before,
            gap_after=b.after,
            first_after=b.first_after,
            last_before=b.last_before,
            span=(
                (int(t.gpu_start[done].min()), int(t.gpu_end[done].max())) if len(done) else None
            ),
            in_flight=int(np.sum(open_mask[rows_of_g])),
            kernel_sums=(
                float(kernel_ms[mine].sum()),
                float(np.sum(np.where(n_blocks > 0, n_blocks + 2.0, 3.0))),
                float(np.sum(2.0 * n_blocks)),
            ),
            hidden_alloc_ms=float(HIDDEN_ALLOC_SHARE * ntt[hidden].sum()),
            first=(float(t.gpu_start[first]), int(index[first])) if first >= 0 else None,
            first_hidden_ntt_ms=float(ntt[first]) if first_hides else 0.0,
            unended_kernel_ms=float(kernel_ms[unended].sum()),
        )
    steps = _synth(t) if synth else NO_SYNTH
    return _Stamped(gpus, _jobs(t, index), steps, _sorted_gaps(gap_cols), _gpu_workers(t))


# The oldest engines print no allocation line (no CUZK_NTT_H, no prestage, no lock line), yet
# the buffers' cudaMalloc is timed inside ntt_msm_h_ms: the kernel figure counts it. How much
# it may be, from the engines that do print it: up to ~810 ms on a GPU's first use (d_a and
# d_b allocated) and 5-40 ms (d_b) of a ~700-1,050 ms NTT block after that.
HIDDEN_ALLOC_SHARE = 0.06
FIRST_USE_ALLOC_MS = 1000.0


def _hides_alloc(c: dict[str, F64]) -> npt.NDArray[np.bool_]:
    """Per interval: its NTT block may hold allocation that no line of its separates."""
    return (
        ~np.isnan(c["ntt_msm_h"])
        & np.isnan(c["ntt_alloc"])
        & np.isnan(c["prestage"])
        & np.isnan(c["pre_lock"])
    )


# The shortest stretch of an interval its lines leave unexplained that may hide kernels
# printed in lost lines (shorter ones are the sum of durations truncated to whole ms).
UNEXPLAINED_MIN_MS = 10.0


def _segmented(
    t: PartitionTable, seg_part: I64, timed: tuple[PartitionTable, I64, Bounds] | None = None
) -> _Segmented:
    """What the segments of rows give (`timed`: the rows, their segments' rows and the
    window of the kernel blocks, the unexplained time and the busy split, when not `t`'s
    own over all time)."""
    tt, tpart, bounds = (t, seg_part, None) if timed is None else timed
    # the busy split is the core's sweep without the GIL: on a thread of its own, beside
    # the unions and sums below (a long log's report waited ~80 ms more for it in line)
    split_later = (
        Later(_split_of, tt, tpart, bounds, name="cuzk-tui-split")
        if len(tpart) >= SEGMENTS_APART_ROWS
        else None
    )
    seg_done = (~np.isnan(tt.gpu_start) & ~np.isnan(tt.gpu_end))[tpart]
    kernel_segs = (tt.seg_phase == Phase.KERNEL) & seg_done
    # a few ms between phases is the durations' truncation to whole ms, not a lost line
    unknown_segs = (
        (tt.seg_phase == Phase.UNKNOWN)
        & seg_done
        & (tt.seg_end - tt.seg_start > UNEXPLAINED_MIN_MS)
    )
    kernel = {}
    unknown = {}
    by_gpu = dict(groups_of(tt.gpu[tpart], np.arange(len(tpart), dtype=np.int64)))
    for g in sorted(set(_gpus_of(t)) | (set(_gpus_of(tt)) if timed else set())):
        on_gpu = by_gpu.get(g, _EMPTY_I)
        kseg = on_gpu[kernel_segs[on_gpu]]
        useg = on_gpu[unknown_segs[on_gpu]]
        k_blocks = union_blocks(tt.seg_start[kseg], tt.seg_end[kseg])
        u_blocks = union_blocks(tt.seg_start[useg], tt.seg_end[useg])
        if bounds is not None and g in bounds:
            k_blocks = clip_blocks(k_blocks, *bounds[g])
            u_blocks = clip_blocks(u_blocks, *bounds[g])
        kernel[g] = k_blocks
        unknown[g] = u_blocks.total_ms
    sums = _worker_sums(t, seg_part)
    split = split_later.result() if split_later is not None else _split_of(tt, tpart, bounds)
    return _Segmented(kernel, sums, unknown, split)


def _split_of(t: PartitionTable, seg_part: I64, bounds: Bounds | None) -> dict[int, Breakdown]:
    """Per GPU, where its busy time within `bounds` went (each instant is given to one
    phase: the split of a window is its share of the whole's)."""
    if bounds is None:
        return segments_split(t, seg_part)
    seg_gpu = t.gpu[seg_part]
    lo = _per_key({g: b[0] for g, b in bounds.items()}, seg_gpu, -np.inf)
    hi = _per_key({g: b[1] for g, b in bounds.items()}, seg_gpu, np.inf)
    return clipped_split(t, seg_part, lo, hi)


def make_piece(
    rows: Rows,
    drawn: bool = True,
    stamped: _Stamped | None = None,
    segmented: _Segmented | None = None,
    window: Window | None = None,
) -> Piece:
    """Everything `rows` gives on their own (`drawn`: lay the intervals out in lanes, for
    the viewer and the text report; the JSON report does without them; `stamped` and
    `segmented`: what their stamps and their segments give, when made already; `window`:
    the time its time figures cover, and the earlier rows that reach into it)."""
    t = rows.table
    before = window.before if window is not None else None
    if before is None or len(before) == 0:
        tt, tpart = t, rows.seg_part
    else:
        tt = PartitionTable.joined([before.table, t])
        tpart = np.concatenate([before.seg_part, rows.seg_part + len(before)])
    bounds = window.bounds if window is not None else None
    if stamped is None:
        stamped = _stamped(
            t, rows.floats, rows.index, timed=None if window is None else (tt, window.bounds)
        )
    if segmented is None:
        segmented = _segmented(t, rows.seg_part, None if bounds is None else (tt, tpart, bounds))
    gpus = {
        g: replace(
            part,
            kernel=segmented.kernel.get(g, part.kernel),
            unknown_ms=segmented.unknown_ms.get(g, 0.0),
        )
        for g, part in stamped.gpus.items()
    }
    lanes, lane_ends = _lanes(rows, window.lane_ends if window else None) if drawn else ({}, {})
    return Piece(
        rows=rows,
        gpus=gpus,
        lanes=lanes,
        workers=segmented.workers,
        jobs=stamped.jobs,
        synth=stamped.synth,
        gaps=stamped.gaps,
        split={g: segmented.split.get(g, Breakdown(g, 0.0, {})) for g in gpus},
        gpu_workers=stamped.gpu_workers,
        mid_run=mid_run_stamps(t),
        before=_EMPTY_I if window is None or before is None else window.before_index,
        lane_ends=lane_ends,
        drawn=drawn,
    )


def _gpu_workers(t: PartitionTable) -> dict[int, frozenset[int]]:
    known = (t.gpu >= 0) & (t.worker >= 0)
    # (gpu, worker) pairs as one number each: a plain unique, not one over rows
    pairs = np.unique((t.gpu[known].astype(np.int64) << 32) | t.worker[known].astype(np.int64))
    out: dict[int, set[int]] = {}
    for g, w in zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist(), strict=True):
        out.setdefault(int(g), set()).add(int(w))
    return {g: frozenset(ws) for g, ws in out.items()}


def _sorted_gaps(cols: list[tuple[int, F64, F64, I64, I64]]) -> tuple[I32, I64, I64, I64, I64]:
    """Gap columns of several GPUs, by (start, gpu)."""
    if not cols:
        z = np.zeros(0, dtype=np.int64)
        return z.astype(np.int32), z, z, z, z
    gpu = np.concatenate([np.full(len(s), g, dtype=np.int32) for g, s, _, _, _ in cols])
    start = np.concatenate([s for _, s, _, _, _ in cols]).astype(np.int64)
    end = np.concatenate([e for _, _, e, _, _ in cols]).astype(np.int64)
    before = np.concatenate([b for _, _, _, b, _ in cols]).astype(np.int64)
    after = np.concatenate([a for _, _, _, _, a in cols]).astype(np.int64)
    order = np.lexsort((gpu, start))
    return gpu[order], start[order], end[order], before[order], after[order]


def _lanes(
    rows: Rows, before: dict[int, F64] | None = None
) -> tuple[dict[tuple[int, int], Lane], dict[int, F64]]:
    """Place each worker's intervals on sub-rows so that overlapping ones stay visible
    (packed by where each is drawn to; `before`: per worker, where each of its sub-rows'
    last interval before these rows is drawn to). With `before`, also where each sub-row's
    last interval is drawn to then (for the rows after these)."""
    t = rows.table
    started = np.flatnonzero(~np.isnan(t.gpu_start) & (t.worker >= 0))
    lanes: dict[tuple[int, int], Lane] = {}
    ends: dict[int, F64] = {}
    for w, idx in groups_of(t.worker, started.astype(np.int64)):
        idx = idx[np.lexsort((idx, t.gpu_start[idx]))]
        drawn = rows.drawn_end[idx]
        held = before.get(w, _EMPTY_F) if before is not None else _EMPTY_F
        if len(held):
            # the sub-rows as the intervals before left them: each taken by one of its own
            pad = np.full(len(held), -np.inf)
            row_of = first_free_rows(np.append(pad, t.gpu_start[idx]), np.append(held, drawn))
            row_of = row_of[len(held) :]
        else:
            row_of = first_free_rows(t.gpu_start[idx], drawn)
        if before is not None:
            # the last interval of each sub-row (the packing's order) is where it is free from
            rev, last = np.unique(row_of[::-1], return_index=True)
            kept = np.zeros(max(len(held), int(rev[-1]) + 1))
            kept[: len(held)] = held
            kept[rev] = drawn[len(row_of) - 1 - last]
            ends[int(w)] = kept
        g = int(t.gpu[idx[0]])
        for r in range(int(row_of.max()) + 1):
            members = idx[row_of == r]
            if len(members) == 0:
                continue
            lo, hi = t.seg_offsets[members], t.seg_offsets[members + 1]
            lens = hi - lo
            seg = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
            lanes[(int(w), r)] = Lane(
                max(g, 0),
                int(w),
                r,
                (
                    Segments(
                        t.seg_start[seg],
                        t.seg_end[seg],
                        t.seg_phase[seg],
                        np.repeat(members, lens).astype(np.int32),
                    ),
                ),
            )
    if before is not None:
        for w, held in before.items():
            ends.setdefault(w, held)
    return lanes, ends


def _worker_sums(t: PartitionTable, seg_part: I64) -> dict[int, tuple[int, int, F64]]:
    """Per worker: its GPU, how many intervals it ended, and their length per phase (the
    core's one pass over the segments)."""
    c = np.ascontiguousarray
    ids, first, counts, sums = _core.worker_sums(
        c(t.gpu_start),
        c(t.gpu_end),
        c(t.worker),
        c(t.seg_start),
        c(t.seg_end),
        c(t.seg_phase),
        c(seg_part),
        len(PHASE_KEYS),
    )
    table = sums.reshape(len(ids), len(PHASE_KEYS))
    rows = zip(ids.tolist(), first.tolist(), counts.tolist(), strict=True)
    return {int(w): (max(int(t.gpu[f]), 0), int(n), table[j]) for j, (w, f, n) in enumerate(rows)}


def _jobs(t: PartitionTable, index: I64) -> Jobs:
    seen = t.synth_start
    for column in (t.synth_end, t.queued, t.pickup, t.gpu_start, t.gpu_end):
        seen = np.fmax(seen, column)
    # each record as a job of one partition, then the records of a job as one
    return _reduce_jobs(
        Jobs(
            ids=t.job.astype(np.int64),
            parts=np.ones(len(t), dtype=np.int64),
            open_parts=np.isnan(t.gpu_end).astype(np.int64),
            first=t.synth_start,
            last=t.gpu_end,
            seen=seen,
            first_row=index,
            kind=t.kind.astype(np.int64),
        )
    )


def _synth(t: PartitionTable) -> Synth:
    has = ~np.isnan(t.synth_start)
    s, e = t.synth_start[has], t.synth_end[has]
    done = ~np.isnan(e)
    times = np.concatenate([s[done], e[done]])
    deltas = np.concatenate(
        [np.ones(int(done.sum()), np.int64), -np.ones(int(done.sum()), np.int64)]
    )
    order = np.lexsort((deltas, times))  # ends before starts at the same ms
    return Synth(times[order], deltas[order], np.sort(e[done] - s[done]), s[~done])


# -- putting pieces together ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Facts:
    """What the model takes from the builder besides its records."""

    source: str
    counts: LineCounts
    finished: bool
    wall_anchor: datetime | None
    now: float
    worker_gpu: dict[int, int]
    kernel_doubt: dict[int, tuple[float, float]]
    lock_lines_seen: bool
    unattributed_kernel_ms: float
    unattributed_timing_lines: int
    partial_bytes: int
    engine_seen: bool


def _live_facts(source: str, snap: LiveSnapshot, now: float) -> Facts:
    """The facts of a live snapshot, as `facts_of` reads them from the builder."""
    return Facts(
        source=source,
        counts=snap.counts,
        finished=False,
        wall_anchor=snap.wall_anchor,
        now=now,
        worker_gpu=snap.worker_gpu,
        kernel_doubt=snap.kernel_doubt,
        lock_lines_seen=snap.lock_lines_seen,
        unattributed_kernel_ms=snap.unattributed_kernel_ms,
        unattributed_timing_lines=snap.unattributed_timing_lines,
        partial_bytes=snap.partial_bytes,
        engine_seen=snap.engine_seen,
    )


def facts_of(builder: RunRecords, finished: bool, gpus: set[int]) -> Facts:
    """The builder's facts (`gpus`: the GPUs whose kernel doubt is asked for)."""
    worker_gpu = builder.worker_gpu
    return Facts(
        source=builder.source,
        counts=builder.counts.copy(),
        finished=finished,
        wall_anchor=builder.wall_anchor,
        now=float(max(builder.max_stamp, 0)),
        worker_gpu=worker_gpu,
        kernel_doubt={g: builder.kernel_doubt_ms(g) for g in gpus | set(worker_gpu.values())},
        lock_lines_seen=builder.lock_lines_seen,
        unattributed_kernel_ms=builder.unattributed_kernel_ms,
        unattributed_timing_lines=builder.unattributed_timing_lines,
        partial_bytes=builder.partial_bytes,
        engine_seen=builder.engine_seen,
    )


@dataclass(slots=True)
class Listed:
    """The proofs of a piece none of whose jobs has rows elsewhere: made once, kept sorted."""

    proofs: list[Proof]
    mask: npt.NDArray[np.bool_]  # by job number: listed here
    completed: int  # how many of them completed
    spans: ProofSpans  # their columns


# where a proof without a SYNTH_START sorts
NO_FIRST = 1 << 62


def _proof_key(p: Proof) -> tuple[int, str]:
    return (p.first_synth_start if p.first_synth_start is not None else NO_FIRST, p.job)


# How long after the log's first stamp a record that began before the log may still show
# (a synthesis of up to a minute or two, a GPU interval in flight)
MID_RUN_WINDOW_MS = 120_000.0


def starts_mid_run(t: PartitionTable) -> bool:
    """The log begins in the middle of a run (`tail -f`, a rotated log): near its first
    stamp a record shows its end without its start (SYNTH_END without SYNTH_START, GPU_END
    without GPU_START), or a GPU interval with neither synthesis nor queue. On 200 random
    simulated runs none of the whole logs is flagged, and each cut at a third, a half or a
    fifth is (docs/analysis.md#per-run)."""
    return _mid_run(mid_run_stamps(t))


def _mid_run(stamps: tuple[float, float]) -> bool:
    first, began_before = stamps
    return began_before < first + MID_RUN_WINDOW_MS


def mid_run_stamps(t: PartitionTable) -> tuple[float, float]:
    """What `starts_mid_run` reads of some rows: their first stamp, and the first stamp of
    those that began before the log (inf: none); the minimums of all rows' are those of
    their parts'."""
    earliest = np.full(len(t), np.inf)
    for column in (t.synth_start, t.synth_end, t.queued, t.pickup, t.gpu_start, t.gpu_end):
        earliest = np.fmin(earliest, column)
    earliest = np.where(np.isnan(earliest), np.inf, earliest)
    no_synth = np.isnan(t.synth_start)
    began_before = (
        (no_synth & ~np.isnan(t.synth_end))
        | (np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end))
        | (no_synth & np.isnan(t.queued) & ~np.isnan(t.gpu_start))
    )
    first = float(earliest.min()) if len(t) else np.inf
    before = float(earliest[began_before].min()) if began_before.any() else np.inf
    return first, before


def assemble(pieces: list[Piece], facts: Facts, listed: Listed | None = None) -> LogModel:
    """The model of the pieces' rows (`pieces` in time order; `listed`: proofs of the first
    piece made before)."""
    offsets = np.cumsum([0] + [len(p.rows) for p in pieces]).tolist()
    table = PartitionTable.joined([p.rows.table for p in pieces])
    gpu_ids = sorted(set().union(*(p.gpus for p in pieces)) | set(facts.worker_gpu.values()))
    gpus: list[GpuStats] = []
    kernel_gaps: dict[int, Blocks] = {}
    extra: list[tuple[int, F64, F64, I64, I64]] = []  # gaps not in the first piece's list
    mapped: dict[int, set[int]] = {}  # GPU -> the workers the map puts on it
    for w, wg in facts.worker_gpu.items():
        mapped.setdefault(wg, set()).add(w)
    for g in gpu_ids:
        stats, seams, kernel_holes = _gpu_of_pieces(g, pieces, offsets, facts, mapped.get(g))
        gpus.append(stats)
        kernel_gaps[g] = kernel_holes
        extra.extend(seams)
    cols = _merge_gaps(pieces[0].gaps, _sorted_gaps(extra))
    gpu_col, start, end, before, after = cols
    queued = table.queued[after]
    known = ~np.isnan(queued)
    after_queued = np.where(known, np.nan_to_num(queued), 0).astype(np.int64)
    cause = np.where(known, np.where(after_queued > start, 1, 2), 0).astype(np.int8)
    gaps = GapTable(
        gpu_col, start, end, before, after, cause, np.where(known, after_queued, NO_STAMP), table
    )
    proofs, spans, completed = _proofs(pieces, table, listed)
    synth_t, synth_n = _synthesis_steps(pieces, facts.now, facts.finished)
    firsts = _cat([p.jobs.first for p in pieces])
    lasts = _cat([p.jobs.last for p in pieces])
    firsts, lasts = firsts[~np.isnan(firsts)], lasts[~np.isnan(lasts)]
    first_synth = float(firsts.min()) if len(firsts) else NAN
    last_end = float(lasts.max()) if len(lasts) else NAN
    summary = Summary(
        proofs_started=len(proofs),
        proofs_completed=completed,
        first_synth_start=None if first_synth != first_synth else int(first_synth),
        last_gpu_end=None if last_end != last_end else int(last_end),
        gaps=GapStats.of(gaps.duration),
    )
    split = {
        g.gpu: with_kernel(
            add_breakdowns(g.gpu, [p.split[g.gpu] for p in pieces if g.gpu in p.split]),
            g.kernel_busy_ms,
        )
        for g in gpus
    }
    return LogModel(
        source=facts.source,
        counts=facts.counts,
        finished=facts.finished,
        wall_anchor=facts.wall_anchor,
        now_ms=int(facts.now),
        parts=table,
        lanes=_merge_lanes(pieces, offsets),
        gpus=tuple(gpus),
        workers=_merge_workers(pieces),
        gaps=gaps,
        kernel_gaps=kernel_gaps,
        proofs=proofs,
        summary=summary,
        synth_times=synth_t,
        synth_counts=synth_n,
        unattributed_timing_lines=facts.unattributed_timing_lines,
        partial_bytes=facts.partial_bytes,
        engine_seen=facts.engine_seen,
        run_split=split,
        unattributed_kernel_ms=facts.unattributed_kernel_ms,
        starts_mid_run=_mid_run(
            (min(p.mid_run[0] for p in pieces), min(p.mid_run[1] for p in pieces))
        ),
        proof_spans=spans,
        drawn=all(p.drawn for p in pieces),
    )


def _gpu_of_pieces(
    g: int, pieces: list[Piece], offsets: list[int], facts: Facts, mapped: set[int] | None
) -> tuple[GpuStats, list[tuple[int, F64, F64, I64, I64]], Blocks]:
    """GPU g's figures over the pieces, the gaps between pieces and its kernel holes
    (`mapped`: the workers the worker -> GPU map puts on g)."""
    mine = [(k, p.gpus[g], offsets[k]) for k, p in enumerate(pieces) if g in p.gpus]
    busy_parts: list[Blocks] = []
    kernel_parts: list[Blocks] = []
    # the gaps the first piece's list lacks: those of later pieces and those between pieces
    more: list[tuple[int, F64, F64, I64, I64]] = []
    prev: tuple[GpuPart, int] | None = None
    for k, part, off in mine:
        kernel_parts.append(part.kernel)
        if len(part.busy.starts) == 0:
            continue
        if prev is not None:
            p, p_k = prev
            if p.busy.ends[-1] < part.busy.starts[0]:
                # the hole between two pieces' windows
                more.append(
                    (
                        g,
                        p.busy.ends[-1:],
                        part.busy.starts[:1],
                        _numbers(pieces[p_k], np.array([p.last_before]), offsets[p_k]),
                        _numbers(pieces[k], np.array([part.first_after]), off),
                    )
                )
        if k and len(part.gap_before):
            holes = _holes(part.busy)
            more.append(
                (
                    g,
                    holes.starts,
                    holes.ends,
                    _numbers(pieces[k], part.gap_before, off),
                    _numbers(pieces[k], part.gap_after, off),
                )
            )
        busy_parts.append(part.busy)
        prev = (part, k)
    busy = _joined_blocks(busy_parts)
    kernel = _joined_blocks(kernel_parts)
    spans = [part.span for _, part, _ in mine if part.span is not None]
    span = (min(s[0] for s in spans), max(s[1] for s in spans)) if spans else None
    total = sum(part.kernel_sums[0] for _, part, _ in mine)
    longer = sum(part.kernel_sums[1] for _, part, _ in mine)
    shorter = sum(part.kernel_sums[2] for _, part, _ in mine)
    unknown = sum(part.unknown_ms for _, part, _ in mine)
    lo_ms, hi_ms = _kernel_range(total, longer, shorter, unknown, facts, g, busy.total_ms)
    # allocation the NTT blocks may hide: the range's low end takes it all out, the
    # estimate half of it (on a GPU's first use the first block's allowance is larger)
    firsts = [(p.first, p.first_hidden_ntt_ms) for _, p, _ in mine if p.first is not None]
    first = min(firsts)[1] if firsts else 0.0
    hidden = sum(part.hidden_alloc_ms for _, part, _ in mine)
    hidden += max(0.0, min(FIRST_USE_ALLOC_MS, 0.5 * first) - HIDDEN_ALLOC_SHARE * first)
    lo_ms = max(0.0, lo_ms - hidden)
    # the estimate is the union of the segments as drawn; without lock lines their place is
    # inferred (back from the end), so the sum of the intervals' kernel lines (one holder at
    # a time) is the better figure when the two differ
    est = kernel.total_ms
    if not facts.lock_lines_seen:
        est = min(max(est, total), busy.total_ms)
    est = max(0.0, est - 0.5 * hidden)
    drawn = est
    if facts.lock_lines_seen:
        # on an engine that prints lock lines, the time its intervals' lines leave
        # unexplained may hold kernels printed in lines the log lost (the range's top holds
        # all of it): the estimate takes half, the middle of what the log allows, where the
        # segments alone sat at the bottom (median 0.0115 below the truth with 0.5 % of the
        # C++ lines lost)
        est = min(est + 0.5 * unknown, busy.total_ms)
    # every worker a record puts on the GPU, started or not (a piece may hold only the
    # pickup of a worker's record)
    workers = set().union(*(p.gpu_workers.get(g, frozenset()) for p in pieces))
    workers |= mapped or set()
    stats = GpuStats(
        g,
        tuple(sorted(workers)),
        span,
        busy,
        kernel,
        sum(part.in_flight for _, part, _ in mine),
        (min(lo_ms, est, drawn), max(hi_ms, est, drawn)),
        est,
        (
            max(0.0, total - hidden - shorter),
            total + longer + sum(part.unended_kernel_ms for _, part, _ in mine),
        ),
    )
    return stats, more, _holes(kernel)


def _numbers(piece: Piece, local: I64, offset: int) -> I64:
    """The model's row numbers of a piece's interval numbers (which count the rows before
    it that its window holds first, then its own: `Piece.before`)."""
    n = len(piece.before)
    if n == 0:
        return local + offset
    return np.where(local < n, piece.before[np.minimum(local, n - 1)], local - n + offset)


def _joined_blocks(parts: list[Blocks]) -> Blocks:
    """The blocks of pieces' windows, in time order, as one union: a block that the seam
    between two windows cut (one ends where the next begins) is one again."""
    parts = [b for b in parts if len(b.starts)]
    if len(parts) < 2:
        return parts[0] if parts else Blocks(_EMPTY_F, _EMPTY_F)
    starts = np.concatenate([b.starts for b in parts])
    ends = np.concatenate([b.ends for b in parts])
    seams = np.cumsum([len(b.starts) for b in parts[:-1]])
    cut = seams[ends[seams - 1] >= starts[seams]]
    if len(cut) == 0:
        return Blocks(starts, ends)
    return Blocks(np.delete(starts, cut), np.delete(ends, cut - 1))


def _cat(arrays: list[F64]) -> F64:
    if not arrays:
        return _EMPTY_F
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays)


def _merge_gaps(
    a: tuple[I32, I64, I64, I64, I64], b: tuple[I32, I64, I64, I64, I64]
) -> tuple[I32, I64, I64, I64, I64]:
    """Two gap lists sorted by (start, gpu) as one (b is short)."""
    if len(b[1]) == 0:
        return a
    if len(a[1]) == 0:
        return b
    a_gpu, a_start = a[0], a[1]
    pos = np.searchsorted(a_start, b[1], side="left")
    # same start: after the lower GPUs
    for k in np.flatnonzero(
        (pos < len(a_start)) & (a_start[np.minimum(pos, len(a_start) - 1)] == b[1])
    ).tolist():
        p = int(pos[k])
        while p < len(a_start) and a_start[p] == b[1][k] and a_gpu[p] < b[0][k]:
            p += 1
        pos[k] = p
    return (
        np.insert(a[0], pos, b[0]),
        np.insert(a[1], pos, b[1]),
        np.insert(a[2], pos, b[2]),
        np.insert(a[3], pos, b[3]),
        np.insert(a[4], pos, b[4]),
    )


def _merge_lanes(pieces: list[Piece], offsets: list[int]) -> tuple[Lane, ...]:
    # pieces are apart in time: a lane's chunks follow one another (none is copied but
    # for the later pieces' record numbers)
    by_key: dict[tuple[int, int], tuple[Lane, list[Segments]]] = {}
    for p, off in zip(pieces, offsets, strict=False):
        for key, lane in p.lanes.items():
            chunks = [
                replace(c, partition=c.partition + np.int32(off)) if off else c for c in lane.chunks
            ]
            if key in by_key:
                by_key[key][1].extend(chunks)
            else:
                by_key[key] = (lane, chunks)
    lanes = []
    for first, chunks in by_key.values():
        same = len(chunks) == len(first.chunks) and chunks[0] is first.chunks[0]
        lanes.append(first if same else Lane(first.gpu, first.worker, first.sub_row, tuple(chunks)))
    lanes.sort(key=lambda lane: (lane.gpu, lane.worker, lane.sub_row))
    return tuple(lanes)


def _merge_workers(pieces: list[Piece]) -> tuple[WorkerStats, ...]:
    merged: dict[int, tuple[int, int, F64]] = {}
    for p in pieces:
        for w, (g, n, sums) in p.workers.items():
            if w in merged:
                g0, n0, s0 = merged[w]
                merged[w] = (g0, n0 + n, s0 + sums)
            else:
                merged[w] = (g, n, sums)
    return tuple(
        WorkerStats(
            w, g, n, {key: float(x) for key, x in zip(PHASE_KEYS, sums.tolist(), strict=True)}
        )
        for w, (g, n, sums) in sorted(merged.items())
    )


def _proofs(
    pieces: list[Piece], t: PartitionTable, listed: Listed | None
) -> tuple[Sequence[Proof], ProofSpans, int]:
    """Every job's proof, by first SYNTH_START (then job id), their spans' columns, and how
    many completed."""
    jobs = [p.jobs for p in pieces]
    if listed is not None:
        # the first piece's listed proofs are made: only the other jobs are made here
        first = jobs[0]
        jobs[0] = _take_jobs(first, ~_in_mask(listed.mask, first.ids))
        again = (
            np.concatenate([j.ids for j in jobs[1:]]) if len(jobs) > 1 else np.zeros(0, np.int64)
        )
        hit = _in_mask(listed.mask, again)
        kept, kept_done = listed.proofs, listed.completed
        if hit.any():
            # a job listed before has new rows: make it again with them
            names = {t.jobs[j] for j in again[hit].tolist()}
            back = _take_jobs(pieces[0].jobs, np.isin(pieces[0].jobs.ids, again[hit]))
            jobs.append(back)
            kept = [p for p in kept if p.job not in names]
            kept_done = sum(1 for p in kept if p.completed)
    else:
        kept, kept_done = [], 0
    table = _proof_table(_combine_jobs(jobs), t)
    completed = kept_done + int(np.count_nonzero(table.completed))
    if not kept:
        return ProofList(table), table.spans(), completed
    made = table.proofs()
    # each made proof goes after the kept ones with a key up to its own (as insort would)
    at = [bisect.bisect_right(kept, _proof_key(p), key=_proof_key) for p in made]
    out: list[Proof] = []
    prev = 0
    for pos, p in zip(at, made, strict=True):
        out.extend(kept[prev:pos])
        out.append(p)
        prev = pos
    out.extend(kept[prev:])
    spans = listed.spans if listed is not None and kept is listed.proofs else ProofSpans.of(kept)
    return tuple(out), spans.insert(at, table.spans()), completed


def _proof_table(j: Jobs, t: PartitionTable) -> ProofTable:
    """The proofs of jobs `j` as columns, by first SYNTH_START, then job id (`_proof_key`)."""
    names = [t.jobs[k] for k in j.ids.tolist()]
    by_name = np.empty(len(names), dtype=np.int64)
    by_name[sorted(range(len(names)), key=names.__getitem__)] = np.arange(len(names))
    # stamps are whole ms: as floats they sort as the key's integers do
    order = np.lexsort((by_name, np.where(np.isnan(j.first), float(NO_FIRST), j.first)))
    return ProofTable(
        job=j.ids[order],
        kind=j.kind[order],
        partitions=j.parts[order],
        first=j.first[order],
        last=j.last[order],
        completed=(j.open_parts == 0)[order],
        seen=j.seen[order],
        jobs=t.jobs,
        kinds=t.kinds,
    )


def _in_mask(mask: npt.NDArray[np.bool_], ids: I64) -> npt.NDArray[np.bool_]:
    inside = ids < len(mask)
    out = np.zeros(len(ids), dtype=bool)
    out[inside] = mask[ids[inside]]
    return out


def _take_jobs(j: Jobs, keep: npt.NDArray[np.bool_]) -> Jobs:
    return Jobs(*(getattr(j, f)[keep] for f in Jobs.__dataclass_fields__))


def _combine_jobs(parts: list[Jobs]) -> Jobs:
    """Per job over several pieces."""
    parts = [j for j in parts if len(j.ids)]
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return Jobs(z, z, z, _EMPTY_F, _EMPTY_F, _EMPTY_F, z, z)
    if len(parts) == 1:
        return parts[0]
    allj = Jobs(
        *(np.concatenate([getattr(j, f) for j in parts]) for f in Jobs.__dataclass_fields__)
    )
    return _reduce_jobs(allj)


def _reduce_jobs(j: Jobs) -> Jobs:
    """The entries of `j` with the same job number as one (the first record's kind)."""
    n_in = len(j.ids)
    if n_in == 0:
        return j
    # the entries by job number: each job's a run, reduced at once (min and max are exact
    # whatever the order; the counts are sums of small integers)
    order = np.argsort(j.ids, kind="stable")
    sorted_ids = j.ids[order]
    new = np.empty(n_in, dtype=bool)
    new[0] = True
    np.not_equal(sorted_ids[1:], sorted_ids[:-1], out=new[1:])
    starts = np.flatnonzero(new)
    n = len(starts)
    inverse = np.empty(n_in, dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    first_row = np.minimum.reduceat(j.first_row[order], starts)
    kind = np.zeros(n, dtype=np.int64)
    winner = j.first_row == first_row[inverse]
    kind[inverse[winner]] = j.kind[winner]
    return Jobs(
        sorted_ids[starts],
        np.add.reduceat(j.parts[order], starts),
        np.add.reduceat(j.open_parts[order], starts),
        np.fmin.reduceat(j.first[order], starts),
        np.fmax.reduceat(j.last[order], starts),
        np.fmax.reduceat(j.seen[order], starts),
        first_row,
        kind,
    )


def _line_kernel_ms(c: dict[str, F64]) -> F64:
    """Each interval's kernel time as its timing lines print it (however its segments could
    be placed): NTT less the allocation inside it, batch additions, tail MSMs."""
    ntt = c["ntt_msm_h"]
    alloc = np.nan_to_num(c["ntt_alloc"] + np.maximum(0.0, ntt - c["ntt_total"]))
    kernel = (
        np.nan_to_num(ntt) - alloc + np.nan_to_num(c["batch_add"]) + np.nan_to_num(c["tail_msm"])
    )
    return np.where(np.isnan(ntt), 0.0, np.maximum(kernel, 0.0))


# How many standard deviations of the summed truncation errors a kernel range allows.
TRUNCATION_SIGMAS = 5.0


def _kernel_range(
    total: float,
    longer: float,
    shorter: float,
    unexplained: float,
    facts: Facts,
    g: int,
    busy_ms: float,
) -> tuple[float, float]:
    """The kernel busy time of GPU `g` the log allows (docs/analysis.md#kernel_util_range).

    The GPU's mutex lets one interval run kernels at a time, so its kernel time is the
    sum of its intervals' as their lines print it (`total`). Low: less what nearly-as-good
    attributions would take from it. High: plus what they would give it, and the kernel
    lines given to nobody; never more than its busy time. Both allow for each printed
    duration being truncated to whole ms: each NTT total, batch and tail duration hides up
    to 1 ms of kernel, each allocation figure up to 1 ms that is not kernel (`longer`,
    `shorter`: the most the truncations can add and take); summed as independent errors
    (within TRUNCATION_SIGMAS, and never past the worst case). High also adds, on an engine
    that prints lock lines, the time its intervals' lines leave unexplained (`unexplained`:
    kernels may have run there, printed in lines the log lost; older engines print too few
    lines to tell).
    """
    mean = 0.5 * (longer - shorter)
    spread = TRUNCATION_SIGMAS * float(np.sqrt((longer + shorter) / 12.0))
    minus, plus = facts.kernel_doubt.get(g, (0.0, 0.0))
    lo = total + max(-shorter, mean - spread) - minus
    hi = total + min(longer, mean + spread) + plus + facts.unattributed_kernel_ms
    if facts.lock_lines_seen:
        hi += unexplained
    lo = max(0.0, lo)
    return lo, max(lo, min(hi, busy_ms))


def _synthesis_steps(pieces: list[Piece], now: float, finished: bool) -> tuple[F64, I64]:
    """How many partitions are in synthesis over time, as a step function.

    A synthesis that never ended failed (SYNTH_START without SYNTH_END) or is running:
    once it has lasted three times the run's median synthesis, or the log is complete, it
    is counted for one median synthesis (when it failed is not in the log).
    """
    typical = _median([p.synth.durations for p in pieces])
    s = _cat([p.synth.open_starts for p in pieces])
    gave_up = finished | (now - s > 3 * typical if typical else np.zeros(len(s), dtype=bool))
    times = np.concatenate([s, s[gave_up] + typical] + [p.synth.times for p in pieces[1:]])
    deltas = np.concatenate(
        [np.ones(len(s), np.int64), -np.ones(int(np.sum(gave_up)), np.int64)]
        + [p.synth.deltas for p in pieces[1:]]
    )
    order = np.lexsort((deltas, times))  # ends before starts at the same ms
    t, d = _merge_steps(pieces[0].synth.times, pieces[0].synth.deltas, times[order], deltas[order])
    return t, np.cumsum(d)


def _median(parts: list[F64]) -> float:
    """The median of sorted arrays taken together (the first one long, the others short),
    without sorting them again: the middle lies within the others' count of it."""
    parts = [p for p in parts if len(p)]
    if not parts:
        return 0.0
    big, rest = parts[0], np.sort(_cat(parts[1:]))
    n = len(big) + len(rest)
    lo_rank, hi_rank = (n - 1) // 2, n // 2
    # the ranks around the middle come from big[lo_rank - len(rest) .. hi_rank] and rest
    a = max(0, lo_rank - len(rest))
    near = np.sort(np.concatenate([big[a : hi_rank + 1], rest]))
    return float(0.5 * (near[lo_rank - a] + near[hi_rank - a]))


def _merge_steps(at: F64, ad: I64, bt: F64, bd: I64) -> tuple[F64, I64]:
    """Two step lists sorted by (time, delta) as one (b is short)."""
    if len(bt) == 0:
        return at, ad
    if len(at) == 0:
        return bt, bd
    # an end goes before every step at its time, a start after them
    pos = np.where(
        bd < 0, np.searchsorted(at, bt, side="left"), np.searchsorted(at, bt, side="right")
    )
    return np.insert(at, pos, bt), np.insert(ad, pos, bd)


# -- the model, whole or live ----------------------------------------------------------------


def build_model(builder: RunRecords, finished: bool, drawn: bool = True) -> LogModel:
    """Freeze what `builder` has read into a `LogModel` (every record analysed; `drawn`:
    with the lanes and the synthesis steps, which the JSON report does without)."""
    cols = builder.columns()
    now = float(max(builder.max_stamp, 0))
    gpu = builder.gpus_of(cols.worker).astype(np.int32)
    index = np.arange(len(cols), dtype=np.int64)
    table, failed_end = _stamp_rows(cols, gpu, finished)
    c = cols.floats

    def segment() -> tuple[Rows, _Segmented]:
        rows = _with_segments(table, failed_end, _segments(cols, now, failed_end), index, c)
        return rows, _segmented(rows.table, rows.seg_part)

    # the segments and what they give are made on a second thread (the core's loops run
    # without the GIL, numpy's sorts too) while this one reads the stamps
    later = Later(segment, name="cuzk-tui-segments") if len(cols) >= SEGMENTS_APART_ROWS else None
    stamped = _stamped(table, c, index, synth=drawn)
    rows, segmented = later.result() if later is not None else segment()
    piece = make_piece(rows, drawn, stamped, segmented)
    return assemble([piece], facts_of(builder, finished, set(piece.gpus)))


# How long (log time) after its end an interval is taken as settled: the timing lines and
# decisions about it have come by then. Only a matter of how often the live model is made
# whole again: a settled record that changes all the same is noticed (the core lists the
# records it writes) and the model is made whole.
SETTLE_MS = 60_000
# The live rows past which the settled part is made again.
TAIL_ROWS = 4096
# The settled part is made again once this many live rows could settle (they ended
# SETTLE_MS ago) beyond those that could when it was made: the square root of the records
# (making it costs what the records do, a snapshot what the live rows do: √n balances the
# two when records come a few times slower than snapshots), at least RIPE_ROWS_MIN, at most
# TAIL_ROWS.
RIPE_ROWS_MIN = 64


@dataclass(frozen=True, slots=True)
class _Base:
    """The settled part of a live model: per worker, records whose intervals all end before
    its cut, where no unsettled interval of that worker starts; and per GPU the seam between
    the settled part's time and the live rows' (see `LiveAnalysis`)."""

    piece: Piece
    listed: Listed
    settled: npt.NDArray[np.bool_]  # by record number, for the records there were
    unsettled: I64  # record numbers below `count` that are not in it
    count: int  # records there were
    live: int  # live rows when it was made (more when something running pins a cut)
    ripe: int  # of them, those that could settle but something pinned (`_ripe`)
    cuts: dict[int, float]  # per worker (-1: records of no worker)
    seams: dict[int, float]  # per GPU of its records
    reach: Rows  # its ended intervals that end at or after their GPU's seam
    reach_index: I64  # their row numbers in the settled piece
    worker_gpu: dict[int, int]


def _cuts(
    start: F64,
    end: F64,
    may: npt.NDArray[np.bool_],
    worker: I32,
    limit: float,
    failed: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.bool_], dict[int, float]]:
    """Per worker, the latest cut (at most `limit`) such that every interval of it starting
    before the cut may settle and was drawn to its end before `limit`, and a failed one
    before the cut (where it is drawn to is the worker's next start); the records settled by
    those cuts. Intervals may reach past their worker's cut (a worker's next prove starts
    before the last one ends): there is a cut between any two of its starts, however busy
    its GPU. One sort per worker."""
    settled = np.zeros(len(start), dtype=bool)
    cuts: dict[int, float] = {}
    started = ~np.isnan(start)
    for w, idx in groups_of(worker, np.flatnonzero(started)):
        idx = idx[np.argsort(start[idx], kind="stable")]
        s = start[idx]
        ok = may[idx] & (end[idx] < limit)
        moved = np.where(failed[idx], end[idx], -np.inf)
        # a cut before sorted interval k (or after all): where it would lie; a cut between
        # two equal starts is none (the record order is not the time order there)
        at = np.minimum(np.append(s, limit), limit)
        valid = np.ones(len(idx) + 1, dtype=bool)
        valid[1:] = np.logical_and.accumulate(ok) & (np.maximum.accumulate(moved) < at[1:])
        valid[1:] &= s < at[1:]
        k = int(np.flatnonzero(valid)[-1])
        settled[idx[:k]] = True
        cuts[int(w)] = float(at[k])
    return settled, cuts


def _per_key(values: dict[int, float], keys: npt.NDArray[np.integer], default: float) -> F64:
    """`values[k]` for each of `keys` (`default` where a key has none)."""
    known = np.array(sorted(values), dtype=np.int64)
    table = np.array([values[k] for k in known.tolist()] + [default], dtype=np.float64)
    k = keys.astype(np.int64)
    at = np.minimum(np.searchsorted(known, k), len(known))
    hit = at < len(known)
    hit[hit] = known[at[hit]] == k[hit]
    at[~hit] = len(known)
    return table[at]


class LiveAnalysis:
    """Live snapshots that cost what changed, not the whole log.

    The records whose intervals ended long enough ago (SETTLE_MS) are analysed once
    (`_Base`); each snapshot analyses only the others (the live rows) and puts the two
    together. Each worker has a cut in time: its settled intervals all end before it, its
    live ones start after it, so each worker's lanes are its settled lanes then its live
    ones. The figures over a GPU's time (busy and kernel blocks, gaps, the unexplained time,
    the busy split) are cut per GPU at its seam, where the first live interval that ended
    starts: the settled part gives them before the seam, the live rows with the settled
    intervals that reach past the seam give them from the seam on (a GPU that never idles
    has intervals across any moment). The settled part is made again when one of its
    records is written (the core lists them), when the worker → GPU map changes, when a live
    interval starts before its worker's cut or ends having started before its GPU's seam, or
    when the live rows grow past TAIL_ROWS.
    """

    def __init__(self) -> None:
        self._base: _Base | None = None
        self._run = 0
        self.rebuilds = 0  # how many times the settled part was made (tests read it)

    @property
    def settled_records(self) -> int:
        """How many records the settled part holds (analysed once, not at each snapshot)."""
        return 0 if self._base is None else len(self._base.piece.rows)

    def model(self, builder: LiveRecords) -> LogModel:
        """The live model of the run being read."""
        try:
            return self._model(builder)
        except Exception:
            # the records written since the last snapshot were taken from the core: what
            # was settled cannot be trusted now, so it is made again next time
            self._base = None
            raise

    def _model(self, builder: LiveRecords) -> LogModel:
        base = self._base
        # one call to the core: the live rows if the settled part stands, and the facts
        snap = builder.live_snapshot(
            base.unsettled if base is not None else None, base.count if base is not None else 0
        )
        if snap.runs != self._run:
            self._run, base = snap.runs, None
        now = float(max(snap.max_stamp, 0))
        if base is not None and not self._still_good(base, snap):
            base = None
        if base is not None:
            idx = np.concatenate(
                [base.unsettled, np.arange(base.count, snap.records, dtype=np.int64)]
            )
            cols = snap.columns
            gpu = builder.gpus_of(cols.worker, snap.worker_gpu).astype(np.int32)
            rows = make_rows(cols, gpu, now, False, idx)
            ripe = _ripe(rows, now) - base.ripe
            if (
                ripe >= min(TAIL_ROWS, max(RIPE_ROWS_MIN, math.isqrt(snap.records)))
                or _early(base, rows)
                or _in_mask(base.settled, np.asarray(snap.open_rows, np.int64)).any()
            ):
                base = None
            else:
                live = rows
        if base is None:
            if len(snap.columns) != snap.records:
                snap = builder.live_snapshot(None, 0)
            cols = snap.columns
            gpu = builder.gpus_of(cols.worker, snap.worker_gpu).astype(np.int32)
            every = make_rows(cols, gpu, now, False, np.arange(len(cols), dtype=np.int64))
            open_rows = np.asarray(snap.open_rows, np.int64)
            base, live = self._settle(every, now, open_rows, snap.worker_gpu)
            self.rebuilds += 1
        self._base = base
        window = Window(
            {g: (f, np.inf) for g, f in base.seams.items()},
            base.reach,
            base.reach_index,
            base.piece.lane_ends,
        )
        tail = make_piece(live, window=window)
        facts = _live_facts(builder.source, snap, now)
        return assemble([base.piece, tail], facts, base.listed)

    @staticmethod
    def _still_good(base: _Base, snap: LiveSnapshot) -> bool:
        if snap.touched is None or snap.worker_gpu != base.worker_gpu:
            return False
        # made again once the live rows grew by TAIL_ROWS: an interval running for ever (a
        # worker that died) keeps what follows it live, and making it again would not help
        if snap.records - base.count + len(base.unsettled) > base.live + TAIL_ROWS:
            return False
        return not _in_mask(base.settled, np.asarray(snap.touched, dtype=np.int64)).any()

    @staticmethod
    def _settle(
        every: Rows, now: float, open_rows: I64, worker_gpu: dict[int, int]
    ) -> tuple[_Base, Rows]:
        """Split the records into the settled part and the live rows."""
        t = every.table
        n = len(every)
        started = ~np.isnan(t.gpu_start)
        synth_open = ~np.isnan(t.synth_start) & np.isnan(t.synth_end)
        may = started & ~np.isnan(every.drawn_end) & ~synth_open
        may &= ~(np.isnan(t.gpu_end) & np.isnan(every.failed_end))  # running
        may[open_rows[(open_rows >= 0) & (open_rows < n)]] = False
        limit = now - SETTLE_MS
        failed = ~np.isnan(every.failed_end)
        settled, cuts = _cuts(t.gpu_start, every.drawn_end, may, t.worker, limit, failed)
        # each GPU's seam: where its first live interval that ended starts (one that ends
        # later having started before it makes the settled part again)
        ended = started & ~np.isnan(t.gpu_end) & (t.gpu >= 0)
        seams = dict.fromkeys(np.unique(t.gpu[settled & ended]).tolist(), limit)
        for g, idx in groups_of(t.gpu, np.flatnonzero(ended & ~settled)):
            if g in seams:
                seams[g] = min(limit, float(t.gpu_start[idx].min()))
        rows = every.take(settled)
        bounds = {g: (-np.inf, f) for g, f in seams.items()}
        piece = make_piece(rows, window=Window(bounds, None, _EMPTY_I, {}))
        r = rows.table
        reaches = ~np.isnan(r.gpu_start) & (r.gpu_end >= _per_key(seams, r.gpu, np.inf))
        only_here = np.ones(len(piece.jobs.ids), dtype=bool)
        elsewhere = np.unique(t.job[~settled].astype(np.int64))
        only_here[np.isin(piece.jobs.ids, elsewhere)] = False
        listed_ids = piece.jobs.ids[only_here]
        table = _proof_table(_take_jobs(piece.jobs, only_here), piece.rows.table)
        mask = np.zeros(int(listed_ids.max()) + 1 if len(listed_ids) else 0, dtype=bool)
        mask[listed_ids] = True
        live = every.take(~settled)
        base = _Base(
            piece=piece,
            listed=Listed(
                list(table.proofs()),
                mask,
                int(np.count_nonzero(table.completed)),
                table.spans(),
            ),
            settled=settled,
            unsettled=np.flatnonzero(~settled).astype(np.int64),
            count=n,
            live=int(np.count_nonzero(~settled)),
            ripe=_ripe(live, now),
            cuts=cuts,
            seams=seams,
            reach=rows.take(reaches),
            reach_index=np.flatnonzero(reaches).astype(np.int64),
            worker_gpu=worker_gpu,
        )
        return base, live


def _ripe(rows: Rows, now: float) -> int:
    """How many of the rows ended (or failed) SETTLE_MS before `now`."""
    t = rows.table
    ended = ~(np.isnan(t.gpu_end) & np.isnan(rows.failed_end))
    return int(np.count_nonzero(ended & (rows.drawn_end < now - SETTLE_MS)))


def _early(base: _Base, rows: Rows) -> bool:
    """Live rows the settled part cannot be put beside: an interval starting before its
    worker's cut, or one that ended having started before its GPU's seam."""
    t = rows.table
    if (t.gpu_start < _per_key(base.cuts, t.worker, -np.inf)).any():  # NaN compares False
        return True
    ended = ~np.isnan(t.gpu_end) & (t.gpu >= 0)
    return bool((t.gpu_start[ended] < _per_key(base.seams, t.gpu[ended], -np.inf)).any())
