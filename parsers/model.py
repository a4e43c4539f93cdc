"""The immutable model of a cuzk log: what the screen, the report and the export read.

The many things (phase segments, busy blocks) are columns: sorted numpy arrays per
lane, so that "what covers [t0, t1) on lane L" is two `searchsorted` calls. The few
things (gaps, proofs, per-GPU figures) are small frozen dataclasses.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from enum import IntEnum
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar, overload

import numpy as np
import numpy.typing as npt

from parsers.durations import duration
from parsers.sanitize import visible

if TYPE_CHECKING:
    from parsers.linefacts import LineFacts
    from parsers.tracing import TracedJob

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]
I8 = npt.NDArray[np.int8]
I32 = npt.NDArray[np.int32]


class Phase(IntEnum):
    """A segment of one GPU interval (docs/analysis.md#phase-segments)."""

    PRE_LOCK = 0
    LOCK_WAIT = 1
    ALLOC = 2
    KERNEL = 3
    BARRIER = 4
    CLEANUP = 5
    UNKNOWN = 6
    IN_FLIGHT = 7  # an interval started and not ended yet (live logs)
    FAILED = 8  # a prove that failed: GPU_START and never GPU_END (its worker moved on)


@dataclass(frozen=True, slots=True)
class PhaseWords:
    """How a phase is said: the one vocabulary of the screen, the reports and the exports
    (the glyphs and the colours it is drawn in are the viewer's: tui/lanes.py)."""

    key: str  # in the JSON, the CSV and the trace: `lock_wait`
    name: str  # on screen and in the text report: `lock wait`
    short: str  # in the header's narrow busy split: `lock`
    doing: str  # what a worker in it is doing, in a gap's why: `waiting for the lock`


PHASES: dict[Phase, PhaseWords] = {
    Phase.PRE_LOCK: PhaseWords("pre_lock", "pre-lock", "pre", "pre-lock"),
    Phase.LOCK_WAIT: PhaseWords("lock_wait", "lock wait", "lock", "waiting for the lock"),
    Phase.ALLOC: PhaseWords("alloc", "alloc", "alloc", "allocating"),
    Phase.KERNEL: PhaseWords("kernel", "kernel", "kern", "running kernels"),
    Phase.BARRIER: PhaseWords("barrier", "barrier", "barr", "at the barrier"),
    Phase.CLEANUP: PhaseWords("cleanup", "cleanup", "clean", "in cleanup"),
    Phase.UNKNOWN: PhaseWords("unknown", "unknown", "unk", "in an unexplained stretch"),
    Phase.IN_FLIGHT: PhaseWords("in_flight", "running", "run", "in a running prove"),
    Phase.FAILED: PhaseWords("failed", "failed", "fail", "in a failed prove"),
}
# a phase's name (PhaseWords.name), looked up often
PHASE_NAMES = {p: w.name for p, w in PHASES.items()}

# A kernel_util_range narrower than this is shown as one number
# (docs/analysis.md#kernel_util_range).
KERNEL_EXACT_WIDTH = 0.005

# the keys of the phases an ended interval is split into (not running, not failed), in
# Phase's order: the per-phase columns of the JSON, the CSV and the model's sums
PHASE_KEYS = tuple(PHASES[p].key for p in Phase if p not in (Phase.IN_FLIGHT, Phase.FAILED))
# a phase's name by its key
NAMES_BY_KEY = {w.key: w.name for w in PHASES.values()}


@dataclass(slots=True)
class LineCounts:
    """How many lines of each sort were read."""

    timeline: int = 0
    cuzk_timing: int = 0
    stdout: int = 0
    spliced: int = 0
    malformed: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        """All logical lines (a rejoined splice counts as its two lines)."""
        return self.timeline + self.cuzk_timing + self.stdout + self.malformed + self.other

    def copy(self) -> LineCounts:
        """An independent copy (the builder keeps counting)."""
        return LineCounts(
            self.timeline, self.cuzk_timing, self.stdout, self.spliced, self.malformed, self.other
        )

    def as_dict(self) -> dict[str, int]:
        """The JSON report's `lines` object."""
        return {
            "total": self.total,
            "timeline": self.timeline,
            "cuzk_timing": self.cuzk_timing,
            "stdout": self.stdout,
            "spliced": self.spliced,
            "malformed": self.malformed,
            "other": self.other,
        }


@dataclass(frozen=True, slots=True)
class Partition:
    """One partition (or whole-proof job) as the log tells it. Times in ms (stamps)."""

    index: int
    job: str
    partition: int | None
    kind: str
    worker: int | None
    gpu: int | None
    synth_start: int | None
    synth_end: int | None
    queued: int | None
    pickup: int | None
    gpu_start: int | None
    gpu_end: int | None
    failed: bool
    start_line: int
    end_line: int
    lock_acquired: float | None
    unlock: float | None
    phases_ms: dict[str, float]
    segments: tuple[tuple[float, float, Phase], ...]


def _opt_int(x: float) -> int | None:
    return None if x != x else int(x)


# the columns of a PartitionTable: one value per row, then the phase segments
ROW_FIELDS = (
    "job",
    "partition",
    "kind",
    "worker",
    "gpu",
    "synth_start",
    "synth_end",
    "queued",
    "pickup",
    "gpu_start",
    "gpu_end",
    "lock_acquired",
    "unlock",
    "failed",
    "start_line",
    "end_line",
)
SEGMENT_FIELDS = ("seg_start", "seg_end", "seg_phase", "seg_offsets")
A = TypeVar("A", bound=np.ndarray)
T = TypeVar("T")


class _Column(Generic[A]):
    """A column of a PartitionTable: the table's own, or its parts' put together when it is
    first read."""

    name = ""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, table: None, owner: type) -> _Column[A]: ...
    @overload
    def __get__(self, table: PartitionTable, owner: type) -> A: ...
    def __get__(self, table: PartitionTable | None, owner: type) -> _Column[A] | A:
        if table is None:
            return self
        value = table._cols.get(self.name)
        if value is None:
            value = table._join(self.name)
        return value  # type: ignore[return-value]


