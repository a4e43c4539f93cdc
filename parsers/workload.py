"""What a log says each proof needed, for replaying its run through a model of the engine
(parsers/whatif.py): every partition's synthesis time and the parts of its GPU interval that
do not depend on the other partitions (docs/analysis.md#what-if), and the configuration the
run shows (GPUs, workers per GPU, synthesis workers, proofs in flight).

What a partition waited for (the lock, a GPU worker, a synthesis worker) is left out: the
replay makes it again under the configuration asked for.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from parsers.model import F64, LogModel, PartitionTable, Phase, ProofSpans
from parsers.rows import distinct

# Fewer completed proofs than this, and the run's variability cannot be told from it.
MIN_PROOFS = 3
# A barrier shorter than this did not wait for the CPU (the stamp is a few tens of µs).
BARRIER_MS = 1.0
# A cleanup longer than this waited for the CPU path (the finalizer alone takes ~5-15 ms).
CLEANUP_MS = 25.0
# Two lock holders of one GPU overlapping by more than this, for more than this share of
# its holders: the workers' GPUs are not what the log is taken to say.
OVERLAP_MS = 50.0
OVERLAP_SHARE = 0.05
# The synthesis workers all busy for this share of the run: they limited it.
SATURATED_SHARE = 0.5
# Below this share of completed intervals with lock lines, the lock's holders are not known.
LOCK_LINES_SHARE = 0.9


UNKNOWN_GPUS = (
    "the log does not say which GPU each worker is on (no `pipeline GPU worker started` "
    "lines), so who held each GPU's lock is not known: give --workers-per-gpu N"
)


@dataclass(frozen=True, slots=True)
class Work:
    """What one partition needed, in ms, whatever it waited for."""

    synth: float  # SYNTH_START to SYNTH_END
    start: float  # GPU_PICKUP to GPU_START
    pre: float  # GPU_START to the lock asked for
    alloc: float  # allocation under the lock (less a GPU's first-use warm-up)
    k1: float  # the NTT kernels
    k2: float  # the batch-addition and tail kernels, after the barrier
    hold: float  # last kernel to unlock
    prep: float  # GPU_START to the CPU's preparation done (the barrier passes then)
    cpu: float  # GPU_START to GPU_END when the CPU path ends last
    post: float  # unlock to GPU_END when the GPU ends last
    gpu: bool = True  # False: a synthesis that never reached a GPU interval the log ends


@dataclass(frozen=True, slots=True)
class Config:
    """How the engine was set up, as the run shows it (or as a change asks)."""

    gpus: tuple[int, ...]  # CUDA ordinals
    gpu_workers: int  # per GPU
    synthesis_workers: int
    concurrency: int  # proofs in flight
    synthesis_speed: float = 1.0
    gpu_speed: float = 1.0
    split_lock: bool = False


@dataclass(frozen=True, slots=True)
class Workload:
    """The run as a replay takes it: the proofs in the order they started, each a tuple of
    its partitions' needs in the order they started synthesis."""

    jobs: tuple[tuple[Work, ...], ...]
    kinds: tuple[str, ...]  # each job's kind
    config: Config
    warmup_ms: dict[int, float]  # per GPU: the first lock holder's extra allocation
    pickup_ms: float  # queued (or a worker freed) to GPU_PICKUP
    admit_ms: float  # a proof ended to the next one's first SYNTH_START
    handoff_ms: float  # one holder's unlock to the next one's lock
    t0: float  # the first SYNTH_START
    job_starts: tuple[float, ...]  # each proof's first SYNTH_START in the log
    counted: tuple[bool, ...]  # each job: completed, so counted in s/proof (else: replayed
    # for what it took of synthesis and the GPUs, as a failed or unfinished one did)
    dropped_jobs: int  # begun before the log, or with nothing a replay can use
    uncounted: int  # failed, or not ended when the log ends: replayed, not counted
    # the synthesis workers were all busy for most of the run: a proof admitted may have
    # waited to start, so the proofs in flight the log shows are a floor
    synthesis_saturated: bool
    prep_estimated: int  # partitions whose CPU preparation was not measured

    @property
    def partitions(self) -> int:
        return sum(len(j) for j in self.jobs)

    @property
    def proofs(self) -> int:
        """The jobs that count (completed in the log)."""
        return sum(self.counted)


