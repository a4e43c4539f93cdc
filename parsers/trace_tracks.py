"""The trace's content as columns: its processes and tracks, and each track's events as numpy
columns in the order they are written, made one track at a time (never the whole trace).

Every trace format reads these: the Trace Event Format JSON, Perfetto's protobuf, and the
dicts of `parsers.export.trace_events`. A process is a GPU (its busy track, then one track per
lane), then the synthesis slots, then the proof rows; times are µs on the log's ms clock.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from parsers.model import CAUSES, PHASE_NAMES, Lane, LogModel, Phase, ProofTable
from parsers.proofs import failed_proofs, proof_ends
from parsers.rows import first_free_rows, groups_of
from parsers.sanitize import visible

CHUNK_ROWS = 16_384  # events formatted at a time (a JSON chunk: ~2 MB)


I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]
BUSY_TID = 0  # each GPU's busy track: busy blocks and gaps

# the kinds of event, and each one's category
BUSY, GAP, INTERVAL, PHASE, SYNTHESIS, PROOF, COUNTER = range(7)
CATEGORIES = ("busy", "gap", "interval", "phase", "synthesis", "proof", "")
# an event's integer columns (string ids into the Names) and its float column
TS, DUR, NAME, PID, TID, A0, A1, A2, A3, A4, A5 = range(11)
INT_COLUMNS = 11
VALUE = 0
# how an argument is written: an int, an int or null (< 0), a string id or null (< 0), a bool
INT, OPT_INT, STR, BOOL = range(4)
# each kind's arguments, in order: (key, column, how); a counter's key is the string A0
# and its value the float column VALUE
ARGS: dict[int, tuple[tuple[str, int, int], ...]] = {
    BUSY: (),
    GAP: (
        ("rank", A0, INT),
        ("duration_ms", A1, INT),
        ("cause", A2, STR),
        ("crosses_proof_boundary", A3, BOOL),
        ("before", A4, STR),
        ("after", A5, STR),
    ),
    INTERVAL: (("job", A0, STR), ("partition", A1, OPT_INT), ("worker", A2, INT)),
    PHASE: (("job", A0, STR), ("partition", A1, OPT_INT)),
    SYNTHESIS: (("job", A0, STR), ("partition", A1, OPT_INT)),
    PROOF: (("job", A0, STR), ("kind", A1, STR), ("partitions", A2, INT)),
    COUNTER: (),
}
STATES = ("", " (failed)", " (running)")  # an interval ended, failed, or still running
COUNTERS = (  # (name, argument key)
    ("intervals in flight", "intervals"),
    ("kernels running", "kernel"),
    ("partitions in synthesis", "partitions"),
)


class Names:
    """Every string the events name, by id: a few fixed ones, then the model's (jobs,
    interval labels, gap sides, proofs), each made once; with every control and format
    character of the log made visible (parsers/sanitize.py), as the CSV writes them: a job
    id's ESC or U+202E reached the protobuf trace raw, and Perfetto's page reordered text."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._fixed: dict[str, int] = {}

    def id(self, text: str) -> int:
        """The id of `text` among the fixed strings (added the first time)."""
        k = self._fixed.get(text)
        if k is None:
            k = self._fixed[text] = len(self.items)
            self.items.append(visible(text))
        return k

    def extend(self, texts: Sequence[str]) -> int:
        """Add `texts` (not looked up); returns the id of the first."""
        base = len(self.items)
        self.items.extend(map(visible, texts))
        return base


@dataclass(frozen=True, slots=True)
class Track:
    """One track's events, in the order written: each one's kind, integer columns (TS, DUR,
    NAME, PID, TID, A0..A5) and float column (VALUE)."""

    pid: int
    tid: int
    kind: npt.NDArray[np.uint8]
    ints: tuple[I64, ...]
    floats: tuple[F64, ...]

    def __len__(self) -> int:
        return len(self.kind)

    def take(self, idx: npt.NDArray[np.integer] | slice) -> Track:
        """The events at `idx`, in that order."""
        kind = self.kind[idx]
        return Track(
            self.pid,
            self.tid,
            kind,
            tuple(_taken(c, idx, len(kind)) for c in self.ints),
            tuple(_taken(c, idx, len(kind)) for c in self.floats),
        )

    def contiguous(self) -> Track:
        """The track with every column its own memory (as the core reads them)."""
        return Track(
            self.pid,
            self.tid,
            np.ascontiguousarray(self.kind),
            tuple(np.ascontiguousarray(c) for c in self.ints),
            tuple(np.ascontiguousarray(c) for c in self.floats),
        )


