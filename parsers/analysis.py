"""From the builder's columns to the model: phase segments, unions, gaps, proofs (ANALYSIS.md).

Everything here is vectorized over all intervals at once; Python loops run only over
the few things (GPUs, workers, gaps, proofs).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from parsers.model import (
    F64,
    I32,
    I64,
    PHASE_KEYS,
    Blocks,
    Gap,
    GapSide,
    GapStats,
    GpuStats,
    Lane,
    LogModel,
    PartitionTable,
    Phase,
    Proof,
    Summary,
    WorkerStats,
)

if TYPE_CHECKING:
    from parsers.builder import Run

NAN = float("nan")
_EMPTY_F = np.zeros(0, dtype=np.float64)


def reconstruct_segments(
    c: dict[str, F64], now: float, failed_end: F64 | None = None
) -> tuple[F64, F64, np.ndarray, np.ndarray, F64, F64]:
    """Split every GPU interval into phase segments from its attributed timing lines.

    Args:
        c: columns (NaN where the log said nothing): gpu_start, gpu_end and the C++
            durations of `builder.TIMING_FIELDS`.
        now: where intervals that have not ended yet are drawn to.
        failed_end: per interval, where a failed prove is drawn to (NaN: not failed).

    Returns:
        (seg_start, seg_end, seg_phase, seg_part, lock_acquired, unlock): segments in
        partition order and, within one, in time order. They tile [gpu_start, gpu_end];
        a stretch the log does not explain is `Phase.UNKNOWN`, never guessed.
    """
    start = c["gpu_start"]
    n = len(start)
    has_start = ~np.isnan(start)
    is_open = has_start & np.isnan(c["gpu_end"])
    failed = np.zeros(n, dtype=bool) if failed_end is None else ~np.isnan(failed_end)
    end = np.where(is_open, np.maximum(now, start), c["gpu_end"])
    if failed_end is not None:
        end = np.where(failed, np.maximum(failed_end, start), end)
    open_kind = np.where(is_open, Phase.IN_FLIGHT, Phase.UNKNOWN).astype(np.int8)
    open_kind = np.where(failed, Phase.FAILED, open_kind).astype(np.int8)

    pre, wait = c["pre_lock"], c["mutex_wait"]
    has_pre = ~np.isnan(pre)
    prestage = c["prestage"]
    ps0 = np.nan_to_num(prestage)
    ntt = c["ntt_msm_h"]
    bt = c["batch_add"] + c["tail_msm"]
    gpu_total = c["gpu_total"]
    barrier = c["barrier"]
    derive = np.isnan(barrier) & ~np.isnan(gpu_total) & ~np.isnan(ntt) & ~np.isnan(bt)
    barrier = np.where(derive, np.maximum(0.0, gpu_total - ntt - bt), barrier)

    # where the lock was taken: from the lock line, else back from the end of the kernels
    lock = start + pre + wait
    kernel_end = np.where(
        ~np.isnan(c["pre_destructor"]),
        start + c["pre_destructor"] - np.nan_to_num(c["epilogue"]),
        c["gpu_end"],
    )
    lock = np.where(np.isnan(lock), kernel_end - gpu_total - ps0, lock)
    valid = has_start & ~np.isnan(lock) & (lock >= start - 1) & (lock <= end)

    alloc_in = c["ntt_alloc"] + np.maximum(0.0, ntt - c["ntt_total"])
    has_ntt = ~np.isnan(ntt)
    has_bar = has_ntt & ~np.isnan(barrier)
    explained = has_bar & ~np.isnan(bt)
    a0 = np.nan_to_num(alloc_in)
    c1 = lock + ps0
    c2 = c1 + ntt
    c3 = c2 + barrier
    c4 = c3 + bt
    cursor = np.where(explained, c4, np.where(has_bar, c3, np.where(has_ntt, c2, c1)))
    unlock = np.where(
        ~np.isnan(c["mutex_held"]), lock + c["mutex_held"], np.where(explained, c4, NAN)
    )
    has_unlock = ~np.isnan(unlock)
    # the NTT span less its allocation is kernel; without the allocation line it is unknown,
    # except in engines that print no allocation at all (no lock line: nothing was lost)
    ntt_phase = np.where(
        ~np.isnan(alloc_in) | ~np.isnan(prestage) | ~has_pre, Phase.KERNEL, Phase.UNKNOWN
    )
    tail_phase = np.where(
        has_unlock,
        np.where(failed, Phase.FAILED, np.where(is_open, Phase.IN_FLIGHT, Phase.CLEANUP)),
        open_kind,
    )
    tail_start = np.where(has_unlock, np.maximum(unlock, cursor), cursor)
    full = np.full(n, 1, dtype=bool)

    def ph(p: Phase) -> np.ndarray:
        return np.full(n, int(p), dtype=np.int8)

    # rows in time order: (start, end, phase, shown when)
    rows = [
        (start, end, open_kind, has_start & ~valid),
        (
            start,
            np.where(has_pre, start + pre, lock),
            np.where(has_pre, Phase.PRE_LOCK, Phase.UNKNOWN),
            full,
        ),
        (start + pre, lock, ph(Phase.LOCK_WAIT), has_pre),
        (lock, c1, ph(Phase.ALLOC), full),
        (c1, c1 + a0, ph(Phase.ALLOC), has_ntt),
        (c1 + a0, c2, ntt_phase, has_ntt),
        (c2, c3, ph(Phase.BARRIER), has_bar),
        (c3, c4, ph(Phase.KERNEL), explained),
        (cursor, np.where(has_unlock, unlock, cursor), ph(Phase.UNKNOWN), has_unlock),
        (tail_start, end, tail_phase, full),
    ]
    k = len(rows)
    s = np.empty((n, k), dtype=np.float64)
    e = np.empty((n, k), dtype=np.float64)
    p = np.empty((n, k), dtype=np.int8)
    for j, (rs, re_, rp, shown) in enumerate(rows):
        keep = shown & (valid if j else True)
        s[:, j] = np.where(keep, np.maximum(rs, start), NAN)
        e[:, j] = np.where(keep, np.minimum(re_, end), NAN)
        p[:, j] = rp
    flat_s, flat_e, flat_p = s.ravel(), e.ravel(), p.ravel()
    part = np.repeat(np.arange(n, dtype=np.int64), k)
    ok = flat_e > flat_s  # NaN compares False
    return (
        flat_s[ok],
        flat_e[ok],
        flat_p[ok],
        part[ok],
        np.where(valid, lock, NAN),
        np.where(valid, unlock, NAN),
    )


def _failed_proves(c: dict[str, F64], worker: I64, finished: bool) -> F64:
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


def first_free_rows(starts: list[float], ends: list[float]) -> list[int]:
    """Give each interval, in the order given, the first row free at its start (an interval
    that overlaps every row's last one opens a new row)."""
    row_end: list[float] = []
    rows: list[int] = []
    for s, e in zip(starts, ends, strict=True):
        for r, last in enumerate(row_end):
            if last <= s:
                row_end[r] = e
                rows.append(r)
                break
        else:
            rows.append(len(row_end))
            row_end.append(e)
    return rows


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
    """For each wanted value, the index (in idx) with that value and the lowest worker."""
    order = np.lexsort((workers[idx], values[idx]))
    sorted_vals = values[idx][order]
    pos = np.searchsorted(sorted_vals, wanted, side="left")
    return idx[order][pos]


def _gaps_of_gpu(gpu: int, busy: Blocks, done: I64, t: PartitionTable) -> list[Gap]:
    holes = _holes(busy)
    if len(holes.starts) == 0:
        return []
    before = _first_with(t.gpu_end, t.worker, done, holes.starts)
    after = _first_with(t.gpu_start, t.worker, done, holes.ends)
    gaps = []
    for s, e, b, a in zip(
        holes.starts.tolist(), holes.ends.tolist(), before.tolist(), after.tolist(), strict=True
    ):
        start = int(s)
        queued = float(t.queued[a])
        if queued != queued:
            cause, after_queued = None, None
        else:
            after_queued = int(queued)
            cause = "synthesis" if after_queued > start else "dispatch"
        gaps.append(Gap(gpu, start, int(e), _side(t, b), _side(t, a), cause, after_queued))
    return gaps


def _side(t: PartitionTable, i: int) -> GapSide:
    part = int(t.partition[i])
    return GapSide(t.job_of(i), int(t.worker[i]), None if part < 0 else part, i)


def build_model(builder: Run, finished: bool) -> LogModel:
    """Freeze what `builder` has read into a `LogModel`."""
    cols = builder.columns()
    now = float(max(builder.max_stamp, 0))
    c = cols.floats
    n = len(cols)
    worker_all = cols.worker
    worker = worker_all.astype(np.int32)
    # worker -> GPU (-1 stays -1); ids are sparse: nothing is sized by the largest one
    gpu = builder.gpus_of(worker_all).astype(np.int32)
    failed_end = _failed_proves(c, worker_all, finished)
    seg_s, seg_e, seg_p, seg_part, lock, unlock = reconstruct_segments(c, now, failed_end)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(seg_part, minlength=n), out=offsets[1:])
    table = PartitionTable(
        jobs=cols.jobs,
        kinds=cols.kinds,
        job=cols.job.astype(np.int32),
        partition=cols.partition.astype(np.int32),
        kind=cols.kind.astype(np.int32),
        worker=worker,
        gpu=gpu,
        synth_start=c["synth_start"],
        synth_end=c["synth_end"],
        queued=c["queued"],
        pickup=c["pickup"],
        gpu_start=c["gpu_start"],
        gpu_end=c["gpu_end"],
        lock_acquired=lock,
        unlock=unlock,
        # picked up (or started) but never ended, in a finished log; or a prove whose
        # worker moved on without it
        failed=(
            finished & ~(np.isnan(c["pickup"]) & np.isnan(c["gpu_start"])) & np.isnan(c["gpu_end"])
        )
        | ~np.isnan(failed_end),
        start_line=cols.start_line,
        end_line=cols.end_line,
        seg_start=seg_s,
        seg_end=seg_e,
        seg_phase=seg_p,
        seg_offsets=offsets,
    )
    done_mask = ~np.isnan(table.gpu_start) & ~np.isnan(table.gpu_end)
    seg_done = done_mask[seg_part]

    gpu_ids = sorted(
        set(np.unique(gpu[~np.isnan(table.gpu_start) & (gpu >= 0)]).tolist())
        | set(builder.worker_gpu.values())
    )
    gpus: list[GpuStats] = []
    all_gaps: list[Gap] = []
    kernel_gaps: dict[int, Blocks] = {}
    kernel_ms = _line_kernel_ms(c)
    blocks = np.nan_to_num(c["ntt_blocks"])
    for g in gpu_ids:
        on_gpu = gpu == g
        done = np.flatnonzero(on_gpu & done_mask).astype(np.int64)
        busy = union_blocks(table.gpu_start[done], table.gpu_end[done])
        kmask = (seg_p == Phase.KERNEL) & seg_done & on_gpu[seg_part]
        kernel = union_blocks(seg_s[kmask], seg_e[kmask])
        span = (
            (int(table.gpu_start[done].min()), int(table.gpu_end[done].max()))
            if len(done)
            else None
        )
        workers = sorted(
            {w for w, wg in builder.worker_gpu.items() if wg == g}
            | set(np.unique(worker[on_gpu & (worker >= 0)]).tolist())
        )
        in_flight = int(
            np.sum(on_gpu & ~np.isnan(table.gpu_start) & np.isnan(table.gpu_end) & ~table.failed)
        )
        mine = on_gpu & done_mask & (kernel_ms > 0)
        lo_ms, hi_ms = _kernel_range(builder, mine, kernel_ms, blocks, g, busy.total_ms)
        # the estimate is the union of the segments as drawn; without lock lines their
        # place is inferred (back from the end), so the sum of the intervals' kernel lines
        # (one holder at a time) is the better figure when the two differ
        est = kernel.total_ms
        if not builder.lock_lines_seen:
            est = min(max(est, float(kernel_ms[mine].sum())), busy.total_ms)
        krange = (min(lo_ms, est), max(hi_ms, est))
        gpus.append(GpuStats(g, tuple(workers), span, busy, kernel, in_flight, krange, est))
        all_gaps.extend(_gaps_of_gpu(g, busy, done, table))
        kernel_gaps[g] = _holes(kernel)
    all_gaps.sort(key=lambda gap: (gap.start, gap.gpu))

    proofs = _proofs(table)
    synth = table.synth_start[~np.isnan(table.synth_start)]
    ends = table.gpu_end[~np.isnan(table.gpu_end)]
    summary = Summary(
        proofs_started=len(proofs),
        proofs_completed=sum(1 for p in proofs if p.completed),
        first_synth_start=int(synth.min()) if len(synth) else None,
        last_gpu_end=int(ends.max()) if len(ends) else None,
        gaps=GapStats.of([gap.duration_ms for gap in all_gaps]),
    )
    synth_t, synth_n = _synthesis_steps(table, now, finished)
    return LogModel(
        source=builder.source,
        counts=builder.counts.copy(),
        finished=finished,
        wall_anchor=builder.wall_anchor,
        now_ms=int(now),
        parts=table,
        lanes=_lanes(table, now),
        gpus=tuple(gpus),
        workers=_worker_stats(table, seg_p, seg_s, seg_e, seg_part, seg_done),
        gaps=tuple(all_gaps),
        kernel_gaps=kernel_gaps,
        proofs=proofs,
        summary=summary,
        synth_times=synth_t,
        synth_counts=synth_n,
        unattributed_timing_lines=builder.unattributed_timing_lines,
        partial_bytes=builder.partial_bytes,
        engine_seen=builder.engine_seen,
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
    builder: Run, mine: np.ndarray, kernel_ms: F64, blocks: F64, g: int, busy_ms: float
) -> tuple[float, float]:
    """The kernel busy time of GPU `g` the log allows (ANALYSIS.md, kernel_util_range).

    The GPU's mutex lets one interval run kernels at a time, so its kernel time is the
    sum of its intervals' as their lines print it. Low: less what nearly-as-good
    attributions would take from it. High: plus what they would give it, and the kernel
    lines given to nobody; never more than its busy time. Both allow for each printed
    duration being truncated to whole ms: each NTT total, batch and tail duration hides up
    to 1 ms of kernel, each allocation figure up to 1 ms that is not kernel; summed as
    independent errors (within TRUNCATION_SIGMAS, and never past the worst case).
    """
    total = float(kernel_ms[mine].sum())
    n_blocks = blocks[mine]
    # with CUZK_NTT_H lines the NTT kernel is the blocks' totals less their allocations
    # (the ntt_msm_h truncation cancels); without, it is ntt_msm_h itself
    longer = float(np.sum(np.where(n_blocks > 0, n_blocks + 2.0, 3.0)))
    shorter = float(np.sum(2.0 * n_blocks))
    mean = 0.5 * (longer - shorter)
    spread = TRUNCATION_SIGMAS * float(np.sqrt((longer + shorter) / 12.0))
    minus, plus = builder.kernel_doubt_ms(g)
    lo = total + max(-shorter, mean - spread) - minus
    hi = total + min(longer, mean + spread) + plus + builder.unattributed_kernel_ms
    lo = max(0.0, lo)
    return lo, max(lo, min(hi, busy_ms))


