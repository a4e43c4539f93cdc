"""Attributing the C++ prover's timing lines (no job, no worker, no time) to GPU intervals.

Each GPU has one mutex, and its holder prints its lines in a fixed order: the lock line
(`pre_lock_cpu_ms=.. mutex_wait_ms=..`), one `CUZK_NTT_H` per circuit, `ntt_msm_h_ms`,
`barrier_wait_ms`, `batch_add_ms`, `tail_msm_ms .. gpu_total_ms`, `mutex_held_ms`; the
next holder of that GPU locks when this one unlocks. With several GPUs these sequences
interleave in the file. Every line's print time can be predicted from its holder's lock
time and the durations it printed so far, and must fall between the TIMELINE stamps
around it and not before the lines above it.

A beam search keeps the few best ways of giving the lines so far to the GPUs' holders
(each a per-GPU state and a cost: how far predictions miss, lines a holder must have
lost, a lock taken before the previous holder unlocked), and commits the oldest decision
once the following lines have had their say. A decision that a nearly-as-good way made
for another GPU is recorded as ambiguous: the kernel figures count it in their range.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, replace

from parsers.records import (
    STAGE_BARRIER,
    STAGE_BATCH,
    STAGE_EPILOGUE,
    STAGE_HELD,
    STAGE_LOCK,
    STAGE_NTT_H,
    STAGE_NTT_MSM,
    STAGE_POOL,
    STAGE_PRESTAGE,
    STAGE_TAIL,
    TIMING_FIELDS,
    PartColumns,
)

INF = float("inf")
NAN = float("nan")
# How far (ms) a predicted print time may fall outside the stamps around the line and
# still be taken: durations are truncated to whole ms, stamps slightly disordered.
MATCH_TOLERANCE_MS = 60.0
# Lines are printed in time order: a line is not printed before the one above it (less
# the truncation of the durations that predict both).
CLOCK_SLACK_MS = 10.0
# A lock that did not wait was taken after the previous holder of that GPU unlocked
# (the predictions of both are truncated by a few ms); one that waited, at that moment.
HANDOFF_SLACK_MS = 4.0
# gpu_total_ms is ntt + barrier + batch + tail, each truncated to whole ms.
SUM_SLACK_MS = 5.0
# The cost of a line given to nobody, or that a holder must have lost.
SKIP_COST = 100.0
# Ways of giving the lines kept at once, and how many lines a decision waits.
BEAM_WIDTH = 64
COMMIT_LAG_LINES = 256
COMMIT_BATCH_LINES = 128
# A decision for another GPU this close to the best makes the line ambiguous.
AMBIGUITY_MARGIN = 4.0
# Losing a lock line loses every line of its holder: worse than a holder losing its end.
LOCK_SKIP_COST = 3 * SKIP_COST
# An unlock may not come after GPU_END (truncated durations add up to a few ms).
UNLOCK_SLACK_MS = 10.0
# Two intervals of one GPU that started this close print lock lines that fit either.
TWIN_LOCK_MS = MATCH_TOLERANCE_MS

Values = tuple[int | None, ...]

# The lines printed under the lock, in order, when the engine prints lock lines.
_EXPECTED_WITH_LOCK = (STAGE_NTT_H, STAGE_NTT_MSM, STAGE_BARRIER, STAGE_BATCH, STAGE_TAIL)
_EXPECTED_WITHOUT_LOCK = (STAGE_NTT_MSM, STAGE_BATCH, STAGE_TAIL)
# Lines whose values are kernel time (what the kernel range is about).
KERNEL_STAGES = (STAGE_NTT_MSM, STAGE_BATCH, STAGE_TAIL)


@dataclass(frozen=True, slots=True)
class GpuState:
    """One GPU's mutex holder as a way of giving the lines sees it."""

    holder: int = -1  # the interval holding the lock (-1: none yet)
    stage: int = STAGE_HELD  # the last line it printed
    lock: float | None = None  # lock time (None: engines without lock lines)
    lock_line: bool = False
    pool: bool = False  # it allocated the GPU's cache first (outside the NTT blocks)
    prestage: int = 0
    ntt_h: int = 0  # CUZK_NTT_H totals so far (one line per circuit)
    ntt: int | None = None
    barrier: int | None = None
    batch: int | None = None
    unlock: float | None = None  # when the holder unlocked (or will)


