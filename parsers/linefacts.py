"""What the core noted of a log's physical lines as it read them (core/src/lines.rs): the CPU
thread's `prep_msm_ms` / `b_g2_msm_ms` figures with their line numbers, and a sparse index
of line starts, so that neither a gap's CPU path nor the inspector's first raw lines read
the log again from its start."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from parsers.model import I8, I32, I64

PREP_MSM = 0  # CUZK_TIMING: prep_msm_ms=1917 (the core's kind numbers)
B_G2_MSM = 1  # CUZK_TIMING: b_g2_msm_ms=1705 num_circuits=1
# the run medians are made again only once the figures have grown by this share (a log
# followed as it grows: not at every screen update)
MEDIANS_GROWTH = 1.25


@dataclass(frozen=True, slots=True, eq=False)
class CpuFigures:
    """The CPU path figures of a log read so far, by physical line (sorted)."""

    line: I64
    kind: I8
    value: I64
    run: I32  # the run (the daemon restarted) each was read in
    source: CpuLines = field(repr=False)  # whose figures these are (the medians' cache)

    def __len__(self) -> int:
        return len(self.line)

    def between(self, first: int, last: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The prep_msm and b_g2_msm figures printed on lines `first`..`last` (inclusive),
        each in line order."""
        lo = int(np.searchsorted(self.line, first, side="left"))
        hi = int(np.searchsorted(self.line, last, side="right"))
        kind, value = self.kind[lo:hi], self.value[lo:hi]
        return (
            tuple(value[kind == PREP_MSM].tolist()),
            tuple(value[kind == B_G2_MSM].tolist()),
        )

    def medians(self, run: int | None = None) -> tuple[float | None, float | None]:
        """The medians of every prep_msm and every b_g2_msm figure of run `run` (None: of
        the whole log; see MEDIANS_GROWTH)."""
        return self.source.medians(len(self), run)


class CpuLines:
    """The CPU path figures as the core hands them over, kept as the log grows: each call
    to `extend` adds the new ones; a `CpuFigures` is a view of those held then."""

    def __init__(self) -> None:
        self.count = 0
        self._line: I64 = np.zeros(0, dtype=np.int64)
        self._kind: I8 = np.zeros(0, dtype=np.int8)
        self._value: I64 = np.zeros(0, dtype=np.int64)
        self._run: I32 = np.zeros(0, dtype=np.int32)
        self._in_order = True  # by line (a line cut by another is read once rejoined)
        self._sorted: CpuFigures | None = None  # the figures sorted, when not in order
        # per run (None: the whole log), the figures they were made of and the medians
        self._medians: dict[int | None, tuple[int, float | None, float | None]] = {}

    def extend(self, line: I64, kind: I8, value: I64, run: I32, final: bool = False) -> None:
        """Take the figures read since the last call (in the order read; `final`: no more
        will come, and the caller does not write to these)."""
        n = len(line)
        if not n:
            return
        end = self.count + n
        if final and self.count == 0:
            # a log read once (the report): its figures held as the core made them, not
            # copied into room for more
            self._line, self._kind, self._value, self._run = line, kind, value, run
            self._in_order = not bool(np.any(line[1:] < line[:-1]))
            self.count = end
            return
        if end > len(self._line):
            # twice what is held: the figures that come next are written after these, not
            # copied with them into a new buffer while a shown model still holds the old
            # one (room not written to yet takes no memory)
            room = max(2 * end, 1024)
            # a new buffer: views handed out before keep the old one, unchanged
            self._line = _grown(self._line, room, self.count)
            self._kind = _grown(self._kind, room, self.count)
            self._value = _grown(self._value, room, self.count)
            self._run = _grown(self._run, room, self.count)
        last = self._line[self.count - 1] if self.count else -1
        if line[0] < last or bool(np.any(line[1:] < line[:-1])):
            self._in_order = False
        self._line[self.count : end] = line
        self._kind[self.count : end] = kind
        self._value[self.count : end] = value
        self._run[self.count : end] = run
        self.count = end

    def figures(self) -> CpuFigures:
        """The figures held now, by line."""
        n = self.count
        if self._in_order:
            return CpuFigures(self._line[:n], self._kind[:n], self._value[:n], self._run[:n], self)
        if self._sorted is None or len(self._sorted) != n:
            order = np.argsort(self._line[:n], kind="stable")
            self._sorted = CpuFigures(
                self._line[order], self._kind[order], self._value[order], self._run[order], self
            )
        return self._sorted

    def medians(self, upto: int, run: int | None = None) -> tuple[float | None, float | None]:
        """The medians of the first `upto` figures by kind, of run `run` (None: all): made
        again only once they have grown by MEDIANS_GROWTH since last made (or are fewer:
        the caller's are older)."""
        held = self._medians.get(run)
        if held is not None and held[0] <= upto <= max(held[0], 1) * MEDIANS_GROWTH:
            return held[1], held[2]
        kind, value = self._kind[:upto], self._value[:upto]
        if run is not None:
            mine = self._run[:upto] == run
            kind, value = kind[mine], value[mine]
        out = (_median(value[kind == PREP_MSM]), _median(value[kind == B_G2_MSM]))
        self._medians[run] = (upto, *out)
        return out


def _median(values: I64) -> float | None:
    """The median of `values`, a copy of the caller's, reordered in place (not copied again,
    as np.median does: a long log holds hundreds of thousands)."""
    n = len(values)
    if not n:
        return None
    k = n // 2
    if n % 2:
        values.partition(k)
        return float(values[k])
    values.partition((k - 1, k))
    return 0.5 * (float(values[k - 1]) + float(values[k]))


def _grown(a: np.ndarray, room: int, keep: int) -> np.ndarray:
    out = np.empty(room, dtype=a.dtype)
    out[:keep] = a[:keep]
    return out


@dataclass(frozen=True, slots=True, eq=False)
class LineStarts:
    """A sparse index of a log's line starts: line `lines[k]` starts at byte `offsets[k]`
    (line 1 at 0, then one every quarter MB or so), as read up to `bytes_read`, whose last
    bytes were `signature`."""

    lines: tuple[int, ...]
    offsets: tuple[int, ...]
    bytes_read: int
    signature: bytes


@dataclass(frozen=True, slots=True, eq=False)
class LineFacts:
    """What the core noted of a log's physical lines, up to where it had read."""

    cpu: CpuFigures
    starts: LineStarts
    # the model they are told with is one run of a restarted daemon's log: which (a gap's
    # run medians are that run's; None: the whole log's)
    run: int | None = None
