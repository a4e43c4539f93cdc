"""Attributing the C++ prover's timing lines (no job, no worker, no time) to GPU intervals.

On one GPU only the mutex holder runs kernels, so the lines between a lock line
(`pre_lock_cpu_ms=.. mutex_wait_ms=..`) and the next `mutex_held_ms` belong to one
holder. With several GPUs the holders' lines interleave; each line is given to the
holder whose predicted print time (lock time plus the durations so far) is consistent
with the TIMELINE stamps around the line and with the order of the lines (a line is
not printed before the one above it). When two holders fit equally, the next few
lines decide: the assignment under which they fit too, and under which each holder's
`gpu_total_ms` equals the sum of its parts, wins.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

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
    TIMING_FIELDS,
    PartColumns,
)

INF = float("inf")
NAN = float("nan")
# How far (ms) a predicted print time may fall outside the stamps around the line
# and still be taken: integer truncation of durations plus slight disorder.
MATCH_TOLERANCE_MS = 60.0
# A GPU may run a new holder while the old one's post-unlock lines are still to come.
HOLDERS_KEPT_PER_GPU = 3
# Lines are printed in time order: a line cannot have been printed much before the
# predicted print time of the line attributed before it (truncated durations add up).
CLOCK_SLACK_MS = 10.0
# gpu_total_ms is ntt + barrier + batch + tail; each is truncated to whole ms.
SUM_SLACK_MS = 5.0
# How many following lines settle a tie between holders.
LOOKAHEAD_LINES = 12
# The cost of a line a holder must have lost for an assignment to hold.
SKIP_COST = 100.0
# Two GPUs that took their locks this close together print lines that fit either one.
TWIN_LOCK_MS = MATCH_TOLERANCE_MS
# An unlock may not come after GPU_END (truncated durations add up to a few ms).
UNLOCK_SLACK_MS = 10.0
# everything but the lock line's own two fields
_AFTER_LOCK_FIELDS = TIMING_FIELDS[2:]

Values = tuple[int | None, ...]
Line = tuple[int, Values, float, float]  # stage, values, window low, window high

_ALWAYS_PRINTED = (STAGE_NTT_MSM, STAGE_BATCH, STAGE_TAIL)
_PRINTED_WITH_LOCK_LINE = (STAGE_NTT_H, STAGE_NTT_MSM, STAGE_BARRIER, STAGE_BATCH, STAGE_TAIL)


@dataclass(slots=True)
class Holder:
    """What is known of one mutex holder: enough to predict its next lines."""

    idx: int  # the interval (record index)
    gpu: int
    gpu_start: float
    lock: float | None = None  # None: engines that print no lock line
    lock_line: bool = False
    stage: int = -1
    prestage: int | None = None
    ntt: int | None = None
    barrier: int | None = None
    batch: int | None = None

    def copy(self) -> Holder:
        """An independent copy (for trying an assignment)."""
        return Holder(
            self.idx,
            self.gpu,
            self.gpu_start,
            self.lock,
            self.lock_line,
            self.stage,
            self.prestage,
            self.ntt,
            self.barrier,
            self.batch,
        )

    def predict(self, stage: int, vals: Values) -> tuple[float, float]:
        """The window of times at which this holder would print a line of `stage` with `vals`."""
        if stage == STAGE_EPILOGUE:
            pre_destructor = vals[1]
            if pre_destructor is None:
                return (-INF, INF)
            t = self.gpu_start + pre_destructor
            return (t - 20.0, t + 5.0)
        lock = self.lock
        if lock is None:
            return (-INF, INF)
        base = lock + (self.prestage or 0)
        v = vals[0]
        if stage == STAGE_PRESTAGE:
            return (-INF, INF) if v is None else (lock + v, lock + v)
        if stage == STAGE_NTT_H:
            total = vals[1]
            assert total is not None
            # the NTT_H block may be preceded by a one-off allocation outside its total
            return (base + total, base + total + 250.0)
        assert v is not None
        if stage == STAGE_NTT_MSM:
            return (base + v, base + v)
        if stage == STAGE_HELD:
            return (lock + v, lock + v)
        if self.ntt is None:
            return (-INF, INF)
        if stage == STAGE_BARRIER:
            return (base + self.ntt + v, base + self.ntt + v)
        if stage == STAGE_BATCH:
            at = base + self.ntt + (self.barrier or 0) + v
            return (at, at) if self.barrier is not None else (at, INF)
        if stage == STAGE_TAIL:
            gpu_total = vals[1]
            if gpu_total is None:
                return (-INF, INF)
            return (base + gpu_total, base + gpu_total)
        return (-INF, INF)

    def skipped(self, stage: int) -> int:
        """How many lines this holder must have lost between its last one and `stage`."""
        expected = _PRINTED_WITH_LOCK_LINE if self.lock_line else _ALWAYS_PRINTED
        return sum(1 for s in expected if self.stage < s < stage)

    def sum_error(self, vals: Values) -> float:
        """For a tail line: how far gpu_total is from ntt + barrier + batch + tail."""
        tail, gpu_total = vals
        if gpu_total is None or tail is None or self.ntt is None or self.batch is None:
            return 0.0
        if self.barrier is None:
            # engines without a barrier line: the barrier is what gpu_total leaves over
            return max(0.0, self.ntt + self.batch + tail - gpu_total - SUM_SLACK_MS)
        return max(0.0, abs(self.ntt + self.barrier + self.batch + tail - gpu_total) - SUM_SLACK_MS)

    def take(self, stage: int, vals: Values) -> None:
        """Record that this holder printed the line."""
        self.stage = stage
        if stage == STAGE_PRESTAGE:
            self.prestage = vals[0]
        elif stage == STAGE_NTT_MSM:
            self.ntt = vals[0]
        elif stage == STAGE_BARRIER:
            self.barrier = vals[0]
        elif stage == STAGE_BATCH:
            self.batch = vals[0]


def _distance(lo: float, hi: float, win_lo: float, win_hi: float) -> float:
    return max(0.0, lo - win_hi, win_lo - hi)


def _line_cost(
    h: Holder, stage: int, vals: Values, win_lo: float, win_hi: float, clock: float
) -> tuple[float, float]:
    """(cost, predicted time) of giving the line to `h`; cost INF when it cannot be."""
    lo, hi = h.predict(stage, vals)
    if lo > win_hi:
        cost = lo - win_hi
    elif hi < win_lo:
        cost = win_lo - hi
    else:
        cost = 0.0
    if cost > MATCH_TOLERANCE_MS:
        return INF, lo
    # printed in order: not (much) before the line above it
    floor = clock - CLOCK_SLACK_MS
    if hi < floor:
        cost += floor - hi
    if h.stage < stage - 1:
        cost += SKIP_COST * h.skipped(stage)
    if stage == STAGE_TAIL:
        cost += h.sum_error(vals)
    return cost, lo


class TimingAttributor:
    """Gives each C++ timing line to the GPU interval it belongs to.

    Args:
        cols: the builder's records.
        gpu_of: maps a worker id (-1: unknown) to its GPU.
    """

    def __init__(self, cols: PartColumns, gpu_of: Callable[[int], int]) -> None:
        self._c = cols
        self._gpu_of = gpu_of
        # started intervals whose lock line has not been seen yet (insertion ordered)
        self.awaiting: dict[int, None] = {}
        self.holders: dict[int, deque[Holder]] = {}
        self.unattributed = 0
        # the predicted print time of the last line attributed with an exact prediction
        self.clock = -INF
        self.lock_lines_seen = False

    def started(self, i: int) -> None:
        """A GPU_START was read: interval `i` may take the lock from now on."""
        self.awaiting[i] = None

    def _still_open(self, i: int, win_lo: float) -> bool:
        """Could interval `i` still print a line at `win_lo`? Forget it when not."""
        end = self._c.gpu_end[i]
        if end != end or end >= win_lo - MATCH_TOLERANCE_MS:  # NaN: not ended
            return True
        del self.awaiting[i]
        return False

    def attribute(
        self,
        stage: int,
        vals: Values,
        line_no: int,
        win_lo: float,
        win_hi: float,
        lookahead: Callable[[], Sequence[Line]] = tuple,
    ) -> int:
        """Attribute one timing line; return the interval it was given to, or -1.

        Args:
            stage: which timing line (a STAGE_* constant).
            vals: its parsed numbers.
            line_no: its physical line number.
            win_lo: the TIMELINE stamp before the line (less the tolerance for disorder).
            win_hi: the TIMELINE stamp after it (or infinity when none came yet).
            lookahead: gives the timing lines that follow, to settle ties.
        """
        if stage == STAGE_LOCK:
            self.lock_lines_seen = True
            h = self._take_lock(vals, win_lo, win_hi)
        else:
            h = self._holder_for(stage, vals, win_lo, win_hi, lookahead)
            if (
                h is None
                and not self.lock_lines_seen
                and stage in (STAGE_PRESTAGE, STAGE_NTT_H, STAGE_NTT_MSM)
            ):
                # only engines that print no lock line open a holder without one; in a log
                # that has them, a holder with no lock time would take any line at all
                h = self._open_without_lock_line(win_lo, win_hi)
        if h is None:
            self.unattributed += 1
            return -1
        lo, hi = h.predict(stage, vals)
        if lo == hi:
            self.clock = max(self.clock, lo)
        h.take(stage, vals)
        c = self._c
        _store(c, h.idx, stage, vals)
        c.stage[h.idx] = stage
        if stage == STAGE_HELD:
            self.check_unlock(h.idx)
        return h.idx

    def check_unlock(self, i: int) -> None:
        """An interval cannot unlock after its GPU_END. If it seems to, its lock line went to
        a twin on the same GPU that started at the same moment (the line fitted both): give
        each the other's timing lines when that makes both consistent."""
        c = self._c
        end, held = c.gpu_end[i], c.mutex_held[i]
        if end != end or held != held or c.pre_lock[i] != c.pre_lock[i]:
            return  # not ended yet, or not known: nothing to check
        if c.gpu_start[i] + c.pre_lock[i] + c.mutex_wait[i] + held <= end + UNLOCK_SLACK_MS:
            return
        queue = self.holders.get(self._gpu_of(c.worker[i]), ())
        mine = next((h for h in queue if h.idx == i), None)
        for other in queue:
            j = other.idx
            if mine is None or j == i or not other.lock_line:
                continue
            if abs(c.gpu_start[j] - c.gpu_start[i]) > TWIN_LOCK_MS:
                continue
            # with the other's lines: would each unlock before its end?
            if not _fits(c, i, j) or not _fits(c, j, i):
                continue
            _swap_all(c, mine, other)
            return

    def _push_holder(self, h: Holder) -> None:
        self.awaiting.pop(h.idx, None)
        queue = self.holders.setdefault(h.gpu, deque())
        queue.append(h)
        if len(queue) > HOLDERS_KEPT_PER_GPU:
            queue.popleft()

    def _take_lock(self, vals: Values, win_lo: float, win_hi: float) -> Holder | None:
        pre_lock, wait = vals
        assert pre_lock is not None and wait is not None
        c = self._c
        best = -1
        best_key = (INF, INF)
        best_twins: tuple[Holder, Holder] | None = None
        for i in list(self.awaiting):
            if not self._still_open(i, win_lo):
                continue
            t = c.gpu_start[i] + pre_lock + wait
            cost = _distance(t, t, win_lo, win_hi)
            if cost > MATCH_TOLERANCE_MS:
                continue
            cost += _distance(t, t, self.clock - CLOCK_SLACK_MS, INF)
            queue = self.holders.get(self._gpu_of(c.worker[i]))
            twins = None
            if queue and queue[-1].stage < STAGE_HELD and queue[-1].lock_line:
                # the GPU's mutex is still held by someone whose unlock was not seen...
                twins = self._twin_of(queue[-1])
                if twins is None:
                    cost += SKIP_COST
            key = (cost, abs(t - max(win_lo, self.clock)))
            if key < best_key:
                best, best_key, best_twins = i, key, twins
        if best < 0:
            return None
        if best_twins is not None:
            _swap_after_lock(c, *best_twins)
        h = self._lock_holder(best, pre_lock, wait)
        self._push_holder(h)
        return h

    def _lock_holder(self, i: int, pre_lock: int, wait: int) -> Holder:
        """The holder interval `i` becomes by the lock line (pre_lock, wait)."""
        start = self._c.gpu_start[i]
        return Holder(
            i, self._gpu_of(self._c.worker[i]), start, lock=start + pre_lock + wait, lock_line=True
        )

    def _twin_of(self, blocking: Holder) -> tuple[Holder, Holder] | None:
        """...unless its lines went to a twin: another GPU's holder that locked at the same
        moment and has unlocked. Their lines fitted both; the mutex says which is which:
        what was given to them after their lock lines is to be swapped."""
        best: Holder | None = None
        best_gap = TWIN_LOCK_MS
        for gpu, queue in self.holders.items():
            if gpu == blocking.gpu or not queue:
                continue
            twin = queue[-1]
            if (
                twin.lock_line
                and twin.stage >= STAGE_HELD
                and twin.lock is not None
                and blocking.lock is not None
                and abs(twin.lock - blocking.lock) <= best_gap
            ):
                best, best_gap = twin, abs(twin.lock - blocking.lock)
        return None if best is None else (blocking, best)

    def _holder_for(
        self,
        stage: int,
        vals: Values,
        win_lo: float,
        win_hi: float,
        lookahead: Callable[[], Sequence[Line]],
    ) -> Holder | None:
        clock = self.clock
        anchor = win_lo if win_lo > clock else clock
        scored: list[tuple[float, float, Holder]] = []
        for queue in self.holders.values():
            if stage == STAGE_EPILOGUE:
                # printed after unlock: the oldest holder still owing it
                first = [x for x in queue if x.stage < STAGE_EPILOGUE][:1]
                if not first:
                    continue
                h = first[0]
            else:
                h = queue[-1]
                if h.stage >= stage:
                    continue
            cost, lo = _line_cost(h, stage, vals, win_lo, win_hi, clock)
            if cost < INF:
                scored.append((cost, INF if lo == -INF else abs(lo - anchor), h))
        if len(scored) <= 1:
            return scored[0][2] if scored else None
        scored.sort(key=lambda x: (x[0], x[1]))
        if len(scored) == 1 or scored[1][0] > scored[0][0] + MATCH_TOLERANCE_MS:
            return scored[0][2]
        # a tie: try each, and see which lets the following lines fit best
        ahead = list(lookahead()[:LOOKAHEAD_LINES])
        best: Holder | None = None
        best_cost = INF
        for cost, _, h in scored:
            # the search looks at each GPU's newest holder only: copy just those
            trial = {g: deque([q[-1].copy()]) for g, q in self.holders.items() if q}
            mine = trial[h.gpu][-1]
            if mine.idx != h.idx:  # an older holder (a post-unlock line): no look-ahead
                total = cost
                if total < best_cost:
                    best, best_cost = h, total
                continue
            clock = self.clock
            lo, hi = mine.predict(stage, vals)
            if lo == hi:
                clock = max(clock, lo)
            mine.take(stage, vals)
            total = cost + self._future_cost(trial, ahead, clock, best_cost - cost)
            if total < best_cost:
                best, best_cost = h, total
        return best

    def _future_cost(
        self, holders: dict[int, deque[Holder]], lines: list[Line], clock: float, budget: float
    ) -> float:
        """The least cost of giving `lines` to the holders (a small depth-first search)."""
        if not lines or budget <= 0:
            return 0.0
        stage, vals, win_lo, win_hi = lines[0]
        if stage == STAGE_LOCK:
            # someone takes a lock: a GPU whose holder (under this assignment) has not
            # unlocked yet cannot be that GPU; the new holder takes the lines after it
            cost, new = self._lock_cost(holders, vals, win_lo, win_hi)
            if new is None:
                return cost + self._future_cost(holders, lines[1:], clock, budget - cost)
            queue = holders.setdefault(new.gpu, deque())
            queue.append(new)
            lo = new.lock if new.lock is not None else clock
            rest = self._future_cost(holders, lines[1:], max(clock, lo), budget - cost)
            queue.pop()
            return cost + rest
        if stage in (STAGE_EPILOGUE, STAGE_PRESTAGE):
            return 0.0  # post-unlock or lock-less lines: beyond what this search models
        best = SKIP_COST  # the line may belong to no holder we know
        for queue in list(holders.values()):  # deeper levels may add a GPU's queue
            if not queue or queue[-1].stage >= stage:
                continue
            h = queue[-1]
            cost, lo = _line_cost(h, stage, vals, win_lo, win_hi, clock)
            if cost >= min(best, budget):
                continue
            saved = h.copy()
            hi = h.predict(stage, vals)[1]
            h.take(stage, vals)
            rest = self._future_cost(
                holders, lines[1:], max(clock, lo) if lo == hi else clock, min(best, budget) - cost
            )
            queue[-1] = saved
            best = min(best, cost + rest)
        return best

    def _lock_cost(
        self, holders: dict[int, deque[Holder]], vals: Values, win_lo: float, win_hi: float
    ) -> tuple[float, Holder | None]:
        """How well a lock line fits the started intervals, given who holds which GPU;
        and the holder it would make."""
        pre_lock, wait = vals
        assert pre_lock is not None and wait is not None
        c = self._c
        best, best_i = SKIP_COST, -1
        for i in self.awaiting:
            t = c.gpu_start[i] + pre_lock + wait
            cost = _distance(t, t, win_lo, win_hi)
            if cost > MATCH_TOLERANCE_MS:
                continue
            queue = holders.get(self._gpu_of(c.worker[i]))
            if queue and queue[-1].lock_line and queue[-1].stage < STAGE_HELD:
                cost += SKIP_COST
            if cost < best:
                best, best_i = cost, i
        if best_i < 0:
            return best, None
        new = self._lock_holder(best_i, pre_lock, wait)
        new.stage = STAGE_LOCK  # as if it had taken the line
        return best, new

    def _open_without_lock_line(self, win_lo: float, win_hi: float) -> Holder | None:
        """Engines that print no lock line: the holder starts at its first line under the lock."""
        c = self._c
        best = -1
        best_start = INF
        for i in list(self.awaiting):
            if not self._still_open(i, win_lo):
                continue
            queue = self.holders.get(self._gpu_of(c.worker[i]))
            if queue and queue[-1].stage < STAGE_TAIL:
                continue
            gpu_start = c.gpu_start[i]
            if gpu_start <= win_hi and gpu_start < best_start:
                best, best_start = i, gpu_start
        if best < 0:
            return None
        h = Holder(best, self._gpu_of(c.worker[best]), c.gpu_start[best])
        self._push_holder(h)
        return h


