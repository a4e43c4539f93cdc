"""Mutable per-partition records that the builder fills as lines arrive."""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(slots=True, eq=True)
class PartRecord:
    """Everything the log said about one partition (or one whole-proof job).

    Times are TIMELINE stamps (integer ms); durations come from C++ timing lines.
    `None` means the log did not say.
    """

    job: str
    partition: int | None
    kind: str = ""
    worker: int | None = None
    synth_start: int | None = None
    synth_end: int | None = None
    queued: int | None = None
    pickup: int | None = None
    gpu_start: int | None = None
    gpu_end: int | None = None
    # where the GPU_START / GPU_END lines are in the file (physical line numbers, 1-based)
    start_line: int = 0
    end_line: int = 0
    # C++ timing durations attributed to this interval
    pre_lock_ms: int | None = None
    mutex_wait_ms: int | None = None
    prestage_ms: int | None = None
    ntt_alloc_ms: int | None = None  # d_b_alloc + msm_init
    ntt_total_ms: int | None = None  # CUZK_NTT_H total
    ntt_msm_h_ms: int | None = None
    barrier_ms: int | None = None
    batch_add_ms: int | None = None
    tail_msm_ms: int | None = None
    gpu_total_ms: int | None = None
    mutex_held_ms: int | None = None
    epilogue_ms: int | None = None
    pre_destructor_ms: int | None = None
    stage: int = -1  # the last C++ stage attributed
    timing_lines: tuple[int, ...] = ()  # physical line numbers of the attributed timing lines

    @property
    def lock_acquired(self) -> int | None:
        """gpu_start + pre_lock + mutex_wait, when all three are known."""
        if self.gpu_start is None or self.pre_lock_ms is None or self.mutex_wait_ms is None:
            return None
        return self.gpu_start + self.pre_lock_ms + self.mutex_wait_ms
