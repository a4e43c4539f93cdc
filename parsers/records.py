"""The records contract between the core's wrapper (parsers/builder.py) and the analysis
(parsers/analysis.py): the columns of a run's records, the facts of a run, and what a live
snapshot reads in one call. The analysis reads a run through `RunRecords` and a live feed
through `LiveRecords`; it never imports the wrapper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from parsers import _core
from parsers.model import F64, I32, I64, LineCounts

# The float columns as the core names them: the stamps (ms on the engine's clock), then the
# C++ durations attributed to each interval (ms).
FLOAT_FIELDS: tuple[str, ...] = _core.FLOAT_FIELDS


@dataclass(frozen=True, slots=True)
class Columns:
    """A copy of every record the builder has, as numpy columns (NaN / -1: not said)."""

    floats: dict[str, F64]  # FLOAT_FIELDS
    job: I32
    partition: I32
    kind: I32
    worker: I32
    start_line: I64
    end_line: I64
    jobs: tuple[str, ...]
    kinds: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.job)


@dataclass(frozen=True, slots=True)
class LiveSnapshot:
    """What a live snapshot reads of the run being read, from one call to the core
    (`LogBuilder.live_snapshot`)."""

    runs: int  # the core's run count
    touched: list[int] | None  # records written since the last call (None: too many)
    records: int
    columns: Columns  # the records asked for
    open_rows: list[int]  # records open decisions change (as `Scanner.live_rows`)
    counts: LineCounts
    max_stamp: int
    engine_seen: bool
    lock_lines_seen: bool
    unattributed_timing_lines: int
    unattributed_kernel_ms: float
    kernel_lines: tuple[int, int, int]  # the kernel lines read: NTT, batch, tail
    worker_gpu: dict[int, int]
    wall_anchor: datetime | None
    partial_bytes: int
    kernel_doubt: dict[int, tuple[float, float]]  # per GPU the core has doubt of


class RunRecords(Protocol):
    """One run's records and facts, as the analysis reads them (`parsers.builder.Run`)."""

    source: str
    workers_per_gpu: int | None  # --workers-per-gpu, for the workers the log places on none

    def columns(self) -> Columns:
        """A copy of the run's records."""
        ...

    @property
    def counts(self) -> LineCounts:
        """How many lines of each sort were read."""
        ...

    @property
    def worker_gpu(self) -> dict[int, int]:
        """The worker → GPU map the log gave."""
        ...

    def gpus_of(self, workers: I32 | I64, table: dict[int, int] | None = None) -> I64:
        """The GPU of each worker (-1 stays -1)."""
        ...

    @property
    def wall_anchor(self) -> datetime | None:
        """The wall clock of offset 0, when the log gives it."""
        ...

    def kernel_doubt_ms(self, gpu: int) -> tuple[float, float]:
        """Kernel ms of `gpu` another GPU could own, and ms elsewhere it could own."""
        ...

    @property
    def max_stamp(self) -> int:
        """The latest TIMELINE stamp read (-1: none)."""
        ...

    @property
    def engine_seen(self) -> bool:
        """A stdout line of the cuzk engine was read."""
        ...

    @property
    def lock_lines_seen(self) -> bool:
        """The engine prints lock lines."""
        ...

    @property
    def unattributed_timing_lines(self) -> int:
        """C++ timing lines that matched no GPU interval."""
        ...

    @property
    def unattributed_kernel_ms(self) -> float:
        """Kernel time in the timing lines that matched no GPU interval."""
        ...

    @property
    def kernel_lines(self) -> tuple[int, int, int]:
        """The kernel lines read: NTT, batch additions, tail MSMs."""
        ...

    @property
    def partial_bytes(self) -> int:
        """Bytes of an incomplete last line waiting for its newline."""
        ...


class LiveRecords(Protocol):
    """The run being read, as the live analysis reads it (`parsers.builder.LogBuilder`)."""

    source: str
    workers_per_gpu: int | None  # as for RunRecords

    def live_snapshot(self, rows: I64 | None, first_new: int) -> LiveSnapshot:
        """Records `rows` and those from `first_new` on, and the run's facts, in one call."""
        ...

    def record_count(self) -> int:
        """How many records the run being read has."""
        ...

    def gpus_of(self, workers: I32 | I64, table: dict[int, int] | None = None) -> I64:
        """The GPU of each worker (-1 stays -1)."""
        ...
