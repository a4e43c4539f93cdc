"""The trace and CSV writers as they were before the columnar export: each event a dict, each
CSV row a list (kept to check that the columnar writers write the same content)."""

from __future__ import annotations

import csv
import heapq
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from parsers.breakdown import (
    BUSY_KEYS,
    BUSY_ORDER,
    alloc_unprinted,
    busy_breakdown,
    busy_split_ms,
    inferred_phases,
    whole_run,
)
from parsers.model import (
    PHASE_KEYS,
    PHASE_NAMES,
    PHASES,
    Breakdown,
    GpuStats,
    Lane,
    LogModel,
    Phase,
    Proof,
)
from parsers.proofs import failed_proofs
from parsers.rows import first_free_rows, groups_of
from parsers.sanitize import visible
from parsers.writing import OutputBatch, atomic_output, check_folder, check_target

BUSY_TID = 0  # each GPU's busy track: busy blocks and gaps


def _us(ms: float) -> int:
    """Milliseconds to whole microseconds (one rounding per instant keeps tracks nested)."""
    return round(ms * 1000)


def _rank(model: LogModel) -> list[int]:
    return [int(r) for r in model.gaps.ranks().tolist()]


class _Clip:
    """The exported range: events overlapping [t0, t1), cut to it."""

    def __init__(self, t0: float, t1: float) -> None:
        self.t0, self.t1 = t0, t1

    def span(self, s: float, e: float) -> tuple[int, int] | None:
        s, e = max(s, self.t0), min(e, self.t1)
        if e < s or (e == s and not (self.t0 <= s < self.t1)):
            return None
        return _us(s), _us(e)


def _x(
    name: str, cat: str, pid: int, tid: int, ts: int, end: int, args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "name": visible(name),  # the log's text with its controls visible, as in the CSV
        "cat": cat,
        "ph": "X",
        "ts": ts,
        "dur": end - ts,
        "pid": pid,
        "tid": tid,
        "args": {k: visible(v) if isinstance(v, str) else v for k, v in args.items()},
    }