def _lanes(t: PartitionTable, now: float) -> tuple[Lane, ...]:
    """Place each worker's intervals on sub-rows so that overlapping ones stay visible."""
    started = np.flatnonzero(~np.isnan(t.gpu_start) & (t.worker >= 0))
    ends = np.where(np.isnan(t.gpu_end), now, t.gpu_end)
    lanes: list[Lane] = []
    for w in np.unique(t.worker[started]).tolist():
        idx = started[t.worker[started] == w]
        idx = idx[np.lexsort((idx, t.gpu_start[idx]))]
        row_of = np.array(first_free_rows(t.gpu_start[idx].tolist(), ends[idx].tolist()))
        g = int(t.gpu[idx[0]])
        for r in range(int(row_of.max()) + 1):
            members = idx[row_of == r]
            lo, hi = t.seg_offsets[members], t.seg_offsets[members + 1]
            lens = hi - lo
            seg = np.repeat(lo - np.cumsum(lens) + lens, lens) + np.arange(int(lens.sum()))
            lanes.append(
                Lane(
                    gpu=max(g, 0),
                    worker=int(w),
                    sub_row=r,
                    starts=t.seg_start[seg],
                    ends=t.seg_end[seg],
                    phases=t.seg_phase[seg],
                    partition=np.repeat(members, lens).astype(np.int32),
                )
            )
    lanes.sort(key=lambda lane: (lane.gpu, lane.worker, lane.sub_row))
    return tuple(lanes)