class PartitionTable:
    """Every partition as columns. Missing stamps are NaN; missing ids are -1.

    A live model's table is its settled part's rows, then the live ones (`joined`): each
    column is put together when first read, so an update copies only the columns something
    reads (the screen reads few), not every column of a long log.
    """

    __slots__ = ("_cols", "_memo", "_parts", "_rows", "jobs", "kinds")

    job = _Column[I32]()  # index into jobs
    partition = _Column[I32]()  # -1: a whole-proof job
    kind = _Column[I32]()
    worker = _Column[I32]()
    gpu = _Column[I32]()
    synth_start = _Column[F64]()
    synth_end = _Column[F64]()
    queued = _Column[F64]()
    pickup = _Column[F64]()
    gpu_start = _Column[F64]()
    gpu_end = _Column[F64]()
    lock_acquired = _Column[F64]()
    unlock = _Column[F64]()
    failed = _Column[npt.NDArray[np.bool_]]()
    start_line = _Column[I64]()
    end_line = _Column[I64]()
    # phase segments of every interval, grouped by partition (seg_offsets[i]..[i+1])
    seg_start = _Column[F64]()
    seg_end = _Column[F64]()
    seg_phase = _Column[I8]()
    seg_offsets = _Column[I64]()

    def __init__(
        self,
        *,
        jobs: tuple[str, ...],
        kinds: tuple[str, ...],
        job: I32,
        partition: I32,
        kind: I32,
        worker: I32,
        gpu: I32,
        synth_start: F64,
        synth_end: F64,
        queued: F64,
        pickup: F64,
        gpu_start: F64,
        gpu_end: F64,
        lock_acquired: F64,
        unlock: F64,
        failed: npt.NDArray[np.bool_],
        start_line: I64,
        end_line: I64,
        seg_start: F64,
        seg_end: F64,
        seg_phase: I8,
        seg_offsets: I64,
    ) -> None:
        self.jobs = jobs  # job id strings
        self.kinds = kinds
        cols: dict[str, np.ndarray] = {
            "job": job,
            "partition": partition,
            "kind": kind,
            "worker": worker,
            "gpu": gpu,
            "synth_start": synth_start,
            "synth_end": synth_end,
            "queued": queued,
            "pickup": pickup,
            "gpu_start": gpu_start,
            "gpu_end": gpu_end,
            "lock_acquired": lock_acquired,
            "unlock": unlock,
            "failed": failed,
            "start_line": start_line,
            "end_line": end_line,
            "seg_start": seg_start,
            "seg_end": seg_end,
            "seg_phase": seg_phase,
            "seg_offsets": seg_offsets,
        }
        self._cols = cols
        self._parts: tuple[PartitionTable, ...] = ()
        self._rows = len(job)
        self._memo: dict[str, object] = {}

    @classmethod
    def joined(cls, tables: Sequence[PartitionTable]) -> PartitionTable:
        """The tables' rows one after the other (the last one's names: each table's names
        begin with the one's before)."""
        if len(tables) == 1:
            return tables[0]
        table = cls.__new__(cls)
        table.jobs, table.kinds = tables[-1].jobs, tables[-1].kinds
        table._cols = {}
        table._parts = tuple(tables)
        table._rows = sum(len(t) for t in tables)
        table._memo = {}
        return table

    def _join(self, name: str) -> np.ndarray:
        """Column `name` of the parts, put together (kept: a table never changes)."""
        if name == "seg_offsets":
            value = joined_offsets(self._parts)
        else:
            value = np.concatenate([getattr(t, name) for t in self._parts])
        # two threads may put it together at once: both get the same columns
        self._cols[name] = value
        return value

    def __len__(self) -> int:
        return self._rows

    def seg_rows(self) -> I64:
        """The row each segment is of (by `seg_offsets`: a row's segments are together)."""
        return np.repeat(np.arange(len(self), dtype=np.int64), np.diff(self.seg_offsets))

    def memo(self, name: str, make: Callable[[PartitionTable], T]) -> T:
        """What `make` gives of this table, made once (a table never changes): a live
        model's settled part is a table of every snapshot's, whose figures each update
        would make again."""
        if name not in self._memo:
            self._memo[name] = make(self)
        return self._memo[name]  # type: ignore[return-value]

    def parts_of(self) -> tuple[PartitionTable, ...]:
        """The tables whose rows are this one's, one after the other (itself when it joins
        none): what asks something of every row asks it of each, no column put together."""
        return self._parts or (self,)

    def parts_from(self) -> Iterator[tuple[int, PartitionTable]]:
        """Each of `parts_of`'s tables with the row of this table that is its first."""
        first = 0
        for t in self.parts_of():
            yield first, t
            first += len(t)

    def _part_of(self, i: int) -> tuple[PartitionTable, int]:
        """The part that holds row `i` (0 <= i < len), and the row `i` is in it."""
        for first, t in self.parts_from():
            if i < first + len(t):
                return t, i - first
        raise IndexError(f"row {i} outside 0..{self._rows - 1}")

    def any_row(self, test: Callable[[PartitionTable], npt.NDArray[np.bool_]]) -> bool:
        """Whether `test` (a mask of a table's rows) holds for a row, asked of each part."""
        return any(bool(test(t).any()) for t in self.parts_of())

    def take(self, name: str, rows: I32 | I64) -> np.ndarray:
        """Column `name` (one of ROW_FIELDS: a value per row) at `rows` (negative: from the
        end), read from the part that holds each row where the column is not put together
        already.

        Raises: ValueError: `name` is a segment column (a value per segment); IndexError: a
        row outside the table.
        """
        if name not in ROW_FIELDS:
            raise ValueError(f"not a column of one value per row: {name}")
        if not self._parts or name in self._cols:
            return np.asarray(getattr(self, name)[rows])
        if len(rows) and (rows.min() < -self._rows or rows.max() >= self._rows):
            raise IndexError(f"a row of {name} outside 0..{self._rows - 1}")
        rows = np.where(rows < 0, rows + self._rows, rows)
        out = np.empty(len(rows), dtype=getattr(self._parts[0], name).dtype)
        for first, t in self.parts_from():
            mine = (rows >= first) & (rows < first + len(t))
            out[mine] = getattr(t, name)[rows[mine] - first]
        return out

    def item(self, name: str, i: int) -> Any:
        """Column `name` (of ROW_FIELDS) at row `i`, as a Python number, read from the part
        that holds it: one value read puts no column together.

        Raises: ValueError: `name` is a segment column; IndexError: a row outside the table.
        """
        if name not in ROW_FIELDS:
            raise ValueError(f"not a column of one value per row: {name}")
        if not self._parts or name in self._cols:
            return getattr(self, name)[i].item()
        row = i + self._rows if i < 0 else i
        if not 0 <= row < self._rows:
            raise IndexError(f"a row of {name} outside 0..{self._rows - 1}")
        t, local = self._part_of(row)
        return getattr(t, name)[local].item()

    def replaced(self, **columns: np.ndarray) -> PartitionTable:
        """This table with `columns` in place of its own."""
        table = PartitionTable.__new__(PartitionTable)
        table.jobs, table.kinds = self.jobs, self.kinds
        names = ROW_FIELDS + SEGMENT_FIELDS
        table._cols = {name: columns.get(name, getattr(self, name)) for name in names}
        table._parts = ()
        table._rows = len(table._cols["job"])
        table._memo = {}
        return table

    def drawn_span(self, i: int) -> tuple[float, float]:
        """Where interval `i` is drawn: GPU_START to GPU_END, or to its last segment's end
        (running, failed)."""
        if self._parts and "seg_offsets" not in self._cols and 0 <= i < self._rows:
            t, local = self._part_of(i)  # from the part that holds it
            return t.drawn_span(local)
        start, end = float(self.item("gpu_start", i)), float(self.item("gpu_end", i))
        if end == end:
            return start, end
        a, b = int(self.seg_offsets[i]), int(self.seg_offsets[i + 1])
        return start, float(self.seg_end[b - 1]) if b > a else start

    def job_of(self, i: int) -> str:
        """The job id of partition `i`."""
        return self.jobs[int(self.item("job", i))]

    def get(self, i: int) -> Partition:
        """Partition `i` as an object (for the few things inspected one at a time)."""
        if self._parts and 0 <= i < self._rows:
            # from the part that holds it: one row read would put every column together
            t, local = self._part_of(i)
            return replace(t.get(local), index=i)
        a, b = int(self.seg_offsets[i]), int(self.seg_offsets[i + 1])
        segments = tuple(
            (float(s), float(e), Phase(int(k)))
            for s, e, k in zip(
                self.seg_start[a:b], self.seg_end[a:b], self.seg_phase[a:b], strict=True
            )
        )
        phases = dict.fromkeys(PHASE_KEYS, 0.0)
        for s, e, k in segments:
            if k < len(PHASE_KEYS):
                phases[PHASE_KEYS[k]] += e - s
        part = int(self.partition[i])
        worker = int(self.worker[i])
        gpu = int(self.gpu[i])
        lock, unlock = float(self.lock_acquired[i]), float(self.unlock[i])
        return Partition(
            index=i,
            job=self.job_of(i),
            partition=None if part < 0 else part,
            kind=self.kinds[int(self.kind[i])] if self.kind[i] >= 0 else "",
            worker=None if worker < 0 else worker,
            gpu=None if gpu < 0 else gpu,
            synth_start=_opt_int(float(self.synth_start[i])),
            synth_end=_opt_int(float(self.synth_end[i])),
            queued=_opt_int(float(self.queued[i])),
            pickup=_opt_int(float(self.pickup[i])),
            gpu_start=_opt_int(float(self.gpu_start[i])),
            gpu_end=_opt_int(float(self.gpu_end[i])),
            failed=bool(self.failed[i]),
            start_line=int(self.start_line[i]),
            end_line=int(self.end_line[i]),
            lock_acquired=None if lock != lock else lock,
            unlock=None if unlock != unlock else unlock,
            phases_ms=phases,
            segments=segments,
        )