def _constant(column: np.ndarray) -> bool:
    """Whether `column` is one value seen through a zero stride (a column of a track that
    is the same for every event: its pid, its tid, an argument its kind has not)."""
    return column.strides == (0,) or len(column) == 0


def _taken(column: np.ndarray, idx: npt.NDArray[np.integer] | slice, n: int) -> Any:
    if _constant(column) and len(column):
        return np.broadcast_to(column[:1], (n,))
    return column[idx]


@dataclass(frozen=True, slots=True)
class Process:
    """A process of the trace: its pid, name and its tracks' names (by tid)."""

    pid: int
    name: str
    threads: tuple[tuple[int, str], ...]


class _Clip:
    """The exported range: events overlapping [t0, t1), cut to it (times in ms)."""

    def __init__(self, t0: float, t1: float) -> None:
        self.t0, self.t1 = t0, t1

    def spans(self, s: F64, e: F64) -> tuple[npt.NDArray[np.bool_], I64, I64]:
        """Which of the spans [s, e) are exported, and each one's start and end in µs as
        cut to the range (one rounding per instant keeps tracks nested)."""
        t0, t1 = self.t0, self.t1
        s = np.maximum(np.asarray(s, dtype=np.float64), t0)
        e = np.minimum(np.asarray(e, dtype=np.float64), t1)
        inside = (t0 <= s) & (s < t1)
        keep = ~(e < s) & ~((e == s) & ~inside) & ~np.isnan(s) & ~np.isnan(e)
        return keep, us(np.where(keep, s, 0.0)), us(np.where(keep, e, 0.0))


def us(ms: F64) -> I64:
    """Milliseconds to whole microseconds, as Python's round() (half to even)."""
    out: I64 = np.rint(np.asarray(ms, dtype=np.float64) * 1000).astype(np.int64)
    return out


def _events(
    kind: int | npt.NDArray[np.uint8],
    pid: int,
    tid: int,
    ts: I64,
    dur: I64,
    name: I64 | int,
    args: Sequence[I64 | int] = (),
    value: F64 | None = None,
) -> Track:
    n = len(ts)
    ints = [ts, dur, name, pid, tid, *args]
    ints += [0] * (INT_COLUMNS - len(ints))
    cols = tuple(np.broadcast_to(np.asarray(c, dtype=np.int64), (n,)) for c in ints)
    kinds = np.broadcast_to(np.asarray(kind, dtype=np.uint8), (n,))
    v = np.broadcast_to(0.0, (n,)) if value is None else np.asarray(value, dtype=np.float64)
    return Track(pid, tid, kinds, cols, (v,))


def _joined(pid: int, tid: int, parts: Sequence[Track], seq: I64 | None = None) -> Track:
    """The parts' events as one track: by start, the longer first at one start, else in the
    order made (`seq`: each event's place in that order; default: the parts one after the
    other)."""
    if not parts:
        empty = np.zeros(0, np.int64)
        return Track(pid, tid, np.zeros(0, np.uint8), (empty,) * INT_COLUMNS, (np.zeros(0),))
    ts = np.concatenate([p.ints[TS] for p in parts])
    made = np.arange(len(ts)) if seq is None else seq
    order = np.lexsort((made, -np.concatenate([p.ints[DUR] for p in parts]), ts))
    del ts, made
    # one column put together at a time, then in order (a constant one stays one value)
    ints = tuple(_joined_column([p.ints[c] for p in parts], order) for c in range(INT_COLUMNS))
    floats = (_joined_column([p.floats[0] for p in parts], order),)
    kind = _joined_column([p.kind for p in parts], order)
    return Track(pid, tid, kind, ints, floats)


def _joined_column(columns: Sequence[np.ndarray], order: I64) -> Any:
    """`columns` one after the other, in `order`."""
    present = [c for c in columns if len(c)]
    if present and all(_constant(c) for c in present) and len({c[0] for c in present}) == 1:
        return np.broadcast_to(present[0][:1], (len(order),))
    return np.concatenate(columns)[order]


