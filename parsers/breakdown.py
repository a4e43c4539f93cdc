"""Where each GPU's busy time went: its TIMELINE busy time split by phase, for any time range,
and which of its phases the log leaves to inference (`≈`) or does not measure (`–`).

Workers of one GPU overlap (one waits for the lock while another runs kernels), so each
instant of busy time is given to one phase only, the first of BUSY_ORDER that is under way
then: the shares add up to 100 % of the busy time.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.model import (
    PHASE_KEYS,
    Breakdown,
    GpuStats,
    Lane,
    LogModel,
    Partition,
    PartitionTable,
    Phase,
    WorkerStats,
)

__all__ = [
    "BUSY_KEYS",
    "BUSY_ORDER",
    "LOCK_KEYS",
    "LOCK_PHASES",
    "Breakdown",
    "add_breakdowns",
    "alloc_unprinted",
    "busy_breakdown",
    "busy_split_ms",
    "clipped_split",
    "estimated_keys",
    "inferred_phases",
    "interval_unmeasured",
    "kernel_scaled",
    "lanes_breakdown",
    "lanes_by_gpu",
    "lock_partly_placed",
    "lock_unmeasured",
    "lock_unplaced",
    "lockless_gpus",
    "segments_split",
    "segments_whole",
    "split_segments",
    "unmeasured_keys",
    "unmeasured_phases",
    "whole_run",
    "with_kernel",
    "workers_unmeasured",
]

BUSY_ORDER = (
    Phase.KERNEL,
    Phase.BARRIER,
    Phase.ALLOC,
    Phase.CLEANUP,
    Phase.LOCK_WAIT,
    Phase.PRE_LOCK,
    Phase.UNKNOWN,
)


BUSY_KEYS = tuple(PHASE_KEYS[p] for p in BUSY_ORDER)  # busy_split_ms's keys, in its order


def busy_split_ms(b: Breakdown) -> dict[str, float]:
    """A GPU's busy split as the JSON report, the CSV and the trace write it: ms per phase
    (`kernel`, `barrier`, `alloc`, `cleanup`, `lock_wait`, `pre_lock`, `unknown`), to the µs."""
    return {PHASE_KEYS[p]: round(b.phase_ms.get(p, 0.0), 3) for p in BUSY_ORDER}


def busy_breakdown(
    model: LogModel, t0: float = -np.inf, t1: float = np.inf
) -> dict[int, Breakdown]:
    """Per GPU, its ended intervals' time in [t0, t1) split by phase (see BUSY_ORDER)."""
    if not (np.isfinite(t0) or np.isfinite(t1)) and model.run_split is not None:
        return model.run_split
    model.needs_drawn("the busy split of a window")
    t = model.parts
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    gpus = [g.gpu for g in model.gpus]
    return kernel_scaled(
        model,
        {
            g: lanes_breakdown(g, lanes, t0, t1, done)
            for g, lanes in lanes_by_gpu(model.lanes, gpus)
        },
    )


def kernel_scaled(model: LogModel, splits: Mapping[int, Breakdown]) -> dict[int, Breakdown]:
    """A part of the run's busy split (a window, the settled time) with the run's kernel
    estimate in it (they differ where the log leaves the kernel time to inference,
    `with_kernel`): each phase keeps the share of its time that the run's split keeps of
    the run's, and the phase the estimate moves time to (kernel, or allocation where it
    takes time out of the kernel) has the rest. Each instant of a phase is counted alike
    wherever it falls, so the whole run gives the run's split and windows that do not
    overlap add up to it (docs/analysis.md#kernel_util_range); scaled window by window, a
    window whose other phases the estimate took whole had given more than its share."""
    # every GPU (one with no kernel segment too: a log that lost its C++ lines may still
    # give its kernel busy an estimate, which its run's split holds)
    estimated = {g.gpu: g.kernel_busy_ms for g in model.gpus}
    if not any(g in estimated for g in splits):
        return dict(splits)
    whole = segments_whole(model)
    out: dict[int, Breakdown] = {}
    for g, b in splits.items():
        own = whole.get(g)
        if g not in estimated or own is None or not b.phase_ms:
            out[g] = b
            continue
        out[g] = _shared(b, own, with_kernel(own, estimated[g]))
    return out