@dataclass(slots=True)
class _Step:
    """One decision of a way of giving lines: a line and the interval it went to."""

    line: int  # sequence number of the line
    interval: int  # -1: nobody
    gpu: int
    prev: _Step | None


@dataclass(slots=True)
class _Way:
    """One way of giving the lines so far: its cost and each GPU's state."""

    cost: float
    gpus: dict[int, GpuState]
    clock: float
    locked: tuple[int, ...]  # intervals that took a lock in the decisions not yet committed
    last: _Step | None

    def key(self) -> tuple[object, ...]:
        """Ways with equal keys predict the same future: only the cheaper one is kept."""
        return tuple(
            (g, s.holder, s.stage, s.lock, s.ntt_h, s.ntt, s.barrier, s.batch, s.unlock)
            for g, s in sorted(self.gpus.items())
        )


@dataclass(frozen=True, slots=True)
class _Line:
    seq: int
    stage: int
    vals: Values
    line_no: int
    win_lo: float
    win_hi: float


def _distance(t_lo: float, t_hi: float, lo: float, hi: float) -> float:
    """How far [t_lo, t_hi] lies outside [lo, hi]."""
    if t_lo > hi:
        return t_lo - hi
    if t_hi < lo:
        return lo - t_hi
    return 0.0


def predict(st: GpuState, stage: int, vals: Values) -> tuple[float, float]:
    """The window of times at which `st`'s holder would print a line of `stage` with `vals`."""
    lock = st.lock
    if lock is None:
        return (-INF, INF)
    v = vals[0]
    base = lock + st.prestage
    if stage == STAGE_POOL:
        return (lock, lock + 5.0)
    if stage == STAGE_PRESTAGE:
        return (-INF, INF) if v is None else (lock + v, lock + v)
    if stage == STAGE_NTT_H:
        total = vals[1]
        if total is None:
            return (-INF, INF)
        at = base + st.ntt_h + total
        # the first use of a GPU allocates its cache before the first block, outside its total
        return (at, at + 250.0) if st.pool else (at, at + 10.0)
    if v is None:
        return (-INF, INF)
    if stage == STAGE_NTT_MSM:
        return (base + v, base + v)
    if stage == STAGE_HELD:
        return (lock + v, lock + v)
    if st.ntt is None:
        return (-INF, INF)
    if stage == STAGE_BARRIER:
        at = base + st.ntt + v
        return (at, at)
    if stage == STAGE_BATCH:
        at = base + st.ntt + (st.barrier or 0) + v
        return (at, at) if st.barrier is not None else (at, INF)
    if stage == STAGE_TAIL:
        gpu_total = vals[1]
        if gpu_total is None:
            return (-INF, INF)
        return (base + gpu_total, base + gpu_total)
    return (-INF, INF)


def _skipped(st: GpuState, stage: int) -> int:
    """How many lines the holder must have lost between its last one and `stage`."""
    expected = _EXPECTED_WITH_LOCK if st.lock_line else _EXPECTED_WITHOUT_LOCK
    return sum(1 for s in expected if st.stage < s < stage)


def _sum_error(st: GpuState, vals: Values) -> float:
    """For a tail line: how far gpu_total is from ntt + barrier + batch + tail."""
    tail, gpu_total = vals
    if gpu_total is None or tail is None or st.ntt is None or st.batch is None:
        return 0.0
    if st.barrier is None:
        # engines without a barrier line: the barrier is what gpu_total leaves over
        return max(0.0, st.ntt + st.batch + tail - gpu_total - SUM_SLACK_MS)
    return max(0.0, abs(st.ntt + st.barrier + st.batch + tail - gpu_total) - SUM_SLACK_MS)