class NoWorkload(Exception):
    """The log cannot be replayed; the message says why, in a sentence."""


@dataclass(frozen=True, slots=True)
class _Columns:
    """The partition table's columns as Python lists, read once (a long log has ~10^5
    partitions, each measured by a loop in Python)."""

    job: list[int]
    gpu: list[int]
    worker: list[int]
    partition: list[int]
    synth_start: list[float]
    synth_end: list[float]
    queued: list[float]
    pickup: list[float]
    gpu_start: list[float]
    gpu_end: list[float]
    lock: list[float]
    unlock: list[float]
    offsets: list[int]
    phase: list[int]
    seg_start: list[float]
    seg_end: list[float]

    @staticmethod
    def of(parts: PartitionTable) -> _Columns:
        return _Columns(
            parts.job.tolist(),
            parts.gpu.tolist(),
            parts.worker.tolist(),
            parts.partition.tolist(),
            parts.synth_start.tolist(),
            parts.synth_end.tolist(),
            parts.queued.tolist(),
            parts.pickup.tolist(),
            parts.gpu_start.tolist(),
            parts.gpu_end.tolist(),
            parts.lock_acquired.tolist(),
            parts.unlock.tolist(),
            parts.seg_offsets.tolist(),
            parts.seg_phase.tolist(),
            parts.seg_start.tolist(),
            parts.seg_end.tolist(),
        )


_PRE_LOCK, _ALLOC, _BARRIER, _KERNEL = (
    int(Phase.PRE_LOCK),
    int(Phase.ALLOC),
    int(Phase.BARRIER),
    int(Phase.KERNEL),
)


@dataclass(slots=True)
class _Raw:
    """A completed partition as measured, before its censored figures are estimated."""

    row: int
    job: int
    gpu: int
    worker: int
    partition: int
    synth_start: float
    synth: float
    start: float
    pre: float
    alloc: float
    k1: float
    k2: float
    hold: float
    prep: float  # measured, or the most it can be
    cpu: float
    cleanup: float
    prep_known: bool
    cpu_known: bool
    lock: float
    unlock: float

    @property
    def kernel(self) -> float:
        return self.k1 + self.k2


def _measure(c: _Columns, i: int) -> _Raw | None:
    """A completed partition's needs, or None when its interval lacks the lines for them."""
    gs, ge = c.gpu_start[i], c.gpu_end[i]
    lock, unlock = c.lock[i], c.unlock[i]
    pre = alloc = barrier = k1 = k2 = 0.0
    ntt_end = last_kernel = math.nan  # the first kernel stretch's end, the last one's
    barrier_end = math.nan
    phases, starts, ends = c.phase, c.seg_start, c.seg_end
    for k in range(c.offsets[i], c.offsets[i + 1]):
        phase, s, e = phases[k], starts[k], ends[k]
        if phase == _PRE_LOCK:
            pre += e - s
        elif phase == _ALLOC:
            alloc += e - s
        elif phase == _BARRIER:
            barrier += e - s
            barrier_end = e
        elif phase == _KERNEL:
            if ntt_end != ntt_end:
                k1, ntt_end = e - s, e
            else:
                k2 += e - s
            last_kernel = e
    if ntt_end != ntt_end:
        return None
    prep_known = barrier >= BARRIER_MS and barrier_end == barrier_end
    prep = (barrier_end if prep_known else ntt_end) - gs
    cleanup = ge - unlock
    return _Raw(
        row=i,
        job=c.job[i],
        gpu=c.gpu[i],
        worker=c.worker[i],
        partition=c.partition[i],
        synth_start=c.synth_start[i],
        synth=c.synth_end[i] - c.synth_start[i],
        start=max(0.0, gs - c.pickup[i]),
        pre=pre,
        alloc=alloc,
        k1=k1,
        k2=k2,
        hold=max(0.0, unlock - last_kernel),
        prep=max(0.0, prep),
        cpu=ge - gs,
        cleanup=cleanup,
        prep_known=prep_known,
        cpu_known=cleanup >= CLEANUP_MS,
        lock=lock,
        unlock=unlock,
    )


