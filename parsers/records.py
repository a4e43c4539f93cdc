"""The builder's per-partition records, stored as columns.

A record is an index. Numeric fields are `array('d')` columns with NaN where the log
said nothing: a million partitions stay small (8 bytes a field, no Python object
each) and turn into numpy arrays at snapshot time without a Python loop.
"""

from __future__ import annotations

from array import array

# The C++ prover's timing lines for one GPU interval, in the order they are printed
# (LOG-FORMAT.md, "What happens inside one GPU interval"). A holder moves forward
# through these stages; a line of an earlier stage cannot belong to it any more.
STAGE_LOCK = 0  # pre_lock_cpu_ms=.. mutex_wait_ms=..
STAGE_POOL = 1  # d_a_cache allocated N MiB on gpu G (a GPU's first use: allocation)
STAGE_PRESTAGE = 2  # prestage_setup=.. (phase-9 engines)
STAGE_NTT_H = 3  # CUZK_NTT_H: d_b_alloc=.. total=..
STAGE_NTT_MSM = 4  # gpu_tid=0 ntt_msm_h_ms=..
STAGE_BARRIER = 5  # gpu_tid=0 barrier_wait_ms=..
STAGE_BATCH = 6  # gpu_tid=0 batch_add_ms=..
STAGE_TAIL = 7  # gpu_tid=0 tail_msm_ms=.. gpu_total_ms=..
STAGE_HELD = 8  # mutex_held_ms=.. total_start_fn_ms=..
STAGE_EPILOGUE = 9  # epilogue_ms=.. pre_destructor_ms=.. (engines of February 2026)

NAN = float("nan")

# TIMELINE-derived columns (integer stamps as floats; NaN when the log did not say)
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
    "ntt_blocks",  # how many CUZK_NTT_H lines (one per circuit)
)
FLOAT_FIELDS = (*STAMP_FIELDS, *TIMING_FIELDS)
# integer columns: -1 when unknown
INT_FIELDS = ("job", "partition", "kind", "worker", "start_line", "end_line")


class PartColumns:
    """Every partition (or whole-proof job) the log named, one column per field."""

    def __init__(self) -> None:
        self.jobs: list[str] = []  # job id strings, indexed by job number
        self.job_index: dict[str, int] = {}
        self.kinds: list[str] = []
        self.kind_index: dict[str, int] = {}
        self.n = 0
        self.job = array("q")
        self.partition = array("q")
        self.kind = array("q")
        self.worker = array("q")
        self.start_line = array("q")
        self.end_line = array("q")
        self.synth_start = array("d")
        self.synth_end = array("d")
        self.queued = array("d")
        self.pickup = array("d")
        self.gpu_start = array("d")
        self.gpu_end = array("d")
        self.pre_lock = array("d")
        self.mutex_wait = array("d")
        self.prestage = array("d")
        self.ntt_alloc = array("d")
        self.ntt_total = array("d")
        self.ntt_msm_h = array("d")
        self.barrier = array("d")
        self.batch_add = array("d")
        self.tail_msm = array("d")
        self.gpu_total = array("d")
        self.mutex_held = array("d")
        self.epilogue = array("d")
        self.pre_destructor = array("d")
        self.ntt_blocks = array("d")
        self.stage = array("q")  # the last C++ stage attributed (-1: none)
        self._floats = [getattr(self, name) for name in FLOAT_FIELDS]
        self._ints = [getattr(self, name) for name in (*INT_FIELDS, "stage")]

    def __len__(self) -> int:
        return self.n

    def add(self, job: str, partition: int | None) -> int:
        """A new record; returns its index."""
        j = self.job_index.get(job)
        if j is None:
            j = self.job_index[job] = len(self.jobs)
            self.jobs.append(job)
        for col in self._floats:
            col.append(NAN)
        for col in self._ints:
            col.append(-1)
        i = self.n
        self.job[i] = j
        self.partition[i] = -1 if partition is None else partition
        self.start_line[i] = 0
        self.end_line[i] = 0
        self.n += 1
        return i

    def kind_id(self, kind: str) -> int:
        """The number of a kind name."""
        k = self.kind_index.get(kind)
        if k is None:
            k = self.kind_index[kind] = len(self.kinds)
            self.kinds.append(kind)
        return k
