"""Typed interface of the compiled core (core/src/python/), checked by mypy.stubtest."""

from collections.abc import Sequence
from typing import Any, final

import numpy as np
import numpy.typing as npt

__all__ = [
    "FLOAT_FIELDS",
    "I32_FIELDS",
    "I64_FIELDS",
    "CoreError",
    "Counts",
    "LineRegex",
    "RowWriter",
    "RunFacts",
    "Scanner",
    "StopFlag",
    "TrackEventWriter",
    "busy_split",
    "first_free_rows",
    "gap_rows_json",
    "lane_segments",
    "numpy_api",
    "proof_rows_json",
    "reconstruct_segments",
    "release_free_memory",
    "worker_sums",
]

# the columns' names, in the order the core keeps them
FLOAT_FIELDS: tuple[str, ...]
I32_FIELDS: tuple[str, ...]
I64_FIELDS: tuple[str, ...]

class CoreError(RuntimeError):
    """The core failed (a bug caught at its boundary); the reader that raised it is unusable."""

@final
class Counts:
    """How many lines of each sort a run holds."""

    @property
    def timeline(self) -> int: ...
    @property
    def cuzk_timing(self) -> int: ...
    @property
    def stdout(self) -> int: ...
    @property
    def spliced(self) -> int: ...
    @property
    def malformed(self) -> int: ...
    @property
    def other(self) -> int: ...

@final
class RunFacts:
    """What a run's reading found besides its records."""

    @property
    def max_stamp(self) -> int: ...
    @property
    def engine_seen(self) -> bool: ...
    @property
    def lock_lines_seen(self) -> bool: ...
    @property
    def unattributed(self) -> int: ...
    @property
    def unattributed_kernel_ms(self) -> float: ...
    @property
    def kernel_lines(self) -> tuple[int, int, int]: ...

@final
class LineRegex:
    """A pattern the log pane searches with, in time linear in the text (core/src/search.rs)."""

    def __new__(cls, pattern: str, ignore_case: bool) -> LineRegex: ...
    def first_line(self, data: bytes) -> int | None: ...
    def last_line(self, data: bytes) -> int | None: ...
    def line_spans(self, line: bytes) -> tuple[str, list[tuple[int, int]]]: ...

@final
class StopFlag:
    """Ends a span being read (`Scanner.feed_span`) from another thread."""

    def __new__(cls) -> StopFlag: ...
    def set(self) -> None: ...

@final
class Scanner:
    """The incremental scanner of one log."""

    def __new__(cls, workers_per_gpu: int | None = None) -> Scanner: ...
    def feed(self, data: bytes) -> None: ...
    def feed_fd(self, fd: int) -> int: ...
    def feed_span(self, fd: int, offset: int, length: int, stop: StopFlag | None = None) -> int: ...
    def finish(self) -> None: ...
    def flush_pending(self) -> bool: ...
    def run_count(self) -> int: ...
    def run_first_line(self, run: int | None = None) -> int: ...
    def counts(self, run: int | None = None) -> Counts: ...
    def columns(
        self, run: int | None = None
    ) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, npt.NDArray[np.integer[Any]]]]: ...
    def live_rows(
        self, rows: npt.NDArray[np.int64] | None = None
    ) -> tuple[
        dict[str, npt.NDArray[np.float64]], dict[str, npt.NDArray[np.integer[Any]]], list[int]
    ]: ...
    def live_snapshot(
        self, rows: npt.NDArray[np.int64] | None = None, first_new: int = 0
    ) -> dict[str, Any]: ...
    def take_touched(self) -> list[int] | None: ...
    def record_count(self) -> int: ...
    def hand_over(
        self,
    ) -> tuple[dict[str, npt.NDArray[np.float64]], dict[str, npt.NDArray[np.integer[Any]]]]: ...
    def run_names(self, run: int) -> tuple[list[str], list[str]]: ...
    def new_names(self) -> tuple[list[str], list[str]]: ...
    def worker_gpu(self, run: int | None = None) -> list[tuple[int, int]]: ...
    def wall_anchor(self, run: int | None = None) -> tuple[int, bool] | None: ...
    def kernel_doubt(self, gpu: int, run: int | None = None) -> tuple[float, float]: ...
    def run_facts(self, run: int | None = None) -> RunFacts: ...
    def cpu_lines(
        self, since: int = 0
    ) -> tuple[
        npt.NDArray[np.int64], npt.NDArray[np.int8], npt.NDArray[np.int64], npt.NDArray[np.int32]
    ]: ...
    def let_go_cpu_lines(self, upto: int) -> None: ...
    def line_index(self) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], int, bytes]: ...
    @property
    def bytes_read(self) -> int: ...
    @property
    def lines_read(self) -> int: ...
    @property
    def max_stamp(self) -> int: ...
    @property
    def partial_bytes(self) -> int: ...
    @property
    def engine_seen(self) -> bool: ...
    @property
    def lock_lines_seen(self) -> bool: ...
    @property
    def unattributed(self) -> int: ...
    @property
    def unattributed_kernel_ms(self) -> float: ...