def _shared(part: Breakdown, whole: Breakdown, scaled: Breakdown) -> Breakdown:
    """`part` of the segments' split `whole`, with what turned `whole` into `scaled`
    (`with_kernel`) done to it in proportion: each phase keeps the share `scaled` keeps of
    it in `whole`; the phase given time has the rest of the part's busy time."""
    have = whole.phase_ms.get(Phase.KERNEL, 0.0)
    given = Phase.KERNEL if scaled.phase_ms.get(Phase.KERNEL, 0.0) >= have else Phase.ALLOC
    phases: dict[Phase, float] = {}
    for p in BUSY_ORDER:
        if p == given:
            continue
        was = whole.phase_ms.get(p, 0.0)
        keeps = scaled.phase_ms.get(p, 0.0) / was if was > 0 else 1.0
        phases[p] = part.phase_ms.get(p, 0.0) * keeps
    phases[given] = max(0.0, part.busy_ms - sum(phases.values()))
    return Breakdown(part.gpu, part.busy_ms, phases)


def segments_whole(model: LogModel) -> dict[int, Breakdown]:
    """Per GPU, its ended intervals' segments split over the whole run before the kernel
    estimate (`LogModel.segment_split`, or from the lanes)."""
    if model.segment_split is not None:
        return model.segment_split
    done = ~np.isnan(model.parts.gpu_start) & ~np.isnan(model.parts.gpu_end)
    gpus = [g.gpu for g in model.gpus]
    return {
        g: lanes_breakdown(g, lanes, -np.inf, np.inf, done)
        for g, lanes in lanes_by_gpu(model.lanes, gpus)
    }


def lanes_by_gpu(lanes: Iterable[Lane], gpus: Iterable[int]) -> list[tuple[int, list[Lane]]]:
    """Each of `gpus` with its lanes, in one pass over the lanes (not one per GPU)."""
    mine: dict[int, list[Lane]] = {}
    for lane in lanes:
        mine.setdefault(lane.gpu, []).append(lane)
    return [(g, mine.get(g, [])) for g in gpus]


def lanes_breakdown(
    gpu: int,
    lanes: Iterable[Lane],
    t0: float = -np.inf,
    t1: float = np.inf,
    done: np.ndarray | None = None,
) -> Breakdown:
    """GPU `gpu`'s busy time in [t0, t1) split by phase, from the lanes (any) on it (`done`:
    per record, whether its interval ended; the segments of the others are not busy time)."""
    starts, ends, kinds = [], [], []
    for lane in lanes:
        if lane.gpu != gpu:
            continue
        seg = lane.window(t0, t1) if np.isfinite(t0) or np.isfinite(t1) else lane.segments
        keep = done[seg.partition] if done is not None else slice(None)
        starts.append(seg.starts[keep])
        ends.append(seg.ends[keep])
        kinds.append(seg.phases[keep])
    s = np.clip(np.concatenate(starts) if starts else np.zeros(0), t0, t1)
    e = np.clip(np.concatenate(ends) if ends else np.zeros(0), t0, t1)
    k = np.concatenate(kinds) if kinds else np.zeros(0, dtype=np.int8)
    return split_segments(gpu, s, e, k)


def whole_run(model: LogModel) -> dict[int, Breakdown]:
    """Per GPU, where its busy time went over the whole run (made by the analysis: the one
    figure the screen, the reports and the exports show)."""
    return busy_breakdown(model)