def changes(starts: F64, ends: F64) -> tuple[F64, F64]:
    """How many intervals are open, as (times, values) at each change."""
    if len(starts) == 0:
        return np.zeros(0), np.zeros(0)
    t = np.concatenate((starts, ends))
    d = np.concatenate((np.ones(len(starts)), -np.ones(len(ends))))
    order = np.lexsort((d, t))
    t, v = t[order], np.cumsum(d[order])
    last = np.append(t[1:] != t[:-1], True)  # one value per instant: the last one
    return t[last], v[last]


class TraceTracks:
    """The trace of `model` over [t0, t1): its processes, then its tracks one at a time."""

    def __init__(self, model: LogModel, t0: float = -math.inf, t1: float = math.inf) -> None:
        model.needs_drawn("the trace")
        self.model = model
        self.clip = _Clip(t0, t1)
        self.names = Names()
        t = model.parts
        self.done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
        self.lanes: dict[int, list[Lane]] = {}
        for lane in model.lanes:
            self.lanes.setdefault(lane.gpu, []).append(lane)
        self._name_records()
        self._name_gaps()
        self._name_proofs()
        # each log's synthesis and proofs apart, as the viewer draws them
        self.logs = model.logs()
        self.synth = [_synthesis_rows(model, self.clip, log) for log, _ in self.logs]
        self.proof_rows = [self._proof_rows(log) for log, _ in self.logs]
        self.steps = [model.synth_steps(log) for log, _ in self.logs]
        self.processes = self._processes()

    def _name_records(self) -> None:
        t = self.model.parts
        names = self.names
        self.busy_name = names.id("busy")
        self.counter_names = [(names.id(n), names.id(k)) for n, k in COUNTERS]
        self.job_base = names.extend(t.jobs)
        jobs = t.job.tolist()
        parts = t.partition.tolist()
        labels = [
            t.jobs[j] if p < 0 else f"{t.jobs[j]} p{p}" for j, p in zip(jobs, parts, strict=True)
        ]
        self.label = names.extend(labels) + np.arange(len(t), dtype=np.int64)
        state = np.where(self.done, 0, np.where(t.failed, 1, 2)).astype(np.int64)
        self.state = state
        # an interval's name on its lane: its label and state (the ended ones: the label)
        self.lane_name = self.label.copy()
        unended = np.flatnonzero(state != 0)
        base = names.extend(
            [
                labels[i] + STATES[s]
                for i, s in zip(unended.tolist(), state[unended].tolist(), strict=True)
            ]
        )
        self.lane_name[unended] = base + np.arange(len(unended))
        # a phase segment's name: its phase's name and its interval's state
        phases = [p for p in Phase]
        table = np.zeros((max(phases) + 1, len(STATES)), dtype=np.int64)
        for p in phases:
            for k, s in enumerate(STATES):
                table[p, k] = names.id(PHASE_NAMES[p] + s)
        self.phase_names = table

    def _name_gaps(self) -> None:
        gaps = self.model.gaps
        t = self.model.parts
        names = self.names
        self.ranks = gaps.ranks()
        self.gap_name = names.extend([f"gap #{r}" for r in self.ranks.tolist()])
        causes = np.array([-1 if c is None else names.id(c) for c in CAUSES], dtype=np.int64)
        self.gap_cause = causes[gaps.cause.astype(np.int64)]

        def side(rows: I64) -> int:
            parts = t.partition[rows].tolist()
            return names.extend(
                [
                    f"{t.jobs[j]} w{w}" + ("" if p < 0 else f" p{p}")  # a whole job: no p
                    for j, w, p in zip(
                        t.job[rows].tolist(), t.worker[rows].tolist(), parts, strict=True
                    )
                ]
            )

        self.gap_before = side(gaps.before)
        self.gap_after = side(gaps.after)

    def _name_proofs(self) -> None:
        """Every proof the proofs lane draws, over the span it draws: a completed one from
        its first synthesis to its last GPU_END; one that did not complete named `… (failed)`
        to its last stamp, or `… (running)` to the log's end (parsers/proofs.py), as the
        intervals are."""
        model = self.model
        table = ProofTable.of(model.proofs)
        names = self.names
        self.proofs = np.flatnonzero(~np.isnan(table.first))
        failed = failed_proofs(model)[self.proofs]
        ended = table.completed[self.proofs] & ~np.isnan(table.last[self.proofs])
        last = proof_ends(model, table.last, table.completed, table.seen)[self.proofs]
        # a proof's span: its first and last stamps, whole ms (as Proof's ints)
        self.proof_first = np.trunc(table.first[self.proofs])
        self.proof_last = np.maximum(np.trunc(last), self.proof_first)
        jobs = names.extend(table.jobs)
        kinds = names.extend(table.kinds)
        empty = names.id("")
        job = table.job[self.proofs]
        self.proof_job = jobs + job  # its argument: the job id alone
        state = np.where(ended, 0, np.where(failed, 1, 2)).astype(np.int64)
        unended = np.flatnonzero(state != 0)
        base = names.extend(
            [
                table.jobs[j] + STATES[s]
                for j, s in zip(job[unended].tolist(), state[unended].tolist(), strict=True)
            ]
        )
        self.proof_name = self.proof_job.copy()
        self.proof_name[unended] = base + np.arange(len(unended))
        k = table.kind[self.proofs]
        self.proof_kind = np.where(k >= 0, kinds + k, empty)
        self.proof_parts = table.partitions[self.proofs]

    def _proof_rows(self, log: int | None) -> _Rows:
        """The rows of the proofs of log `log` (None: every proof)."""
        hosts = self.model.proof_hosts
        if log is None or hosts is None:
            return _stacked(self.proof_first, self.proof_last, self.clip)
        mine = np.flatnonzero(hosts[self.proofs] == log)
        return _stacked(self.proof_first[mine], self.proof_last[mine], self.clip, mine)

    def _processes(self) -> tuple[Process, ...]:
        out = []
        for n, g in enumerate(self.model.gpus):
            threads = [(BUSY_TID, "busy")]
            for tid, lane in enumerate(self.lanes.get(g.gpu, ()), BUSY_TID + 1):
                name = f"w{lane.worker}" + (f"'{lane.sub_row}" if lane.sub_row else "")
                threads.append((tid, name))
            out.append(Process(n + 1, self.model.gpu_label(g.gpu), tuple(threads)))
        pid = len(self.model.gpus) + 1
        for (_, name), synth, proofs, shown in zip(
            self.logs, self.synth, self.proof_rows, self._shown(), strict=True
        ):
            prefix = f"{name} " if name else ""
            if shown[0]:
                slots = tuple((k + 1, f"slot {k + 1}") for k in range(synth.slots))
                out.append(Process(pid, f"{prefix}synthesis", slots))
            if shown[1]:
                rows = tuple((k + 1, f"row {k + 1}") for k in range(proofs.slots))
                out.append(Process(pid + 1, f"{prefix}proofs", rows))
            pid += 2
        # a host's or a log's name may hold what a log or a command line put there
        return tuple(
            Process(p.pid, visible(p.name), tuple((t, visible(n)) for t, n in p.threads))
            for p in out
        )

    def _shown(self) -> Iterator[tuple[bool, bool]]:
        """Per log, whether its synthesis and its proofs are processes of the trace: a log
        with no synthesis (empty, or its jobs only from its tracing lines) or no proof has
        no such process, as the viewer draws no row for it."""
        for synth, proofs, (times, _) in zip(self.synth, self.proof_rows, self.steps, strict=True):
            yield synth.slots > 0 or len(times) > 0, proofs.slots > 0

    def tracks(self) -> Iterator[Track]:
        """Every track's events, by process, then by tid (a track without events too)."""
        model = self.model
        t = model.parts
        rows_of = dict(groups_of(t.gpu, np.flatnonzero(self.done)))
        # the intervals running (a live log's, or when a log read once ends): in flight
        # from their start to now (docs/analysis.md#per-gpu: started and not ended)
        running = ~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed
        running_of = dict(groups_of(t.gpu, np.flatnonzero(running)))
        gaps_of = dict(groups_of(model.gaps.gpu, np.arange(len(model.gaps), dtype=np.int64)))
        none = np.zeros(0, dtype=np.int64)
        for n, g in enumerate(model.gpus):
            pid = n + 1
            mine = rows_of.get(g.gpu, none)
            keep, s, e = self.clip.spans(g.busy.starts, g.busy.ends)
            parts = [
                _events(BUSY, pid, BUSY_TID, s[keep], (e - s)[keep], self.busy_name),
                self._gaps(gaps_of.get(g.gpu, none), pid),
                self._counter(pid, 0, *self._in_flight(mine, running_of.get(g.gpu, none))),
                self._counter(pid, 1, *changes(g.kernel.starts, g.kernel.ends)),
            ]
            yield _joined(pid, BUSY_TID, parts)
            for tid, lane in enumerate(self.lanes.get(g.gpu, ()), BUSY_TID + 1):
                yield self._lane(lane, pid, tid)
        pid = len(model.gpus) + 1
        for synth, proofs, (times, counts), shown in zip(
            self.synth, self.proof_rows, self.steps, self._shown(), strict=True
        ):
            if shown[0]:
                yield _joined(pid, 0, [self._counter(pid, 2, times, counts.astype(np.float64))])
                yield from self._synthesis(pid, synth)
            if shown[1]:
                yield from self._proofs(pid + 1, proofs)
            pid += 2

    def _in_flight(self, ended: I64, running: I64) -> tuple[F64, F64]:
        """The intervals in flight on a GPU (its `ended` and `running` rows) at each change."""
        t = self.model.parts
        starts = np.concatenate((t.gpu_start[ended], t.gpu_start[running]))
        now = np.maximum(t.gpu_start[running], float(self.model.now_ms))
        return changes(starts, np.concatenate((t.gpu_end[ended], now)))

    def _counter(self, pid: int, which: int, times: F64, values: F64) -> Track:
        """A step function as counter events: the value at the range's start, then each
        change in the range."""
        t0, t1 = self.clip.t0, self.clip.t1
        name, key = self.counter_names[which]
        times = np.asarray(times, dtype=np.float64)
        at: list[F64] = []
        vals: list[F64] = []
        if len(times):
            k = int(np.searchsorted(times, t0, side="right")) - 1
            if k >= 0 and math.isfinite(t0):
                at.append(np.array([t0]))
                vals.append(np.asarray(values[k : k + 1], dtype=np.float64))
        inside = ((t0 <= times) & (times < t1)) | ((times == t1) & (not math.isfinite(t0)))
        at.append(times[inside])
        vals.append(np.asarray(values, dtype=np.float64)[inside])
        ts = us(np.concatenate(at))
        zero = np.zeros(len(ts), dtype=np.int64)
        return _events(COUNTER, pid, 0, ts, zero, name, [key], np.concatenate(vals))

    def _gaps(self, idx: I64, pid: int) -> Track:
        gaps = self.model.gaps
        start, end = gaps.start[idx], gaps.end[idx]
        keep, s, e = self.clip.spans(start.astype(np.float64), end.astype(np.float64))
        idx = idx[keep]
        args = [
            self.ranks[idx],
            gaps.end[idx] - gaps.start[idx],
            self.gap_cause[idx],
            gaps.crosses[idx].astype(np.int64),
            self.gap_before + idx,
            self.gap_after + idx,
        ]
        return _events(GAP, pid, BUSY_TID, s[keep], (e - s)[keep], self.gap_name + idx, args)

    def _lane(self, lane: Lane, pid: int, tid: int) -> Track:
        """Per interval on the lane: its span, and inside it one event per phase segment."""
        t = self.model.parts
        members = np.asarray(lane.partition, dtype=np.int64)
        n = len(members)
        if n == 0:
            return _joined(pid, tid, [])
        cut = np.flatnonzero(np.diff(members)) + 1
        a = np.concatenate(([0], cut))
        b = np.concatenate((cut, [n]))
        rec = members[a]
        keep, s, e = self.clip.spans(lane.starts[a], lane.ends[b - 1])
        part = t.partition[rec].astype(np.int64)
        job = self.job_base + t.job[rec].astype(np.int64)
        worker = t.worker[rec].astype(np.int64)
        whole = _events(
            INTERVAL, pid, tid, s[keep], (e - s)[keep], self.lane_name[rec][keep],
            [job[keep], part[keep], worker[keep]],
        )  # fmt: skip
        group = np.repeat(np.arange(len(a)), b - a)
        inside, ps, pe = self.clip.spans(lane.starts, lane.ends)
        # a segment the window cut to nothing is left out; one of no length of its own (an
        # interval of none: phases.csv lists it) is not
        no_length = np.asarray(lane.starts) == np.asarray(lane.ends)
        inside &= keep[group] & ((pe != ps) | no_length)
        g = group[inside]
        phase = np.asarray(lane.phases, dtype=np.int64)[inside]
        segs = _events(
            PHASE, pid, tid, ps[inside], (pe - ps)[inside],
            self.phase_names[phase, self.state[rec[g]]], [job[g], part[g]],
        )  # fmt: skip
        # the order made: each interval, then its segments
        seq = np.concatenate((2 * a[keep], 2 * np.flatnonzero(inside) + 1))
        return _joined(pid, tid, [whole, segs], seq)

    def _synthesis(self, pid: int, rows: _Rows) -> Iterator[Track]:
        t = self.model.parts
        for k, idx in enumerate(rows.tracks()):
            i = rows.records[idx]
            keep, s, e = self.clip.spans(t.synth_start[i], t.synth_end[i])
            i = i[keep]
            part = t.partition[i].astype(np.int64)
            job = self.job_base + t.job[i].astype(np.int64)
            events = _events(
                SYNTHESIS, pid, k + 1, s[keep], (e - s)[keep], self.label[i], [job, part]
            )
            yield _joined(pid, k + 1, [events])

    def _proofs(self, pid: int, rows: _Rows) -> Iterator[Track]:
        for k, track in enumerate(rows.tracks()):
            idx = rows.records[track]
            keep, s, e = self.clip.spans(self.proof_first[idx], self.proof_last[idx])
            idx = idx[keep]
            args = [self.proof_job[idx], self.proof_kind[idx], self.proof_parts[idx]]
            events = _events(PROOF, pid, k + 1, s[keep], (e - s)[keep], self.proof_name[idx], args)
            yield _joined(pid, k + 1, [events])