def joined_offsets(tables: Sequence[PartitionTable]) -> I64:
    """The segment offsets of the tables' rows one after the other."""
    offsets = [np.zeros(1, dtype=np.int64)]
    base = 0
    for t in tables:
        offsets.append(t.seg_offsets[1:] + base)
        base += int(t.seg_offsets[-1])
    return np.concatenate(offsets)


@dataclass(frozen=True, slots=True)
class Segments:
    """Phase segments in time order (they never overlap)."""

    starts: F64
    ends: F64
    phases: I8
    partition: I32  # index into LogModel.parts

    def __len__(self) -> int:
        return len(self.starts)

    def covering(self, t0: float, t1: float) -> tuple[int, int]:
        """Index range [i, j) of the segments that overlap [t0, t1)."""
        i = int(np.searchsorted(self.ends, t0, side="right"))
        j = int(np.searchsorted(self.starts, t1, side="left"))
        return i, max(i, j)

    def part(self, i: int, j: int) -> Segments:
        """Segments i..j-1."""
        return Segments(self.starts[i:j], self.ends[i:j], self.phases[i:j], self.partition[i:j])

    @staticmethod
    def join(parts: Sequence[Segments]) -> Segments:
        """Several runs of segments, each after the one before, as one."""
        if len(parts) == 1:
            return parts[0]
        return Segments(
            np.concatenate([p.starts for p in parts]),
            np.concatenate([p.ends for p in parts]),
            np.concatenate([p.phases for p in parts]),
            np.concatenate([p.partition for p in parts]),
        )


@dataclass(frozen=True, slots=True, eq=False)
class LaneMembers:
    """The intervals of a lane laid out whole, in its order, and how to gather their
    segments (`gather(members)`: each one's, one after another). Their spans (GPU_START to
    where each is drawn to) do not overlap and hold their segments, so both are sorted."""

    members: I64
    starts: F64  # each member's GPU_START
    ends: F64  # where each is drawn to
    gather: Callable[[I64], Segments]

    def near(self, t0: float, t1: float) -> tuple[int, int]:
        """The members [i, j) whose spans may overlap [t0, t1): those that do, and one more
        either side."""
        i = int(np.searchsorted(self.ends, t0, side="right")) - 1
        j = int(np.searchsorted(self.starts, t1, side="left")) + 1
        return max(i, 0), min(max(j, i), len(self.starts))

    def segments(self, i: int, j: int) -> Segments:
        """The segments of members i..j-1."""
        return self.gather(self.members[i:j])


@dataclass(frozen=True, slots=True, eq=False)
class Lane:
    """One Gantt row of phase segments: a worker, or a sub-row of it where intervals overlap.

    Segments on a lane never overlap, so both starts and ends are sorted. A live model keeps
    them in chunks, one after the other in time (its settled part and the rest), so that a
    snapshot does not copy what it did not change; `window` reads across them. A lane laid
    out whole may be given as `gather`, which puts its segments together on first use (the
    text report reads a few instants of its lanes, and need not copy every segment).
    """

    gpu: int
    worker: int
    sub_row: int
    given: tuple[Segments, ...]
    gather: LaneMembers | None = field(default=None, repr=False)
    _made: list[tuple[Segments, ...]] = field(default_factory=list, repr=False)
    _joined: list[Segments] = field(default_factory=list, repr=False)

    @property
    def chunks(self) -> tuple[Segments, ...]:
        """The segments in runs apart in time (gathered once, on first use; two threads may
        gather at once: both get the same segments)."""
        if self.gather is None:
            return self.given
        if not self._made:
            self._made.append((self.gather.segments(0, len(self.gather.starts)),))
        return self._made[0]

    @property
    def segments(self) -> Segments:
        """Every segment as one run (joined once, on first use)."""
        if not self._joined:
            self._joined.append(Segments.join(self.chunks))
        return self._joined[0]

    @property
    def starts(self) -> F64:
        """Segment starts."""
        return self.segments.starts

    @property
    def ends(self) -> F64:
        """Segment ends."""
        return self.segments.ends

    @property
    def phases(self) -> I8:
        """Segment phases."""
        return self.segments.phases

    @property
    def partition(self) -> I32:
        """Each segment's partition (index into LogModel.parts)."""
        return self.segments.partition

    def __len__(self) -> int:
        return sum(len(c) for c in self.chunks)

    def window(self, t0: float, t1: float) -> Segments:
        """The segments that overlap [t0, t1) (of a lane not gathered yet: its members'
        that may, gathered alone)."""
        if self.gather is not None and not self._made:
            near = self.gather.segments(*self.gather.near(t0, t1))
            return near.part(*near.covering(t0, t1))
        if len(self.chunks) == 1:
            return self.chunks[0].part(*self.chunks[0].covering(t0, t1))
        parts = []
        for c in self.chunks:
            if len(c) and c.ends[-1] > t0 and c.starts[0] < t1:
                parts.append(c.part(*c.covering(t0, t1)))
        if not parts:
            return self.chunks[0].part(0, 0)
        return Segments.join(parts)


@dataclass(frozen=True, slots=True)
class Blocks:
    """A union of intervals: disjoint sorted [start, end) blocks."""

    starts: F64
    ends: F64

    @property
    def total_ms(self) -> float:
        """Covered length."""
        return float(np.sum(self.ends - self.starts)) if len(self.starts) else 0.0


@dataclass(frozen=True, slots=True)
class GapSide:
    """The interval on one side of a gap."""

    job: str
    worker: int
    partition: int | None
    index: int  # into LogModel.parts


@dataclass(frozen=True, slots=True)
class Gap:
    """A stretch of a GPU's span that no GPU interval covers (docs/analysis.md#gaps)."""

    gpu: int
    start: int
    end: int
    before: GapSide
    after: GapSide
    cause: str | None  # "synthesis", "dispatch", or None
    after_queued: int | None  # when the after-partition was queued

    @property
    def duration_ms(self) -> int:
        """end - start."""
        return self.end - self.start

    @property
    def crosses_proof_boundary(self) -> bool:
        """The jobs on the two sides differ."""
        return self.before.job != self.after.job


# A gap's cause, by its code in GapTable.cause.
CAUSES: tuple[str | None, ...] = (None, "synthesis", "dispatch")
NO_STAMP = np.iinfo(np.int64).min  # GapTable.after_queued where the log has no queue event


