"""The deeper why of a gap: synthesis slots, what the workers were doing, the CPU path nearby."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from parsers.durations import duration
from parsers.hosts import reader_for
from parsers.model import MERGED_RUNS, PHASES, Gap, LogModel, PartitionTable, Phase
from parsers.rawlines import LineReader

MAX_LINES = 20_000  # a gap's neighbourhood searched for its CPU lines is never longer than this
SLOW = 1.25  # a CPU figure this many times its run median is called slow
STATES_SHOWN = 8  # workers named one by one in a gap's why; the others are counted


@dataclass(frozen=True, slots=True)
class WorkerState:
    """What one worker of the gap's GPU was doing at one instant."""

    worker: int
    state: str  # "idle", "picked up", or a phase word
    job: str | None = None
    partition: int | None = None

    def words(self) -> str:
        """`w1 in cleanup (job p3)`."""
        text = f"w{self.worker} {self.state}"
        if self.job is not None:
            text += f" ({self.job}" + (
                f" p{self.partition})" if self.partition is not None else ")"
            )
        return text


@dataclass(frozen=True, slots=True)
class FailedProve:
    """A prove that began on the gap's GPU during the gap and failed (no GPU_END): not busy
    time, so the gap lies over it, but its worker was at it."""

    worker: int
    job: str
    partition: int | None
    after_ms: float  # its GPU_START, from the gap's start
    # the most of the gap it can have run: to where it is drawn to (its worker's next
    # GPU_START, or its lines' end), within the gap; no line says when it failed
    ran_ms: float

    def words(self, sep: str = " ") -> str:
        """`w0 (job p9) 4.71 s in, for up to 20.42 s` (`sep` between a number and its unit)."""
        part = f" p{self.partition}" if self.partition is not None else ""
        after = duration(self.after_ms).replace(" ", sep)
        ran = duration(self.ran_ms).replace(" ", sep)
        return f"w{self.worker} ({self.job}{part}) {after} in, for up to {ran}"


@dataclass(frozen=True, slots=True)
class CpuPath:
    """The CPU critical path lines printed near the gap, against the run's medians."""

    prep_msm_ms: tuple[int, ...]
    b_g2_msm_ms: tuple[int, ...]
    prep_median: float | None
    b_g2_median: float | None
    first_line: int
    last_line: int

    @property
    def slow(self) -> bool:
        """Some line nearby took SLOW times its run median or more."""
        return any(
            med is not None and vals and max(vals) >= SLOW * med
            for vals, med in (
                (self.prep_msm_ms, self.prep_median),
                (self.b_g2_msm_ms, self.b_g2_median),
            )
        )


@dataclass(frozen=True, slots=True)
class GapWhy:
    """What the model (and the lines around the gap) say about why the GPU was idle."""

    synth_min: int  # partitions in synthesis during the gap: fewest...
    synth_max: int  # ...and most
    synth_peak: int  # the run's most at any time
    at_queue: tuple[WorkerState, ...]  # dispatch gaps: when the after-partition was queued
    at_start: tuple[WorkerState, ...]  # every worker of the GPU as the gap began
    after_pickup_ms: int | None  # when the after-partition was picked up, from the gap's start
    cpu: CpuPath | None
    # proves that began on the GPU during the gap and failed, by start
    failed_in: tuple[FailedProve, ...] = ()

    @property
    def synthesis_words(self) -> str:
        """All slots busy (synthesis capacity), some idle (nothing admitted), or between."""
        span = (
            f"{self.synth_min}"
            if self.synth_min == self.synth_max
            else (f"{self.synth_min}–{self.synth_max}")
        )
        head = f"{span} partitions in synthesis (run peak {self.synth_peak})"
        if self.synth_peak == 0:
            return head
        if self.synth_min >= self.synth_peak:
            return f"{head}: every slot busy: synthesis capacity"
        if self.synth_max < self.synth_peak:
            return f"{head}: slots idle: nothing admitted (concurrency or no work)"
        return f"{head}: slots full for part of the gap"

    @property
    def synthesis_short(self) -> str:
        """`4/4 full`, `1/4`: for a table cell."""
        full = self.synth_peak and self.synth_min >= self.synth_peak
        return f"{self.synth_max}/{self.synth_peak}" + (" full" if full else "")


def synthesis_during(
    model: LogModel, t0: float, t1: float, gpu: int | None = None
) -> tuple[int, int, int]:
    """(fewest, most) partitions in synthesis over [t0, t1), and the run's peak (of the GPU's
    own log when the model holds several)."""
    model.needs_drawn("the synthesis during a gap")
    times, counts = model.synth_steps(None if gpu is None else model.log_of(gpu))
    if len(times) == 0:
        return 0, 0, 0
    k0 = int(np.searchsorted(times, t0, side="right")) - 1
    k1 = int(np.searchsorted(times, t1, side="left"))
    at_start = int(counts[k0]) if k0 >= 0 else 0
    inside = counts[max(k0 + 1, 0) : k1]
    values = np.append(inside, at_start)
    return int(values.min()), int(values.max()), int(counts.max())