def _took(st: GpuState, stage: int, vals: Values) -> GpuState:
    """`st` after its holder printed the line."""
    v = vals[0]
    if stage == STAGE_POOL:
        return replace(st, stage=stage, pool=True)
    if stage == STAGE_PRESTAGE:
        return replace(st, stage=stage, prestage=v or 0)
    if stage == STAGE_NTT_H:
        return replace(st, stage=stage, ntt_h=st.ntt_h + (vals[1] or 0))
    if stage == STAGE_NTT_MSM:
        return replace(st, stage=stage, ntt=v)
    if stage == STAGE_BARRIER:
        return replace(st, stage=stage, barrier=v)
    if stage == STAGE_BATCH:
        return replace(st, stage=stage, batch=v)
    if stage == STAGE_TAIL:
        unlock = st.unlock
        if st.lock is not None and vals[1] is not None and not st.lock_line:
            unlock = st.lock + st.prestage + vals[1]  # no unlock line in these engines
        return replace(st, stage=stage, unlock=unlock)
    if stage == STAGE_HELD:
        unlock = None if st.lock is None or v is None else st.lock + v
        return replace(st, stage=stage, unlock=unlock)
    return replace(st, stage=stage)


class TimingAttributor:
    """Gives each C++ timing line to the GPU interval it belongs to.

    Args:
        cols: the builder's records (timing fields are written here as lines commit).
        gpu_of: maps a worker id (-1: unknown) to its GPU.
        ordinals_known: whether GPU ids are the CUDA ordinals the log prints (the stdout
            lines named them), so that a line naming a GPU can only be that GPU's.
    """

    def __init__(
        self,
        cols: PartColumns,
        gpu_of: Callable[[int], int],
        ordinals_known: Callable[[], bool] = lambda: False,
    ) -> None:
        self._c = cols
        self._gpu_of = gpu_of
        self._ordinals_known = ordinals_known
        # started intervals that have not taken a lock (insertion ordered)
        self.awaiting: dict[int, None] = {}
        # an interval can take no lock after this stamp (its worker started another one)
        self._retired: dict[int, float] = {}
        self._last_start: dict[int, int] = {}  # worker -> its latest interval
        self._ways = [_Way(0.0, {}, -INF, (), None)]
        self._lines: dict[int, _Line] = {}  # lines not committed yet, by sequence number
        self._line_gpus: dict[int, set[int]] = {}  # open lines some ways gave to other GPUs
        self._epilogue_of: dict[int, int] = {}  # open epilogue lines: the interval each names
        self._starts: list[tuple[float, int]] = []  # (gpu_start, interval), sorted
        self._seq = 0
        self._committed = 0  # lines before this sequence number are committed
        self.unattributed = 0
        self.unattributed_kernel_ms = 0.0
        self.lock_lines_seen = False
        # per GPU: kernel ms given to it that another GPU could own, and kernel ms given
        # to another GPU that it could own (lines a nearly-as-good way gave elsewhere)
        self.kernel_doubt: dict[int, list[float]] = {}

    # -- events from the TIMELINE ------------------------------------------------------------

    def started(self, i: int) -> None:
        """A GPU_START was read: interval `i` may take the lock from now on."""
        self.awaiting[i] = None
        bisect.insort(self._starts, (self._c.gpu_start[i], i))
        w = self._c.worker[i]
        if w >= 0:
            prev = self._last_start.get(w)
            if prev is not None and prev in self.awaiting:
                # a worker proves one partition at a time: its earlier interval, still
                # without a lock, failed before taking it
                self._retired[prev] = self._c.gpu_start[i]
            self._last_start[w] = i

    # -- lines --------------------------------------------------------------------------------

    def push(self, stage: int, vals: Values, line_no: int, win_lo: float, win_hi: float) -> None:
        """Take the next timing line (in file order).

        Args:
            stage: which timing line (a STAGE_* constant).
            vals: its parsed numbers.
            line_no: its physical line number.
            win_lo: the TIMELINE stamp before the line (less the tolerance for disorder).
            win_hi: the TIMELINE stamp after it (or infinity when none came yet).
        """
        target = -1
        if stage == STAGE_EPILOGUE:
            target = self._epilogue_target(vals, win_lo, win_hi)
            if target < 0:
                self.unattributed += 1
                return
            self._epilogue_of[self._seq] = target
        if stage == STAGE_LOCK:
            self.lock_lines_seen = True
        line = _Line(self._seq, stage, vals, line_no, win_lo, win_hi)
        self._seq += 1
        self._lines[line.seq] = line
        self._extend(line)
        if self._seq - self._committed > COMMIT_LAG_LINES:
            self._commit(COMMIT_BATCH_LINES)

    @property
    def has_open_lines(self) -> bool:
        """Lines whose decision waits for the lines after them."""
        return self._committed < self._seq

    def flush(self) -> None:
        """Commit every decision still open (end of input, or the input went quiet)."""
        self._commit(self._seq - self._committed)

    # -- the search ---------------------------------------------------------------------------

    def _extend(self, line: _Line) -> None:
        out: dict[tuple[object, ...], _Way] = {}

        def offer(way: _Way) -> None:
            key = way.key()
            old = out.get(key)
            if old is None or way.cost < old.cost:
                out[key] = way

        for way in self._ways:
            # the line may belong to nobody we know (a holder whose lock line was lost)
            offer(
                _Way(
                    way.cost + (LOCK_SKIP_COST if line.stage == STAGE_LOCK else SKIP_COST),
                    way.gpus,
                    way.clock,
                    way.locked,
                    _Step(line.seq, -1, -1, way.last),
                )
            )
            if line.stage == STAGE_LOCK:
                self._lock_options(way, line, offer)
            elif line.stage == STAGE_EPILOGUE:
                self._epilogue_option(way, line, offer)
            else:
                self._line_options(way, line, offer)
        ways = sorted(out.values(), key=lambda w: w.cost)[:BEAM_WIDTH]
        base = ways[0].cost
        for w in ways:  # keep costs small; only differences matter
            w.cost -= base
        self._ways = ways
        if not self.lock_lines_seen and line.stage in KERNEL_STAGES:
            # without lock lines the evidence is weak: a line that nearly-as-good ways give
            # to different GPUs stays in doubt even if the beam later drops one of them
            gpus = {
                w.last.gpu
                for w in ways
                if w.cost <= AMBIGUITY_MARGIN and w.last is not None and w.last.gpu >= 0
            }
            if len(gpus) > 1:
                self._line_gpus[line.seq] = gpus

    def _lock_options(self, way: _Way, line: _Line, offer: Callable[[_Way], None]) -> None:
        pre_lock, wait = line.vals
        if pre_lock is None or wait is None:
            return
        c = self._c
        for i in list(self.awaiting):
            if i in way.locked:
                continue
            if not self._can_lock(i, line.win_lo):
                continue
            t = c.gpu_start[i] + pre_lock + wait
            if t >= self._gone(i) + 1.0:
                continue  # it would lock after it ended, or after its worker moved on
            cost = _distance(t, t, line.win_lo, line.win_hi)
            if cost > MATCH_TOLERANCE_MS:
                continue
            g = self._gpu_of(c.worker[i])
            st = way.gpus.get(g)
            if st is not None and st.holder >= 0:
                if st.stage < STAGE_HELD and st.lock_line:
                    # the GPU's mutex is still held: its holder must have lost its last lines
                    cost += SKIP_COST
                u = st.unlock
                if u is not None:
                    if wait >= 2:
                        cost += abs(t - u)
                    else:
                        cost += max(0.0, u - t - HANDOFF_SLACK_MS)
            if t < way.clock:
                if way.clock - t > CLOCK_SLACK_MS:
                    continue
                cost += way.clock - t
            new = GpuState(holder=i, stage=STAGE_LOCK, lock=t, lock_line=True)
            gpus = dict(way.gpus)
            gpus[g] = new
            offer(
                _Way(
                    way.cost + cost,
                    gpus,
                    max(way.clock, t),
                    (*way.locked, i),
                    _Step(line.seq, i, g, way.last),
                )
            )

    def _line_options(self, way: _Way, line: _Line, offer: Callable[[_Way], None]) -> None:
        stage, vals = line.stage, line.vals
        for g, st in way.gpus.items():
            if st.holder < 0:
                continue
            if st.stage >= stage and not (stage == STAGE_NTT_H and st.stage == STAGE_NTT_H):
                continue
            if stage == STAGE_POOL and (
                st.stage != STAGE_LOCK or (vals[0] != g and self._ordinals_known())
            ):
                continue  # printed by the GPU it names, right after its holder locked
            lo, hi = predict(st, stage, vals)
            cost = _distance(lo, hi, line.win_lo, line.win_hi)
            if cost > MATCH_TOLERANCE_MS:
                continue
            if hi < way.clock:
                # printed before the line above it: only as early as truncation explains
                late = way.clock - hi
                if late > CLOCK_SLACK_MS:
                    continue
                cost += late
            cost += SKIP_COST * _skipped(st, stage)
            if stage == STAGE_TAIL:
                cost += _sum_error(st, vals)
            elif stage == STAGE_NTT_MSM and vals[0] is not None:
                # ntt_msm_h spans every CUZK_NTT_H block before it
                cost += max(0.0, st.ntt_h - vals[0] - SUM_SLACK_MS)
            gpus = dict(way.gpus)
            gpus[g] = _took(st, stage, vals)
            clock = max(way.clock, lo)  # printed no earlier than its prediction
            offer(
                _Way(
                    way.cost + cost,
                    gpus,
                    clock,
                    way.locked,
                    _Step(line.seq, st.holder, g, way.last),
                )
            )
        if not self.lock_lines_seen and stage in (STAGE_PRESTAGE, STAGE_NTT_H, STAGE_NTT_MSM):
            self._open_without_lock(way, line, offer)

    def _open_without_lock(self, way: _Way, line: _Line, offer: Callable[[_Way], None]) -> None:
        """Engines that print no lock line: a holder starts at its first line under the lock,
        on a GPU whose holder has finished its kernels. The earliest started goes first."""
        c = self._c
        rank = 0
        for i in list(self.awaiting):
            if i in way.locked or self._gone(i) <= line.win_lo:
                continue  # it ended, or its worker moved on, before this line was printed
            if c.gpu_start[i] > line.win_hi:
                continue
            g = self._gpu_of(c.worker[i])
            st = way.gpus.get(g)
            if st is not None and st.holder >= 0 and st.stage < STAGE_TAIL:
                continue
            new = _took(GpuState(holder=i, stage=-1), line.stage, line.vals)
            gpus = dict(way.gpus)
            gpus[g] = new
            offer(
                _Way(
                    way.cost + 0.01 * rank,
                    gpus,
                    way.clock,
                    (*way.locked, i),
                    _Step(line.seq, i, g, way.last),
                )
            )
            rank += 1

    def _gone(self, i: int) -> float:
        """After this stamp interval `i` can take no lock (ended, or its worker moved on)."""
        end = self._c.gpu_end[i]
        gone = self._retired.get(i, INF)
        return gone if end != end else min(gone, end)

    def _can_lock(self, i: int, win_lo: float) -> bool:
        """Could interval `i` still take a lock at `win_lo`?"""
        return self._gone(i) >= win_lo - MATCH_TOLERANCE_MS

    def _prune_awaiting(self, win_lo: float) -> None:
        """Forget the intervals that can no longer take a lock (none of the ways holds one)."""
        pending = {i for way in self._ways for i in way.locked}
        for i in [i for i in self.awaiting if not self._can_lock(i, win_lo)]:
            if i not in pending:
                del self.awaiting[i]
                self._retired.pop(i, None)

    # -- committing ---------------------------------------------------------------------------

    def _commit(self, count: int) -> None:
        """Commit the `count` oldest open decisions of the best way; drop the ways that
        disagree with any of them.

        A nearly-as-good way that disagrees puts the kernel figures in doubt by what it
        would change: per GPU, the kernel time its open decisions give against the best
        way's (a swap of two similar holders between GPUs changes little).
        """
        count = min(count, self._seq - self._committed)
        if count <= 0:
            return
        first = self._committed
        trails = [_trail(way, first) for way in self._ways]
        best_trail = trails[0]
        best_cost = self._ways[0].cost
        kept: list[int] = []
        rivals: list[int] = []
        for k, trail in enumerate(trails):
            if all(trail[j].interval == best_trail[j].interval for j in range(count)):
                kept.append(k)
            elif self._ways[k].cost <= best_cost + AMBIGUITY_MARGIN:
                rivals.append(k)
        if rivals:
            self._doubt(best_trail, [trails[k] for k in rivals])
        for j in range(count):
            chosen = best_trail[j]
            # without lock lines, lines some ways gave to other GPUs stay in doubt each
            alternatives = self._line_gpus.pop(first + j, set()) - {chosen.gpu}
            self._apply(self._lines.pop(first + j), chosen, alternatives)
        self._committed += count
        done = {best_trail[j].interval for j in range(count)}
        ways = []
        for k in kept:
            way = self._ways[k]
            trail = trails[k]
            if len(trail) > count:
                trail[count].prev = None
            else:
                way.last = None
            way.locked = tuple(i for i in way.locked if i not in done)
            ways.append(way)
        self._ways = ways
        self._prune_awaiting(self._lines[self._committed].win_lo if self._lines else -INF)

    def _kernel_by_gpu(self, trail: list[_Step]) -> dict[int, float]:
        out: dict[int, float] = {}
        for step in trail:
            line = self._lines[step.line]
            v = line.vals[0]
            if step.gpu >= 0 and line.stage in KERNEL_STAGES and v is not None:
                out[step.gpu] = out.get(step.gpu, 0.0) + v
        return out

    def _doubt(self, best: list[_Step], rivals: list[list[_Step]]) -> None:
        mine = self._kernel_by_gpu(best)
        less: dict[int, float] = {}
        more: dict[int, float] = {}
        for trail in rivals:
            theirs = self._kernel_by_gpu(trail)
            for g in mine.keys() | theirs.keys():
                d = theirs.get(g, 0.0) - mine.get(g, 0.0)
                less[g] = max(less.get(g, 0.0), -d)
                more[g] = max(more.get(g, 0.0), d)
        for g in less:
            doubt = self.kernel_doubt.setdefault(g, [0.0, 0.0])
            doubt[0] += less[g]
            doubt[1] += more[g]

    def _apply(self, line: _Line, chosen: _Step, alternatives: set[int]) -> None:
        """Write one committed decision into the columns."""
        i = chosen.interval
        v = line.vals[0]
        if i < 0:
            self.unattributed += 1
            if line.stage in KERNEL_STAGES and v is not None:
                self.unattributed_kernel_ms += v
            return
        if i in self.awaiting and (line.stage == STAGE_LOCK or not self.lock_lines_seen):
            self.awaiting.pop(i, None)
            self._retired.pop(i, None)
        if alternatives and line.stage in KERNEL_STAGES and v is not None:
            self.kernel_doubt.setdefault(chosen.gpu, [0.0, 0.0])[0] += v
            for g in alternatives:
                if g >= 0:
                    self.kernel_doubt.setdefault(g, [0.0, 0.0])[1] += v
        c = self._c
        _store(c, i, line.stage, line.vals)
        c.stage[i] = line.stage
        if line.stage == STAGE_HELD:
            self.check_unlock(i)

    # -- after the fact -------------------------------------------------------------------------

    def _epilogue_target(self, vals: Values, win_lo: float, win_hi: float) -> int:
        """An epilogue line (engines of February 2026) names its interval by its timing:
        printed `pre_destructor_ms` after its GPU_START, just before its GPU_END."""
        pre = vals[1]
        if pre is None:
            return -1
        c = self._c
        starts = self._starts
        k = bisect.bisect_left(starts, (win_lo - pre - MATCH_TOLERANCE_MS, -1))
        best, best_cost = -1, MATCH_TOLERANCE_MS
        while k < len(starts) and starts[k][0] <= win_hi - pre + MATCH_TOLERANCE_MS:
            start, i = starts[k]
            k += 1
            if c.epilogue[i] == c.epilogue[i] or i in self._epilogue_of.values():
                continue
            cost = _distance(start + pre, start + pre, win_lo, win_hi)
            if cost < best_cost:
                best, best_cost = i, cost
        return best

    def _epilogue_option(self, way: _Way, line: _Line, offer: Callable[[_Way], None]) -> None:
        """The interval an epilogue names printed its kernel lines before it: a way that gave
        them to another interval pays for it."""
        i = self._epilogue_of[line.seq]
        ran = i in way.locked or self._c.ntt_msm_h[i] == self._c.ntt_msm_h[i]
        if not ran:
            ran = any(st.holder == i for st in way.gpus.values())
        offer(
            _Way(
                way.cost + (0.0 if ran else SKIP_COST),
                way.gpus,
                way.clock,
                way.locked,
                _Step(line.seq, i, self._gpu_of(self._c.worker[i]), way.last),
            )
        )

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
        g = self._gpu_of(c.worker[i])
        lo = max(0, i - 4096)
        for j in range(len(c) - 1, lo - 1, -1):
            if j == i or c.pre_lock[j] != c.pre_lock[j] or self._gpu_of(c.worker[j]) != g:
                continue
            if abs(c.gpu_start[j] - c.gpu_start[i]) > TWIN_LOCK_MS:
                continue
            if _fits(c, i, j) and _fits(c, j, i):
                _swap_all(c, i, j)
                for way in self._ways:
                    for gg, st in way.gpus.items():
                        if st.holder in (i, j):
                            k = j if st.holder == i else i
                            way.gpus[gg] = replace(
                                st, holder=k, lock=c.gpu_start[k] + c.pre_lock[k] + c.mutex_wait[k]
                            )
                return

    def finish(self) -> None:
        """End of input. Engines without lock lines let a holder be opened on an interval
        that then failed (it printed nothing and never ended) while a sibling on the same
        GPU ran the kernels: give such lines to the nearest sibling that ended without any."""
        if self.lock_lines_seen:
            return
        c = self._c
        n = len(c)
        ended_bare = [
            i for i in range(n) if c.gpu_end[i] == c.gpu_end[i] and c.ntt_msm_h[i] != c.ntt_msm_h[i]
        ]
        if not ended_bare:
            return
        for j in range(n):
            if c.gpu_end[j] == c.gpu_end[j] or c.ntt_msm_h[j] != c.ntt_msm_h[j]:
                continue
            g = self._gpu_of(c.worker[j])
            best, best_d = -1, INF
            for i in ended_bare:
                if self._gpu_of(c.worker[i]) != g or c.ntt_msm_h[i] == c.ntt_msm_h[i]:
                    continue
                d = abs(c.gpu_start[i] - c.gpu_start[j])
                if d < best_d:
                    best, best_d = i, d
            if best >= 0:
                _swap_all(c, best, j)

    def ended(self, i: int) -> None:
        """A GPU_END was read for interval `i`."""
        self.check_unlock(i)