def _meta(kind: str, pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": visible(name)}}


def _process(pid: int, name: str) -> Iterator[dict[str, Any]]:
    """A track group's name, and its place: in pid order."""
    yield _meta("process_name", pid, 0, name)
    yield {
        "name": "process_sort_index",
        "ph": "M",
        "pid": pid,
        "tid": 0,
        "args": {"sort_index": pid},
    }


def _counter(name: str, pid: int, ts: int, key: str, value: float) -> dict[str, Any]:
    return {"name": name, "ph": "C", "ts": ts, "pid": pid, "tid": 0, "args": {key: value}}


def _slots(starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """Give each interval the first track free at its start (overlaps go to new tracks)."""
    order = np.lexsort((ends, starts))
    rows = first_free_rows(starts[order].astype(float), ends[order].astype(float)).tolist()
    slot = [0] * len(starts)
    for i, row in zip(order.tolist(), rows, strict=True):
        slot[i] = row
    return slot


def _step_counter(
    name: str, pid: int, key: str, times: np.ndarray, values: np.ndarray, clip: _Clip
) -> Iterator[dict[str, Any]]:
    """A step function as counter events: the value at the range's start, then each change."""
    if len(times) == 0:
        return
    k = int(np.searchsorted(times, clip.t0, side="right")) - 1
    if k >= 0 and math.isfinite(clip.t0):
        yield _counter(name, pid, _us(clip.t0), key, float(values[k]))
    for t, v in zip(times.tolist(), values.tolist(), strict=True):
        if clip.t0 <= t < clip.t1 or (t == clip.t1 and not math.isfinite(clip.t0)):
            yield _counter(name, pid, _us(t), key, float(v))


def _in_flight(model: LogModel, gpu: int, ended: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The starts and ends of the GPU's intervals in flight: its `ended` ones, and those
    running (started, not ended, not failed) until now."""
    t = model.parts
    starts, ends = list(t.gpu_start[ended]), list(t.gpu_end[ended])
    for i in range(len(t)):
        started, ended_ = t.gpu_start[i] == t.gpu_start[i], t.gpu_end[i] == t.gpu_end[i]
        if t.gpu[i] == gpu and started and not ended_ and not t.failed[i]:
            starts.append(t.gpu_start[i])
            ends.append(max(t.gpu_start[i], model.now_ms))
    return np.array(starts, dtype=np.float64), np.array(ends, dtype=np.float64)


def _changes(starts: np.ndarray, ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many intervals are open, as (times, values) at each change."""
    if len(starts) == 0:
        return np.zeros(0), np.zeros(0)
    t = np.concatenate((starts, ends))
    d = np.concatenate((np.ones(len(starts)), -np.ones(len(ends))))
    order = np.lexsort((d, t))
    t, v = t[order], np.cumsum(d[order])
    last = np.append(t[1:] != t[:-1], True)  # one value per instant: the last one
    return t[last], v[last]


def trace_events(
    model: LogModel, t0: float = -math.inf, t1: float = math.inf
) -> Iterator[dict[str, Any]]:
    """The model as Trace Event Format events (times in µs on the log's ms clock), made one
    at a time: every metadata event first, then each track's events (by process, then
    thread) by start, the longer first at one instant.

    Each track's events are made in start order (a lane's segments never overlap; busy
    blocks, gaps and counter changes are each sorted; synthesis and proof rows are sorted
    first), so only the events of one instant are held at once, never the whole trace.
    """
    clip = _Clip(t0, t1)
    t = model.parts
    ranks = _rank(model)
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    lanes = _lanes_by_gpu(model)
    gaps_of = _gaps_by_gpu(model)
    rows_of = dict(groups_of(t.gpu, np.flatnonzero(done)))
    logs = model.logs()  # each log's synthesis and proofs apart, as the viewer draws them
    synth = [_synthesis_rows(model, clip, log) for log, _ in logs]
    proofs = [_proof_rows(model, clip, log) for log, _ in logs]
    n_gpus = len(model.gpus)
    # the metadata: every process's name and place, every track's name
    for n, g in enumerate(model.gpus):
        pid = n + 1
        yield from _process(pid, model.gpu_label(g.gpu))
        yield _meta("thread_name", pid, BUSY_TID, "busy")
        for tid, lane in enumerate(lanes.get(g.gpu, ()), BUSY_TID + 1):
            name = f"w{lane.worker}" + (f"'{lane.sub_row}" if lane.sub_row else "")
            yield _meta("thread_name", pid, tid, name)
    for i, (_, name) in enumerate(logs):
        pid = n_gpus + 1 + 2 * i
        prefix = f"{name} " if name else ""
        yield from _process(pid, f"{prefix}synthesis")
        for k in range(synth[i].slots):
            yield _meta("thread_name", pid, k + 1, f"slot {k + 1}")
        yield from _process(pid + 1, f"{prefix}proofs")
        for k in range(proofs[i].slots):
            yield _meta("thread_name", pid + 1, k + 1, f"row {k + 1}")
    # the tracks
    for n, g in enumerate(model.gpus):
        pid = n + 1
        mine = rows_of.get(g.gpu, _NO_ROWS)
        busy_track = heapq.merge(
            _busy_events(g, pid, clip),
            _gap_events(model, gaps_of.get(g.gpu, _NO_ROWS), ranks, pid, clip),
            _step_counter(
                "intervals in flight",
                pid,
                "intervals",
                *_changes(*_in_flight(model, g.gpu, mine)),
                clip,
            ),
            _step_counter(
                "kernels running", pid, "kernel", *_changes(g.kernel.starts, g.kernel.ends), clip
            ),
            key=_start,
        )
        yield from _by_start(busy_track)
        for tid, lane in enumerate(lanes.get(g.gpu, ()), BUSY_TID + 1):
            yield from _by_start(_lane_events(model, lane.partition, lane, pid, tid, done, clip))
    for i, (log, _) in enumerate(logs):
        pid = n_gpus + 1 + 2 * i
        yield from _by_start(_synthesis_counter(model, pid, clip, log))
        yield from _by_start(_synthesis_events(model, synth[i], pid, clip))
        yield from _by_start(_proof_events(proofs[i], pid + 1, clip))


_NO_ROWS = np.zeros(0, dtype=np.int64)


def _start(event: dict[str, Any]) -> int:
    return int(event["ts"])


def _by_start(events: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Events made track by track, each track in start order, with those of one instant of
    one track put longer first (as a stable sort by (start, -duration) would put them)."""
    same: list[dict[str, Any]] = []
    for e in events:
        if same and (e["ts"], e["tid"]) != (same[0]["ts"], same[0]["tid"]):
            same.sort(key=_longer_first)
            yield from same
            same.clear()
        same.append(e)
    same.sort(key=_longer_first)
    yield from same


def _longer_first(event: dict[str, Any]) -> int:
    return -int(event.get("dur", 0))


def _lanes_by_gpu(model: LogModel) -> dict[int, list[Lane]]:
    out: dict[int, list[Lane]] = {}
    for lane in model.lanes:
        out.setdefault(lane.gpu, []).append(lane)
    return out


def _gaps_by_gpu(model: LogModel) -> dict[int, np.ndarray]:
    """Each GPU's gaps (indices into model.gaps, by start)."""
    gpus = model.gaps.gpu
    return dict(groups_of(gpus, np.arange(len(gpus), dtype=np.int64)))


def _busy_events(g: GpuStats, pid: int, clip: _Clip) -> Iterator[dict[str, Any]]:
    for s, e in zip(g.busy.starts.tolist(), g.busy.ends.tolist(), strict=True):
        if (c := clip.span(s, e)) is not None:
            yield _x("busy", "busy", pid, BUSY_TID, *c, {})


def _side(side: Any) -> str:
    """A gap's side as the viewer's gap list writes it: `JOB w1 p4`, no `p` for a whole job."""
    return f"{side.job} w{side.worker}" + ("" if side.partition is None else f" p{side.partition}")


def _gap_events(
    model: LogModel, idx: np.ndarray, ranks: list[int], pid: int, clip: _Clip
) -> Iterator[dict[str, Any]]:
    for i in idx.tolist():
        gap = model.gaps[i]
        if (c := clip.span(gap.start, gap.end)) is None:
            continue
        args = {
            "rank": ranks[i],
            "duration_ms": gap.duration_ms,
            "cause": gap.cause,
            "crosses_proof_boundary": gap.crosses_proof_boundary,
            "before": _side(gap.before),
            "after": _side(gap.after),
        }
        yield _x(f"gap #{ranks[i]}", "gap", pid, BUSY_TID, *c, args)


def _lane_events(
    model: LogModel,
    members: np.ndarray,
    lane: Any,
    pid: int,
    tid: int,
    done: np.ndarray,
    clip: _Clip,
) -> Iterator[dict[str, Any]]:
    """Per interval on the lane: its span, and inside it one event per phase segment."""
    t = model.parts
    if len(members) == 0:
        return
    cut = np.flatnonzero(np.diff(members)) + 1
    bounds = [0, *cut.tolist(), len(members)]
    for a, b in itertools.pairwise(bounds):
        i = int(members[a])
        part = int(t.partition[i])
        job = t.job_of(i)
        args: dict[str, Any] = {
            "job": job,
            "partition": None if part < 0 else part,
            "worker": int(t.worker[i]),
        }
        state = "" if done[i] else " (failed)" if t.failed[i] else " (running)"
        whole = clip.span(float(lane.starts[a]), float(lane.ends[b - 1]))
        if whole is None:
            continue
        label = job if part < 0 else f"{job} p{part}"
        yield _x(label + state, "interval", pid, tid, *whole, args)
        for k in range(a, b):
            c = clip.span(float(lane.starts[k]), float(lane.ends[k]))
            # cut to nothing by the window: left out; a segment of no length (a prove that
            # failed or runs at its start) is one, as phases.csv lists it
            if c is None or (c[1] == c[0] and lane.starts[k] != lane.ends[k]):
                continue
            name = PHASE_NAMES[Phase(int(lane.phases[k]))]
            # only completed intervals count in the kernel figures: others say so by name
            yield _x(
                name + state, "phase", pid, tid, *c, {"job": job, "partition": args["partition"]}
            )


@dataclass(frozen=True, slots=True)
class _Rows:
    """The rows of a process of stacked tracks (synthesis slots, proof rows): how many
    tracks, and each row's track and where it starts, by (track, start)."""

    slots: int
    order: np.ndarray  # row numbers (into what the process draws), by (track, start)
    slot: np.ndarray  # each one's track (0-based), in that order


def _stacked(starts: np.ndarray, ends: np.ndarray, clip: _Clip) -> _Rows:
    slots = np.asarray(_slots(starts, ends), dtype=np.int64)
    # the start each event will have (as _Clip.span rounds it), so that the rows of a track
    # come in the order a stable sort by start keeps
    ts = np.array([_us(max(float(s), clip.t0)) for s in starts.tolist()], dtype=np.int64)
    order = np.lexsort((ts, slots))
    return _Rows(int(slots.max()) + 1 if len(slots) else 0, order, slots[order])


def _synthesis_rows(model: LogModel, clip: _Clip, log: int | None) -> _Rows:
    t = model.parts
    ended = ~np.isnan(t.synth_start) & ~np.isnan(t.synth_end)
    if log is not None:
        assert model.job_hosts is not None
        ended &= np.array([model.job_hosts[j] == log for j in t.job.tolist()], dtype=bool)
    idx = np.flatnonzero(ended)
    rows = _stacked(t.synth_start[idx], t.synth_end[idx], clip)
    return _Rows(rows.slots, idx[rows.order], rows.slot)


def _synthesis_events(
    model: LogModel, rows: _Rows, pid: int, clip: _Clip
) -> Iterator[dict[str, Any]]:
    t = model.parts
    for i, slot in zip(rows.order.tolist(), rows.slot.tolist(), strict=True):
        c = clip.span(float(t.synth_start[i]), float(t.synth_end[i]))
        if c is None:
            continue
        part = int(t.partition[i])
        job = t.job_of(i)
        name = job if part < 0 else f"{job} p{part}"
        args = {"job": job, "partition": None if part < 0 else part}
        yield _x(name, "synthesis", pid, slot + 1, *c, args)


def _synthesis_counter(
    model: LogModel, pid: int, clip: _Clip, log: int | None
) -> Iterator[dict[str, Any]]:
    times, counts = model.synth_steps(log)
    yield from _step_counter(
        "partitions in synthesis", pid, "partitions", times, counts.astype(np.float64), clip
    )


def _drawn_proofs(model: LogModel, log: int | None) -> list[tuple[Proof, int, float, str]]:
    """Each proof of log `log` (None: every proof) the proofs lane draws: its span and its
    name (a completed one to its last GPU_END; a failed one to its last stamp, a running one
    to the log's end, named so)."""
    out = []
    hosts = model.proof_hosts
    for k, (p, failed) in enumerate(zip(model.proofs, failed_proofs(model).tolist(), strict=True)):
        if p.first_synth_start is None:
            continue
        if log is not None and hosts is not None and int(hosts[k]) != log:
            continue
        if p.completed and p.last_gpu_end is not None:
            out.append((p, p.first_synth_start, float(p.last_gpu_end), p.job))
        elif failed:
            end = model.now_ms if p.last_seen is None else p.last_seen
            out.append((p, p.first_synth_start, float(end), p.job + " (failed)"))
        else:
            out.append((p, p.first_synth_start, float(model.now_ms), p.job + " (running)"))
    return out


@dataclass(frozen=True, slots=True)
class _ProofRows:
    slots: int
    spans: list[tuple[Proof, int, float, str]]
    rows: _Rows


def _proof_rows(model: LogModel, clip: _Clip, log: int | None) -> _ProofRows:
    spans = _drawn_proofs(model, log)
    starts = np.array([s for _, s, _, _ in spans], dtype=np.float64)
    ends = np.array([max(s, int(e)) for _, s, e, _ in spans], dtype=np.float64)
    rows = _stacked(starts, ends, clip)
    return _ProofRows(rows.slots, spans, rows)


def _proof_events(proofs: _ProofRows, pid: int, clip: _Clip) -> Iterator[dict[str, Any]]:
    rows = proofs.rows
    for k, slot in zip(rows.order.tolist(), rows.slot.tolist(), strict=True):
        p, s, e, name = proofs.spans[k]
        if (c := clip.span(float(s), float(max(s, int(e))))) is not None:
            args = {"job": p.job, "kind": p.kind, "partitions": p.partitions}
            yield _x(name, "proof", pid, slot + 1, *c, args)


def trace_document(model: LogModel, t0: float = -math.inf, t1: float = math.inf) -> dict[str, Any]:
    """The whole JSON object Perfetto UI and chrome://tracing open."""
    return {
        "traceEvents": list(trace_events(model, t0, t1)),
        "displayTimeUnit": "ms",
        "otherData": _other_data(model, t0, t1),
    }


def _other_data(model: LogModel, t0: float = -math.inf, t1: float = math.inf) -> dict[str, Any]:
    out: dict[str, Any] = {
        "generator": "cuzk-tui",
        "source": model.source,
        "clock": "ms since the engine started (TIMELINE offsets), as µs",
        "wall_anchor": model.wall_anchor.isoformat() if model.wall_anchor else "",
    }
    if math.isfinite(t0) or math.isfinite(t1):
        out["window_ms"] = [t0 if math.isfinite(t0) else None, t1 if math.isfinite(t1) else None]
    # per GPU, where its busy time in the exported range went (a window's: busy_split.csv's)
    out["busy_split_ms"] = busy_splits(model, t0, t1)
    # its phases that are estimates, and those its engine does not measure
    out["busy_split_estimates"] = {model.gpu_label(g.gpu): _estimated(model, g) for g in model.gpus}
    out["busy_split_unmeasured"] = {
        model.gpu_label(g.gpu): [] if g.lock_printed else ["lock_wait", "pre_lock"]
        for g in model.gpus
    }
    return out


def _estimated(model: LogModel, g: GpuStats) -> list[str]:
    """The keys of `g`'s busy split the screens mark `≈`, in the split's order."""
    inferred = inferred_phases(g, alloc_unprinted(model))
    return [k for k, p in zip(BUSY_KEYS, BUSY_ORDER, strict=True) if p in inferred]


def busy_splits(
    model: LogModel, t0: float = -math.inf, t1: float = math.inf
) -> dict[str, dict[str, float]]:
    """Per GPU (by label), its busy split in ms over [t0, t1) (the whole run: the JSON
    report's `busy_split_ms`)."""
    whole = not (math.isfinite(t0) or math.isfinite(t1))
    split = whole_run(model) if whole else busy_breakdown(model, t0, t1)
    return {
        model.gpu_label(g.gpu): busy_split_ms(split.get(g.gpu, Breakdown(g.gpu, 0.0, {})))
        for g in model.gpus
    }


# events encoded and written at a time (a few thousand: one call each, never the whole trace)
EVENTS_PER_WRITE = 1024


def write_trace(
    model: LogModel,
    path: Path,
    t0: float = -math.inf,
    t1: float = math.inf,
    inputs: Sequence[Path] = (),
    exclusive: bool = False,
) -> int:
    """Write the trace to `path` as its events are made (the document `trace_document`
    gives, byte for byte as json.dump writes it): whole or not at all, never over one of
    `inputs` (`exclusive`: only as a new file).

    Returns:
        How many events it holds.
    """
    encode = json.JSONEncoder(separators=(",", ":")).encode
    count = 0
    with atomic_output(path, inputs, exclusive=exclusive) as fh:
        fh.write('{"traceEvents":[')
        piece: list[dict[str, Any]] = []
        for event in trace_events(model, t0, t1):
            piece.append(event)
            count += 1
            if len(piece) == EVENTS_PER_WRITE:
                # a list's JSON, its brackets off: the events as json.dump joins them
                fh.write(("," if count > len(piece) else "") + encode(piece)[1:-1])
                piece.clear()
        if piece:
            fh.write(("," if count > len(piece) else "") + encode(piece)[1:-1])
        fh.write('],"displayTimeUnit":"ms","otherData":')
        fh.write(encode(_other_data(model, t0, t1)))
        fh.write("}\n")
    return count


def _num(x: float) -> float | str:
    return "" if x != x else x


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_text(text: str) -> str:
    """A text cell safe to open in a spreadsheet and to `cat`: controls made visible, and a
    cell a spreadsheet would take for a formula (OWASP: one starting with = + - @, a tab or
    a carriage return) led by an apostrophe, which spreadsheets show as text."""
    text = visible(text)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


CSV_FILES = ("intervals.csv", "phases.csv", "gaps.csv", "proofs.csv", "busy_split.csv")
CSV_ROWS = 65_536  # rows made at a time: their columns read as lists, a slice at a time


def _gpu_cell(model: LogModel, gpu: int) -> str:
    return "" if gpu < 0 else csv_text(model.gpu_label(gpu))


def _interval_rows(model: LogModel, lo: int, hi: int, times: tuple[str, ...]) -> list[list[Any]]:
    """intervals.csv's rows of records lo..hi."""
    t = model.parts
    a, b = int(t.seg_offsets[lo]), int(t.seg_offsets[hi])
    # per record, its segments' length per phase (summed in segment order, as one
    # bincount per record would)
    row = np.repeat(np.arange(hi - lo), np.diff(t.seg_offsets[lo : hi + 1]))
    flat = row * len(Phase) + t.seg_phase[a:b].astype(np.int64)
    lengths = t.seg_end[a:b] - t.seg_start[a:b]
    sums = np.bincount(flat, weights=lengths, minlength=(hi - lo) * len(Phase))
    phases = sums.reshape(hi - lo, len(Phase))[:, : len(PHASE_KEYS)].tolist()
    part, kind, worker, gpu = (
        getattr(t, name)[lo:hi].tolist() for name in ("partition", "kind", "worker", "gpu")
    )
    stamps = [getattr(t, name)[lo:hi].tolist() for name in times]
    failed = t.failed[lo:hi].tolist()
    lock, unlock = t.lock_acquired[lo:hi].tolist(), t.unlock[lo:hi].tolist()
    first, last = t.start_line[lo:hi].tolist(), t.end_line[lo:hi].tolist()
    lockless = {g.gpu for g in model.gpus if not g.lock_printed}
    # of several logs, the log each is from, as the model names its logs
    named, hosts = dict(model.logs()), model.job_hosts
    logs = [] if hosts is None else [csv_text(named[int(hosts[t.job[i]])]) for i in range(lo, hi)]
    rows = []
    for j in range(hi - lo):
        i = lo + j
        # no lock line gave its pre-lock and lock wait: none, not 0 (its lock not placed,
        # or placed back from its unlock line with the time before it unknown)
        unplaced = math.isnan(lock[j]) or gpu[j] in lockless
        k = int(t.seg_offsets[i])
        if k < int(t.seg_offsets[i + 1]) and t.seg_phase[k] == Phase.UNKNOWN:
            unplaced |= float(t.seg_end[k]) == lock[j] and lock[j] > float(t.gpu_start[i])
        rows.append(
            [
                i,
                csv_text(t.job_of(i)),
                "" if part[j] < 0 else part[j],
                csv_text(t.kinds[kind[j]]) if kind[j] >= 0 else "",
                "" if worker[j] < 0 else worker[j],
                _gpu_cell(model, gpu[j]),
                *(_num(column[j]) for column in stamps),
                int(bool(failed[j])),
                _num(lock[j]),
                _num(unlock[j]),
                first[j] or "",  # the GPU_START's and GPU_END's lines (0: none)
                last[j] or "",
                *(
                    ""
                    if (unplaced and key in ("pre_lock", "lock_wait"))
                    or math.isnan(stamps[times.index("gpu_start")][j])  # never on a GPU
                    else round(x, 3)
                    for key, x in zip(PHASE_KEYS, phases[j], strict=True)
                ),
                *logs[j : j + 1],
            ]
        )
    return rows


def _phase_rows(model: LogModel, part: np.ndarray, lo: int, hi: int) -> list[list[Any]]:
    """phases.csv's rows of segments lo..hi (`part`: each segment's record)."""
    t = model.parts
    rec = part[lo:hi]
    records = rec.tolist()
    partition, worker, gpu = (
        getattr(t, name)[rec].tolist() for name in ("partition", "worker", "gpu")
    )
    phase = t.seg_phase[lo:hi].tolist()
    starts, ends = t.seg_start[lo:hi].tolist(), t.seg_end[lo:hi].tolist()
    return [
        [
            i,
            csv_text(t.job_of(i)),
            "" if partition[j] < 0 else partition[j],
            "" if worker[j] < 0 else worker[j],
            _gpu_cell(model, gpu[j]),
            PHASES[Phase(phase[j])].key,
            starts[j],
            ends[j],
            round(ends[j] - starts[j], 3),
        ]
        for j, i in enumerate(records)
    ]


def check_csv_targets(folder: Path, inputs: Sequence[Path] = ()) -> list[Path]:
    """The CSV files `write_csv` would write in `folder`, each checked as a target.

    Raises:
        WriteRefused: `folder` is not a folder, or one of its files is an input or not a
            regular file.
    """
    check_folder(folder)
    out = [folder / name for name in CSV_FILES]
    for path in out:
        check_target(path, inputs)
    return out


def write_csv(model: LogModel, folder: Path, inputs: Sequence[Path] = ()) -> list[Path]:
    """Write intervals, phase segments, gaps, proofs and the busy split as CSV files in
    `folder` (all of them whole or none; every target is checked against `inputs` before
    anything is written)."""
    out = check_csv_targets(folder, inputs)
    folder.mkdir(parents=True, exist_ok=True)
    with OutputBatch(inputs) as batch:
        _write_csv_files(model, out, batch)
    return out


def csv_number(x: float) -> int | float:
    """A whole float as an integer, any other as it is (the number rule of the CSV)."""
    return int(x) if x.is_integer() and abs(x) < 2**53 else x


class _Numbers:
    """A csv writer that writes each float as the CSV writes a number (`csv_number`)."""

    def __init__(self, fh: Any) -> None:
        self._w = csv.writer(fh, lineterminator="\n")

    def _row(self, row: Iterable[Any]) -> list[Any]:
        return [csv_number(c) if isinstance(c, float) else c for c in row]

    def writerow(self, row: Iterable[Any]) -> None:
        self._w.writerow(self._row(row))

    def writerows(self, rows: Iterable[Iterable[Any]]) -> None:
        self._w.writerows(self._row(row) for row in rows)


def _write_csv_files(model: LogModel, out: list[Path], batch: OutputBatch) -> None:
    t = model.parts
    with batch.open(out[0]) as fh:
        w = _Numbers(fh)
        times = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")
        w.writerow(
            [
                *("index", "job", "partition", "kind", "worker", "gpu", *times, "failed"),
                *("lock_acquired", "unlock", "start_line", "end_line"),
                *(f"{k}_ms" for k in PHASE_KEYS),
                *(["log"] if model.job_hosts is not None else []),
            ]
        )
        for lo in range(0, len(t), CSV_ROWS):
            w.writerows(_interval_rows(model, lo, min(lo + CSV_ROWS, len(t)), times))
    with batch.open(out[1]) as fh:
        w = _Numbers(fh)
        w.writerow(["index", "job", "partition", "worker", "gpu", "phase", "start", "end", "ms"])
        part = np.repeat(np.arange(len(t)), np.diff(t.seg_offsets))
        for lo in range(0, len(part), CSV_ROWS):
            w.writerows(_phase_rows(model, part, lo, min(lo + CSV_ROWS, len(part))))
    ranks = _rank(model)
    with batch.open(out[2]) as fh:
        w = _Numbers(fh)
        w.writerow(
            [
                *("rank", "gpu", "start", "end", "ms", "cause", "crosses_proof_boundary"),
                *("before_job", "before_worker", "before_partition"),
                *("after_job", "after_worker", "after_partition", "after_queued"),
            ]
        )
        for gap, rank in zip(model.gaps, ranks, strict=True):
            w.writerow(
                [
                    rank,
                    csv_text(model.gpu_label(gap.gpu)),
                    gap.start,
                    gap.end,
                    gap.duration_ms,
                    gap.cause or "",
                    int(gap.crosses_proof_boundary),
                    csv_text(gap.before.job),
                    gap.before.worker,
                    "" if gap.before.partition is None else gap.before.partition,
                    csv_text(gap.after.job),
                    gap.after.worker,
                    "" if gap.after.partition is None else gap.after.partition,
                    "" if gap.after_queued is None else gap.after_queued,
                ]
            )
    with batch.open(out[3]) as fh:
        w = _Numbers(fh)
        w.writerow(
            [
                "job",
                "kind",
                "partitions",
                "first_synth_start",
                "last_gpu_end",
                "completed",
                "failed",
                # of several logs or runs, the log each proof is from, as its GPUs name it
                *(["log"] if model.proof_hosts is not None else []),
            ]
        )
        named = dict(model.logs())
        hosts = model.proof_hosts
        for k, (p, failed) in enumerate(
            zip(model.proofs, failed_proofs(model).tolist(), strict=True)
        ):
            log = [] if hosts is None else [csv_text(named[int(hosts[k])])]
            w.writerow(
                [
                    csv_text(p.job),
                    csv_text(p.kind),
                    p.partitions,
                    "" if p.first_synth_start is None else p.first_synth_start,
                    "" if p.last_gpu_end is None else p.last_gpu_end,
                    int(p.completed),
                    int(failed),
                    *log,
                ]
            )
    with batch.open(out[4]) as fh:
        w = _Numbers(fh)
        w.writerow(
            [
                "gpu",
                "timeline_busy_ms",
                *(f"{k}_ms" for k in BUSY_KEYS),
                "estimates",
                "kernel_ms_least",
                "kernel_ms_most",
                "unmeasured",
            ]
        )
        splits = busy_splits(model)
        for g in model.gpus:
            label = model.gpu_label(g.gpu)
            least, most = (round(x, 3) for x in g.kernel_range_ms)
            w.writerow(
                [
                    csv_text(label),
                    g.busy_ms,
                    *splits[label].values(),
                    " ".join(_estimated(model, g)),
                    least if g.kernel_is_estimate else "",
                    most if g.kernel_is_estimate else "",
                    "" if g.lock_printed else "lock_wait pre_lock",
                ]
            )