def _median(values: list[float], default: float) -> float:
    return float(np.median(values)) if values else default


def _open_counts(starts: F64, ends: F64) -> tuple[F64, F64]:
    """How many intervals [start, end) are open from each start or end on: (times, counts),
    an end before a start at the same time."""
    times = np.concatenate([starts, ends])
    steps = np.concatenate([np.ones(len(starts)), -np.ones(len(ends))])
    order = np.lexsort((steps, times))
    return times[order], np.cumsum(steps[order])


def _max_overlap(starts: F64, ends: F64) -> int:
    """The most intervals [start, end) open at once."""
    return int(np.max(_open_counts(starts, ends)[1])) if len(starts) else 0


def workload_of(model: LogModel) -> Workload:
    """The log's run as a replay takes it.

    Raises: NoWorkload: the log cannot support a replay (no lock lines, too few proofs).
    """
    parts = model.parts
    n = len(parts)
    gpu_end, failed = parts.gpu_end, parts.failed
    ended = ~np.isnan(gpu_end) & ~failed
    if not ended.any():
        raise NoWorkload("no GPU interval ended in this log: there is no run to replay")
    # the lock line (`pre_lock_cpu_ms=… mutex_wait_ms=…`) splits an interval's start into
    # pre-lock and lock wait: without it (older engines) who waited for what is not known
    told = np.zeros(n, dtype=bool)
    seg_part = parts.seg_rows()
    lock_seg = (parts.seg_phase == Phase.PRE_LOCK) | (parts.seg_phase == Phase.LOCK_WAIT)
    told[seg_part[lock_seg]] = True
    with_lock = ended & told & ~np.isnan(parts.lock_acquired) & ~np.isnan(parts.unlock)
    if with_lock.sum() < LOCK_LINES_SHARE * ended.sum():
        workers = distinct(parts.worker[ended])
        if not model.engine_seen and len(workers) > 1 and model.unattributed_timing_lines:
            raise NoWorkload(UNKNOWN_GPUS)
        raise NoWorkload(
            "this log has no lock lines (an engine before pre_lock_cpu_ms / mutex_wait_ms were "
            "printed): who held each GPU's lock is not known, so the run cannot be replayed"
        )
    job = parts.job
    # a proof is counted when each of its partitions ended and was measured; the others
    # (failed, unfinished) are replayed for what they took of synthesis and the GPUs
    synth_known = ~np.isnan(parts.synth_start) & ~np.isnan(parts.synth_end)
    complete_job = np.ones(len(parts.jobs), dtype=bool)  # made False below
    raws: dict[int, list[_Raw]] = {}
    synth_only: dict[int, list[tuple[float, float]]] = {}
    cols = _Columns.of(parts)
    measurable = (with_lock & synth_known).tolist()
    known_synth = synth_known.tolist()
    for i in range(n):
        j = cols.job[i]
        raw = _measure(cols, i) if measurable[i] else None
        if raw is not None:
            raws.setdefault(j, []).append(raw)
            continue
        complete_job[j] = False
        if known_synth[i]:
            start = cols.synth_start[i]
            synth_only.setdefault(j, []).append((start, cols.synth_end[i] - start))
    kept = [j for j in raws if complete_job[j]]
    ballast = sorted(set(synth_only) | {j for j in raws if not complete_job[j]})
    seen_jobs = distinct(job) if n else np.zeros(0, dtype=np.int32)
    if len(kept) < MIN_PROOFS:
        raise NoWorkload(
            f"the log completes {len(kept)} proof{'s' if len(kept) != 1 else ''} with every "
            f"line a replay needs: too few (at least {MIN_PROOFS}) to tell how the run varies"
        )
    flat = [r for j in kept for r in raws[j]]
    _check_one_holder(flat)

    # the CPU path, where a lock wait hid it: as long, for its kernels' length, as the
    # measured ones (a batch of several circuits takes longer on both), never longer than
    # the interval allows. Not the measured ones' median: those that waited for the lock
    # least, and the long batches, are the ones measured
    known_prep = [r.prep / r.kernel for r in flat if r.prep_known and r.kernel > 0]
    facts = model.line_facts
    printed = facts.cpu.medians() if facts is not None else (None, None)
    kernel_median = _median([r.kernel for r in flat], 1.0)
    prep_ratio = _median(
        known_prep, (printed[0] / kernel_median) if printed[0] is not None else math.inf
    )
    known_tail = [
        (r.cpu - r.prep) / r.kernel for r in flat if r.cpu_known and r.prep_known and r.kernel > 0
    ]
    printed_tail = ((printed[1] or 0.0) + CLEANUP_MS / 2) / kernel_median
    tail_ratio = _median(known_tail, printed_tail)
    post = _median([r.cleanup for r in flat if not r.cpu_known], CLEANUP_MS / 2)

    # a GPU's first lock holder allocates its buffers: an extra the replay gives to whichever
    # partition takes that GPU's lock first
    warmup: dict[int, float] = {}
    first_on: dict[int, _Raw] = {}
    for r in flat:
        if r.gpu not in first_on or r.lock < first_on[r.gpu].lock:
            first_on[r.gpu] = r
    allocs = _median([r.alloc for r in flat if first_on.get(r.gpu) is not r], 0.0)
    for g, r in first_on.items():
        warmup[g] = max(0.0, r.alloc - allocs)
        r.alloc -= warmup[g]

    def work(r: _Raw) -> Work:
        prep = r.prep if r.prep_known else min(r.prep, prep_ratio * r.kernel)
        cpu = r.cpu if r.cpu_known else min(r.cpu, prep + tail_ratio * r.kernel)
        return Work(
            synth=r.synth,
            start=r.start,
            pre=r.pre,
            alloc=r.alloc,
            k1=r.k1,
            k2=r.k2,
            hold=r.hold,
            prep=prep,
            cpu=cpu,
            post=post if r.cpu_known else r.cleanup,
        )

    # the engine's synthesis queue is first come, first served: a proof's partitions in
    # their order, proof after proof. Stamps in one ms do not tell that order, but a proof's
    # last partition to start always started before the next proof's last one did
    def starts(j: int) -> list[float]:
        return [r.synth_start for r in raws.get(j, [])] + [a for a, _ in synth_only.get(j, [])]

    order = sorted([*kept, *ballast], key=lambda j: (max(starts(j)), min(starts(j))))

    def works(j: int) -> tuple[Work, ...]:
        placed = [(r.synth_start, r.partition, work(r)) for r in raws.get(j, [])]
        placed += [(a, -1, _synthesis_only(d)) for a, d in synth_only.get(j, [])]
        return tuple(w for _, _, w in sorted(placed, key=lambda x: (x[0], x[1])))

    jobs = tuple(works(j) for j in order)
    counted = frozenset(kept)
    kinds = tuple(_kind_of(parts, raws[j][0].row) if j in raws else "" for j in order)
    config, saturated = _config_of(model, flat)
    return Workload(
        jobs=jobs,
        kinds=kinds,
        config=config,
        warmup_ms=warmup,
        pickup_ms=_pickup_ms(flat, cols),
        admit_ms=_admit_ms(model),
        handoff_ms=_handoff_ms(flat),
        t0=min(r.synth_start for r in flat),
        job_starts=tuple(min(starts(j)) for j in order),
        counted=tuple(j in counted for j in order),
        dropped_jobs=len(seen_jobs) - len(kept) - len(ballast),
        uncounted=len(ballast),
        synthesis_saturated=saturated,
        prep_estimated=sum(not r.prep_known for r in flat),
    )