@dataclass(frozen=True, slots=True)
class _Rows:
    """The rows of a process of stacked tracks (synthesis slots, proof rows): how many
    tracks, each row's track, and the rows by (track, start)."""

    slots: int
    slot: I64  # each row's track (0-based)
    order: I64  # the rows by (track, start)
    records: I64  # synthesis: each row's record

    def tracks(self) -> Iterator[I64]:
        """Each track's rows, by start."""
        order = self.order
        bounds = np.searchsorted(self.slot[order], np.arange(self.slots + 1)).tolist()
        for a, b in itertools.pairwise(bounds):
            yield order[a:b]


def _stacked(starts: F64, ends: F64, clip: _Clip, records: I64 | None = None) -> _Rows:
    """Give each span the first track free at its start (overlaps go to new tracks); the
    rows of a track by the start each event will have (cut to the range, in µs), then as
    given."""
    order = np.lexsort((ends, starts))
    rows = first_free_rows(starts[order].astype(float), ends[order].astype(float))
    slot = np.zeros(len(starts), dtype=np.int64)
    slot[order] = rows
    by_track = np.lexsort((us(np.maximum(starts, clip.t0)), slot))
    n = int(slot.max()) + 1 if len(slot) else 0
    rec = np.arange(len(starts)) if records is None else records
    return _Rows(n, slot, by_track, rec)


def _synthesis_rows(model: LogModel, clip: _Clip, log: int | None = None) -> _Rows:
    """The rows of the syntheses of log `log` (None: of every record)."""
    t = model.parts
    ended = ~np.isnan(t.synth_start) & ~np.isnan(t.synth_end)
    if log is not None and model.job_hosts is not None:
        ended &= model.job_hosts[t.job] == log
    idx = np.flatnonzero(ended)
    return _stacked(t.synth_start[idx], t.synth_end[idx], clip, idx)


def string_table(texts: Sequence[str], encode: Any) -> tuple[bytes, np.ndarray]:
    """`texts` each encoded (str -> bytes), as one buffer and where each one ends (made a
    few thousand at a time: never an object per string for all of them at once)."""
    blob = bytearray()
    ends = np.zeros(len(texts), dtype=np.int64)
    for lo in range(0, len(texts), 4096):
        for k, piece in enumerate(map(encode, texts[lo : lo + 4096]), lo):
            blob += piece
            ends[k] = len(blob)
    return bytes(blob), ends