@dataclass(frozen=True, slots=True, eq=False)
class GapTable(Sequence[Gap]):
    """Every gap as columns, by start (then GPU): filtering, counting and ranking them is a
    numpy call; `table[i]` makes gap i an object (for the few looked at one at a time)."""

    gpu: I32
    start: I64
    end: I64
    before: I64  # index into parts of the interval before
    after: I64  # ...and after
    cause: I8  # index into CAUSES
    after_queued: I64  # NO_STAMP: the after-partition has no queue event
    parts: PartitionTable

    @staticmethod
    def empty(parts: PartitionTable) -> GapTable:
        """No gap."""
        z = np.zeros(0, dtype=np.int64)
        return GapTable(z.astype(np.int32), z, z, z, z, z.astype(np.int8), z, parts)

    @staticmethod
    def concat(tables: Sequence[GapTable], parts: PartitionTable) -> GapTable:
        """Several tables' gaps one after the other (their sides already index `parts`)."""
        if not tables:
            return GapTable.empty(parts)
        return GapTable(
            np.concatenate([g.gpu for g in tables]),
            np.concatenate([g.start for g in tables]),
            np.concatenate([g.end for g in tables]),
            np.concatenate([g.before for g in tables]),
            np.concatenate([g.after for g in tables]),
            np.concatenate([g.cause for g in tables]),
            np.concatenate([g.after_queued for g in tables]),
            parts,
        )

    def __len__(self) -> int:
        return len(self.start)

    @overload
    def __getitem__(self, i: int) -> Gap: ...
    @overload
    def __getitem__(self, i: slice) -> GapTable: ...
    def __getitem__(self, i: int | slice) -> Gap | GapTable:
        if isinstance(i, slice):
            return self.take(np.arange(len(self))[i])
        n = len(self)
        if not -n <= i < n:
            raise IndexError(i)
        i %= n
        q = int(self.after_queued[i])
        return Gap(
            int(self.gpu[i]),
            int(self.start[i]),
            int(self.end[i]),
            self._side(int(self.before[i])),
            self._side(int(self.after[i])),
            CAUSES[int(self.cause[i])],
            None if q == NO_STAMP else q,
        )

    def __iter__(self) -> Iterator[Gap]:
        return (self[i] for i in range(len(self)))

    def _side(self, i: int) -> GapSide:
        t = self.parts  # a row read from its part: no column put together
        part = int(t.item("partition", i))
        return GapSide(t.job_of(i), int(t.item("worker", i)), None if part < 0 else part, i)

    @property
    def duration(self) -> I64:
        """end - start of every gap (ms)."""
        out: I64 = self.end - self.start
        return out

    @property
    def crosses(self) -> npt.NDArray[np.bool_]:
        """Whether each gap's two sides are different jobs."""
        take = self.parts.take
        out: npt.NDArray[np.bool_] = take("job", self.before) != take("job", self.after)
        return out

    def take(self, idx: npt.NDArray[np.integer]) -> GapTable:
        """The gaps at `idx`, in that order."""
        return GapTable(
            self.gpu[idx],
            self.start[idx],
            self.end[idx],
            self.before[idx],
            self.after[idx],
            self.cause[idx],
            self.after_queued[idx],
            self.parts,
        )

    def index_of(self, gpu: int, start: int) -> int | None:
        """The index of the gap of `gpu` that starts at `start`, if there is one."""
        i = int(np.searchsorted(self.start, start, side="left"))
        while i < len(self) and self.start[i] == start:
            if self.gpu[i] == gpu:
                return i
            i += 1
        return None

    def ranks(self) -> I64:
        """Each gap's number, 1 for the longest (ties: the earlier, then the lower GPU): the
        one numbering of the status line, the gap list, the inspector and the report."""
        order = np.lexsort((self.gpu, self.start, -self.duration))
        ranks = np.empty(len(self), dtype=np.int64)
        ranks[order] = np.arange(1, len(self) + 1)
        return ranks

    def largest(self, top: int, min_ms: int = 0) -> list[int]:
        """The indices of the `top` longest gaps of at least `min_ms`, longest first (the
        order of `ranks`)."""
        idx = np.flatnonzero(self.duration >= min_ms)
        order = np.lexsort((self.gpu[idx], self.start[idx], -self.duration[idx]))
        return [int(i) for i in idx[order[:top]]]

    def rank_of(self, i: int) -> int:
        """Gap i's number in `ranks` (without ranking them all)."""
        d, s, g = self.duration, self.start, self.gpu
        di, si, gi = d[i], s[i], g[i]
        ahead = (d > di) | ((d == di) & ((s < si) | ((s == si) & (g < gi))))
        return int(np.count_nonzero(ahead)) + 1

    def how_many(self, gpu: int | None = None, min_ms: int = 0) -> int:
        """How many gaps (of `gpu`, if given) last `min_ms` or more."""
        keep = self.duration >= min_ms
        if gpu is not None:
            keep &= self.gpu == gpu
        return int(np.count_nonzero(keep))


@dataclass(frozen=True, slots=True)
class GpuStats:
    """Per-GPU figures (docs/analysis.md#per-gpu)."""

    gpu: int
    workers: tuple[int, ...]
    span: tuple[int, int] | None
    busy: Blocks  # union of completed GPU intervals
    kernel: Blocks  # union of kernel segments
    in_flight: int  # intervals started and not ended
    # the kernel busy time the log allows (docs/analysis.md#kernel_util_range): certain .. possible
    kernel_range_ms: tuple[float, float] = (0.0, 0.0)
    kernel_estimate_ms: float | None = None  # None: the union of the kernel segments
    # the least and most kernel time the lines attributed to its intervals print, wherever
    # their kernels ran: the sum less the allocation the NTT blocks may hide and what
    # truncation to whole ms may take, and plus what it may add (docs/analysis.md#all-gpus)
    kernel_lines_ms: tuple[float, float] = (0.0, 0.0)
    # its engine prints lock lines: pre-lock and lock wait are measured (False: the oldest
    # engines, whose wait for the lock is in unknown time, docs/analysis.md#phase-segments)
    lock_printed: bool = True

    @property
    def span_ms(self) -> int:
        """Length of the span (0 when no interval completed)."""
        return 0 if self.span is None else self.span[1] - self.span[0]

    @property
    def spanned(self) -> bool:
        """Its span has a length: its shares of span are figures. A GPU whose intervals are
        all running (or whose one interval lasted 0 ms) has none: `–`, null in the JSON."""
        return self.span_ms > 0

    @property
    def busy_ms(self) -> int:
        """Union of GPU intervals (integer stamps, so exact)."""
        return round(self.busy.total_ms)

    @property
    def kernel_busy_ms(self) -> float:
        """Union of kernel segments (reconstructed: an estimate, inside kernel_range_ms);
        for engines without lock lines, the sum of the intervals' kernel lines if larger."""
        if self.kernel_estimate_ms is not None:
            return self.kernel_estimate_ms
        return self.kernel.total_ms

    @property
    def timeline_util(self) -> float:
        """busy / span: the "TIMELINE" utilization."""
        return self.busy_ms / self.span_ms if self.span_ms else 0.0

    @property
    def kernel_util(self) -> float:
        """kernel busy / span: the honest one."""
        return self.kernel_busy_ms / self.span_ms if self.span_ms else 0.0

    @property
    def kernel_util_range(self) -> tuple[float, float]:
        """[lo, hi]: the kernel utilization the log allows; kernel_util lies inside."""
        if not self.span_ms:
            return (0.0, 0.0)
        lo, hi = self.kernel_range_ms
        return (lo / self.span_ms, hi / self.span_ms)

    @property
    def kernel_is_estimate(self) -> bool:
        """The log cannot pin the kernel figure within half a point: show its range."""
        lo, hi = self.kernel_util_range
        return hi - lo > KERNEL_EXACT_WIDTH


