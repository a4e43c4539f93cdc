"""Putting pieces together into a `LogModel`: the GPUs' figures across pieces, the gaps
between them, proofs, kernel ranges, synthesis steps, and the run's facts.

The figures are defined in docs/analysis.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
import numpy.typing as npt

from parsers.breakdown import add_breakdowns, with_kernel
from parsers.model import (
    F64,
    I8,
    I32,
    I64,
    NO_STAMP,
    PHASE_KEYS,
    Blocks,
    GapStats,
    GapTable,
    GpuStats,
    Lane,
    LineCounts,
    LogModel,
    PartitionTable,
    Proof,
    ProofList,
    ProofSpans,
    ProofTable,
    Summary,
    WorkerStats,
    key_order,
    merge_positions,
)
from parsers.pieces import (
    FIRST_USE_ALLOC_MS,
    HIDDEN_ALLOC_SHARE,
    GpuPart,
    Jobs,
    Piece,
    combine_jobs,
    lost_kernel_lines,
    lost_kernel_ms,
    mid_run_stamps,
    sorted_gaps,
    take_jobs,
)
from parsers.records import LiveSnapshot, RunRecords
from parsers.rows import EMPTY_F, NAN, holes_of, in_mask


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
    workers_per_gpu: int | None = None  # --workers-per-gpu: places the workers the log does not
    kernel_lines: tuple[int, int, int] = (0, 0, 0)  # the kernel lines read: NTT, batch, tail


def live_facts(
    source: str, snap: LiveSnapshot, now: float, workers_per_gpu: int | None = None
) -> Facts:
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
        workers_per_gpu=workers_per_gpu,
        kernel_lines=snap.kernel_lines,
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
        workers_per_gpu=builder.workers_per_gpu,
        kernel_lines=builder.kernel_lines,
    )


@dataclass(slots=True)
class Listed:
    """The proofs of a piece none of whose jobs has rows elsewhere: made once, kept sorted
    (as columns: a long log's tens of thousands of proofs are not made one object each at
    every snapshot)."""

    table: ProofTable
    mask: npt.NDArray[np.bool_]  # by job number: listed here


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
    lost = lost_kernel_lines([part for p in pieces for part in p.gpus.values()], facts.kernel_lines)
    for g in gpu_ids:
        stats, seams, kernel_holes = _gpu_of_pieces(g, pieces, offsets, facts, mapped.get(g), lost)
        gpus.append(stats)
        kernel_gaps[g] = kernel_holes
        extra.extend(seams)
    cols = _merge_gaps(pieces[0].gaps, sorted_gaps(extra))
    gpu_col, start, end, before, after = cols
    queued = table.take("queued", after)  # from the parts: a live model's are not copied
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
    segment_split = {
        g.gpu: add_breakdowns(g.gpu, [p.split[g.gpu] for p in pieces if g.gpu in p.split])
        for g in gpus
    }
    split = {g.gpu: with_kernel(segment_split[g.gpu], g.kernel_busy_ms) for g in gpus}
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
        segment_split=segment_split,
        unattributed_kernel_ms=facts.unattributed_kernel_ms,
        starts_mid_run=_mid_run(
            (min(p.mid_run[0] for p in pieces), min(p.mid_run[1] for p in pieces))
        ),
        proof_spans=spans,
        drawn=all(p.drawn for p in pieces),
        unplaced_workers=_unplaced(gpus, facts),
    )


def _unplaced(gpus: list[GpuStats], facts: Facts) -> tuple[int, ...]:
    """The workers no line places on a GPU, nor --workers-per-gpu: each put on GPU 0."""
    if facts.workers_per_gpu:
        return ()
    return tuple(sorted({w for g in gpus for w in g.workers} - facts.worker_gpu.keys()))


def _gpu_of_pieces(
    g: int,
    pieces: list[Piece],
    offsets: list[int],
    facts: Facts,
    mapped: set[int] | None,
    lost: list[tuple[int, float]],
) -> tuple[GpuStats, list[tuple[int, F64, F64, I64, I64]], Blocks]:
    """GPU g's figures over the pieces, the gaps between pieces and its kernel holes
    (`mapped`: the workers the worker -> GPU map puts on g; `lost`: the kernel lines the run
    lost, `lost_kernel_lines`)."""
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
            holes = holes_of(part.busy)
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
    # a GPU given no kernel line at all (a capture without the C++ lines): its intervals'
    # time may all be kernel. Where it has some, an interval left without any is the
    # attribution's (its lines went to another interval, or to none: counted already)
    silent = sum(part.silent_ms for _, part, _ in mine) if total <= 0 else 0.0
    # what lines the log lost may have held: the GPU's top adds it, and the all-GPUs one
    # (an older engine: the kernel lines its intervals lack, where others print them)
    lines_lost = lost_kernel_ms([part for _, part, _ in mine], lost)
    unexplained = unknown if facts.lock_lines_seen else silent + lines_lost
    # NTT time a lost NTT_H line of a circuit left to allocation may be kernel
    unexplained += sum(part.ntt_unprinted_ms for _, part, _ in mine)
    lo_ms, hi_ms = _kernel_range(total, longer, shorter, unexplained, facts, g, busy.total_ms)
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
        # the all-GPUs part: every kernel line is some GPU's, so its top adds only what no
        # line holds: the time the log leaves unexplained where it lost lines (as this GPU's
        # own top does), and the kernel lines of intervals that never ended
        (
            max(0.0, total - hidden - shorter),
            total + longer + unexplained + sum(part.unended_kernel_ms for _, part, _ in mine),
        ),
        facts.lock_lines_seen,
    )
    return stats, more, holes_of(kernel)


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
        return parts[0] if parts else Blocks(EMPTY_F, EMPTY_F)
    starts = np.concatenate([b.starts for b in parts])
    ends = np.concatenate([b.ends for b in parts])
    seams = np.cumsum([len(b.starts) for b in parts[:-1]])
    cut = seams[ends[seams - 1] >= starts[seams]]
    if len(cut) == 0:
        return Blocks(starts, ends)
    return Blocks(np.delete(starts, cut), np.delete(ends, cut - 1))


def _cat(arrays: list[F64]) -> F64:
    if not arrays:
        return EMPTY_F
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
    # for the later pieces' record numbers); a lane of one piece, numbered as it is, is kept
    # whole (a lane laid out whole is not gathered for it: `Lane.gather`)
    by_key: dict[tuple[int, int], list[tuple[Lane, int]]] = {}
    for p, off in zip(pieces, offsets, strict=False):
        for key, lane in p.lanes.items():
            by_key.setdefault(key, []).append((lane, off))
    lanes = []
    for held in by_key.values():
        first = held[0][0]
        if len(held) == 1 and not held[0][1]:
            lanes.append(first)
            continue
        chunks = tuple(
            replace(c, partition=c.partition + np.int32(off)) if off else c
            for lane, off in held
            for c in lane.chunks
        )
        lanes.append(Lane(first.gpu, first.worker, first.sub_row, chunks))
    lanes.sort(key=lambda lane: (lane.gpu, lane.worker, lane.sub_row))
    return tuple(lanes)


def _merge_workers(pieces: list[Piece]) -> tuple[WorkerStats, ...]:
    merged: dict[int, tuple[int, int, F64, int]] = {}
    for p in pieces:
        for w, (g, n, sums, locked) in p.workers.items():
            if w in merged:
                g0, n0, s0, k0 = merged[w]
                merged[w] = (g0, n0 + n, s0 + sums, k0 + locked)
            else:
                merged[w] = (g, n, sums, locked)
    return tuple(
        WorkerStats(
            w,
            g,
            n,
            {key: float(x) for key, x in zip(PHASE_KEYS, sums.tolist(), strict=True)},
            locked,
        )
        for w, (g, n, sums, locked) in sorted(merged.items())
    )


def _proofs(
    pieces: list[Piece], t: PartitionTable, listed: Listed | None
) -> tuple[Sequence[Proof], ProofSpans, int]:
    """Every job's proof, by first SYNTH_START (then job id), their spans' columns, and how
    many completed."""
    jobs = [p.jobs for p in pieces]
    kept: ProofTable | None = None
    if listed is not None:
        # the first piece's listed proofs are made: only the other jobs are made here
        first = jobs[0]
        jobs[0] = take_jobs(first, ~in_mask(listed.mask, first.ids))
        again = (
            np.concatenate([j.ids for j in jobs[1:]]) if len(jobs) > 1 else np.zeros(0, np.int64)
        )
        hit = in_mask(listed.mask, again)
        kept = listed.table
        if hit.any():
            # a job listed before has new rows: make it again with them
            back = take_jobs(pieces[0].jobs, np.isin(pieces[0].jobs.ids, again[hit]))
            jobs.append(back)
            kept = kept.take(~np.isin(kept.job, again[hit]))
    table = proof_table_of(combine_jobs(jobs), t)
    if kept is not None and len(kept):
        table = kept.insert(merge_positions(kept, table), table, t.jobs, t.kinds)
    return ProofList(table), table.spans(), int(np.count_nonzero(table.completed))


def proof_table_of(j: Jobs, t: PartitionTable) -> ProofTable:
    """The proofs of jobs `j` as columns, by first SYNTH_START, then job id (`proof_key`).

    A job of partitions is proved by them: a record of it without a partition holds a
    line that lost its partition (cut off), which is not one more partition, nor one left
    under way (docs/analysis.md#what-is-read-from-the-log). A job of none is a whole proof.
    """
    order = key_order(j.first, [t.jobs[k] for k in j.ids.tolist()])
    partitioned = j.parts > 0
    parts = np.where(partitioned, j.parts, j.whole)
    open_ = np.where(partitioned, j.open_parts, j.open_whole)
    return ProofTable(
        job=j.ids[order],
        kind=j.kind[order],
        partitions=parts[order],
        first=j.first[order],
        last=j.last[order],
        completed=(open_ == 0)[order],
        seen=j.seen[order],
        jobs=t.jobs,
        kinds=t.kinds,
    )


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
    (within TRUNCATION_SIGMAS, and never past the worst case). High also adds the time
    the log leaves unexplained (`unexplained`: kernels may have run there, printed in lines
    the log lost): on an engine that prints lock lines, what its intervals' lines leave
    unexplained; on older ones, which print too few lines to tell within an interval, the
    intervals given no kernel line at all, and the kernel lines its intervals lack where
    others print them (`lost_kernel_ms`).
    """
    mean = 0.5 * (longer - shorter)
    spread = TRUNCATION_SIGMAS * float(np.sqrt((longer + shorter) / 12.0))
    minus, plus = facts.kernel_doubt.get(g, (0.0, 0.0))
    lo = total + max(-shorter, mean - spread) - minus
    hi = total + min(longer, mean + spread) + plus + facts.unattributed_kernel_ms + unexplained
    lo = max(0.0, lo)
    return lo, max(lo, min(hi, busy_ms))


def _synthesis_steps(pieces: list[Piece], now: float, finished: bool) -> tuple[F64, I32]:
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
        [np.ones(len(s), np.int8), -np.ones(int(np.sum(gave_up)), np.int8)]
        + [p.synth.deltas for p in pieces[1:]]
    )
    order = np.lexsort((deltas, times))  # ends before starts at the same ms
    t, d = _merge_steps(pieces[0].synth.times, pieces[0].synth.deltas, times[order], deltas[order])
    return t, np.cumsum(d, dtype=np.int32)


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


def _merge_steps(at: F64, ad: I8, bt: F64, bd: I8) -> tuple[F64, I8]:
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
