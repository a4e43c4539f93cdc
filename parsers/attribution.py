"""Attributing the C++ prover's timing lines (no job, no worker, no time) to GPU intervals.

On one GPU only the mutex holder runs kernels, so the lines between a lock line
(`pre_lock_cpu_ms=.. mutex_wait_ms=..`) and the next `mutex_held_ms` belong to one
holder. With several GPUs the holders' lines interleave; each line is given to the
holder whose predicted print time (lock time plus the durations so far) falls
inside the window of TIMELINE stamps around the line's place in the file.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

from parsers.records import (
    STAGE_BARRIER,
    STAGE_BATCH,
    STAGE_EPILOGUE,
    STAGE_HELD,
    STAGE_LOCK,
    STAGE_NTT_H,
    STAGE_NTT_MSM,
    STAGE_PRESTAGE,
    STAGE_TAIL,
    PartRecord,
)

INF = float("inf")
# How far (ms) a predicted print time may fall outside the stamps around the line
# and still be taken: integer truncation of durations plus slight disorder.
MATCH_TOLERANCE_MS = 60.0
# A GPU may run a new holder while the old one's post-unlock lines are still to come.
HOLDERS_KEPT_PER_GPU = 3

Values = tuple[int | None, ...]


def _predict(rec: PartRecord, stage: int, vals: Values) -> tuple[float, float]:
    """The window of times at which `rec` would print a line of `stage` with `vals`."""
    if stage == STAGE_EPILOGUE:
        pre_destructor = vals[1]
        if rec.gpu_start is None or pre_destructor is None:
            return (-INF, INF)
        t = rec.gpu_start + pre_destructor
        return (t - 20.0, t + 5.0)
    lock = rec.lock_acquired
    if lock is None:
        return (-INF, INF)
    if stage == STAGE_PRESTAGE:
        total = vals[0]
        return (-INF, INF) if total is None else (lock + total, lock + total)
    base = lock + (rec.prestage_ms or 0)
    if stage == STAGE_NTT_H:
        total = vals[1]
        assert total is not None
        # the NTT_H block may be preceded by a one-off allocation outside its total
        return (base + total, base + total + 250.0)
    if stage == STAGE_NTT_MSM:
        assert vals[0] is not None
        return (base + vals[0], base + vals[0])
    if stage == STAGE_HELD:
        assert vals[0] is not None
        return (lock + vals[0], lock + vals[0])
    ntt = rec.ntt_msm_h_ms
    if ntt is None:
        return (-INF, INF)
    if stage == STAGE_BARRIER:
        assert vals[0] is not None
        return (base + ntt + vals[0], base + ntt + vals[0])
    if stage == STAGE_BATCH:
        assert vals[0] is not None
        t = base + ntt + (rec.barrier_ms or 0) + vals[0]
        return (t, t) if rec.barrier_ms is not None else (t, INF)
    if stage == STAGE_TAIL:
        gpu_total = vals[1]
        if gpu_total is None:
            return (-INF, INF)
        return (base + gpu_total, base + gpu_total)
    return (-INF, INF)


_ALWAYS_PRINTED = (STAGE_NTT_MSM, STAGE_BATCH, STAGE_TAIL)
_PRINTED_WITH_LOCK_LINE = (STAGE_NTT_H, STAGE_NTT_MSM, STAGE_BARRIER, STAGE_BATCH, STAGE_TAIL)


def _skipped(rec: PartRecord, stage: int) -> int:
    """How many lines `rec` must have printed between its last one and `stage`."""
    expected = _PRINTED_WITH_LOCK_LINE if rec.pre_lock_ms is not None else _ALWAYS_PRINTED
    return sum(1 for s in expected if rec.stage < s < stage)


def _distance(lo: float, hi: float, win_lo: float, win_hi: float) -> float:
    return max(0.0, lo - win_hi, win_lo - hi)


class TimingAttributor:
    """Gives each C++ timing line to the GPU interval it belongs to.

    Args:
        gpu_of: maps a worker id (or None) to its GPU.
    """

    def __init__(self, gpu_of: Callable[[int | None], int]) -> None:
        self._gpu_of = gpu_of
        # started intervals whose lock line has not been seen yet (by id())
        self.awaiting: dict[int, PartRecord] = {}
        self.holders: dict[int, deque[PartRecord]] = {}
        self.unattributed = 0

    def started(self, rec: PartRecord) -> None:
        """A GPU_START was read: the interval may take the lock from now on."""
        self.awaiting[id(rec)] = rec

    def ended(self, rec: PartRecord) -> None:
        """A GPU_END was read: the interval can no longer be waiting for the lock."""
        self.awaiting.pop(id(rec), None)

    def attribute(
        self, stage: int, vals: Values, line_no: int, win_lo: float, win_hi: float
    ) -> PartRecord | None:
        """Attribute one timing line; return the interval it was given to, or None.

        Args:
            stage: which timing line (a STAGE_* constant).
            vals: its parsed numbers.
            line_no: its physical line number.
            win_lo: the TIMELINE stamp before the line (less the tolerance for disorder).
            win_hi: the TIMELINE stamp after it (or infinity when none came yet).
        """
        if stage == STAGE_LOCK:
            rec = self._take_lock(vals, win_lo, win_hi)
        else:
            rec = self._holder_for(stage, vals, win_lo, win_hi)
            if rec is None and stage in (STAGE_PRESTAGE, STAGE_NTT_H, STAGE_NTT_MSM):
                rec = self._open_without_lock_line()
        if rec is None:
            self.unattributed += 1
            return None
        _store(rec, stage, vals)
        rec.stage = stage
        rec.timing_lines = (*rec.timing_lines, line_no)
        return rec

    def _push_holder(self, rec: PartRecord) -> None:
        self.awaiting.pop(id(rec), None)
        queue = self.holders.setdefault(self._gpu_of(rec.worker), deque())
        queue.append(rec)
        if len(queue) > HOLDERS_KEPT_PER_GPU:
            queue.popleft()

    def _take_lock(self, vals: Values, win_lo: float, win_hi: float) -> PartRecord | None:
        pre_lock, wait = vals
        assert pre_lock is not None and wait is not None
        best: PartRecord | None = None
        best_key = (INF, INF)
        for rec in self.awaiting.values():
            assert rec.gpu_start is not None
            t = rec.gpu_start + pre_lock + wait
            cost = _distance(t, t, win_lo, win_hi)
            queue = self.holders.get(self._gpu_of(rec.worker))
            if queue and queue[-1].stage < STAGE_HELD and queue[-1].stage >= STAGE_LOCK:
                # the GPU's mutex is still held by someone whose unlock was not seen
                cost += MATCH_TOLERANCE_MS / 2
            key = (cost, abs(t - win_lo))
            if key < best_key:
                best, best_key = rec, key
        if best is None or best_key[0] > MATCH_TOLERANCE_MS:
            return None
        self._push_holder(best)
        return best

    def _holder_for(
        self, stage: int, vals: Values, win_lo: float, win_hi: float
    ) -> PartRecord | None:
        best: PartRecord | None = None
        best_key: tuple[float, float, float] = (INF, INF, INF)
        for queue in self.holders.values():
            if stage == STAGE_EPILOGUE:
                # printed after unlock: the oldest holder still owing it
                cands = [r for r in queue if r.stage < STAGE_EPILOGUE][:1]
            else:
                cands = [queue[-1]] if queue[-1].stage < stage else []
            for rec in cands:
                lo, hi = _predict(rec, stage, vals)
                cost = _distance(lo, hi, win_lo, win_hi)
                if cost > MATCH_TOLERANCE_MS:
                    continue
                # a holder that would have to have lost lines, or whose timing cannot be
                # checked, is the weaker candidate
                key = (_skipped(rec, stage), cost, INF if lo == -INF else abs(lo - win_lo))
                if key < best_key:
                    best, best_key = rec, key
        return best

    def _open_without_lock_line(self) -> PartRecord | None:
        """Engines that print no lock line: the holder starts at its first line under the lock."""
        best: PartRecord | None = None
        for rec in self.awaiting.values():
            queue = self.holders.get(self._gpu_of(rec.worker))
            if queue and queue[-1].stage < STAGE_TAIL:
                continue
            assert rec.gpu_start is not None
            if best is None or rec.gpu_start < (best.gpu_start or 0):
                best = rec
        if best is not None:
            self._push_holder(best)
        return best


def _store(rec: PartRecord, stage: int, vals: Values) -> None:
    if stage == STAGE_LOCK:
        rec.pre_lock_ms, rec.mutex_wait_ms = vals[0], vals[1]
    elif stage == STAGE_PRESTAGE:
        rec.prestage_ms = vals[0]
    elif stage == STAGE_NTT_H:
        rec.ntt_alloc_ms, rec.ntt_total_ms = vals[0], vals[1]
    elif stage == STAGE_NTT_MSM:
        rec.ntt_msm_h_ms = vals[0]
    elif stage == STAGE_BARRIER:
        rec.barrier_ms = vals[0]
    elif stage == STAGE_BATCH:
        rec.batch_add_ms = vals[0]
    elif stage == STAGE_TAIL:
        rec.tail_msm_ms, rec.gpu_total_ms = vals[0], vals[1]
    elif stage == STAGE_HELD:
        rec.mutex_held_ms = vals[0]
    elif stage == STAGE_EPILOGUE:
        rec.epilogue_ms, rec.pre_destructor_ms = vals[0], vals[1]