@dataclass(frozen=True, slots=True)
class WorkerStats:
    """Per-worker interval count and time in each phase."""

    worker: int
    gpu: int
    intervals: int
    phases_ms: dict[str, float]
    # of its intervals, those a lock line was given to: pre-lock and lock wait are theirs
    # (the others' time before the lock is unknown time)
    lock_lines: int = 0


class Proof(NamedTuple):
    """All partitions of one job id (a tuple: a long log has tens of thousands, made at
    every snapshot, and a tuple is made four times faster than a frozen dataclass)."""

    job: str
    kind: str
    partitions: int
    first_synth_start: int | None
    last_gpu_end: int | None
    completed: bool
    last_seen: int | None = None  # the latest stamp of any of its partitions


# where a proof without a SYNTH_START sorts (`proof_key`)
NO_FIRST = 1 << 62


def proof_key(p: Proof) -> tuple[int, str]:
    """The order proofs are listed in: by first SYNTH_START (none last), then job id."""
    return (p.first_synth_start if p.first_synth_start is not None else NO_FIRST, p.job)


@dataclass(frozen=True, slots=True)
class ProofTable:
    """A list of proofs as columns, in its order: a long log has tens of thousands, and a
    report writes them without making one object each (`ProofList` makes them if asked)."""

    job: I64  # job number, into `jobs`
    kind: I64  # into `kinds` (-1: not said)
    partitions: I64
    first: F64  # first SYNTH_START (NaN: none)
    last: F64  # last GPU_END (NaN: none)
    completed: npt.NDArray[np.bool_]
    seen: F64  # latest stamp of any of its partitions (NaN: none)
    jobs: tuple[str, ...]
    kinds: tuple[str, ...]

    def __len__(self) -> int:
        return len(self.job)

    def proofs(self) -> tuple[Proof, ...]:
        """One object each."""
        jobs, kinds = self.jobs, self.kinds
        return tuple(
            Proof(
                jobs[job],
                kinds[k] if k >= 0 else "",
                parts,
                None if first != first else int(first),
                None if last != last else int(last),
                done,
                None if seen != seen else int(seen),
            )
            for job, k, parts, first, last, done, seen in zip(
                self.job.tolist(),
                self.kind.tolist(),
                self.partitions.tolist(),
                self.first.tolist(),
                self.last.tolist(),
                self.completed.tolist(),
                self.seen.tolist(),
                strict=True,
            )
        )

    def proof(self, k: int) -> Proof:
        """Proof `k` (from the end when negative) made alone, as `proofs` makes each.

        Raises: IndexError: there is no proof `k`.
        """
        k = range(len(self))[k]
        first, last, seen = (float(c[k]) for c in (self.first, self.last, self.seen))
        kind = int(self.kind[k])
        return Proof(
            self.jobs[int(self.job[k])],
            self.kinds[kind] if kind >= 0 else "",
            int(self.partitions[k]),
            None if first != first else int(first),
            None if last != last else int(last),
            bool(self.completed[k]),
            None if seen != seen else int(seen),
        )

    def key_order_index(self) -> I64 | None:
        """The order that puts these proofs in `proof_key` order (None: they are; a model's
        own proofs are, but for a log without TIMELINE lines, whose jobs come as the log
        names them)."""
        step = np.diff(_key_firsts(self.first))
        name = self.jobs.__getitem__
        ties = np.flatnonzero(step == 0).tolist()  # only these are told apart by job id
        job = self.job
        if not (step < 0).any() and all(name(job[k]) <= name(job[k + 1]) for k in ties):
            return None
        return key_order(self.first, [name(j) for j in job.tolist()])

    def in_key_order(self) -> ProofTable:
        """These proofs in `proof_key` order (`key_order_index`)."""
        order = self.key_order_index()
        return self if order is None else self.take(order)

    def named(self, names: Collection[str]) -> npt.NDArray[np.bool_]:
        """Per proof, whether its job id is one of `names` (read from the columns: a long
        log's tens of thousands of proofs are not made one object each)."""
        if not names:
            return np.zeros(len(self), dtype=bool)
        return np.isin(self.job, [k for k, name in enumerate(self.jobs) if name in names])

    def spans(self) -> ProofSpans:
        """The columns a drawing reads."""
        return ProofSpans(self.first, self.last, self.completed, self.seen)

    def take(self, keep: npt.NDArray[np.bool_] | npt.NDArray[np.int64]) -> ProofTable:
        """The proofs where `keep` is True, in their order (or at `keep`'s indices)."""
        return ProofTable(
            self.job[keep],
            self.kind[keep],
            self.partitions[keep],
            self.first[keep],
            self.last[keep],
            self.completed[keep],
            self.seen[keep],
            self.jobs,
            self.kinds,
        )

    def insert(
        self, at: I64, other: ProofTable, jobs: tuple[str, ...], kinds: tuple[str, ...]
    ) -> ProofTable:
        """`other`'s proofs put before proofs `at` (as numpy.insert does); `jobs` and
        `kinds` name the job and kind numbers of both (the names of a later snapshot of
        the same run: numbers are given first seen first, and never change)."""
        return ProofTable(
            np.insert(self.job, at, other.job),
            np.insert(self.kind, at, other.kind),
            np.insert(self.partitions, at, other.partitions),
            np.insert(self.first, at, other.first),
            np.insert(self.last, at, other.last),
            np.insert(self.completed, at, other.completed),
            np.insert(self.seen, at, other.seen),
            jobs,
            kinds,
        )

    @staticmethod
    def of(proofs: Sequence[Proof]) -> ProofTable:
        """The columns of `proofs` (each its own job and kind name)."""
        if isinstance(proofs, ProofList):
            return proofs.table
        spans = ProofSpans.of(proofs)
        n = len(proofs)
        index = np.arange(n, dtype=np.int64)
        return ProofTable(
            job=index,
            kind=index,
            partitions=np.array([p.partitions for p in proofs], dtype=np.int64),
            first=spans.first,
            last=spans.last,
            completed=spans.completed,
            seen=spans.seen,
            jobs=tuple(p.job for p in proofs),
            kinds=tuple(p.kind for p in proofs),
        )


def _key_firsts(first: F64) -> F64:
    """The first part of each proof's sort key: its first SYNTH_START, NO_FIRST for none
    (stamps are whole ms: as floats they sort as the key's integers do)."""
    return np.where(np.isnan(first), float(NO_FIRST), first)


def key_order(first: F64, jobs: Sequence[str]) -> I64:
    """The order that puts proofs of these first SYNTH_STARTs (NaN: none) and job ids in
    `proof_key` order (stable: of two with the same key, the earlier first)."""
    by_name = np.empty(len(jobs), dtype=np.int64)
    by_name[sorted(range(len(jobs)), key=jobs.__getitem__)] = np.arange(len(jobs))
    return np.lexsort((by_name, _key_firsts(first)))