def _worker_stats(
    t: PartitionTable,
    seg_p: np.ndarray,
    seg_s: F64,
    seg_e: F64,
    seg_part: I64,
    seg_done: np.ndarray,
) -> tuple[WorkerStats, ...]:
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end) & (t.worker >= 0)
    done_idx = np.flatnonzero(done)
    # worker ids are sparse: slots by searchsorted, nothing sized by the largest id
    ids, first_at = np.unique(t.worker[done_idx], return_index=True)
    if len(ids) == 0:
        return ()
    keep = seg_done & (seg_p < len(PHASE_KEYS)) & (t.worker[seg_part] >= 0)
    slot = np.searchsorted(ids, t.worker[seg_part[keep]])
    cell = slot * len(PHASE_KEYS) + seg_p[keep]
    sums = np.bincount(cell, weights=(seg_e - seg_s)[keep], minlength=len(ids) * len(PHASE_KEYS))
    counts = np.bincount(np.searchsorted(ids, t.worker[done_idx]), minlength=len(ids))
    out = []
    for k, (w, first) in enumerate(zip(ids.tolist(), done_idx[first_at].tolist(), strict=True)):
        phases = {key: float(sums[k * len(PHASE_KEYS) + j]) for j, key in enumerate(PHASE_KEYS)}
        out.append(WorkerStats(w, max(int(t.gpu[first]), 0), int(counts[k]), phases))
    return tuple(out)