def with_kernel(b: Breakdown, kernel_ms: float) -> Breakdown:
    """`b` with its kernel time made the GPU's kernel figure (`kernel_ms`). They differ only
    where the log leaves the kernel time to inference: without lock lines two workers'
    kernels drawn overlapping count once in the segments, while the kernel lines' sum says
    they ran one after the other (the difference is taken from the time the log leaves
    unexplained first, then from the other phases, last in BUSY_ORDER first); on an engine
    that prints no allocation line, the NTT blocks drawn as kernel hide allocation (what the
    figure takes out of them is allocation)."""
    have = b.phase_ms.get(Phase.KERNEL, 0.0)
    more = min(kernel_ms, b.busy_ms) - have
    if not b.phase_ms or more == 0:
        return b
    phases = dict(b.phase_ms)
    phases[Phase.KERNEL] = have + more
    if more < 0:
        phases[Phase.ALLOC] = phases.get(Phase.ALLOC, 0.0) - more
        return Breakdown(b.gpu, b.busy_ms, phases)
    for phase in reversed(BUSY_ORDER[1:]):
        taken = min(more, phases.get(phase, 0.0))
        phases[phase] = phases.get(phase, 0.0) - taken
        more -= taken
    return Breakdown(b.gpu, b.busy_ms, phases)


def segments_split(t: PartitionTable, seg_part: np.ndarray) -> dict[int, Breakdown]:
    """Per GPU, its ended intervals' segments split as BUSY_ORDER says."""
    return _core_split(t.gpu_start, t.gpu_end, t.gpu, t.seg_start, t.seg_end, t.seg_phase, seg_part)


def clipped_split(
    t: PartitionTable, seg_part: np.ndarray, window: Mapping[int, tuple[float, float]]
) -> dict[int, Breakdown]:
    """`segments_split` of the time each segment has in its GPU's [lo, hi) of `window` (a
    GPU not in it: all its time): as every instant goes to one phase, the splits of windows
    that do not overlap add up. The core clips the segments as it sweeps them."""
    return _core_split(
        t.gpu_start, t.gpu_end, t.gpu, t.seg_start, t.seg_end, t.seg_phase, seg_part, window
    )


def _core_split(
    gpu_start: np.ndarray,
    gpu_end: np.ndarray,
    gpu: np.ndarray,
    seg_start: np.ndarray,
    seg_end: np.ndarray,
    seg_phase: np.ndarray,
    seg_part: np.ndarray,
    window: Mapping[int, tuple[float, float]] | None = None,
) -> dict[int, Breakdown]:
    """The core's sweep (`sums::busy_split`) over per-record and per-segment columns: per GPU,
    each instant of its ended intervals given to the first phase of BUSY_ORDER under way
    (`window`: per GPU the time counted, its segments clipped to it)."""
    c = np.ascontiguousarray
    gpus, sums = _core.busy_split(
        c(gpu_start, dtype=np.float64),
        c(gpu_end, dtype=np.float64),
        c(gpu, dtype=np.int32),
        c(seg_start, dtype=np.float64),
        c(seg_end, dtype=np.float64),
        c(seg_phase, dtype=np.int8),
        c(seg_part, dtype=np.int64),
        [int(p) for p in BUSY_ORDER],
        len(Phase),
        [(int(g), float(lo), float(hi)) for g, (lo, hi) in (window or {}).items()],
    )
    table = sums.reshape(len(gpus), len(Phase))
    out: dict[int, Breakdown] = {}
    for k, g in enumerate(gpus.tolist()):
        row = table[k]
        phases = {p: float(row[p]) for p in BUSY_ORDER}
        out[int(g)] = Breakdown(int(g), float(sum(phases.values())), phases)
    return out


def add_breakdowns(gpu: int, parts: list[Breakdown]) -> Breakdown:
    """One GPU's breakdowns of stretches of time that do not overlap, as one."""
    if not any(b.phase_ms for b in parts):
        return Breakdown(gpu, 0.0, {})
    phases = {p: sum(b.phase_ms.get(p, 0.0) for b in parts) for p in BUSY_ORDER}
    return Breakdown(gpu, sum(b.busy_ms for b in parts), phases)


