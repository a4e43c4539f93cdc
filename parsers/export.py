"""Export the model: Trace Event Format JSON (Perfetto, chrome://tracing) and CSV tables."""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from parsers.analysis import first_free_rows
from parsers.breakdown import BUSY_KEYS, busy_split_ms, whole_run
from parsers.model import PHASE_KEYS, PHASE_NAMES, Breakdown, LogModel, Phase
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
        "name": name,
        "cat": cat,
        "ph": "X",
        "ts": ts,
        "dur": end - ts,
        "pid": pid,
        "tid": tid,
        "args": args,
    }


def _meta(kind: str, pid: int, tid: int, name: str) -> dict[str, Any]:
    return {"name": kind, "ph": "M", "pid": pid, "tid": tid, "args": {"name": name}}


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
) -> list[dict[str, Any]]:
    """The model as Trace Event Format events (times in µs on the log's ms clock)."""
    clip = _Clip(t0, t1)
    t = model.parts
    events: list[dict[str, Any]] = []
    ranks = _rank(model)
    done = ~np.isnan(t.gpu_start) & ~np.isnan(t.gpu_end)
    for n, g in enumerate(model.gpus):
        pid = n + 1
        events.extend(_process(pid, model.gpu_label(g.gpu)))
        events.append(_meta("thread_name", pid, BUSY_TID, "busy"))
        for s, e in zip(g.busy.starts.tolist(), g.busy.ends.tolist(), strict=True):
            if (c := clip.span(s, e)) is not None:
                events.append(_x("busy", "busy", pid, BUSY_TID, *c, {}))
        for i in np.flatnonzero(model.gaps.gpu == g.gpu).tolist():
            gap = model.gaps[i]
            if (c := clip.span(gap.start, gap.end)) is None:
                continue
            args = {
                "rank": ranks[i],
                "duration_ms": gap.duration_ms,
                "cause": gap.cause,
                "crosses_proof_boundary": gap.crosses_proof_boundary,
                "before": f"{gap.before.job} w{gap.before.worker} p{gap.before.partition}",
                "after": f"{gap.after.job} w{gap.after.worker} p{gap.after.partition}",
            }
            events.append(_x(f"gap #{ranks[i]}", "gap", pid, BUSY_TID, *c, args))
        tid = BUSY_TID
        for lane in model.lanes:
            if lane.gpu != g.gpu:
                continue
            tid += 1
            name = f"w{lane.worker}" + (f"'{lane.sub_row}" if lane.sub_row else "")
            events.append(_meta("thread_name", pid, tid, name))
            events.extend(_lane_events(model, lane.partition, lane, pid, tid, done, clip))
        mine = np.flatnonzero(done & (t.gpu == g.gpu))
        times, values = _changes(t.gpu_start[mine], t.gpu_end[mine])
        events.extend(_step_counter("intervals in flight", pid, "intervals", times, values, clip))
        times, values = _changes(g.kernel.starts, g.kernel.ends)
        events.extend(_step_counter("kernels running", pid, "kernel", times, values, clip))
    events.extend(_synthesis_events(model, len(model.gpus) + 1, clip))
    events.extend(_proof_events(model, len(model.gpus) + 2, clip))
    meta = [e for e in events if e["ph"] == "M"]
    rest = [e for e in events if e["ph"] != "M"]
    # parents before children at one instant: by start, the longer first
    rest.sort(key=lambda e: (e["pid"], e["tid"], e["ts"], -e.get("dur", 0)))
    return meta + rest


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
            if c is None or c[1] == c[0]:
                continue
            name = PHASE_NAMES[Phase(int(lane.phases[k]))]
            # only completed intervals count in the kernel figures: others say so by name
            yield _x(
                name + state, "phase", pid, tid, *c, {"job": job, "partition": args["partition"]}
            )


def _synthesis_events(model: LogModel, pid: int, clip: _Clip) -> Iterator[dict[str, Any]]:
    t = model.parts
    yield from _process(pid, "synthesis")
    idx = np.flatnonzero(~np.isnan(t.synth_start) & ~np.isnan(t.synth_end))
    slots = _slots(t.synth_start[idx], t.synth_end[idx])
    for k in range(max(slots, default=-1) + 1):
        yield _meta("thread_name", pid, k + 1, f"slot {k + 1}")
    for i, slot in zip(idx.tolist(), slots, strict=True):
        c = clip.span(float(t.synth_start[i]), float(t.synth_end[i]))
        if c is None:
            continue
        part = int(t.partition[i])
        job = t.job_of(i)
        name = job if part < 0 else f"{job} p{part}"
        args = {"job": job, "partition": None if part < 0 else part}
        yield _x(name, "synthesis", pid, slot + 1, *c, args)
    yield from _step_counter(
        "partitions in synthesis",
        pid,
        "partitions",
        model.synth_times,
        model.synth_counts.astype(np.float64),
        clip,
    )


def _proof_events(model: LogModel, pid: int, clip: _Clip) -> Iterator[dict[str, Any]]:
    yield from _process(pid, "proofs")
    spans = [
        (p, p.first_synth_start, p.last_gpu_end)
        for p in model.proofs
        if p.completed and p.first_synth_start is not None and p.last_gpu_end is not None
    ]
    if not spans:
        return
    starts = np.array([s for _, s, _ in spans], dtype=np.float64)
    ends = np.array([e for _, _, e in spans], dtype=np.float64)
    slots = _slots(starts, ends)
    for k in range(max(slots) + 1):
        yield _meta("thread_name", pid, k + 1, f"row {k + 1}")
    for (p, s, e), slot in zip(spans, slots, strict=True):
        if (c := clip.span(float(s), float(e))) is not None:
            args = {"job": p.job, "kind": p.kind, "partitions": p.partitions}
            yield _x(p.job, "proof", pid, slot + 1, *c, args)


