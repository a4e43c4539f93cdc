"""What a set of rows gives on its own, to be put together with the rows after it: each
GPU's busy and kernel blocks and gaps, its workers' phase sums and lanes, the jobs and the
synthesis steps (a `Piece`). The live model is made of pieces split in time
(parsers/analysis.py); the whole log is one piece.

The figures are defined in docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.breakdown import clipped_split, segments_split
from parsers.later import Later
from parsers.model import (
    F64,
    I8,
    I32,
    I64,
    PHASE_KEYS,
    Blocks,
    Breakdown,
    Lane,
    LaneMembers,
    PartitionTable,
    Phase,
    Segments,
)
from parsers.rows import (
    EMPTY_F,
    EMPTY_I,
    SEGMENTS_APART_ROWS,
    Rows,
    distinct,
    first_free_rows,
    first_with,
    groups_of,
    holes_of,
    union_blocks,
)


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
    # the union of its ended intervals given no kernel line: where the GPU has none at all
    # (the lines never captured, or lost), kernels may have run all through them
    silent_ms: float = 0.0
    # per kind of kernel line (NTT, batch additions, tail MSMs): how many of its ended
    # intervals lack one and print one, the longest printed, and how many of its intervals
    # that never ended print one (`lost_kernel_ms`)
    kernel_lines: tuple[tuple[int, int, float, int], ...] = ()
    # the NTT time its ended intervals' NTT_H lines leave out where it is at least half of
    # one of their circuits' NTT: a circuit's line lost, not allocation (`_ntt_unprinted`)
    ntt_unprinted_ms: float = 0.0


@dataclass(frozen=True, slots=True)
class Jobs:
    """Per job (its number in the builder) over the rows of a piece."""

    ids: I64  # sorted
    parts: I64  # its records of a partition
    open_parts: I64  # of them, those without a GPU_END
    whole: I64  # its records of no partition (`proof_table_of`: a whole-proof job's)
    open_whole: I64  # of them, those without a GPU_END
    first: F64  # first SYNTH_START
    last: F64  # last GPU_END
    seen: F64  # latest stamp
    first_row: I64  # lowest record number
    kind: I64  # kind of that record


@dataclass(frozen=True, slots=True)
class Synth:
    """Synthesis over the rows of a piece: the steps of the ended ones, the others' starts."""

    times: F64  # sorted by (time, delta)
    deltas: I8  # +1 a start, -1 an end (a byte: a long log has millions)
    durations: F64  # sorted
    open_starts: F64  # SYNTH_START without SYNTH_END


NO_SYNTH = Synth(EMPTY_F, np.zeros(0, dtype=np.int8), EMPTY_F, EMPTY_F)


@dataclass(frozen=True, slots=True)
class Piece:
    """What a set of rows gives. The pieces of a live model are split in time: per worker,
    every interval of one starts before any of the next; per GPU, its time figures cover a
    window of time of their own (`Window`, see `LiveAnalysis`)."""

    rows: Rows
    gpus: dict[int, GpuPart]
    lanes: dict[tuple[int, int], Lane]  # (worker, sub_row) -> lane (partition local)
    # worker -> (gpu, intervals, ms per phase, intervals a lock line gave a pre-lock and a
    # lock wait: `_lock_lines`)
    workers: dict[int, tuple[int, int, F64, int]]
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
    lock_lines: dict[int, int]  # per worker (`_lock_lines`)


@dataclass(frozen=True, slots=True)
class SegmentFigures:
    """What the segments of a piece's rows give: each GPU's kernel blocks, and per worker
    its GPU, intervals ended and time per phase."""

    kernel: dict[int, Blocks]
    workers: dict[int, tuple[int, int, F64]]
    unknown_ms: dict[int, float]  # per GPU, as GpuPart.unknown_ms
    split: dict[int, Breakdown]  # per GPU, where its busy time went


def _gpus_of(t: PartitionTable) -> list[int]:
    """The GPUs the rows started intervals on."""
    started = ~np.isnan(t.gpu_start)
    gpus: list[int] = distinct(t.gpu[started & (t.gpu >= 0)]).tolist()
    return gpus


def _by_gpu(t: PartitionTable, seg_part: I64, at: I64) -> dict[int, I64]:
    """The segments `at` (ascending) by the GPU of their rows, each ascending."""
    return {g: at[k] for g, k in groups_of(t.gpu[seg_part[at]], np.arange(len(at)))}


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


_NO_BLOCKS = Blocks(EMPTY_F, EMPTY_F)