def split_segments(gpu: int, s: np.ndarray, e: np.ndarray, k: np.ndarray) -> Breakdown:
    """One GPU's phase segments (any lanes) as its busy time split by phase: the core's
    sweep, each segment an interval of its own (running and failed ones are not busy)."""
    n = len(s)
    b = _core_split(s, e, np.zeros(n, dtype=np.int32), s, e, k, np.arange(n)).get(0)
    return Breakdown(gpu, 0.0, {}) if b is None else Breakdown(gpu, b.busy_ms, b.phase_ms)


def inferred_phases(g: GpuStats, unprinted: frozenset[int]) -> frozenset[Phase]:
    """The phases of `g`'s busy split that are estimates, marked `≈`: kernel where its kernel
    busy is inferred, and allocation too where its engine printed none (`unprinted`:
    `alloc_unprinted`; all of it is then what the estimate took out of the NTT blocks)."""
    if not g.kernel_is_estimate:
        return frozenset()
    if g.gpu in unprinted:
        return frozenset((Phase.KERNEL, Phase.ALLOC))
    return frozenset((Phase.KERNEL,))


def alloc_unprinted(model: LogModel) -> frozenset[int]:
    """The GPUs whose engine printed no allocation line (the oldest ones; a view of several
    logs or runs may hold other engines beside them): their workers' intervals hold no
    allocation though kernels ran, and their kernel busy is an estimate."""
    if not any(g.kernel_is_estimate for g in model.gpus):
        return frozenset()  # the common case, on each redraw of the header: no worker read
    ran, printed = set(), set()
    for w in model.workers:
        if w.phases_ms["kernel"]:
            ran.add(w.gpu)
        if w.phases_ms["alloc"]:
            printed.add(w.gpu)
    return frozenset(g.gpu for g in model.gpus if g.kernel_is_estimate and g.gpu in ran - printed)


# the phases an engine that prints no lock line does not measure: its intervals' time before
# the lock is unknown time (docs/analysis.md#phase-segments); their keys in the JSON and CSV
LOCK_PHASES = frozenset((Phase.PRE_LOCK, Phase.LOCK_WAIT))
LOCK_KEYS = frozenset(PHASE_KEYS[p] for p in LOCK_PHASES)


def unmeasured_phases(g: GpuStats) -> frozenset[Phase]:
    """The phases of `g`'s busy split its engine does not measure, written `–`, never 0:
    pre-lock and lock wait where it prints no lock line."""
    return frozenset() if g.lock_printed else LOCK_PHASES


def interval_unmeasured(model: LogModel, part: Partition) -> frozenset[str]:
    """The phase keys of interval `part` that nothing measured, written `–`: pre-lock and
    lock wait where no lock line gave them (`lock_unmeasured`), none else. Read off the
    interval's own segments: the model's columns of every segment are not joined for it."""
    first = part.segments[0] if part.segments else (math.nan, math.nan, Phase.UNKNOWN)
    unmeasured = _lock_unmeasured(
        lockless_gpus(model),
        np.array([-1 if part.gpu is None else part.gpu]),
        np.array([math.nan if part.lock_acquired is None else part.lock_acquired]),
        np.array([math.nan if part.gpu_start is None else part.gpu_start], dtype=np.float64),
        np.array([first[2]]),
        np.array([first[1]]),
    )
    return LOCK_KEYS if unmeasured[0] else frozenset()