def _synthesis_only(synth: float) -> Work:
    """A partition whose GPU interval the log does not end (it failed, or is still running):
    replayed for its synthesis alone."""
    return Work(synth, 0, 0, 0, 0, 0, 0, 0, 0, 0, gpu=False)


def _check_one_holder(flat: list[_Raw]) -> None:
    """Each GPU's lock has one holder at a time; holders that overlap on one GPU mean the
    log does not say which GPU each worker is on.

    Raises: NoWorkload: two holders overlap.
    """
    by_gpu: dict[int, list[tuple[float, float]]] = {}
    for r in flat:
        by_gpu.setdefault(r.gpu, []).append((r.lock, r.unlock))
    for held in by_gpu.values():
        held.sort()
        # stamps printed a few ms late overlap a little; holders of two GPUs overlap by
        # their kernels' length, and often
        overlaps = sum(b[0] < a[1] - OVERLAP_MS for a, b in itertools.pairwise(held))
        if overlaps > OVERLAP_SHARE * len(held):
            raise NoWorkload(UNKNOWN_GPUS)


def _kind_of(parts: PartitionTable, i: int) -> str:
    k = int(parts.kind[i])
    return parts.kinds[k] if 0 <= k < len(parts.kinds) else ""


def _config_of(model: LogModel, flat: list[_Raw]) -> tuple[Config, bool]:
    """The configuration the run shows, and whether its synthesis workers were all busy for
    most of the run (SATURATED_SHARE): a proof admitted may then have waited to start, and
    the proofs in flight the log shows are a floor."""
    parts = model.parts
    gpus = tuple(sorted({r.gpu for r in flat}))
    workers: dict[int, set[int]] = {}
    for r in flat:
        workers.setdefault(r.gpu, set()).add(r.worker)
    ss, se = parts.synth_start, parts.synth_end
    synth = ~np.isnan(ss) & ~np.isnan(se)
    pw, saturated = 0, False
    if synth.any():
        times, count = _open_counts(ss[synth], se[synth])
        pw = int(np.max(count))
        span = times[-1] - times[0]
        full = float(np.diff(times)[count[:-1] >= pw].sum())
        saturated = bool(span > 0 and full >= SATURATED_SHARE * span)
    spans = _spans(model)
    first, last = spans.first, spans.last
    ok = ~np.isnan(first) & ~np.isnan(last)
    concurrency = _max_overlap(first[ok], last[ok])
    config = Config(
        gpus=gpus,
        gpu_workers=max(len(w) for w in workers.values()),
        synthesis_workers=max(pw, 1),
        concurrency=max(concurrency, 1),
    )
    return config, saturated