_NO_BUSY = _Busy(_NO_BLOCKS, _NO_BLOCKS, EMPTY_I, EMPTY_I, -1, -1)


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
        holes = holes_of(busy)
        # one sort by end and one by start; a block's edge the window cut has no interval
        ends_at = first_with(t.gpu_end, t.worker, done, np.append(holes.starts, busy.ends[-1]))
        starts_at = first_with(t.gpu_start, t.worker, done, np.append(holes.ends, busy.starts[0]))
        out[g] = _Busy(
            busy, holes, ends_at[:-1], starts_at[:-1], int(starts_at[-1]), int(ends_at[-1])
        )
    return out


def stamp_figures(
    t: PartitionTable,
    c: dict[str, F64],
    index: I64,
    synth: bool = True,
    timed: tuple[PartitionTable, Bounds] | None = None,
) -> _Stamped:
    """What the stamps of rows give (`t`'s segment columns are not read: `stamp_rows`;
    `synth`: with the synthesis steps, which only the viewer, the text report and the
    export read; `timed`: the rows and the window of the busy blocks and gaps, when not
    `t`'s own over all time)."""
    done_mask = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    kernel_lines = _kernel_lines(c)
    kernel_ms = _line_kernel_ms(kernel_lines)
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
        rows_of_g = own.get(g, EMPTY_I)
        done = rows_of_g[done_mask[rows_of_g]]
        b = busy_of.get(g, _NO_BUSY)
        gap_cols.append((g, b.holes.starts, b.holes.ends, b.before, b.after))
        mine = done[kernel_ms[done] > 0]
        silent = done[kernel_ms[done] <= 0]
        n_blocks = blocks[mine]
        hidden = mine[hides_alloc[mine]]
        first = int(done[np.argmin(t.gpu_start[done])]) if len(done) else -1
        first_hides = first >= 0 and bool(hides_alloc[first]) and kernel_ms[first] > 0
        unended = rows_of_g[started[rows_of_g] & ~done_mask[rows_of_g]]
        gpus[g] = GpuPart(
            busy=b.blocks,
            kernel=Blocks(EMPTY_F, EMPTY_F),
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
            silent_ms=union_blocks(t.gpu_start[silent], t.gpu_end[silent]).total_ms,
            kernel_lines=_kernel_line_counts(kernel_lines, done, unended),
            ntt_unprinted_ms=float(_ntt_unprinted(c)[done].sum()),
        )
    steps = _synth(t) if synth else NO_SYNTH
    jobs, gaps = _jobs(t, index), sorted_gaps(gap_cols)
    return _Stamped(gpus, jobs, steps, gaps, _gpu_workers(t), _lock_lines(t, c, done_mask))


def _lock_lines(
    t: PartitionTable, c: dict[str, F64], done: npt.NDArray[np.bool_]
) -> dict[int, int]:
    """Per worker, how many of its ended intervals a lock line was given to (their pre-lock
    and lock wait measured: without one, the time before the lock is unknown time, even
    where an unlock line places the lock)."""
    lined = done & (t.worker >= 0) & (~np.isnan(c["pre_lock"]) | ~np.isnan(c["mutex_wait"]))
    ids, counts = np.unique(t.worker[lined], return_counts=True)
    return dict(zip(ids.tolist(), counts.tolist(), strict=True))


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


def segment_figures(
    t: PartitionTable, seg_part: I64, timed: tuple[PartitionTable, I64, Bounds] | None = None
) -> SegmentFigures:
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
    # the kernel and unexplained segments of ended intervals, by GPU: picked by phase
    # first, then grouped. A long log has millions of segments: index arrays over all of
    # them were most of a snapshot's peak; over all of them only masks are made now
    done = ~np.isnan(tt.gpu_start) & ~np.isnan(tt.gpu_end)
    kernel_at = np.flatnonzero(tt.seg_phase == Phase.KERNEL)
    kernel_at = kernel_at[done[tpart[kernel_at]]]
    unknown_at = np.flatnonzero(tt.seg_phase == Phase.UNKNOWN)
    unknown_at = unknown_at[done[tpart[unknown_at]]]
    # a few ms between phases is the durations' truncation to whole ms, not a lost line
    unknown_at = unknown_at[tt.seg_end[unknown_at] - tt.seg_start[unknown_at] > UNEXPLAINED_MIN_MS]
    kernel_by = _by_gpu(tt, tpart, kernel_at)
    unknown_by = _by_gpu(tt, tpart, unknown_at)
    kernel = {}
    unknown = {}
    for g in sorted(set(_gpus_of(t)) | (set(_gpus_of(tt)) if timed else set())):
        kseg = kernel_by.get(g, EMPTY_I)
        useg = unknown_by.get(g, EMPTY_I)
        k_blocks = union_blocks(tt.seg_start[kseg], tt.seg_end[kseg])
        u_blocks = union_blocks(tt.seg_start[useg], tt.seg_end[useg])
        if bounds is not None and g in bounds:
            k_blocks = clip_blocks(k_blocks, *bounds[g])
            u_blocks = clip_blocks(u_blocks, *bounds[g])
        kernel[g] = k_blocks
        unknown[g] = u_blocks.total_ms
    sums = _worker_sums(t, seg_part)
    split = split_later.result() if split_later is not None else _split_of(tt, tpart, bounds)
    return SegmentFigures(kernel, sums, unknown, split)