def worker_states(model: LogModel, gpu: int, at: float) -> tuple[WorkerState, ...]:
    """Each worker of `gpu` at instant `at`: its phase, picked up but not started, or idle.

    One pass over the lanes and one over the partitions, whatever the GPU's workers: a GPU
    of thousands of workers costs what a GPU of two does per lane and partition.
    """
    model.needs_drawn("what each worker was doing")
    t = model.parts
    stats = next((g for g in model.gpus if g.gpu == gpu), None)
    if stats is None:
        return ()
    mine = set(stats.workers)
    covering: dict[int, WorkerState] = {}
    for lane in model.lanes:  # the first lane of the worker that covers `at`, as drawn
        if lane.gpu != gpu or lane.worker not in mine or lane.worker in covering:
            continue
        # the segment covering `at` (start <= at < end), read in the lane's chunks: a live
        # model's lanes are not put together for one instant
        seg = lane.window(at, float(np.nextafter(at, np.inf)))
        if len(seg):
            i = int(seg.partition[0])
            part = int(t.item("partition", i))
            phase = Phase(int(seg.phases[0]))
            words = PHASES[phase].doing
            if t.item("failed", i) and phase != Phase.FAILED:
                # a failed prove is not busy time: a gap may lie over the kernels it ran
                words = f"{words} in a failed prove"
            covering[lane.worker] = WorkerState(
                lane.worker, words, t.job_of(i), None if part < 0 else part
            )
    picked = _picked_up(t, mine, at)
    out = []
    for w in stats.workers:
        state = covering.get(w)
        if state is None and w in picked:
            i = picked[w]
            part = int(t.item("partition", i))
            state = WorkerState(w, "picked up", t.job_of(i), None if part < 0 else part)
        out.append(state or WorkerState(w, "idle"))
    return tuple(out)


def _picked_up(t: PartitionTable, mine: set[int], at: float) -> dict[int, int]:
    """Per worker of `mine`, the partition it picked up last by `at` and has not started
    then, if it started nothing after picking it up: a pickup whose GPU_START never came
    (a lost line, a failure) is not what the worker still waits on once it started another.
    One pass over the partitions, whatever the workers; over each part of a live model's
    table, no column put together."""
    parts = t.parts_of()
    last_start = np.full(max(int(p.worker.max(initial=-1)) for p in parts) + 1, -np.inf)
    for p in parts:  # per worker number, its last start by `at`
        known = np.flatnonzero((p.gpu_start <= at) & (p.worker >= 0))
        np.maximum.at(last_start, p.worker[known], p.gpu_start[known])
    rows, workers, pickups = [], [], []
    for first, p in t.parts_from():
        named = p.worker >= 0
        waiting = np.flatnonzero((p.pickup <= at) & ~(p.gpu_start <= at) & named)
        waiting = waiting[p.pickup[waiting] >= last_start[p.worker[waiting]]]
        rows.append(waiting + first)
        workers.append(p.worker[waiting])
        pickups.append(p.pickup[waiting])
    order = np.argsort(np.concatenate(pickups), kind="stable")
    waiting = np.concatenate(rows)[order]
    worker = np.concatenate(workers)[order]
    picked: dict[int, int] = {}
    for i, w in zip(waiting.tolist(), worker.tolist(), strict=True):
        if w in mine:
            picked[w] = i  # the last picked up, by time
    return picked


def cpu_path(model: LogModel, gap: Gap, reader: LineReader | None = None) -> CpuPath | None:
    """The prep_msm / b_g2_msm lines printed from the GPU_START of the partition before the
    gap to the GPU_END of the one after: a reading of nearby lines, not an attribution.

    The figures are those the core noted as it read the log (parsers/linefacts.py): the log
    is not read again, so a compressed log or standard input has them as a file does. Of
    several hosts' logs, `reader` holds each host's. None when the core's figures of the
    log are not at hand.
    """
    t = model.parts
    b, a = gap.before.index, gap.after.index
    first, last = int(t.item("start_line", b)), int(t.item("end_line", a))
    if first <= 0 or last < first:
        return None
    last = min(last, first + MAX_LINES)
    facts = reader_for(reader, b, model).facts if reader is not None else model.line_facts
    if facts is None:
        return None
    prep, b_g2 = facts.cpu.between(first, last)
    run = _run_of(model, gap.gpu)
    prep_med, b_g2_med = facts.cpu.medians(facts.run if run is None else run)
    return CpuPath(prep, b_g2, prep_med, b_g2_med, first, last)


