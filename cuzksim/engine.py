"""A seeded simulator of the cuzk engine that writes daemon logs in the real formats.

It models what docs/log-format.md describes: a pool of synthesis workers, a shared GPU
queue, GPU workers that take a per-GPU mutex, the C++ prover's timing lines, split
proving (the worker moves on while a finalizer ends the partition), failed
partitions, whole-proof jobs, stdout tracing lines (plain or ANSI), splices and
slightly disordered stamps. It serves the demo, the benchmarks and the tests, and
records the exact (float) times of everything it simulates as ground truth.
"""

from __future__ import annotations

import heapq
import random
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from cuzksim.config import SimConfig


@dataclass
class SimPartition:
    """Ground truth for one partition (float ms since engine start)."""

    job: str
    partition: int | None
    kind: str
    synth_start: float = 0.0
    synth_end: float | None = None
    queued: float | None = None
    pickup: float | None = None
    worker: int | None = None
    gpu: int | None = None
    gpu_start: float | None = None
    lock_requested: float | None = None
    lock_acquired: float | None = None
    alloc_ms: float = 0.0
    kernel_spans: list[tuple[float, float]] = field(default_factory=list)
    barrier_ms: float = 0.0
    unlock: float | None = None
    gpu_end: float | None = None
    failed: bool = False
    # integer stamps as written in TIMELINE lines
    stamps: dict[str, int] = field(default_factory=dict)


@dataclass
class _Proof:
    job: str
    kind: str
    parts: list[SimPartition]
    open_parts: int


ANSI_DIM = "\x1b[2m"
ANSI_RESET = "\x1b[0m"
ANSI_GREEN = "\x1b[32m"
ANSI_ITALIC = "\x1b[3m"
ANSI_BOLD = "\x1b[1m"

Fields = list[tuple[str, str]]
# (span name, span fields) of a tracing event logged inside a span
Span = tuple[str, Fields]

_MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def _pieces(text: str) -> list[int]:
    """Where eprintln! writes a TIMELINE line in separate pieces: after `TIMELINE,` and
    around each formatted argument (`TIMELINE,{},{},{},{}`)."""
    cuts = [len("TIMELINE,")]
    pos = cuts[0]
    for _ in range(3):
        comma = text.find(",", pos)
        if comma < 0:
            break
        cuts.extend((comma, comma + 1))
        pos = comma + 1
    cuts.append(len(text))
    return cuts


def _kind(text: str) -> str:
    """Which writer printed a line: the Rust TIMELINE, the C++ prover, or stdout."""
    if text.startswith("TIMELINE,"):
        return "timeline"
    return "c++" if text.startswith("CUZK_") else "stdout"