def busy_splits(model: LogModel) -> dict[str, dict[str, float]]:
    """Per GPU (by label), its busy split in ms: the JSON report's `busy_split_ms`."""
    split = whole_run(model)
    return {
        model.gpu_label(g.gpu): busy_split_ms(split.get(g.gpu, Breakdown(g.gpu, 0.0, {})))
        for g in model.gpus
    }


def trace_document(model: LogModel, t0: float = -math.inf, t1: float = math.inf) -> dict[str, Any]:
    """The whole JSON object Perfetto UI and chrome://tracing open."""
    return {
        "traceEvents": trace_events(model, t0, t1),
        "displayTimeUnit": "ms",
        "otherData": {
            "generator": "cuzk-tui",
            "source": model.source,
            "clock": "ms since the engine started (TIMELINE offsets), as µs",
            "wall_anchor": model.wall_anchor.isoformat() if model.wall_anchor else "",
            # per GPU, where its busy time went over the whole run (as the JSON report)
            "busy_split_ms": busy_splits(model),
        },
    }


def write_trace(
    model: LogModel,
    path: Path,
    t0: float = -math.inf,
    t1: float = math.inf,
    inputs: Sequence[Path] = (),
    exclusive: bool = False,
) -> int:
    """Write the trace to `path` (whole or not at all; never over one of `inputs`;
    `exclusive`: only as a new file).

    Returns:
        How many events it holds.
    """
    doc = trace_document(model, t0, t1)
    with atomic_output(path, inputs, exclusive=exclusive) as fh:
        json.dump(doc, fh, separators=(",", ":"))
        fh.write("\n")
    return len(doc["traceEvents"])


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
    """Write intervals, phase segments, gaps and proofs as CSV files in `folder` (each whole
    or not at all; every target is checked against `inputs` before anything is written)."""
    out = check_csv_targets(folder, inputs)
    folder.mkdir(parents=True, exist_ok=True)
    with OutputBatch(inputs) as batch:
        _write_csv_files(model, out, batch)
    return out


def _write_csv_files(model: LogModel, out: list[Path], batch: OutputBatch) -> None:
    t = model.parts
    with batch.open(out[0]) as fh:
        w = csv.writer(fh)
        times = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")
        w.writerow(
            [
                *("index", "job", "partition", "kind", "worker", "gpu", *times, "failed"),
                *("lock_acquired", "unlock", "start_line", "end_line"),
                *(f"{k}_ms" for k in PHASE_KEYS),
            ]
        )
        seg_len = t.seg_end - t.seg_start
        for i in range(len(t)):
            a, b = int(t.seg_offsets[i]), int(t.seg_offsets[i + 1])
            phases = np.bincount(
                t.seg_phase[a:b].astype(np.int64), weights=seg_len[a:b], minlength=len(Phase)
            )
            gpu = int(t.gpu[i])
            w.writerow(
                [
                    i,
                    csv_text(t.job_of(i)),
                    "" if t.partition[i] < 0 else int(t.partition[i]),
                    csv_text(t.kinds[int(t.kind[i])]) if t.kind[i] >= 0 else "",
                    "" if t.worker[i] < 0 else int(t.worker[i]),
                    "" if gpu < 0 else csv_text(model.gpu_label(gpu)),
                    *(_num(float(getattr(t, name)[i])) for name in times),
                    int(bool(t.failed[i])),
                    _num(float(t.lock_acquired[i])),
                    _num(float(t.unlock[i])),
                    int(t.start_line[i]),
                    int(t.end_line[i]),
                    *(round(float(phases[k]), 3) for k in range(len(PHASE_KEYS))),
                ]
            )
    with batch.open(out[1]) as fh:
        w = csv.writer(fh)
        w.writerow(["index", "job", "partition", "worker", "gpu", "phase", "start", "end", "ms"])
        part = np.repeat(np.arange(len(t)), np.diff(t.seg_offsets))
        for k in range(len(t.seg_start)):
            i = int(part[k])
            gpu = int(t.gpu[i])
            s, e = float(t.seg_start[k]), float(t.seg_end[k])
            w.writerow(
                [
                    i,
                    csv_text(t.job_of(i)),
                    "" if t.partition[i] < 0 else int(t.partition[i]),
                    "" if t.worker[i] < 0 else int(t.worker[i]),
                    "" if gpu < 0 else csv_text(model.gpu_label(gpu)),
                    PHASE_NAMES[Phase(int(t.seg_phase[k]))],
                    s,
                    e,
                    round(e - s, 3),
                ]
            )
    ranks = _rank(model)
    with batch.open(out[2]) as fh:
        w = csv.writer(fh)
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
        w = csv.writer(fh)
        w.writerow(["job", "kind", "partitions", "first_synth_start", "last_gpu_end", "completed"])
        for p in model.proofs:
            w.writerow(
                [
                    csv_text(p.job),
                    csv_text(p.kind),
                    p.partitions,
                    "" if p.first_synth_start is None else p.first_synth_start,
                    "" if p.last_gpu_end is None else p.last_gpu_end,
                    int(p.completed),
                ]
            )
    with batch.open(out[4]) as fh:
        w = csv.writer(fh)
        w.writerow(["gpu", "timeline_busy_ms", *(f"{k}_ms" for k in BUSY_KEYS)])
        splits = busy_splits(model)
        for g in model.gpus:
            label = model.gpu_label(g.gpu)
            w.writerow([csv_text(label), g.busy_ms, *splits[label].values()])