def _split_of(t: PartitionTable, seg_part: I64, bounds: Bounds | None) -> dict[int, Breakdown]:
    """Per GPU, where its busy time within `bounds` went (each instant is given to one
    phase: the split of a window is its share of the whole's)."""
    if bounds is None:
        return segments_split(t, seg_part)
    return clipped_split(t, seg_part, bounds)


# From how many rows a piece's segment figures are made on a thread of their own: a long
# log's first model or a settled part made again, where the wait is seen and pays for the
# memory of both made at once (the 685 MB log's 471,513 rows: 0.1 s sooner, its peak
# elsewhere; the 252 MB log's 157,138: no sooner, 9 MB more at its peak). Never the live
# rows of a log followed (a few thousand at most), where only the CPU counts: a thread
# saves none (following a GPU-bound log took 1.47-1.51 % of a core in line, 1.50-1.58 %
# with one).
PIECE_APART_ROWS = 1 << 18


def make_piece(
    rows: Rows,
    drawn: bool = True,
    stamped: _Stamped | None = None,
    segmented: SegmentFigures | None = None,
    window: Window | None = None,
    laid: Laid | None = None,
) -> Piece:
    """Everything `rows` gives on their own (`drawn`: lay the intervals out in lanes, for
    the viewer and the text report; the JSON report does without them; `stamped`,
    `segmented` and `laid`: what their stamps and their segments give and their lanes
    (`lanes_of`, without a window), when made already; `window`: the time its time figures
    cover, and the earlier rows that reach into it)."""
    t = rows.table
    before = window.before if window is not None else None
    if before is None or len(before) == 0:
        tt, tpart = t, rows.seg_part
    else:
        tt = PartitionTable.joined([before.table, t])
        tpart = np.concatenate([before.seg_part, rows.seg_part + len(before)])
    bounds = window.bounds if window is not None else None
    timed = None if bounds is None else (tt, tpart, bounds)
    # many rows: what the segments give is made on a second thread (the core's loops run
    # without the GIL, numpy's sorts too) while this one reads the stamps and lays the rows
    # out in lanes, as the whole-log build does (the viewer's first model of a 685 MB log
    # waited ~0.1 s more for them in line)
    later = (
        Later(segment_figures, t, rows.seg_part, timed, name="cuzk-tui-segments")
        if segmented is None and len(t) >= PIECE_APART_ROWS
        else None
    )
    if stamped is None:
        stamped = stamp_figures(
            t, rows.floats, rows.index, timed=None if bounds is None else (tt, bounds)
        )
    if segmented is None and later is None:
        # in line, before the lanes: what making them takes is let go before they are laid
        segmented = segment_figures(t, rows.seg_part, timed)
    if laid is None:
        laid = _lanes(rows, window.lane_ends if window else None) if drawn else ({}, {})
    if segmented is None:
        assert later is not None
        segmented = later.result()
    gpus = {
        g: replace(
            part,
            kernel=segmented.kernel.get(g, part.kernel),
            unknown_ms=segmented.unknown_ms.get(g, 0.0),
        )
        for g, part in stamped.gpus.items()
    }
    lanes, lane_ends = laid
    return Piece(
        rows=rows,
        gpus=gpus,
        lanes=lanes,
        workers={
            w: (g, n, sums, stamped.lock_lines.get(w, 0))
            for w, (g, n, sums) in segmented.workers.items()
        },
        jobs=stamped.jobs,
        synth=stamped.synth,
        gaps=stamped.gaps,
        split={g: segmented.split.get(g, Breakdown(g, 0.0, {})) for g in gpus},
        gpu_workers=stamped.gpu_workers,
        mid_run=mid_run_stamps(t),
        before=EMPTY_I if window is None or before is None else window.before_index,
        lane_ends=lane_ends,
        drawn=drawn,
    )


