"""The builder's per-partition records, stored as columns (one Python list per field).

A record is an index. Columns keep a million partitions small and turn into numpy
arrays at snapshot time in one C loop each (`None` becomes NaN).
"""

from __future__ import annotations

# The C++ prover's timing lines for one GPU interval, in the order they are printed
# (LOG-FORMAT.md, "What happens inside one GPU interval"). A holder moves forward
# through these stages; a line of an earlier stage cannot belong to it any more.
STAGE_LOCK = 0  # pre_lock_cpu_ms=.. mutex_wait_ms=..
STAGE_PRESTAGE = 1  # prestage_setup=.. (phase-9 engines)
STAGE_NTT_H = 2  # CUZK_NTT_H: d_b_alloc=.. total=..
STAGE_NTT_MSM = 3  # gpu_tid=0 ntt_msm_h_ms=..
STAGE_BARRIER = 4  # gpu_tid=0 barrier_wait_ms=..
STAGE_BATCH = 5  # gpu_tid=0 batch_add_ms=..
STAGE_TAIL = 6  # gpu_tid=0 tail_msm_ms=.. gpu_total_ms=..
STAGE_HELD = 7  # mutex_held_ms=.. total_start_fn_ms=..
STAGE_EPILOGUE = 8  # epilogue_ms=.. pre_destructor_ms=.. (phase-9 engines)

Opt = int | None

# TIMELINE-derived columns (integer stamps, or None when the log did not say)
STAMP_FIELDS = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")
# C++ durations attributed to the interval (ms)
TIMING_FIELDS = (
    "pre_lock",
    "mutex_wait",
    "prestage",
    "ntt_alloc",  # CUZK_NTT_H d_b_alloc + msm_init
    "ntt_total",  # CUZK_NTT_H total
    "ntt_msm_h",
    "barrier",
    "batch_add",
    "tail_msm",
    "gpu_total",
    "mutex_held",
    "epilogue",
    "pre_destructor",
)


class PartColumns:
    """Every partition (or whole-proof job) the log named, one list per field."""

    def __init__(self) -> None:
        self.jobs: list[str] = []  # job id strings, indexed by job number
        self.job_index: dict[str, int] = {}
        self.kinds: list[str] = []
        self.kind_index: dict[str, int] = {}
        self.job: list[int] = []
        self.partition: list[Opt] = []
        self.kind: list[int] = []
        self.worker: list[Opt] = []
        self.synth_start: list[Opt] = []
        self.synth_end: list[Opt] = []
        self.queued: list[Opt] = []
        self.pickup: list[Opt] = []
        self.gpu_start: list[Opt] = []
        self.gpu_end: list[Opt] = []
        self.start_line: list[int] = []
        self.end_line: list[int] = []
        self.pre_lock: list[Opt] = []
        self.mutex_wait: list[Opt] = []
        self.prestage: list[Opt] = []
        self.ntt_alloc: list[Opt] = []
        self.ntt_total: list[Opt] = []
        self.ntt_msm_h: list[Opt] = []
        self.barrier: list[Opt] = []
        self.batch_add: list[Opt] = []
        self.tail_msm: list[Opt] = []
        self.gpu_total: list[Opt] = []
        self.mutex_held: list[Opt] = []
        self.epilogue: list[Opt] = []
        self.pre_destructor: list[Opt] = []
        self.stage: list[int] = []  # the last C++ stage attributed (-1: none)
        self.timing_lines: list[tuple[int, ...]] = []

    def __len__(self) -> int:
        return len(self.job)

    def add(self, job: str, partition: Opt) -> int:
        """A new record; returns its index."""
        j = self.job_index.get(job)
        if j is None:
            j = self.job_index[job] = len(self.jobs)
            self.jobs.append(job)
        self.job.append(j)
        self.partition.append(partition)
        self.kind.append(-1)
        for name in (*STAMP_FIELDS, "worker", *TIMING_FIELDS):
            getattr(self, name).append(None)
        self.start_line.append(0)
        self.end_line.append(0)
        self.stage.append(-1)
        self.timing_lines.append(())
        return len(self.job) - 1

    def kind_id(self, kind: str) -> int:
        """The number of a kind name."""
        k = self.kind_index.get(kind)
        if k is None:
            k = self.kind_index[kind] = len(self.kinds)
            self.kinds.append(kind)
        return k

    def lock_acquired(self, i: int) -> int | None:
        """gpu_start + pre_lock + mutex_wait, when all three are known."""
        s, a, b = self.gpu_start[i], self.pre_lock[i], self.mutex_wait[i]
        if s is None or a is None or b is None:
            return None
        return s + a + b
