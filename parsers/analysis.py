"""From builder records to the model: phase segments, unions, gaps, proofs (ANALYSIS.md)."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from parsers.model import (
    PHASE_KEYS,
    Blocks,
    Gap,
    GapSide,
    GapStats,
    GpuStats,
    Lane,
    LogModel,
    Partition,
    Phase,
    Proof,
    Summary,
    WorkerStats,
)
from parsers.records import PartRecord

if TYPE_CHECKING:
    from parsers.builder import LogBuilder

Segment = tuple[float, float, int]
_EMPTY = np.zeros(0, dtype=np.float64)


def reconstruct_phases(rec: PartRecord, now: float) -> tuple[list[Segment], float | None, float | None]:
    """Split one GPU interval into phase segments from its attributed timing lines.

    Args:
        rec: the interval (gpu_start must be set).
        now: where an interval that has not ended yet is drawn to.

    Returns:
        (segments, lock_acquired, unlock); the segments tile [gpu_start, gpu_end] and a
        stretch the log does not explain is `Phase.UNKNOWN`, never guessed.
    """
    start = rec.gpu_start
    assert start is not None
    end = float(rec.gpu_end) if rec.gpu_end is not None else max(float(now), float(start))
    open_kind = Phase.IN_FLIGHT if rec.gpu_end is None else Phase.UNKNOWN
    prestage = rec.prestage_ms or 0
    ntt = rec.ntt_msm_h_ms
    batch_tail = (
        rec.batch_add_ms + rec.tail_msm_ms
        if rec.batch_add_ms is not None and rec.tail_msm_ms is not None
        else None
    )
    barrier: float | None = rec.barrier_ms
    if barrier is None and rec.gpu_total_ms is not None and ntt is not None and batch_tail is not None:
        barrier = max(0, rec.gpu_total_ms - ntt - batch_tail)

    # Where the lock was taken: from the lock line, else back from the epilogue line.
    lock: float | None = rec.lock_acquired
    if lock is None and rec.gpu_total_ms is not None and rec.gpu_end is not None:
        if rec.pre_destructor_ms is not None:
            kernel_end = start + rec.pre_destructor_ms - (rec.epilogue_ms or 0)
        else:
            kernel_end = float(rec.gpu_end)
        lock = kernel_end - rec.gpu_total_ms - prestage
    if lock is None or lock < start - 1 or lock > end:
        return [(float(start), end, int(open_kind))], None, None

    segs: list[Segment] = []

    def add(a: float, b: float, kind: Phase) -> None:
        a, b = max(a, float(start)), min(b, end)
        if b > a:
            segs.append((a, b, int(kind)))

    if rec.pre_lock_ms is not None:
        add(start, start + rec.pre_lock_ms, Phase.PRE_LOCK)
        add(start + rec.pre_lock_ms, lock, Phase.LOCK_WAIT)
    else:
        add(start, lock, Phase.UNKNOWN)
    cursor = lock
    add(cursor, cursor + prestage, Phase.ALLOC)
    cursor += prestage
    explained = True
    if ntt is not None:
        if rec.ntt_alloc_ms is not None and rec.ntt_total_ms is not None:
            alloc_in = rec.ntt_alloc_ms + max(0, ntt - rec.ntt_total_ms)
            add(cursor, cursor + alloc_in, Phase.ALLOC)
            add(cursor + alloc_in, cursor + ntt, Phase.KERNEL)
        elif rec.prestage_ms is not None:
            add(cursor, cursor + ntt, Phase.KERNEL)
        else:
            add(cursor, cursor + ntt, Phase.UNKNOWN)
        cursor += ntt
        if barrier is not None:
            add(cursor, cursor + barrier, Phase.BARRIER)
            cursor += barrier
            if batch_tail is not None:
                add(cursor, cursor + batch_tail, Phase.KERNEL)
                cursor += batch_tail
            else:
                explained = False
        else:
            explained = False
    else:
        explained = False
    if rec.mutex_held_ms is not None:
        unlock = lock + rec.mutex_held_ms
    elif explained:
        unlock = cursor
    else:
        unlock = None
    if unlock is None:
        add(cursor, end, open_kind)
        return segs, lock, None
    add(cursor, unlock, Phase.UNKNOWN)
    add(max(unlock, cursor), end, Phase.CLEANUP if rec.gpu_end is not None else open_kind)
    return segs, lock, unlock


def union_blocks(starts: np.ndarray, ends: np.ndarray) -> Blocks:
    """The union of [starts[i], ends[i]) as disjoint sorted blocks."""
    if len(starts) == 0:
        return Blocks(_EMPTY, _EMPTY)
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


def _complement(blocks: Blocks) -> Blocks:
    """The holes between consecutive blocks."""
    if len(blocks.starts) < 2:
        return Blocks(_EMPTY, _EMPTY)
    return Blocks(blocks.ends[:-1].copy(), blocks.starts[1:].copy())


def _side(index: int, part: Partition) -> GapSide:
    assert part.worker is not None
    return GapSide(part.job, part.worker, part.partition, index)


def _gaps_of_gpu(gpu: int, busy: Blocks, done: list[int], parts: list[Partition]) -> list[Gap]:
    holes = _complement(busy)
    if len(holes.starts) == 0:
        return []
    by_end: dict[int, int] = {}
    by_start: dict[int, int] = {}
    for i in done:
        p = parts[i]
        assert p.gpu_start is not None and p.gpu_end is not None and p.worker is not None
        # ties: lowest worker id
        j = by_end.get(p.gpu_end)
        if j is None or (parts[j].worker or 0) > p.worker:
            by_end[p.gpu_end] = i
        j = by_start.get(p.gpu_start)
        if j is None or (parts[j].worker or 0) > p.worker:
            by_start[p.gpu_start] = i
    gaps = []
    for s, e in zip(holes.starts.tolist(), holes.ends.tolist(), strict=True):
        start, end = int(s), int(e)
        bi, ai = by_end[start], by_start[end]
        after = parts[ai]
        if after.queued is None:
            cause = None
        else:
            cause = "synthesis" if after.queued > start else "dispatch"
        gaps.append(Gap(gpu, start, end, _side(bi, parts[bi]), _side(ai, after), cause, after.queued))
    return gaps


def build_model(builder: LogBuilder, finished: bool) -> LogModel:
    """Freeze what `builder` has read into a `LogModel`."""
    now = float(max(builder._max_stamp, 0))
    parts: list[Partition] = []
    segs_of: list[list[Segment]] = []
    for rec in builder.parts.values():
        gpu = builder.gpu_of(rec.worker) if rec.worker is not None else None
        phases = dict.fromkeys(PHASE_KEYS, 0.0)
        segs: list[Segment] = []
        lock = unlock = None
        if rec.gpu_start is not None:
            segs, lock, unlock = reconstruct_phases(rec, now)
            for a, b, k in segs:
                if k < len(PHASE_KEYS):
                    phases[PHASE_KEYS[k]] += b - a
        parts.append(
            Partition(
                job=rec.job,
                partition=rec.partition,
                kind=rec.kind,
                worker=rec.worker,
                gpu=gpu,
                synth_start=rec.synth_start,
                synth_end=rec.synth_end,
                queued=rec.queued,
                pickup=rec.pickup,
                gpu_start=rec.gpu_start,
                gpu_end=rec.gpu_end,
                failed=finished and rec.pickup is not None and rec.gpu_end is None,
                start_line=rec.start_line,
                end_line=rec.end_line,
                timing_lines=rec.timing_lines,
                lock_acquired=lock,
                unlock=unlock,
                phases_ms=phases,
            )
        )
        segs_of.append(segs)

    lanes = _lanes(parts, segs_of, now)
    gpu_ids = sorted(
        {p.gpu for p in parts if p.gpu is not None and p.gpu_start is not None}
        | set(builder.worker_gpu.values())
    )
    gpus: list[GpuStats] = []
    all_gaps: list[Gap] = []
    kernel_gaps: dict[int, Blocks] = {}
    for gpu in gpu_ids:
        done = [
            i
            for i, p in enumerate(parts)
            if p.gpu == gpu and p.gpu_start is not None and p.gpu_end is not None
        ]
        starts = np.array([parts[i].gpu_start for i in done], dtype=np.float64)
        ends = np.array([parts[i].gpu_end for i in done], dtype=np.float64)
        busy = union_blocks(starts, ends)
        k_s = [a for i in done for a, _, k in segs_of[i] if k == Phase.KERNEL]
        k_e = [b for i in done for _, b, k in segs_of[i] if k == Phase.KERNEL]
        kernel = union_blocks(np.array(k_s, dtype=np.float64), np.array(k_e, dtype=np.float64))
        span = (int(starts.min()), int(ends.max())) if done else None
        workers = sorted(
            {w for w, g in builder.worker_gpu.items() if g == gpu}
            | {p.worker for p in parts if p.gpu == gpu and p.worker is not None}
        )
        in_flight = sum(
            1 for p in parts if p.gpu == gpu and p.gpu_start is not None and p.gpu_end is None
        )
        gpus.append(GpuStats(gpu, tuple(workers), span, busy, kernel, in_flight))
        all_gaps.extend(_gaps_of_gpu(gpu, busy, done, parts))
        kernel_gaps[gpu] = _complement(kernel)
    all_gaps.sort(key=lambda g: (g.start, g.gpu))

    workers_stats = _worker_stats(parts)
    proofs = _proofs(parts)
    synth_starts = [p.synth_start for p in parts if p.synth_start is not None]
    gpu_ends = [p.gpu_end for p in parts if p.gpu_end is not None]
    summary = Summary(
        proofs_started=len(proofs),
        proofs_completed=sum(1 for p in proofs if p.completed),
        first_synth_start=min(synth_starts) if synth_starts else None,
        last_gpu_end=max(gpu_ends) if gpu_ends else None,
        gaps=GapStats.of([g.duration_ms for g in all_gaps]),
    )
    synth_t, synth_n = _synthesis_steps(parts, now)
    counts = type(builder.counts)(**{k: getattr(builder.counts, k) for k in builder.counts.__slots__})
    return LogModel(
        source=builder.source,
        counts=counts,
        finished=finished,
        wall_anchor=builder.wall_anchor,
        now_ms=int(now),
        partitions=tuple(parts),
        lanes=lanes,
        gpus=tuple(gpus),
        workers=workers_stats,
        gaps=tuple(all_gaps),
        kernel_gaps=kernel_gaps,
        proofs=proofs,
        summary=summary,
        synth_times=synth_t,
        synth_counts=synth_n,
        unattributed_timing_lines=builder.unattributed_timing_lines,
        partial_bytes=builder.partial_bytes,
    )


def _lanes(parts: list[Partition], segs_of: list[list[Segment]], now: float) -> tuple[Lane, ...]:
    """Place each worker's intervals on sub-rows so that overlapping ones stay visible."""
    by_worker: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(parts):
        if p.gpu_start is not None and p.worker is not None:
            by_worker[p.worker].append(i)
    lanes: list[Lane] = []
    for worker in sorted(by_worker):
        idx = sorted(by_worker[worker], key=lambda i: (parts[i].gpu_start or 0, i))
        row_end: list[float] = []
        rows: list[list[int]] = []
        for i in idx:
            p = parts[i]
            s = float(p.gpu_start or 0)
            e = float(p.gpu_end) if p.gpu_end is not None else now
            for r, last in enumerate(row_end):
                if last <= s:
                    row_end[r] = e
                    rows[r].append(i)
                    break
            else:
                row_end.append(e)
                rows.append([i])
        gpu = parts[idx[0]].gpu or 0
        for r, members in enumerate(rows):
            seg = [(a, b, k, i) for i in members for a, b, k in segs_of[i]]
            seg.sort()
            lanes.append(
                Lane(
                    gpu=gpu,
                    worker=worker,
                    sub_row=r,
                    starts=np.array([x[0] for x in seg], dtype=np.float64),
                    ends=np.array([x[1] for x in seg], dtype=np.float64),
                    phases=np.array([x[2] for x in seg], dtype=np.int8),
                    partition=np.array([x[3] for x in seg], dtype=np.int32),
                )
            )
    lanes.sort(key=lambda lane: (lane.gpu, lane.worker, lane.sub_row))
    return tuple(lanes)