def _gpu_workers(t: PartitionTable) -> dict[int, frozenset[int]]:
    known = (t.gpu >= 0) & (t.worker >= 0)
    # (gpu, worker) pairs as one number each: a plain unique, not one over rows
    pairs = distinct((t.gpu[known].astype(np.int64) << 32) | t.worker[known].astype(np.int64))
    out: dict[int, set[int]] = {}
    for g, w in zip((pairs >> 32).tolist(), (pairs & 0xFFFFFFFF).tolist(), strict=True):
        out.setdefault(int(g), set()).add(int(w))
    return {g: frozenset(ws) for g, ws in out.items()}


def sorted_gaps(cols: list[tuple[int, F64, F64, I64, I64]]) -> tuple[I32, I64, I64, I64, I64]:
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


# lanes by (worker, sub-row), and where each worker's sub-rows are free from (`_lanes`)
Laid = tuple[dict[tuple[int, int], Lane], dict[int, F64]]


def lanes_of(rows: Rows) -> Laid:
    """The lanes of `rows` on their own, as `make_piece` lays them out without a window."""
    return _lanes(rows)


def _lanes(rows: Rows, before: dict[int, F64] | None = None) -> Laid:
    """Place each worker's intervals on sub-rows so that overlapping ones stay visible
    (packed by where each is drawn to; `before`: per worker, where each of its sub-rows'
    last interval before these rows is drawn to). With `before`, also where each sub-row's
    last interval is drawn to then (for the rows after these)."""
    t = rows.table
    started = np.flatnonzero(~np.isnan(t.gpu_start) & (t.worker >= 0))
    c = np.ascontiguousarray
    segment_columns = (c(t.seg_offsets), c(t.seg_start), c(t.seg_end), c(t.seg_phase))
    lanes: dict[tuple[int, int], Lane] = {}
    ends: dict[int, F64] = {}
    for w, idx in groups_of(t.worker, started.astype(np.int64)):
        idx = idx[np.lexsort((idx, t.gpu_start[idx]))]
        drawn = rows.drawn_end[idx]
        held = before.get(w, EMPTY_F) if before is not None else EMPTY_F
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
        # each sub-row's members in their order, grouped in one sort: a pass per sub-row was
        # quadratic where intervals nest deep (a hostile log: one sub-row each)
        for r, at in groups_of(row_of, np.arange(len(idx), dtype=np.int64)):
            members = idx[at]  # in the packing's order
            # each member's segments, one member after another (one pass in the core), once
            # something reads them
            on_lane = LaneMembers(
                members,
                t.gpu_start[members],
                rows.drawn_end[members],
                partial(_gathered, segment_columns),
            )
            lanes[(int(w), int(r))] = Lane(max(g, 0), int(w), int(r), (), on_lane)
    if before is not None:
        for w, held in before.items():
            ends.setdefault(w, held)
    return lanes, ends