def _swap_after_lock(c: PartColumns, a: Holder, b: Holder) -> None:
    """Exchange what two holders were given after their lock lines."""
    i, j = a.idx, b.idx
    for name in _AFTER_LOCK_FIELDS:
        col = getattr(c, name)
        col[i], col[j] = col[j], col[i]
    c.stage[i], c.stage[j] = c.stage[j], c.stage[i]
    a.stage, b.stage = b.stage, a.stage
    a.prestage, b.prestage = b.prestage, a.prestage
    a.ntt, b.ntt = b.ntt, a.ntt
    a.barrier, b.barrier = b.barrier, a.barrier
    a.batch, b.batch = b.batch, a.batch


def _fits(c: PartColumns, i: int, j: int) -> bool:
    """Would interval i, given j's timing lines, unlock before its own GPU_END?"""
    held = c.mutex_held[j]
    if held != held:
        return True  # j's unlock not seen: nothing contradicts it yet
    unlock = c.gpu_start[i] + c.pre_lock[j] + c.mutex_wait[j] + held
    end = c.gpu_end[i]
    return end != end or unlock <= end + UNLOCK_SLACK_MS


def _swap_all(c: PartColumns, a: Holder, b: Holder) -> None:
    """Exchange every timing line two intervals were given, lock lines included."""
    i, j = a.idx, b.idx
    for name in TIMING_FIELDS:
        col = getattr(c, name)
        col[i], col[j] = col[j], col[i]
    c.stage[i], c.stage[j] = c.stage[j], c.stage[i]
    # the holders follow their lines: each now describes the other interval
    a.idx, b.idx = j, i
    a.gpu_start, b.gpu_start = c.gpu_start[j], c.gpu_start[i]
    for h in (a, b):
        h.lock = h.gpu_start + c.pre_lock[h.idx] + c.mutex_wait[h.idx]


def _store(c: PartColumns, i: int, stage: int, vals: Values) -> None:
    v0 = NAN if vals[0] is None else vals[0]
    if stage == STAGE_NTT_MSM:
        c.ntt_msm_h[i] = v0
    elif stage == STAGE_BARRIER:
        c.barrier[i] = v0
    elif stage == STAGE_BATCH:
        c.batch_add[i] = v0
    elif stage == STAGE_HELD:
        c.mutex_held[i] = v0
    elif stage == STAGE_PRESTAGE:
        c.prestage[i] = v0
    else:
        v1 = NAN if vals[1] is None else vals[1]
        if stage == STAGE_LOCK:
            c.pre_lock[i], c.mutex_wait[i] = v0, v1
        elif stage == STAGE_NTT_H:
            c.ntt_alloc[i], c.ntt_total[i] = v0, v1
        elif stage == STAGE_TAIL:
            c.tail_msm[i], c.gpu_total[i] = v0, v1
        elif stage == STAGE_EPILOGUE:
            c.epilogue[i], c.pre_destructor[i] = v0, v1