def _worker_stats(parts: list[Partition]) -> tuple[WorkerStats, ...]:
    out: dict[int, tuple[int, int, dict[str, float]]] = {}
    for p in parts:
        if p.worker is None or p.gpu_start is None or p.gpu_end is None:
            continue
        gpu, n, phases = out.get(p.worker, (p.gpu or 0, 0, dict.fromkeys(PHASE_KEYS, 0.0)))
        for k, v in p.phases_ms.items():
            phases[k] += v
        out[p.worker] = (gpu, n + 1, phases)
    return tuple(WorkerStats(w, g, n, ph) for w, (g, n, ph) in sorted(out.items()))


def _proofs(parts: list[Partition]) -> tuple[Proof, ...]:
    by_job: dict[str, list[Partition]] = defaultdict(list)
    for p in parts:
        by_job[p.job].append(p)
    proofs = []
    for job, members in by_job.items():
        synth = [p.synth_start for p in members if p.synth_start is not None]
        ends = [p.gpu_end for p in members if p.gpu_end is not None]
        proofs.append(
            Proof(
                job=job,
                kind=members[0].kind,
                partitions=len(members),
                first_synth_start=min(synth) if synth else None,
                last_gpu_end=max(ends) if ends else None,
                completed=all(p.gpu_end is not None for p in members),
            )
        )
    proofs.sort(key=lambda p: (p.first_synth_start if p.first_synth_start is not None else 1 << 62, p.job))
    return tuple(proofs)


def _synthesis_steps(parts: list[Partition], now: float) -> tuple[np.ndarray, np.ndarray]:
    """How many partitions are in synthesis over time, as a step function."""
    times: list[float] = []
    deltas: list[int] = []
    for p in parts:
        if p.synth_start is None:
            continue
        times.append(p.synth_start)
        deltas.append(1)
        if p.synth_end is not None:
            times.append(p.synth_end)
            deltas.append(-1)
    if not times:
        return _EMPTY, np.zeros(0, dtype=np.int64)
    t = np.array(times, dtype=np.float64)
    d = np.array(deltas, dtype=np.int64)
    order = np.lexsort((d, t))  # ends before starts at the same ms
    return t[order], np.cumsum(d[order])