def _spans(model: LogModel) -> ProofSpans:
    return model.proof_spans if model.proof_spans is not None else ProofSpans.of(model.proofs)


def _pickup_ms(flat: list[_Raw], c: _Columns) -> float:
    """Queued, or the worker's previous unlock, to the pickup: the dispatch's own delay."""
    last_unlock: dict[int, float] = {}
    delays: list[float] = []
    for r in sorted(flat, key=lambda r: r.lock):
        queued, pickup = c.queued[r.row], c.pickup[r.row]
        ready = max(queued if queued == queued else -math.inf, last_unlock.get(r.worker, -math.inf))
        if ready > -math.inf and pickup >= ready:
            delays.append(pickup - ready)
        last_unlock[r.worker] = r.unlock
    small = [d for d in delays if d < 50.0]
    return _median(small, 1.0)


def _admit_ms(model: LogModel) -> float:
    """A proof's last GPU_END to the next proof's first SYNTH_START, when that came soon."""
    spans = _spans(model)
    first, last = spans.first[~np.isnan(spans.first)], spans.last[~np.isnan(spans.last)]
    if not len(first) or not len(last):
        return 1.0
    ends = np.sort(last)
    idx = np.searchsorted(ends, first, side="right") - 1
    gaps = first[idx >= 0] - ends[idx[idx >= 0]]
    small = [float(g) for g in gaps if 0 <= g < 50.0]
    return _median(small, 1.0)


def _handoff_ms(flat: list[_Raw]) -> float:
    """One holder's unlock to the next holder's lock on the same GPU, when it waited."""
    by_gpu: dict[int, list[_Raw]] = {}
    for r in flat:
        by_gpu.setdefault(r.gpu, []).append(r)
    gaps: list[float] = []
    for rs in by_gpu.values():
        rs.sort(key=lambda r: r.lock)
        for a, b in itertools.pairwise(rs):
            d = b.lock - a.unlock
            if 0 <= d < 5.0:
                gaps.append(d)
    return _median(gaps, 0.05)