def merge_positions(kept: ProofTable, made: ProofTable) -> I64:
    """Where each of `made`'s proofs goes among `kept`'s (both in `proof_key` order, their
    job numbers named by the same names): after every kept proof of a key up to its own,
    as `bisect.insort_right` would put it."""
    kf, mf = _key_firsts(kept.first), _key_firsts(made.first)
    at = np.searchsorted(kf, mf, side="left").astype(np.int64)
    tied_to = np.searchsorted(kf, mf, side="right")
    for k in np.flatnonzero(tied_to > at).tolist():
        # kept proofs of the same first SYNTH_START: by job id among them
        lo, hi = int(at[k]), int(tied_to[k])
        names = [kept.jobs[j] for j in kept.job[lo:hi].tolist()]
        at[k] = lo + bisect.bisect_right(names, made.jobs[int(made.job[k])])
    return at


class ProofList(Sequence[Proof]):
    """A model's proofs over their columns: each `Proof` is made the first time one is
    asked for (the JSON report reads only the columns). Equal to any sequence of the same
    proofs, a tuple among them."""

    __slots__ = ("_made", "table")

    def __init__(self, table: ProofTable) -> None:
        self.table = table
        self._made: tuple[Proof, ...] | None = None

    def _all(self) -> tuple[Proof, ...]:
        if self._made is None:
            self._made = self.table.proofs()
        return self._made

    def __len__(self) -> int:
        return len(self.table)

    @overload
    def __getitem__(self, k: int) -> Proof: ...
    @overload
    def __getitem__(self, k: slice) -> tuple[Proof, ...]: ...
    def __getitem__(self, k: int | slice) -> Proof | tuple[Proof, ...]:
        if self._made is None and not isinstance(k, slice):
            return self.table.proof(k)  # the few a drawing names: not every one made
        return self._all()[k]

    def __iter__(self) -> Iterator[Proof]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ProofList | tuple | list):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"ProofList({len(self)} proofs)"


@dataclass(frozen=True, slots=True)
class ProofSpans:
    """Columns of a list of proofs, in its order (for drawing them without their objects)."""

    first: F64  # first SYNTH_START (NaN: none)
    last: F64  # last GPU_END (NaN: none)
    completed: npt.NDArray[np.bool_]
    seen: F64  # latest stamp (NaN: none)

    def __len__(self) -> int:
        return len(self.first)

    @staticmethod
    def of(proofs: Sequence[Proof]) -> ProofSpans:
        """The columns of `proofs`."""

        def col(values: list[int | None]) -> F64:
            return np.array([np.nan if v is None else v for v in values], dtype=np.float64)

        return ProofSpans(
            col([p.first_synth_start for p in proofs]),
            col([p.last_gpu_end for p in proofs]),
            np.array([p.completed for p in proofs], dtype=bool),
            col([p.last_seen for p in proofs]),
        )

    def insert(self, at: list[int], other: ProofSpans) -> ProofSpans:
        """`other`'s rows put before rows `at` (as numpy.insert does)."""
        return ProofSpans(
            np.insert(self.first, at, other.first),
            np.insert(self.last, at, other.last),
            np.insert(self.completed, at, other.completed),
            np.insert(self.seen, at, other.seen),
        )


def percentiles(values: F64, percents: Sequence[float]) -> list[float]:
    """numpy.percentile of `values` (no NaN, at least one) at `percents`, by its default
    (linear) method and in its arithmetic, so the same floats: the two order statistics
    around (n - 1) * p / 100, interpolated from the nearer one. Without numpy.percentile's
    import of numpy.ma (13-22 ms of a report that needs nothing else of it)."""
    n = len(values)
    spots = []
    for p in percents:
        at = (n - 1) * (p / 100)
        below = min(math.floor(at), n - 1)
        spots.append((at, below, min(below + 1, n - 1)))
    part = np.partition(values, sorted({k for _, lo, hi in spots for k in (lo, hi)}))
    out = []
    for at, lo, hi in spots:
        a, b = float(part[lo]), float(part[hi])
        t = at - lo
        d = b - a
        out.append(b - d * (1 - t) if t >= 0.5 else a + d * t)
    return out


@dataclass(frozen=True, slots=True)
class GapStats:
    """Statistics over a set of gaps."""

    count: int
    total_ms: int
    mean_ms: float
    max_ms: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    under_50: int
    from_50_to_500: int
    over_500: int

    def of_some(self, ms: float) -> float | None:
        """`ms`, one of the figures of the gaps themselves (the mean, a percentile, the
        longest), or None where there is no gap: a figure of none, `–` (the count and the
        total are 0)."""
        return ms if self.count else None

    @staticmethod
    def of(durations: list[int] | I64) -> GapStats:
        """Compute the statistics of `durations` (ms)."""
        if len(durations) == 0:
            return GapStats(0, 0, 0.0, 0, 0.0, 0.0, 0.0, 0, 0, 0)
        whole = np.asarray(durations, dtype=np.int64)
        arr = whole.astype(np.float64)
        p50, p90, p99 = percentiles(arr, (50, 90, 99))
        return GapStats(
            count=len(durations),
            total_ms=int(whole.sum()),
            mean_ms=float(arr.mean()),
            max_ms=int(whole.max()),
            p50_ms=p50,
            p90_ms=p90,
            p99_ms=p99,
            under_50=int(np.sum(arr < 50)),
            from_50_to_500=int(np.sum((arr >= 50) & (arr <= 500))),
            over_500=int(np.sum(arr > 500)),
        )


@dataclass(frozen=True, slots=True)
class Breakdown:
    """One GPU's busy time in a range, and how much of it each phase took."""

    gpu: int
    busy_ms: float
    phase_ms: dict[Phase, float]

    def share(self, phase: Phase) -> float:
        """The phase's share of the busy time (0 when nothing was busy)."""
        return self.phase_ms.get(phase, 0.0) / self.busy_ms if self.busy_ms else 0.0

    def share_shown(self, phase: Phase) -> float | None:
        """`share`, or None when nothing was busy: a share of nothing is no figure (`–`,
        nothing to compare), not 0 % of every phase."""
        return self.share(phase) if self.busy_ms else None


# what a Summary of several logs is of (`Summary.merged`)
MERGED_RUNS = "runs"  # the runs of one log whose daemon restarted
MERGED_HOSTS = "hosts"  # several hosts' logs
MERGED_COMPARE = "compare"  # two runs compared (before, after)