def _gathered(segment_columns: tuple[I64, F64, F64, I8], members: I64) -> Segments:
    """The segments of a lane's `members`, one member after another."""
    return Segments(*_core.lane_segments(members, *segment_columns))


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
    # each record as a job of one record, then the records of a job as one
    whole, open_ = t.partition < 0, np.isnan(t.gpu_end)
    return _reduce_jobs(
        Jobs(
            ids=t.job.astype(np.int64),
            parts=(~whole).astype(np.int64),
            open_parts=(open_ & ~whole).astype(np.int64),
            whole=whole.astype(np.int64),
            open_whole=(open_ & whole).astype(np.int64),
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
    n = int(done.sum())
    # ends before starts at the same ms: the ends come first, and the sort keeps ties' order
    times = np.concatenate([e[done], s[done]])
    deltas = np.concatenate([-np.ones(n, np.int8), np.ones(n, np.int8)])
    order = np.argsort(times, kind="stable")
    return Synth(times[order], deltas[order], np.sort(e[done] - s[done]), s[~done])


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


def take_jobs(j: Jobs, keep: npt.NDArray[np.bool_]) -> Jobs:
    return Jobs(*(getattr(j, f)[keep] for f in Jobs.__dataclass_fields__))


def combine_jobs(parts: list[Jobs]) -> Jobs:
    """Per job over several pieces."""
    parts = [j for j in parts if len(j.ids)]
    if not parts:
        z = np.zeros(0, dtype=np.int64)
        return Jobs(z, z, z, z, z, EMPTY_F, EMPTY_F, EMPTY_F, z, z)
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
        np.add.reduceat(j.whole[order], starts),
        np.add.reduceat(j.open_whole[order], starts),
        np.fmin.reduceat(j.first[order], starts),
        np.fmax.reduceat(j.last[order], starts),
        np.fmax.reduceat(j.seen[order], starts),
        first_row,
        kind,
    )


def _kernel_lines(c: dict[str, F64]) -> tuple[F64, ...]:
    """The kernel time of each of an interval's kernel lines (NaN: it has no such line): its
    NTT line's less the allocation inside it, its batch additions, its tail MSMs."""
    ntt = c["ntt_msm_h"]
    alloc = np.nan_to_num(c["ntt_alloc"] + np.maximum(0.0, ntt - c["ntt_total"]))
    return np.maximum(ntt - alloc, 0.0), c["batch_add"], c["tail_msm"]


def _kernel_line_counts(
    lines: tuple[F64, ...], done: I64, unended: I64
) -> tuple[tuple[int, int, float, int], ...]:
    """Per kind of kernel line: how many of the ended intervals `done` lack one and print
    one, the longest printed (0 ms: none), how many of the `unended` print one."""
    out = []
    for col in lines:
        have = col[done]
        printed = have[~np.isnan(have)]
        longest = float(printed.max()) if len(printed) else 0.0
        unended_printed = int(np.count_nonzero(~np.isnan(col[unended])))
        out.append((len(have) - len(printed), len(printed), longest, unended_printed))
    return tuple(out)


def lost_kernel_lines(every: Sequence[GpuPart], read: Sequence[int]) -> list[tuple[int, float]]:
    """Per kind of kernel line, how many a run lost and the longest it printed (`every`:
    every GPU's parts of the run, which read `read` lines of each kind). The run's ended
    intervals outnumbering the lines read less those of intervals that never ended were
    lost; an interval left without one where all were read had its line go to another, or
    to none: counted already."""
    known = [p.kernel_lines for p in every if p.kernel_lines]
    out = []
    for k, count in enumerate(read):
        ended = sum(c[k][0] + c[k][1] for c in known)
        lost = ended - (count - sum(c[k][3] for c in known))
        out.append((max(lost, 0), max((c[k][2] for c in known), default=0.0)))
    return out


def lost_kernel_ms(mine: Sequence[GpuPart], lost: Sequence[tuple[int, float]]) -> float:
    """The most kernel time lost lines (`lost_kernel_lines`) held of a GPU's intervals
    (`mine`: its parts): each of them that lacks a line of a kind the run lost may have lost
    it, at most as many as were lost, each as long as the longest printed."""
    own = [p.kernel_lines for p in mine if p.kernel_lines]
    total = 0.0
    for k, (count, longest) in enumerate(lost):
        if count:
            total += min(sum(c[k][0] for c in own), count) * longest
    return total


def _ntt_unprinted(c: dict[str, F64]) -> F64:
    """Per interval, the NTT time (`ntt_msm_h_ms`) its NTT_H lines (one per circuit) leave
    out, where it is at least half of one circuit's: the line of a circuit the log lost,
    whose kernels the lines' sum counts as allocation (0: none, or less: allocation)."""
    left = c["ntt_msm_h"] - c["ntt_total"]
    per_circuit = c["ntt_total"] / np.where(c["ntt_blocks"] > 0, c["ntt_blocks"], np.nan)
    lost = left >= 0.5 * per_circuit
    return np.where(lost & ~np.isnan(left) & ~np.isnan(per_circuit), left, 0.0)


def _line_kernel_ms(lines: tuple[F64, ...]) -> F64:
    """Each interval's kernel time as its timing lines print it (however its segments could
    be placed): the sum of its kernel lines (`_kernel_lines`), each of those it has (a
    splice may have taken its NTT line, not its kernels)."""
    ntt, batch, tail = lines
    return np.nan_to_num(ntt) + np.nan_to_num(batch) + np.nan_to_num(tail)


def per_key(values: dict[int, float], keys: npt.NDArray[np.integer], default: float) -> F64:
    """`values[k]` for each of `keys` (`default` where a key has none)."""
    known = np.array(sorted(values), dtype=np.int64)
    table = np.array([values[k] for k in known.tolist()] + [default], dtype=np.float64)
    k = keys.astype(np.int64)
    at = np.minimum(np.searchsorted(known, k), len(known))
    hit = at < len(known)
    hit[hit] = known[at[hit]] == k[hit]
    at[~hit] = len(known)
    return table[at]