def _proofs(t: PartitionTable) -> tuple[Proof, ...]:
    n_jobs = len(t.jobs)
    if n_jobs == 0:
        return ()
    parts = np.bincount(t.job, minlength=n_jobs)
    open_parts = np.bincount(t.job, weights=np.isnan(t.gpu_end), minlength=n_jobs)
    first = np.full(n_jobs, np.nan)
    np.fmin.at(first, t.job, t.synth_start)
    last = np.full(n_jobs, np.nan)
    np.fmax.at(last, t.job, t.gpu_end)
    seen = np.full(n_jobs, np.nan)
    for column in (t.synth_start, t.synth_end, t.queued, t.pickup, t.gpu_start, t.gpu_end):
        np.fmax.at(seen, t.job, column)
    _, first_row = np.unique(t.job, return_index=True)
    proofs = [
        Proof(
            job=t.jobs[j],
            kind=t.kinds[int(t.kind[first_row[j]])],
            partitions=int(parts[j]),
            first_synth_start=None if np.isnan(first[j]) else int(first[j]),
            last_gpu_end=None if np.isnan(last[j]) else int(last[j]),
            completed=bool(open_parts[j] == 0),
            last_seen=None if np.isnan(seen[j]) else int(seen[j]),
        )
        for j in range(n_jobs)
    ]
    proofs.sort(
        key=lambda p: (p.first_synth_start if p.first_synth_start is not None else 1 << 62, p.job)
    )
    return tuple(proofs)


def _synthesis_steps(t: PartitionTable, now: float, finished: bool) -> tuple[F64, I64]:
    """How many partitions are in synthesis over time, as a step function.

    A synthesis that never ended failed (SYNTH_START without SYNTH_END) or is running:
    once it has lasted three times the run's median synthesis, or the log is complete, it
    is counted for one median synthesis (when it failed is not in the log).
    """
    has = ~np.isnan(t.synth_start)
    s = t.synth_start[has]
    if len(s) == 0:
        return _EMPTY_F, np.zeros(0, dtype=np.int64)
    e = t.synth_end[has]
    done = ~np.isnan(e)
    durations = e[done] - s[done]
    typical = float(np.median(durations)) if len(durations) else 0.0
    gave_up = ~done & (finished | (now - s > 3 * typical if typical else False))
    e = np.where(gave_up, s + typical, e)
    still = np.isnan(e)  # running: counted up to now
    times = np.concatenate([s, e[~still]])
    deltas = np.concatenate([np.ones(len(s), np.int64), -np.ones(int(np.sum(~still)), np.int64)])
    order = np.lexsort((deltas, times))  # ends before starts at the same ms
    return times[order], np.cumsum(deltas[order])