class EngineSim:
    """Discrete-event simulation of one cuzk engine run.

    Iterate `lines()` to get `(print_time_ms, text)` in the order the log holds them;
    afterwards `partitions` holds the ground truth.
    """

    def __init__(self, config: SimConfig) -> None:
        self.cfg = config
        self.rng = random.Random(config.seed)
        self.alloc_rng = random.Random(config.seed ^ 0x5EED)  # allocation no line prints
        self.partitions: list[SimPartition] = []
        self.wall_anchor = datetime(2026, 3, 16, 9, 0, 0, tzinfo=UTC) + timedelta(
            seconds=self.rng.uniform(0, 3600)
        )
        self._events: list[tuple[float, int, Callable[[], None]]] = []
        self._seq = 0
        self._out: list[tuple[float, int, str, SimPartition | None]] = []
        # which partition printed each C++ line under the lock, in the order the log holds
        # them (None: a line of no interval's phases); for checking attribution line by line
        self.timing_owners: list[SimPartition | None] = []
        self._owner: SimPartition | None = None
        self._synth_queue: deque[SimPartition] = deque()
        self._synth_free = config.pw
        self._gpu_queue: deque[SimPartition] = deque()
        self._idle_workers: list[int] = list(range(config.gpus * config.gw))
        # the engine of late February took one process-wide lock; later engines one per GPU
        domains = 1 if config.era == "feb" else config.gpus
        # a split lock: each domain's allocation lock is keyed -1 - domain
        keys = [*range(domains), *(-1 - d for d in range(domains))]
        self._mutex_holder: dict[int, bool] = dict.fromkeys(keys, False)
        self._mutex_waiters: dict[int, deque[Callable[[float], None]]] = {g: deque() for g in keys}
        self._gpu_warm: set[int] = set()
        self._proofs_started = 0
        self._in_flight = 0
        self._sector = 0
        self._proofs: dict[str, _Proof] = {}
        self._failed_jobs: set[str] = set()

    # -- plumbing ---------------------------------------------------------------------------

    def _at(self, t: float, fn: Callable[[], None]) -> None:
        self._seq += 1
        heapq.heappush(self._events, (t, self._seq, fn))

    def _print(self, t: float, text: str) -> None:
        self._seq += 1
        heapq.heappush(self._out, (t, self._seq, text, self._owner))

    def _timeline(self, t: float, event: str, part: SimPartition, detail: str) -> None:
        stamp_t = t
        print_t = t
        if self.cfg.jitter and self.rng.random() < 0.3:
            # the stamp is taken, then the thread is descheduled before the write
            print_t = t + self.rng.uniform(1.0, 6.0)
        stamp = int(stamp_t)
        part.stamps[event] = stamp
        self._print(print_t, f"TIMELINE,{stamp},{event},{part.job},{detail}")

    def _timing(self, t: float, text: str) -> None:
        self._print(t, "CUZK_TIMING: " + text)

    def _ordinal(self, worker: int) -> int:
        """The CUDA ordinal of a worker's GPU."""
        return self.cfg.gpu_base + worker // self.cfg.gw

    def _stdout(
        self,
        t: float,
        target: str,
        message: str,
        fields: Fields,
        always: bool = False,
        span: Span | None = None,
    ) -> None:
        cfg = self.cfg
        if cfg.stdout == "none":
            return
        if not always and cfg.stdout_share < 1.0 and self.rng.random() >= cfg.stdout_share:
            return
        ts = (self.wall_anchor + timedelta(milliseconds=t)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        span_text = ""
        if cfg.stdout == "ansi":
            kv = " ".join(
                f"{ANSI_ITALIC}{k}{ANSI_RESET}{ANSI_DIM}={ANSI_RESET}{v}" for k, v in fields
            )
            if span is not None and cfg.spans:
                inner = " ".join(
                    f"{ANSI_ITALIC}{k}{ANSI_RESET}{ANSI_DIM}={ANSI_RESET}{v}" for k, v in span[1]
                )
                span_text = (
                    f"{ANSI_BOLD}{span[0]}{ANSI_RESET}{ANSI_BOLD}{{{ANSI_RESET}{inner}"
                    f"{ANSI_BOLD}}}{ANSI_RESET}{ANSI_DIM}:{ANSI_RESET} "
                )
            line = (
                f"{ANSI_DIM}{ts}{ANSI_RESET} {ANSI_GREEN} INFO{ANSI_RESET} {span_text}"
                f"{ANSI_DIM}{target}{ANSI_RESET}{ANSI_DIM}:{ANSI_RESET} {message}"
            )
        else:
            kv = " ".join(f"{k}={v}" for k, v in fields)
            if span is not None and cfg.spans:
                span_text = f"{span[0]}{{{' '.join(f'{k}={v}' for k, v in span[1])}}}: "
            line = f"{ts}  INFO {span_text}{target}: {message}"
        self._print(t, f"{line} {kv}" if kv else line)

    def _gauss(self, mean: float, sd: float, floor: float) -> float:
        return max(floor, self.rng.gauss(mean, sd))

    # -- the engine -------------------------------------------------------------------------

    def _new_job(self) -> _Proof:
        cfg = self.cfg
        mono = self.rng.random() < cfg.mix
        if cfg.ids == "curio":
            self._sector += 1
            if mono:
                deadline = self.rng.randrange(48)
                sectors = " ".join(str(self.rng.randrange(256)) for _ in range(8))
                job = f"wdpost-{cfg.miner}-{deadline}-[{sectors}]"
            else:
                job = self.rng.choice(
                    (
                        f"porep-{cfg.miner}-{self._sector}",
                        f"porep-{cfg.miner}-{self._sector}",
                        f"ps-porep-{cfg.miner}-{self._sector}-{self.rng.randrange(1 << 20)}",
                    )
                )
        else:
            job = str(uuid.UUID(int=self.rng.getrandbits(128), version=4))
        if mono:
            parts = [SimPartition(job, None, "window-post")]
        else:
            parts = [SimPartition(job, p, "porep-c2") for p in range(cfg.partitions)]
        self.partitions.extend(parts)
        return _Proof(job, parts[0].kind, parts, len(parts))

    def _start_proofs(self, t: float) -> None:
        while self._in_flight < self.cfg.concurrency and self._proofs_started < self.cfg.proofs:
            self._proofs_started += 1
            self._in_flight += 1
            proof = self._new_job()
            self._proofs[proof.job] = proof
            self._synth_queue.extend(proof.parts)
        self._pump_synthesis(t)

    def _pump_synthesis(self, t: float) -> None:
        while self._synth_free > 0 and self._synth_queue:
            part = self._synth_queue.popleft()
            if part.job in self._failed_jobs:
                continue
            self._synth_free -= 1
            self._synth_start(t + self.rng.uniform(0.0, 0.8), part)

    def _synth_start(self, t: float, part: SimPartition) -> None:
        part.synth_start = t
        if part.partition is None:
            self._timeline(t, "SYNTH_START", part, f"kind={part.kind}")
            dur = self._gauss(self.cfg.synth_ms / 3, self.cfg.synth_sd / 3, 500.0)
        else:
            self._timeline(t, "SYNTH_START", part, f"partition={part.partition}")
            dur = self._gauss(self.cfg.synth_ms, self.cfg.synth_sd, 1000.0)
        if self.rng.random() < self.cfg.fail_synth:
            part.failed = True
            self._at(t + dur / 2, lambda: self._synth_failed(t + dur / 2, part))
            return
        self._at(t + dur, lambda: self._synth_end(t + dur, part))

    def _synth_failed(self, t: float, part: SimPartition) -> None:
        self._synth_free += 1
        self._fail_job(t, part)
        self._pump_synthesis(t)

    def _fail_job(self, t: float, part: SimPartition) -> None:
        """A partition failed: the job's partitions not started yet get no events at all."""
        self._failed_jobs.add(part.job)
        dropped = [p for p in self._synth_queue if p.job == part.job]
        dropped += [p for p in self._gpu_queue if p.job == part.job]
        self._synth_queue = deque(p for p in self._synth_queue if p.job != part.job)
        self._gpu_queue = deque(p for p in self._gpu_queue if p.job != part.job)
        for p in dropped:
            self.partitions.remove(p)
            self._part_done(t, p)
        self._part_done(t, part)

    def _synth_end(self, t: float, part: SimPartition) -> None:
        part.synth_end = t
        synth_ms = int(t - part.synth_start)
        queue_event = "GPU_QUEUE" if self.cfg.era == "p12" else "CHAN_SEND"
        tq = t + self.rng.uniform(0.05, 0.4)
        part.queued = tq
        if part.partition is None:
            self._timeline(t, "SYNTH_END", part, f"synth_ms={synth_ms}")
            self._timeline(tq, queue_event, part, "monolithic")
        else:
            self._timeline(t, "SYNTH_END", part, f"partition={part.partition},synth_ms={synth_ms}")
            self._stdout(
                t + 0.05,
                "cuzk_core::engine",
                "partition synthesis complete, pushing to GPU queue",
                [
                    ("job_id", part.job),
                    ("partition", str(part.partition)),
                    ("synth_ms", str(synth_ms)),
                ],
            )
            self._timeline(tq, queue_event, part, f"partition={part.partition}")
        self._synth_free += 1
        self._gpu_queue.append(part)
        self._at(tq + 0.01, lambda: self._dispatch(tq + 0.01))
        self._at(t + 0.5, lambda: self._pump_synthesis(t + 0.5))

    def _dispatch(self, t: float) -> None:
        while self._idle_workers and self._gpu_queue:
            # workers wait on the shared queue: the one waiting longest takes the next item
            worker = self._idle_workers.pop(0)
            part = self._gpu_queue.popleft()
            self._pickup(t + self.rng.uniform(0.2, 0.8), worker, part)

    def _worker_free(self, t: float, worker: int) -> None:
        self._idle_workers.append(worker)
        self._dispatch(t)

    def _pickup(self, t: float, worker: int, part: SimPartition) -> None:
        cfg = self.cfg
        part.pickup = t
        part.worker = worker
        part.gpu = self._ordinal(worker)
        wdetail = f"worker={worker}" + (
            f",partition={part.partition}" if part.partition is not None else ""
        )
        self._timeline(t, "GPU_PICKUP", part, wdetail)
        pfield = f"Some({part.partition})" if part.partition is not None else "None"
        if cfg.era == "p12":
            span: Span = (
                "gpu_worker",
                [
                    ("worker_id", str(worker)),
                    ("gpu", str(part.gpu)),
                    ("job_id", part.job),
                    ("proof_kind", part.kind),
                    ("batch_size", "1"),
                    ("partition", pfield),
                ],
            )
            self._stdout(
                t + 0.3,
                "cuzk_core::engine",
                "GPU_TIMING hot_path pre-prove overhead",
                [
                    ("worker_id", str(worker)),
                    ("partition", pfield),
                    ("status_ms", "0"),
                    ("total_overhead_ms", "1"),
                ],
                span=span,
            )
        if self.rng.random() < cfg.fail:
            part.failed = True
            self._at(t + 2.0, lambda: self._worker_free(t + 2.0, worker))
            self._at(t + 2.0, lambda: self._fail_job(t + 2.0, part))
            return
        ts = t + self.rng.uniform(0.5, 5.0)
        self._at(ts, lambda: self._gpu_start(ts, worker, part, wdetail))

    def _gpu_start(self, t: float, worker: int, part: SimPartition, wdetail: str) -> None:
        cfg = self.cfg
        rng = self.rng
        domain = 0 if cfg.era == "feb" else worker // cfg.gw
        part.gpu_start = t
        self._timeline(t, "GPU_START", part, wdetail)
        setup = rng.uniform(1.0, 6.0)
        self._timing(
            t + setup, f"split_vectors_ms={int(setup * 0.6)} setup_to_split_ms={int(setup)}"
        )
        if rng.random() < cfg.fail_prove and rng.random() < 0.5:
            # the prove fails before the lock: nothing more is printed for it
            part.failed = True
            tf = t + setup + rng.uniform(2.0, 20.0)
            self._at(tf, lambda: self._worker_free(tf, worker))
            self._at(tf, lambda: self._fail_job(tf, part))
            return
        circuits = rng.choice((2, 3)) if rng.random() < cfg.circuits else 1
        if cfg.era == "p12":
            prep = self._gauss(1900.0 * circuits, 40.0, 500.0)
            bg2 = self._gauss(1700.0 * circuits, 100.0, 200.0)
            pre_lock = self._gauss(35.0, 12.0, 5.0)
        elif cfg.era == "p9":
            prep = self._gauss(1900.0, 40.0, 500.0)
            bg2 = self._gauss(490.0, 8.0, 100.0)
            pre_lock = self._gauss(840.0, 40.0, 100.0)
        else:  # feb: the lock is taken at C++ entry
            prep = self._gauss(1900.0, 40.0, 500.0)
            bg2 = self._gauss(490.0, 8.0, 100.0)
            pre_lock = rng.uniform(0.1, 0.9)
        prep_done = t + prep
        bg2_done = prep_done + bg2
        self._timing(prep_done, f"prep_msm_ms={int(prep)}")
        self._timing(bg2_done, f"b_g2_msm_ms={int(bg2)} num_circuits={circuits}")
        requested = t + pre_lock
        part.lock_requested = requested

        def on_lock(lock_t: float) -> None:
            self._locked(lock_t, worker, domain, part, prep_done, bg2_done, circuits)

        first_lock = -1 - domain if cfg.split_lock and cfg.era == "p12" else domain
        self._at(requested, lambda: self._request_mutex(requested, first_lock, on_lock))

    def _request_mutex(self, t: float, domain: int, on_lock: Callable[[float], None]) -> None:
        if not self._mutex_holder[domain]:
            self._mutex_holder[domain] = True
            on_lock(t)
        else:
            self._mutex_waiters[domain].append(on_lock)

    def _release_mutex(self, t: float, domain: int) -> None:
        waiters = self._mutex_waiters[domain]
        if waiters:
            nxt = waiters.popleft()
            lt = t + self.rng.uniform(0.01, 0.1)
            self._at(lt, lambda: nxt(lt))
        else:
            self._mutex_holder[domain] = False

    def _locked(
        self,
        t: float,
        worker: int,
        domain: int,
        part: SimPartition,
        prep_done: float,
        bg2_done: float,
        circuits: int,
    ) -> None:
        cfg = self.cfg
        rng = self.rng
        sc = cfg.gpu_scale
        assert part.gpu_start is not None and part.lock_requested is not None
        self._owner = part
        part.lock_acquired = t
        pre_lock = part.lock_requested - part.gpu_start
        wait = t - part.lock_requested
        ordinal = self._ordinal(worker)
        first_use = ordinal not in self._gpu_warm
        self._gpu_warm.add(ordinal)
        cursor = t
        if cfg.era == "p12":
            self._timing(t, f"pre_lock_cpu_ms={int(pre_lock)} mutex_wait_ms={int(wait)}")
            extra = 0.0
            if first_use:
                self._timing(t + 0.2, f"set pool release threshold to MAX on gpu {ordinal}")
                self._timing(t + 0.3, f"d_a_cache allocated 4096 MiB on gpu {ordinal}")
                extra = rng.uniform(60.0, 90.0)
            alloc = extra
            ntt_h = extra
            for k in range(circuits):
                d_b_alloc = (
                    rng.uniform(650.0, 720.0) if first_use and k == 0 else rng.uniform(5.0, 40.0)
                )
                msm_init = rng.uniform(0.5, 2.5)
                ntt_k = self._gauss(292.0 * sc, 8.0, 10.0)
                coset = self._gauss(117.0 * sc, 4.0, 5.0)
                invoke = self._gauss(252.0 * sc, 8.0, 10.0)
                dtor = rng.uniform(0.5, 3.5)
                ntt_total = d_b_alloc + ntt_k + coset + msm_init + invoke + dtor
                alloc += d_b_alloc + msm_init
                ntt_h += ntt_total
                self._print(
                    t + ntt_h - 0.05,
                    "CUZK_NTT_H: "
                    f"d_b_alloc={int(d_b_alloc)}ms ntt_kernels={int(ntt_k)}ms "
                    f"coset_intt_sync={int(coset)}ms msm_init={int(msm_init)}ms "
                    f"msm_invoke={int(invoke)}ms msm_dtor={int(dtor)}ms total={int(ntt_total)}ms",
                )
            kstart = cursor + alloc
        elif cfg.era == "p9":
            self._timing(
                t + 0.1,
                "prestage_vram free_mib=21207 usable_mib=20695 need_da_mib=4096 "
                "need_dbc_mib=8192 total_mib=12288",
            )
            sync, trim, al, up = (
                rng.uniform(0, 3),
                rng.uniform(1, 3),
                rng.uniform(2, 7),
                rng.uniform(5, 12),
            )
            alloc = sync + trim + al + up
            self._timing(
                t + alloc,
                f"prestage_setup=ok domain=134217728 lot_of_memory=1 sync_ms={int(sync)} "
                f"trim_ms={int(trim)} alloc_ms={int(al)} upload_ms={int(up)} "
                f"total_ps_ms={int(alloc)}",
            )
            cursor = t + alloc
            ntt_h = self._gauss(690.0 * sc, 15.0, 50.0)
            t = cursor  # kernels measured from after the prestage in this era
            kstart = cursor
        else:  # feb: slower NTT, no allocation line, yet allocation inside ntt_msm_h
            ntt_h = self._gauss(1050.0 * sc, 25.0, 50.0)
            # the buffers' cudaMalloc (d_b, and d_a on a GPU's first use) is timed inside
            # ntt_msm_h but printed nowhere; drawn from a stream of its own so that the log
            # is the same bytes as before the truth knew of it
            cuda_malloc = (
                self.alloc_rng.uniform(710.0, 810.0)
                if first_use
                else self.alloc_rng.uniform(5.0, 40.0)
            )
            alloc = min(cuda_malloc, 0.5 * ntt_h)
            kstart = cursor + alloc

        gpu_start = part.gpu_start
        lock_at = t

        def finish(shift: float) -> None:
            # the kernels start `shift` ms late: waiting for the kernel lock (a split lock)
            self._owner = part
            ntt_end = t + shift + ntt_h
            self._timing(ntt_end, f"gpu_tid=0 ntt_msm_h_ms={int(ntt_h)}")
            barrier = max(0.0, prep_done - ntt_end) + rng.uniform(0.02, 0.06)
            if cfg.era == "p12":
                self._timing(ntt_end + barrier, f"gpu_tid=0 barrier_wait_ms={int(barrier)}")
            batch = self._gauss(655.0 * sc * circuits, 12.0, 50.0)
            tail = self._gauss(84.0 * sc * circuits, 2.0, 5.0)
            batch_end = ntt_end + barrier + batch
            self._timing(batch_end, f"gpu_tid=0 batch_add_ms={int(batch)}")
            gpu_total = ntt_h + barrier + batch + tail
            kend = batch_end + tail
            self._timing(kend, f"gpu_tid=0 tail_msm_ms={int(tail)} gpu_total_ms={int(gpu_total)}")
            part.alloc_ms = alloc
            part.kernel_spans = [(kstart + shift, ntt_end), (ntt_end + barrier, kend)]
            part.barrier_ms = barrier
            unlock = kend + rng.uniform(0.1, 0.4)
            part.unlock = unlock
            if cfg.era == "p12":
                self._timing(
                    unlock,
                    f"mutex_held_ms={int(unlock - lock_at)} "
                    f"total_start_fn_ms={int(unlock - gpu_start)}",
                )
            self._at(unlock, lambda: self._release_mutex(unlock, domain))
            pfield = f"Some({part.partition})" if part.partition is not None else "None"
            if cfg.era == "p12":
                free_t = unlock + rng.uniform(0.3, 1.5)
                self._stdout(
                    free_t,
                    "cuzk_core::engine",
                    "GPU_TIMING spawn_blocking prove_start",
                    [
                        ("worker_id", str(worker)),
                        ("partition", pfield),
                        ("spawn_to_enter_ms", "0"),
                        ("prove_start_ms", str(int(unlock - gpu_start))),
                    ],
                )
                self._at(free_t, lambda: self._worker_free(free_t, worker))
            end = max(unlock, bg2_done) + rng.uniform(5.0, 15.0)
            self._owner = None
            if cfg.era == "p12" and rng.random() < cfg.fail_prove:
                # the finalizer fails: every timing line was printed, GPU_END never is
                part.failed = True
                self._at(end, lambda: self._fail_job(end, part))
                return
            self._at(end, lambda: self._gpu_end(end, worker, part, unlock, pfield))

        if cfg.split_lock and cfg.era == "p12":
            # the allocation's own lock is let go once allocated; the kernels wait for the
            # GPU's lock, which the previous holder keeps until its kernels end
            allocated = t + alloc

            def kernels(tk: float) -> None:
                finish(tk - allocated)

            self._at(allocated, lambda: self._release_mutex(allocated, -1 - domain))
            self._at(allocated, lambda: self._request_mutex(allocated, domain, kernels))
            self._owner = None
        else:
            finish(0.0)

    def _gpu_end(
        self, t: float, worker: int, part: SimPartition, unlock: float, pfield: str
    ) -> None:
        cfg = self.cfg
        assert part.gpu_start is not None
        part.gpu_end = t
        gpu_ms = int(t - part.gpu_start)
        if cfg.era != "p12":
            epi = self.rng.uniform(2.0, 5.0)
            self._timing(t - 1.0, f"epilogue_ms={int(epi)} pre_destructor_ms={gpu_ms - 1}")
        else:
            self._stdout(
                t - 0.5,
                "cuzk_core::pipeline",
                "GPU prove complete (split)",
                [("proof_count", "1"), ("proof_bytes", "192"), ("gpu_ms", str(gpu_ms))],
            )
        detail = f"worker={worker}"
        if part.partition is not None:
            detail += f",partition={part.partition}"
        self._timeline(t, "GPU_END", part, f"{detail},gpu_ms={gpu_ms}")
        kind = "partition" if part.partition is not None else "monolithic"
        self._stdout(
            t + 1.0,
            "cuzk_core::engine",
            f"FIN_TIMING finalizer {kind}",
            [
                ("worker_id", str(worker)),
                ("partition", pfield),
                ("finish_ms", str(int(t - unlock))),
                ("drop_res_ms", "0"),
                ("lock_wait_ms", "0"),
                ("process_ms", "0"),
                ("total_ms", str(int(t - unlock) + 2)),
            ],
        )
        self._timing(
            t + self.rng.uniform(-2.0, 15.0), f"async_dealloc_ms={self.rng.randint(8, 16)}"
        )
        if cfg.era != "p12":
            self._at(t + 1.5, lambda: self._worker_free(t + 1.5, worker))
        self._part_done(t, part)

    def _part_done(self, t: float, part: SimPartition) -> None:
        proof = self._proofs[part.job]
        proof.open_parts -= 1
        if proof.open_parts == 0:
            self._in_flight -= 1
            self._at(t + 1.0, lambda: self._start_proofs(t + 1.0))

    # -- output -----------------------------------------------------------------------------

    def _start(self) -> None:
        cfg = self.cfg
        self._stdout(
            0.0,
            "cuzk_core::engine",
            "starting cuzk engine",
            [("pipeline_enabled", "true")],
            always=True,
        )
        for w in range(cfg.gpus * cfg.gw):
            self._stdout(
                0.4 + w * 0.1,
                "cuzk_core::engine",
                "pipeline GPU worker started",
                [
                    ("worker_id", str(w)),
                    ("gpu", str(self._ordinal(w))),
                    ("sub_id", str(w % cfg.gw)),
                ],
                always=True,
            )
        first = self.rng.uniform(1100.0, 1500.0)
        self._at(first, lambda: self._start_proofs(first))

    def _logical_lines(self) -> Iterator[tuple[float, str]]:
        """Every line the daemon writes, in the order it writes them."""
        self._start()
        while self._events or self._out:
            next_event = self._events[0][0] if self._events else float("inf")
            if self._out and self._out[0][0] <= next_event:
                t, _, text, owner = heapq.heappop(self._out)
                if text.startswith("CUZK_"):
                    self.timing_owners.append(owner)
                yield t, text
            else:
                _, _, fn = heapq.heappop(self._events)
                fn()

    def _written(self) -> Iterator[tuple[float, str]]:
        """The lines as the file receives them: a line written in parts may have the next
        line land between its parts (a splice). Yields physical lines."""
        cfg = self.cfg
        rng = self.rng
        held: tuple[float, str, int] | None = None  # a line cut at a position
        for t, text in self._logical_lines():
            if held is not None:
                ht, htext, cut = held
                held = None
                # eprintln! holds stderr's lock for a whole TIMELINE line: no other TIMELINE
                # line lands inside one, and a stdout line does not land inside a stdout line
                if _kind(text) == _kind(htext):
                    yield ht, htext
                else:
                    yield t, htext[:cut] + text
                    yield t, htext[cut:]
                    continue
            cut = -1
            if text.startswith("TIMELINE,") and rng.random() < cfg.splice:
                if cfg.splice_at == "pieces":
                    cut = rng.choice(_pieces(text))
                else:
                    cut = rng.randrange(1, len(text) + 1)
            elif (
                cfg.splice_stdout
                and not text.startswith(("TIMELINE,", "CUZK_"))
                and rng.random() < cfg.splice_stdout
            ):
                cut = rng.randrange(1, len(text))
            if cut > 0:
                held = (t, text, cut)
                continue
            yield t, text
        if held is not None:
            yield held[0], held[1]

    def _prefix(self, t: float) -> str:
        """The capture's prefix of a line received at `t` (journald adds a little delay)."""
        cfg = self.cfg
        if cfg.capture == "file":
            return ""
        wall = self.wall_anchor + timedelta(milliseconds=t + 0.2)
        if cfg.capture == "docker":
            return wall.strftime("%Y-%m-%dT%H:%M:%S.%f") + "000Z "
        tail = " gpu-host-1 cuzk[41231]: "
        if cfg.capture == "journal-iso":
            return wall.strftime("%Y-%m-%dT%H:%M:%S+0000") + tail
        day = f"{_MONTHS[wall.month - 1]} {wall.day:2d} {wall.strftime('%H:%M:%S')}"
        if cfg.capture == "journal-precise":
            return f"{day}.{wall.microsecond:06d}{tail}"
        return day + tail

    def lines(self) -> Iterator[tuple[float, str]]:
        """Run the simulation, yielding `(print_time_ms, line)` in log order (no newline)."""
        for t, text in self._written():
            yield t, self._prefix(t) + text