def _run_of(model: LogModel, gpu: int) -> int | None:
    """Of a restarted daemon's log, the run (0: the first) GPU `gpu` is of; else None."""
    if model.summary.merged != MERGED_RUNS or model.gpu_keys is None or gpu not in model.gpu_keys:
        return None
    return model.gpu_keys[gpu].host


def gap_why(model: LogModel, gap: Gap, reader: LineReader | None = None) -> GapWhy:
    """Everything this module can say about `gap` (`reader`: as for `cpu_path`)."""
    lo, hi, peak = synthesis_during(model, gap.start, gap.end, gap.gpu)
    t = model.parts
    at_queue: tuple[WorkerState, ...] = ()
    if gap.cause == "dispatch" and gap.after_queued is not None:
        at_queue = worker_states(model, gap.gpu, gap.after_queued)
    pickup = float(t.item("pickup", gap.after.index))
    return GapWhy(
        synth_min=lo,
        synth_max=hi,
        synth_peak=peak,
        at_queue=at_queue,
        at_start=worker_states(model, gap.gpu, gap.start),
        after_pickup_ms=None if pickup != pickup else round(pickup - gap.start),
        cpu=cpu_path(model, gap, reader),
        failed_in=failed_in(model, gap),
    )


def failed_in(model: LogModel, gap: Gap) -> tuple[FailedProve, ...]:
    """The proves that began on `gap`'s GPU inside it and failed, by start: each with how
    much of the gap it ran (to the end of its last segment, as the Gantt draws it)."""
    t = model.parts
    found, starts = [], []
    for first, p in t.parts_from():  # each part of a live model's: no column put together
        s = p.gpu_start
        rows = np.flatnonzero(p.failed & (p.gpu == gap.gpu) & (s > gap.start) & (s < gap.end))
        found.append(rows + first)
        starts.append(s[rows])
    rows = np.concatenate(found)[np.argsort(np.concatenate(starts), kind="stable")]
    out = []
    for i in rows.tolist():
        began, drawn = t.drawn_span(i)
        part = int(t.item("partition", i))
        out.append(
            FailedProve(
                int(t.item("worker", i)),
                t.job_of(i),
                None if part < 0 else part,
                began - gap.start,
                max(0.0, min(drawn, gap.end) - began),
            )
        )
    return tuple(out)


def _values(vals: tuple[int, ...], median: float | None, sep: str) -> str:
    if not vals:
        return "none printed"
    shown = ", ".join(str(v) for v in vals[:6])
    more = " …" if len(vals) > 6 else ""
    text = f"{shown}{more}{sep}ms"
    if median is None or not median:
        return text
    peak = 100 * max(vals) / median
    return f"{text} (max {peak:.0f}{sep}% of the run median {median:.0f}{sep}ms)"


def states_words(states: Sequence[WorkerState]) -> str:
    """`w0 idle, w1 in cleanup (job p3)`; past STATES_SHOWN workers, the rest as counts
    (a GPU of thousands of workers keeps a line a person can read)."""
    text = ", ".join(s.words() for s in states[:STATES_SHOWN])
    rest = states[STATES_SHOWN:]
    if rest:
        idle = sum(s.state == "idle" for s in rest)
        picked = sum(s.state == "picked up" for s in rest)
        text += (
            f" … and {len(rest)} more ({len(rest) - idle - picked} busy, "
            f"{picked} picked up, {idle} idle)"
        )
    return text


def why_lines(why: GapWhy, sep: str = " ") -> list[str]:
    """The deeper why in a few plain lines (the inspector and the report print them);
    `sep` between a number and its unit (where a window wraps at spaces, a glue)."""
    lines = [f"synthesis: {why.synthesis_words}"]
    if why.at_queue:
        lines.append(f"workers when the next partition was queued: {states_words(why.at_queue)}")
    if why.at_start:
        lines.append(f"workers as the gap began: {states_words(why.at_start)}")
    if why.failed_in:
        shown = "; ".join(f.words(sep) for f in why.failed_in[:STATES_SHOWN])
        more = len(why.failed_in) - STATES_SHOWN
        lines.append(
            "failed proves begun in the gap (not busy time): "
            + shown
            + (f" … and {more} more" if more > 0 else "")
        )
    if why.after_pickup_ms is not None:
        # written as every duration beside it is (`32.51 s`, not `32512ms`)
        ms = why.after_pickup_ms
        when = duration(abs(ms), "text").replace(" ", sep) + (" after" if ms >= 0 else " before")
        lines.append(f"next partition picked up {when} the gap began")
    cpu = why.cpu
    if cpu is not None:
        lines.append(
            f"CPU path printed on lines {cpu.first_line}–{cpu.last_line}: "
            f"prep_msm {_values(cpu.prep_msm_ms, cpu.prep_median, sep)}; "
            f"b_g2_msm {_values(cpu.b_g2_msm_ms, cpu.b_g2_median, sep)}"
            + ("  ← slower than usual" if cpu.slow else "")
        )
    return lines