def lock_unmeasured(model: LogModel, rows: np.ndarray) -> npt.NDArray[np.bool_]:
    """Per interval of `rows` (row numbers of `model.parts`), whether no lock line gave its
    pre-lock and lock wait: its GPU's engine prints none, or its own was lost. Its lock is
    then not placed (the inspector says so), or placed back from its unlock line, the time
    before it one unknown segment (docs/analysis.md#phase-segments)."""
    t = model.parts
    first = t.seg_offsets[rows]
    k = np.minimum(first, max(len(t.seg_phase) - 1, 0))
    none = t.seg_offsets[rows + 1] == first  # no segment: as if unknown, of no end
    phase = np.where(none, Phase.UNKNOWN, t.seg_phase[k] if len(t.seg_phase) else Phase.UNKNOWN)
    end = np.where(none, np.nan, t.seg_end[k] if len(t.seg_end) else np.nan)
    return _lock_unmeasured(
        lockless_gpus(model), t.gpu[rows], t.lock_acquired[rows], t.gpu_start[rows], phase, end
    )


def lockless_gpus(model: LogModel) -> list[int]:
    """The GPUs whose engine prints no lock line (`unmeasured_phases`), in model order."""
    return [g.gpu for g in model.gpus if unmeasured_phases(g)]


def _lock_unmeasured(
    lockless: list[int],
    gpu: np.ndarray,
    lock: np.ndarray,
    start: np.ndarray,
    first_phase: np.ndarray,
    first_end: np.ndarray,
) -> npt.NDArray[np.bool_]:
    """`lock_unmeasured`'s rule, over intervals' GPU, lock, GPU_START and first segment."""
    out: npt.NDArray[np.bool_] = np.isnan(lock) | np.isin(gpu, lockless)
    out |= (first_phase == Phase.UNKNOWN) & (first_end == lock) & (lock > start)
    return out


def workers_unmeasured(model: LogModel) -> list[frozenset[str]]:
    """Per worker of the model, in order, the phase keys of its sums that nothing measured,
    written `–`: pre-lock and lock wait where its GPU's engine prints no lock line, or where
    none of its intervals was given one (lock lines lost, or begun later in the log). The
    GPUs are looked at once, not once a worker: a daemon restarted 20,000 times is as many
    workers and GPUs (its report took a minute)."""
    lockless = frozenset(lockless_gpus(model))
    return [
        LOCK_KEYS if w.gpu in lockless or (w.intervals and not w.lock_lines) else frozenset()
        for w in model.workers
    ]


def lock_unplaced(model: LogModel) -> list[WorkerStats]:
    """The workers of GPUs that print lock lines none of whose intervals was given one:
    their pre-lock and lock wait are `–` (`workers_unmeasured`), which the tables say under
    them."""
    lockless = frozenset(lockless_gpus(model))
    return [
        w
        for w, dashed in zip(model.workers, workers_unmeasured(model), strict=True)
        if w.gpu not in lockless and dashed
    ]


def lock_partly_placed(model: LogModel) -> list[WorkerStats]:
    """The workers some but not all of whose intervals were given a lock line: their
    pre-lock and lock wait are those intervals' (the others' time before the lock is unknown
    time), which the tables say under them."""
    return [
        w
        for w, dashed in zip(model.workers, workers_unmeasured(model), strict=True)
        if 0 < w.lock_lines < w.intervals and not dashed
    ]


def unmeasured_keys(model: LogModel) -> dict[int, list[str]]:
    """Per GPU, the keys of its busy split (`busy_split_ms`'s) its engine does not measure
    (`unmeasured_phases`), in their order: 0 ms there, the time being unknown's."""
    return {g.gpu: _split_keys(unmeasured_phases(g)) for g in model.gpus}


def estimated_keys(model: LogModel) -> dict[int, list[str]]:
    """Per GPU, the keys of its busy split (`busy_split_ms`'s) that are estimates, in their
    order: what the screens mark `≈`, said in the JSON, the CSV and the trace."""
    unprinted = alloc_unprinted(model)
    return {g.gpu: _split_keys(inferred_phases(g, unprinted)) for g in model.gpus}


def _split_keys(phases: frozenset[Phase]) -> list[str]:
    """`phases`' keys in `busy_split_ms`, in its order."""
    return [PHASE_KEYS[p] for p in BUSY_ORDER if p in phases]