@dataclass(frozen=True, slots=True)
class Summary:
    """Per-run figures (docs/analysis.md#per-run)."""

    proofs_started: int
    proofs_completed: int
    first_synth_start: int | None
    last_gpu_end: int | None
    gaps: GapStats
    # of several logs (parsers/hosts.py merge): MERGED_RUNS, MERGED_HOSTS or MERGED_COMPARE,
    # with each log's own summary; the proofs are theirs added up, and the span and the rate
    # are no run's but a restarted daemon's last run's (the span from the first run's start
    # to the last's end held the time the daemon was down)
    merged: str = ""
    each: tuple[Summary, ...] = ()

    @property
    def last_run(self) -> Summary | None:
        """Of a restarted daemon's runs, the last run's own summary (else None)."""
        return self.each[-1] if self.merged == MERGED_RUNS and self.each else None

    @property
    def run_span_ms(self) -> int:
        """First SYNTH_START to last GPU_END (0 when no GPU_END follows a SYNTH_START: a
        fragment of a log); of several runs, the last run's."""
        last = self.last_run
        if last is not None:
            return last.run_span_ms
        if self.first_synth_start is None or self.last_gpu_end is None:
            return 0
        return max(0, self.last_gpu_end - self.first_synth_start)

    @property
    def s_per_proof(self) -> float:
        """Run span in seconds per completed proof (of several runs, the last run's)."""
        if self.last_run is not None:
            return self.last_run.s_per_proof
        if not self.proofs_completed:
            return 0.0
        return self.run_span_ms / 1000 / self.proofs_completed

    @property
    def rate(self) -> float | None:
        """s/proof where there is a rate: None while no proof has completed or the run has
        no span (what the screen writes `– s/proof`, the JSON `null`); of several runs or
        hosts, the last run's of a restarted daemon, else none (`merged`)."""
        last = self.last_run
        if last is not None:
            return last.rate
        if self.merged:
            return None
        if not self.proofs_completed or not self.spanned:
            return None
        return self.s_per_proof

    @property
    def spanned(self) -> bool:
        """A GPU_END (a completion, in a log without TIMELINE) follows the first SYNTH_START
        (dequeue): the run has a span. A log begun mid-run may have completions and none.
        Of several runs, the last run's."""
        if self.last_run is not None:
            return self.last_run.spanned
        first, last = self.first_synth_start, self.last_gpu_end
        return first is not None and last is not None and last >= first

    @property
    def run_span_shown(self) -> str:
        """The run span as the screen and the text report write it: `–` while it has none
        (not one of 0 ms)."""
        return duration(self.run_span_ms) if self.spanned else "–"

    @property
    def s_per_proof_shown(self) -> str:
        """s/proof as the screen and the text report write it: `– s/proof` while no proof
        has completed, or the run has no span (the figure is 0 then: no rate, not an instant
        one). Of several hosts, nothing: each host's rate is its own (its report section's),
        none is theirs together."""
        if self.merged == MERGED_HOSTS:
            return ""
        if self.merged == MERGED_COMPARE:  # before → after
            rates = (s.rate for s in self.each)
            return " → ".join("–" if r is None else f"{r:.2f}" for r in rates) + " s/proof"
        rate = self.rate
        return "– s/proof" if rate is None else f"{rate:.2f} s/proof"

    def proofs_shown(self, short: bool, span_name: str = "run span", failed: int = 0) -> str:
        """The proofs and the span: `proofs 3 completed / 4 started   run span 5m01s` (the
        report's, the span called `span_name`), `run 5m01s  proofs 3/4` (`short`: the
        header's). Of several logs, what each figure is of: a restarted daemon's `proofs
        6/6 in 2 runs, last 3/3 in 5m01s` (the span and s/proof are the last run's); several
        hosts' `proofs 12/12 on 2 hosts`; a comparison's `proofs 4/4 → 8/8` (before → after:
        added up they are no run's). `failed`: of the proofs, those that failed (the
        header's `proofs 1/8 (7 failed)`; parsers/proofs.py)."""
        if self.merged == MERGED_COMPARE:
            each = (f"{s.proofs_completed}/{s.proofs_started}" for s in self.each)
            return "proofs " + " → ".join(each)
        done, began = self.proofs_completed, self.proofs_started
        proofs = f"proofs {done}/{began}" if short else f"proofs {done} completed / {began} started"
        if failed:
            proofs += f" ({failed} failed)"
        last = self.last_run
        if last is not None:
            runs = f"in {len(self.each)} runs"
            done, began = last.proofs_completed, last.proofs_started
            if not began:  # the log ends on a restart, or the new run proves nothing yet
                if short:
                    return f"{proofs} {runs}, last run: none yet"
                return f"{proofs} {runs}   last run: no proof yet"
            if short:
                return f"{proofs} {runs}, last {done}/{began} in {self.run_span_shown}"
            last_proofs = f"{done} completed / {began} started"
            return f"{proofs} {runs}   last run: {last_proofs}, {span_name} {self.run_span_shown}"
        if self.merged == MERGED_HOSTS:
            # their span together (the first one's start to the last one's end) is no run's
            proofs += f" on {len(self.each)} hosts"
            if short:
                return f"span {self.run_span_shown}  {proofs}"
            return f"{proofs}   span {self.run_span_shown}"
        if short:
            return f"run {self.run_span_shown}  {proofs}"
        return f"{proofs}   {span_name} {self.run_span_shown}"


@dataclass(frozen=True, slots=True)
class GpuKey:
    """Where a GPU of a model of several logs is from: the log (a host, or a run of a log
    whose daemon restarted), that log's name as drawn, and the CUDA ordinal it printed."""

    host: int  # the log's index among the merged ones
    name: str
    ordinal: int


class IncompleteModel(Exception):
    """A model asked what it was built without (a model made for the JSON report has no
    lanes and no synthesis steps): a bug in the caller, said loudly rather than answered
    with empty figures."""


