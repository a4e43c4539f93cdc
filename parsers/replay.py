"""A log's run replayed through a model of the engine, under its own configuration or a
changed one (docs/analysis.md#what-if).

The model is the engine's as docs/log-format.md tells it: proofs admitted while fewer than
`concurrency` are in flight, their partitions synthesized `synthesis_workers` at a time in
the order they came, one queue for every GPU worker (the one idle longest takes the next
partition), a lock per GPU taken for allocation and the kernels, the barrier waiting for the
CPU's preparation, the worker free once it unlocks (split proving) and the partition ended
when both the GPU and the CPU path are done. What each partition needed comes from the log
(parsers/workload.py); what it waited for is made here again.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from parsers.rows import union_blocks
from parsers.workload import Config, Work, Workload


@dataclass(frozen=True, slots=True)
class GpuOutcome:
    """One GPU's figures in a replay (the definitions of docs/analysis.md#per-gpu)."""

    gpu: int
    span_ms: float
    busy_ms: float  # union of the GPU intervals
    kernel_ms: float  # union of the kernel stretches
    lock_ms: float  # the lock held (the kernel lock, with a split lock)

    @property
    def timeline_util(self) -> float:
        return self.busy_ms / self.span_ms if self.span_ms > 0 else 0.0

    @property
    def kernel_util(self) -> float:
        return self.kernel_ms / self.span_ms if self.span_ms > 0 else 0.0


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a replay gives."""

    span_ms: float  # the first SYNTH_START to the last GPU_END
    proofs: int
    gpus: tuple[GpuOutcome, ...]
    synthesis_busy: float  # the share of the synthesis workers' time spent synthesizing
    job_starts: tuple[float, ...]  # each proof's first SYNTH_START, in the workload's order

    @property
    def s_per_proof(self) -> float:
        return self.span_ms / 1000 / self.proofs if self.proofs else 0.0


def _union_ms(spans: list[tuple[float, float]]) -> float:
    """The length of the union of `spans` (the model's own union: parsers/rows.py)."""
    if not spans:
        return 0.0
    starts, ends = np.array(spans, dtype=np.float64).T
    return union_blocks(starts, ends).total_ms


class _Lock:
    """A FIFO lock: the waiter that asked first takes it, `handoff` ms after the unlock."""

    __slots__ = ("held", "held_ms", "waiters")

    def __init__(self) -> None:
        self.held = False
        self.held_ms = 0.0
        self.waiters: deque[Callable[[float], None]] = deque()


class _Replay:
    def __init__(self, load: Workload, config: Config, jobs: tuple[tuple[Work, ...], ...]):
        self.load = load
        self.cfg = config
        self.jobs = jobs
        self.events: list[tuple[float, int, Callable[[float], None]]] = []
        self.seq = 0
        self.next_job = 0
        self.in_flight = 0
        self.open_parts = [len(j) for j in jobs]
        self.synth_queue: deque[tuple[int, Work]] = deque()
        self.synth_free = config.synthesis_workers
        self.synth_ms = 0.0
        self.gpu_queue: deque[tuple[int, Work]] = deque()
        gw = config.gpu_workers
        self.idle: deque[int] = deque(range(len(config.gpus) * gw))
        self.locks = [_Lock() for _ in config.gpus]
        self.alloc_locks = [_Lock() for _ in config.gpus]
        self.warm = [False] * len(config.gpus)
        self.intervals: list[list[tuple[float, float]]] = [[] for _ in config.gpus]
        self.kernels: list[list[tuple[float, float]]] = [[] for _ in config.gpus]
        self.done = 0
        self.last_end = load.t0
        self.job_starts = [float("nan")] * len(jobs)

    def at(self, t: float, fn: Callable[[float], None]) -> None:
        self.seq += 1
        heapq.heappush(self.events, (t, self.seq, fn))

    def run(self) -> Outcome:
        self.admit(self.load.t0)
        events = self.events
        while events:
            t, _, fn = heapq.heappop(events)
            fn(t)
        span = self.last_end - self.load.t0
        gpus = []
        for g, ordinal in enumerate(self.cfg.gpus):
            ivs = self.intervals[g]
            if ivs:
                lo = min(s for s, _ in ivs)
                hi = max(e for _, e in ivs)
            else:
                lo = hi = 0.0
            gpus.append(
                GpuOutcome(
                    gpu=ordinal,
                    span_ms=hi - lo,
                    busy_ms=_union_ms(ivs),
                    kernel_ms=_union_ms(self.kernels[g]),
                    lock_ms=self.locks[g].held_ms,
                )
            )
        pool = self.cfg.synthesis_workers * span
        return Outcome(
            span_ms=span,
            proofs=self.done,
            gpus=tuple(gpus),
            synthesis_busy=self.synth_ms / pool if pool > 0 else 0.0,
            job_starts=tuple(self.job_starts),
        )

    # -- proofs and synthesis -----------------------------------------------------------

    def admit(self, t: float) -> None:
        while self.in_flight < self.cfg.concurrency and self.next_job < len(self.jobs):
            j = self.next_job
            self.next_job += 1
            self.in_flight += 1
            self.synth_queue.extend((j, w) for w in self.jobs[j])
        self.pump(t)

    def pump(self, t: float) -> None:
        speed = self.cfg.synthesis_speed
        while self.synth_free > 0 and self.synth_queue:
            j, w = self.synth_queue.popleft()
            self.synth_free -= 1
            if self.job_starts[j] != self.job_starts[j]:
                self.job_starts[j] = t
            dur = w.synth / speed
            self.synth_ms += dur
            self.at(t + dur, partial(self.synthesized, j=j, w=w))

    def synthesized(self, t: float, j: int, w: Work) -> None:
        self.synth_free += 1
        if w.gpu:
            self.gpu_queue.append((j, w))
            self.dispatch(t)
        else:
            self.finished(t, j)
        self.pump(t)

    # -- the GPUs ------------------------------------------------------------------------

    def dispatch(self, t: float) -> None:
        while self.idle and self.gpu_queue:
            worker = self.idle.popleft()
            j, w = self.gpu_queue.popleft()
            g = worker // self.cfg.gpu_workers
            start = t + self.load.pickup_ms + w.start
            self.at(start + w.pre, partial(self.ask, j=j, w=w, g=g, start=start, worker=worker))

    def take(self, lock: _Lock, t: float, then: Callable[[float], None]) -> None:
        if lock.held:
            lock.waiters.append(then)
        else:
            lock.held = True
            then(t)

    def give(self, lock: _Lock, t: float) -> None:
        if lock.waiters:
            nxt = lock.waiters.popleft()
            self.at(t + self.load.handoff_ms, nxt)
        else:
            lock.held = False

    def ask(self, t: float, j: int, w: Work, g: int, start: float, worker: int) -> None:
        if not self.cfg.split_lock:
            self.take(self.locks[g], t, lambda tl: self.locked(tl, j, w, g, start, worker))
            return

        # a split lock: the allocation and upload under a lock of their own, so that they
        # overlap the previous holder's kernels
        def allocating(ta: float) -> None:
            alloc = self.alloc_of(w, g)
            done = ta + alloc

            def allocated(td: float) -> None:
                self.give(self.alloc_locks[g], td)
                self.take(
                    self.locks[g], td, lambda tk: self.locked(tk, j, w, g, start, worker, 0.0)
                )

            self.at(done, allocated)

        self.take(self.alloc_locks[g], t, allocating)

    def alloc_of(self, w: Work, g: int) -> float:
        if self.warm[g]:
            return w.alloc
        self.warm[g] = True
        return w.alloc + self.load.warmup_ms.get(self.cfg.gpus[g], 0.0)

    def locked(
        self,
        t: float,
        j: int,
        w: Work,
        g: int,
        start: float,
        worker: int,
        alloc: float | None = None,
    ) -> None:
        speed = self.cfg.gpu_speed
        if alloc is None:
            alloc = self.alloc_of(w, g)
        k0 = t + alloc
        ntt_end = k0 + w.k1 / speed
        barrier_end = max(ntt_end, start + w.prep)
        kend = barrier_end + w.k2 / speed
        unlock = kend + w.hold
        self.kernels[g].append((k0, ntt_end))
        if w.k2 > 0:
            self.kernels[g].append((barrier_end, kend))
        lock = self.locks[g]
        lock.held_ms += unlock - t
        end = max(unlock + w.post, start + w.cpu)
        self.intervals[g].append((start, end))

        def unlocked(tu: float) -> None:
            self.give(lock, tu)
            self.idle.append(worker)
            self.dispatch(tu)

        self.at(unlock, unlocked)
        self.at(end, lambda te: self.ended(te, j))

    def ended(self, t: float, j: int) -> None:
        self.last_end = max(self.last_end, t)
        self.finished(t, j)

    def finished(self, t: float, j: int) -> None:
        self.open_parts[j] -= 1
        if self.open_parts[j] == 0:
            self.done += self.load.counted[j]
            self.in_flight -= 1
            self.at(t + self.load.admit_ms, self.admit)


def replay(
    load: Workload, config: Config, jobs: tuple[tuple[Work, ...], ...] | None = None
) -> Outcome:
    """Replay `load` (or other `jobs` of its kind, e.g. resampled) under `config`."""
    return _Replay(load, config, load.jobs if jobs is None else jobs).run()