def numpy_api() -> None:
    """Load numpy's C API, raising what loading it raised (an interrupt, a signal's exit)."""

def release_free_memory() -> None:
    """Give the memory freed so far back to the system: the core's allocator's, and (with
    glibc) the C heap's, where numpy's arrays live."""

def first_free_rows(
    starts: npt.NDArray[np.float64], ends: npt.NDArray[np.float64], touching: bool = True
) -> npt.NDArray[np.int64]: ...
def lane_segments(
    members: npt.NDArray[np.int64],
    seg_offsets: npt.NDArray[np.int64],
    seg_start: npt.NDArray[np.float64],
    seg_end: npt.NDArray[np.float64],
    seg_phase: npt.NDArray[np.int8],
) -> tuple[
    npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.int8], npt.NDArray[np.int32]
]: ...
def worker_sums(
    gpu_start: npt.NDArray[np.float64],
    gpu_end: npt.NDArray[np.float64],
    worker: npt.NDArray[np.int32],
    seg_start: npt.NDArray[np.float64],
    seg_end: npt.NDArray[np.float64],
    seg_phase: npt.NDArray[np.int8],
    seg_part: npt.NDArray[np.int64],
    phases: int,
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]
]: ...
def busy_split(
    gpu_start: npt.NDArray[np.float64],
    gpu_end: npt.NDArray[np.float64],
    gpu: npt.NDArray[np.int32],
    seg_start: npt.NDArray[np.float64],
    seg_end: npt.NDArray[np.float64],
    seg_phase: npt.NDArray[np.int8],
    seg_part: npt.NDArray[np.int64],
    order: list[int],
    phases: int,
    window: list[tuple[int, float, float]],
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]: ...
def reconstruct_segments(
    columns: dict[str, npt.NDArray[np.float64]],
    now: float,
    failed_end: npt.NDArray[np.float64] | None = None,
) -> tuple[
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.int8],
    npt.NDArray[np.int64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
    npt.NDArray[np.float64],
]: ...
def gap_rows_json(
    rank: npt.NDArray[np.int64],
    gpu: npt.NDArray[np.int32],
    start: npt.NDArray[np.int64],
    end: npt.NDArray[np.int64],
    cause: npt.NDArray[np.int8],
    crosses: npt.NDArray[np.bool_],
    before: npt.NDArray[np.int64],
    after: npt.NDArray[np.int64],
    job: npt.NDArray[np.int32],
    worker: npt.NDArray[np.int32],
    partition: npt.NDArray[np.int32],
    jobs: Sequence[str],
    causes: Sequence[str | None],
) -> str: ...
def proof_rows_json(
    job: npt.NDArray[np.int64],
    kind: npt.NDArray[np.int64],
    partitions: npt.NDArray[np.int64],
    first: npt.NDArray[np.float64],
    last: npt.NDArray[np.float64],
    completed: npt.NDArray[np.bool_],
    failed: npt.NDArray[np.bool_],
    jobs: Sequence[str],
    kinds: Sequence[str],
    log: npt.NDArray[np.int32] | None = None,
    logs: Sequence[str] = ...,
) -> str: ...

# the export's writers (core/src/rowtext.rs, core/src/trackevent.rs)
@final
class RowWriter:
    """Rows of columns as text, each kind of row from its template."""

    def __new__(
        cls,
        templates: Sequence[tuple[Sequence[tuple[bytes, int, int]], bytes]],
        blob: bytes,
        ends: npt.NDArray[np.int64],
        null: bytes,
    ) -> RowWriter: ...
    def rows(
        self,
        kind: npt.NDArray[np.uint8],
        ints: Sequence[npt.NDArray[np.int64]],
        floats: Sequence[npt.NDArray[np.float64]],
        separator: bytes,
    ) -> bytes: ...

@final
class TrackEventWriter:
    """Perfetto TrackEvent packets of one sequence, its strings interned."""

    def __new__(
        cls,
        kinds: Sequence[tuple[int, Sequence[tuple[int, int, int]]]],
        blob: bytes,
        ends: npt.NDArray[np.int64],
        sequence: int,
    ) -> TrackEventWriter: ...
    def slices(
        self,
        track: int,
        kind: npt.NDArray[np.uint8],
        ints: Sequence[npt.NDArray[np.int64]],
        floats: Sequence[npt.NDArray[np.float64]],
    ) -> tuple[bytes, int]: ...
    def close(self) -> bytes: ...
    def counters(
        self, track: int, ts_us: npt.NDArray[np.int64], values: npt.NDArray[np.float64]
    ) -> bytes: ...