def _trail(way: _Way, first: int) -> list[_Step]:
    """The way's open decisions, oldest (line `first`) first."""
    out = []
    step = way.last
    while step is not None and step.line >= first:
        out.append(step)
        step = step.prev
    out.reverse()
    return out


def _fits(c: PartColumns, i: int, j: int) -> bool:
    """Would interval i, given j's timing lines, unlock before its own GPU_END?"""
    held = c.mutex_held[j]
    if held != held:
        return True  # j's unlock not seen: nothing contradicts it yet
    unlock = c.gpu_start[i] + c.pre_lock[j] + c.mutex_wait[j] + held
    end = c.gpu_end[i]
    return end != end or unlock <= end + UNLOCK_SLACK_MS


def _swap_all(c: PartColumns, i: int, j: int) -> None:
    """Exchange every timing line two intervals were given, lock lines included."""
    for name in TIMING_FIELDS:
        col = getattr(c, name)
        col[i], col[j] = col[j], col[i]
    c.stage[i], c.stage[j] = c.stage[j], c.stage[i]


def _store(c: PartColumns, i: int, stage: int, vals: Values) -> None:
    if stage == STAGE_POOL:
        return  # it only told which holder allocated the GPU's cache
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
            # one line per circuit of a batch: the interval's figures are their sums
            if c.ntt_alloc[i] == c.ntt_alloc[i] and c.stage[i] == STAGE_NTT_H:
                c.ntt_alloc[i] += v0
                c.ntt_total[i] += v1
                c.ntt_blocks[i] += 1
            else:
                c.ntt_alloc[i], c.ntt_total[i], c.ntt_blocks[i] = v0, v1, 1
        elif stage == STAGE_TAIL:
            c.tail_msm[i], c.gpu_total[i] = v0, v1
        elif stage == STAGE_EPILOGUE:
            c.epilogue[i], c.pre_destructor[i] = v0, v1