@dataclass(frozen=True, slots=True)
class LogModel:
    """Everything cuzk-tui shows about one log, at one moment."""

    source: str
    counts: LineCounts
    finished: bool
    wall_anchor: datetime | None
    now_ms: int  # the latest TIMELINE stamp read
    parts: PartitionTable
    lanes: tuple[Lane, ...]
    gpus: tuple[GpuStats, ...]
    workers: tuple[WorkerStats, ...]
    gaps: GapTable  # every gap, all GPUs, by start
    kernel_gaps: dict[int, Blocks]  # per GPU: idle stretches between kernel blocks
    proofs: Sequence[Proof]  # a tuple, or a ProofList over their columns
    summary: Summary
    # step function of partitions in synthesis: at synth_times[i] the count becomes
    # synth_counts[i] (empty in a model made for the JSON report, which has no lanes either)
    synth_times: F64
    synth_counts: I32
    unattributed_timing_lines: int = 0
    partial_bytes: int = 0
    engine_seen: bool = False  # stdout lines of the cuzk engine were read
    # several logs in one model (parsers/hosts.py): where each GPU is from
    gpu_keys: dict[int, GpuKey] | None = None
    # ... and the log each proof is from (GpuKey.host), proof by proof
    proof_hosts: I32 | None = field(default=None, compare=False, repr=False)
    # ... and the log each job of `parts.jobs` is from (each log's jobs are its own there:
    # a job id two logs share, a job a restarted daemon proves again, is two jobs)
    job_hosts: I32 | None = field(default=None, compare=False, repr=False)
    # the daemon restarted: the physical line each run began at (one run: None)
    run_lines: tuple[int, ...] | None = None
    # the physical line the model's log begins at: 1, or of one run of a restarted daemon
    # read apart (`LogBuilder.build_runs`), the line that run begins at
    first_line: int = 1
    # ...and the wall clock each run's engine started at (the log gives it: else None)
    run_anchors: tuple[datetime | None, ...] | None = field(default=None, compare=False, repr=False)
    # several logs: each log's name (exact: `logs()` gives it as drawn), by its index
    # (GpuKey.host), its own synthesis step function (times, counts) and where it ends on
    # the all-hosts clock (a log whose GPUs printed nothing, or with no TIMELINE line, has
    # them all)
    log_names: tuple[str, ...] | None = None
    synth_by_log: dict[int, tuple[F64, I32]] | None = None
    log_ends: tuple[float, ...] | None = None
    # ... and per proof, whether its own log says it failed (parsers/proofs.py)
    proof_failed: npt.NDArray[np.bool_] | None = field(default=None, compare=False, repr=False)
    # per GPU, where its busy time went over the whole run, when the analysis made it
    # (a live model: parsers/breakdown.py makes it otherwise)
    run_split: dict[int, Breakdown] | None = None
    # ... and its segments' split before the kernel estimate (`with_kernel`): what a part of
    # the run's split is scaled from (parsers/breakdown.py `kernel_scaled`)
    segment_split: dict[int, Breakdown] | None = None
    unattributed_kernel_ms: float = 0.0  # kernel ms of the timing lines given to no interval
    starts_mid_run: bool = False  # the log begins in the middle of a run (tail -f, rotation)
    # the columns of `proofs`, when the analysis made them with the proofs
    proof_spans: ProofSpans | None = None
    # no TIMELINE line (docs/analysis.md#logs-without-timeline): why, and the jobs the
    # tracing lines tell (also in `proofs`, placed on the ms clock)
    no_timeline_reason: str | None = None
    first_job_error: str | None = None
    traced_jobs: tuple[TracedJob, ...] = ()
    # what reading the log left out, said beside its report (bytes after a gzip file's data)
    read_note: str | None = None
    # the lanes and the synthesis steps were made (False: a model for the JSON report)
    drawn: bool = True
    traced_aware: bool = False  # the traced jobs' wall times are UTC
    # what the core noted of the log's lines (CPU path figures, line starts; a model of
    # several logs: None, each host's are in parsers/hosts.py's Merged)
    line_facts: LineFacts | None = field(default=None, compare=False, repr=False)
    # several logs: per log that gives its engine's start (GpuKey.host), the wall time 0 on
    # the all-hosts clock is on its own clock, to the microsecond (the offsets that place the
    # logs are whole ms: the wall time of a GPU's event is its own log's, however placed)
    wall_bases: dict[int, datetime] | None = field(default=None, compare=False, repr=False)
    # the workers no line places on a GPU (nor --workers-per-gpu): each counted on GPU 0
    unplaced_workers: tuple[int, ...] = ()
    # figures derived from the model once, for every output that reads them (by name:
    # parsers/proofs.py's failed proofs); never given: a model `replace` makes starts empty
    derived: dict[str, object] = field(default_factory=dict, init=False, compare=False, repr=False)

    @property
    def workers_assumed(self) -> bool:
        """Several workers no line placed on a GPU were all counted on GPU 0, which the header
        and the report say (one alone: its GPU's figures are its own, whatever the ordinal)."""
        return len(self.unplaced_workers) >= 2

    def needs_drawn(self, what: str) -> None:
        """Raise IncompleteModel when the model has no lanes and synthesis steps, which
        `what` needs."""
        if not self.drawn:
            raise IncompleteModel(f"{what} needs the lanes, and this model was built without")

    @property
    def all_gpus_kernel_ms(self) -> tuple[float, float]:
        """The kernel time of all the GPUs together as the log pins it, (least, most): each
        kernel line is some GPU's, whichever GPU the attribution gives it to, so the sum is
        known where each GPU's share is not; and each GPU's own range holds its part, so the
        sum is never wider than theirs added up (docs/analysis.md#all-gpus)."""
        busy = sum(g.busy_ms for g in self.gpus)  # kernels run inside GPU intervals
        hi = sum(g.kernel_lines_ms[1] for g in self.gpus) + self.unattributed_kernel_ms
        # the lines given to no interval only ever raise the top: in a log begun mid-run they
        # are the kernels of intervals whose start the log lacks, before the GPUs' spans
        lo = sum(g.kernel_lines_ms[0] for g in self.gpus)
        hi = min(hi, busy, sum(g.kernel_range_ms[1] for g in self.gpus))
        lo = max(lo, sum(g.kernel_range_ms[0] for g in self.gpus))
        return min(lo, hi), hi

    @property
    def all_gpus_kernel_estimate_ms(self) -> float:
        """The kernel time of all the GPUs together as shown: the GPUs' estimates added up,
        inside all_gpus_kernel_ms (so that it is their figures' sum wherever they are pinned
        down, and never outside what the log allows where they are not)."""
        lo, hi = self.all_gpus_kernel_ms
        return min(max(sum(g.kernel_busy_ms for g in self.gpus), lo), hi)

    @property
    def all_gpus_span_ms(self) -> int:
        """The GPUs' spans added up: what all_gpus_kernel_ms is a share of."""
        return sum(g.span_ms for g in self.gpus)

    def logs(self) -> tuple[tuple[int | None, str], ...]:
        """The logs the model holds, in order: (its index, its name as drawn) of each of
        several (hosts, or the runs of a restarted daemon: `GpuKey.host`), an empty one too,
        or (None, "") of one. The viewer draws each one's synthesis and proofs apart; so does
        the trace."""
        if self.log_names is None:
            return ((None, ""),)
        return tuple((k, visible(name)) for k, name in enumerate(self.log_names))

    def log_of(self, gpu: int) -> int | None:
        """The log GPU `gpu` is from, of several (None: the model holds one)."""
        key = self.gpu_keys.get(gpu) if self.gpu_keys is not None else None
        return None if key is None else key.host

    def synth_steps(self, log: int | None) -> tuple[F64, I32]:
        """The step function of partitions in synthesis of log `log` (None: the model's)."""
        if log is None or self.synth_by_log is None:
            return self.synth_times, self.synth_counts
        return self.synth_by_log.get(log, (np.zeros(0, dtype=np.float64), np.zeros(0, np.int32)))

    def gpu_label(self, gpu: int) -> str:
        """`GPU2`, or `host:GPU2` when the model holds several logs."""
        key = self.gpu_keys.get(gpu) if self.gpu_keys is not None else None
        return f"GPU{gpu}" if key is None else f"{key.name}:GPU{key.ordinal}"

    @property
    def restarted(self) -> bool:
        """The daemon restarted within the log: it holds several runs (`run_lines`)."""
        return len(self.run_lines or ()) > 1

    def gpu_ordinal(self, gpu: int) -> int:
        """The CUDA ordinal the log printed for `gpu` (its id in a model of one log; of
        several logs or runs, the id is k·1000 + the ordinal: parsers/hosts.py)."""
        key = self.gpu_keys.get(gpu) if self.gpu_keys is not None else None
        return gpu if key is None else key.ordinal

    def wall_time(self, ms: float, gpu: int | None = None) -> datetime | None:
        """The wall-clock time of a TIMELINE offset, when the log gives the anchor (`gpu`:
        of an event of that GPU, on its own log's clock when the model holds several)."""
        key = self.gpu_keys.get(gpu) if self.gpu_keys is not None and gpu is not None else None
        base = self.wall_anchor
        if key is not None and self.wall_bases is not None and key.host in self.wall_bases:
            base = self.wall_bases[key.host]
        if base is None:
            return None
        try:
            return base + timedelta(milliseconds=ms)
        except OverflowError:
            return None  # past the calendar's ends (logs whose clocks are millennia apart)

    def wall_text(self, ms: float, gpu: int | None = None) -> str | None:
        """The wall-clock time of an offset as shown, to the millisecond: `09:35:26.291`,
        with the date when the engine's start and the run's events are not all on one day
        (None: no anchor; `gpu`: as for `wall_time`). A time of day alone then stands for
        one moment, the one --from reads it as: its first after the engine started."""
        wall = self.wall_time(ms, gpu)
        if wall is None:
            return None
        lo, hi = self.time_range
        first, last = self.wall_time(min(lo, 0.0), gpu), self.wall_time(hi, gpu)
        days = first is None or last is None or first.date() != last.date()
        return wall.strftime("%Y-%m-%d %H:%M:%S.%f" if days else "%H:%M:%S.%f")[:-3]

    @property
    def time_range(self) -> tuple[float, float]:
        """[first event, last event] over everything drawn."""
        lo = self.summary.first_synth_start
        starts = [g.span[0] for g in self.gpus if g.span is not None]
        first = min([x for x in [lo, *starts] if x is not None], default=0)
        return float(first), float(max(self.now_ms, first + 1))
