"""Several logs as one model: one group of GPUs per log, on a shared time axis.

Defined in docs/analysis.md#several-logs-cuzk-tui-host1log-host2log-.
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np
import numpy.typing as npt

from parsers.breakdown import segments_whole, whole_run
from parsers.durations import duration
from parsers.linefacts import LineFacts
from parsers.model import (
    I32,
    I64,
    MERGED_COMPARE,
    MERGED_HOSTS,
    MERGED_RUNS,
    NO_STAMP,
    Blocks,
    Breakdown,
    GapStats,
    GapTable,
    GpuKey,
    GpuStats,
    Lane,
    LineCounts,
    LogModel,
    PartitionTable,
    ProofList,
    ProofTable,
    Segments,
    Summary,
    WorkerStats,
    joined_offsets,
    key_order,
)
from parsers.proofs import failed_proofs
from parsers.rawlines import LineReader
from parsers.sanitize import visible

# A merged GPU id is host * stride + the CUDA ordinal the log printed (host 0 keeps its ids):
# a number only, never read back (the model's GpuKey says where each GPU is from). The stride
# is this, or a larger power of ten when a log prints a larger ordinal.
MIN_GPU_STRIDE = 1000

WALL = "wall"  # aligned on the wall clock the logs carry
START = "start"  # each from its own first event (compare: the same stage lines up)
OWN = "own"  # each on its own TIMELINE clock (no common wall clock)
RUNS = "runs"  # the runs of one log (the daemon restarted): one after the other
CUT = "wall-cut"  # on the wall clock, what lies between logs far apart left out


@dataclass(frozen=True, slots=True)
class Host:
    """One log of a merged model."""

    name: str
    source: str
    offset_ms: int  # added to every time of this log
    first_part: int  # its partitions are first_part.. in the merged table
    gpu_base: int  # its GPU ids are gpu_base + ordinal
    wall_anchor: datetime | None


@dataclass(frozen=True, slots=True)
class Merged:
    """A merged model, how its logs were placed, and why."""

    model: LogModel
    hosts: tuple[Host, ...]
    alignment: str  # WALL, CUT, START, OWN or RUNS
    note: str  # one sentence: how the logs share the time axis
    # per log, what the core noted of its lines (parsers/linefacts.py), when known
    line_facts: tuple[LineFacts | None, ...] = ()

    def wall_clock_why(self) -> str | None:
        """Why a wall-clock time cannot be placed on these logs: the logs have no one wall
        clock, or were placed otherwise (--align start; None: on the wall clock)."""
        if self.alignment == WALL:
            return None
        anchors = [h.wall_anchor for h in self.hosts]
        if self.alignment == OWN:
            return _no_shared_clock([h.source for h in self.hosts], anchors)
        if self.alignment == CUT:
            return "the time between logs far apart is left out of the all-hosts clock"
        return "each run placed from its own start" if self.alignment == START else self.note

    def host_of_part(self, index: int) -> int:
        """The log a partition of the merged table came from."""
        firsts = [h.first_part for h in self.hosts]
        return max(0, bisect.bisect_right(firsts, index) - 1)

    def host_of_gpu(self, gpu: int) -> int:
        """The log a merged GPU id came from."""
        keys = self.model.gpu_keys
        return keys[gpu].host if keys is not None and gpu in keys else 0


def _comparable(anchors: list[datetime]) -> bool:
    """Wall anchors can be subtracted: all carry a zone, or none does."""
    aware = {a.tzinfo is not None for a in anchors}
    return len(aware) == 1


def placement(models: Sequence[LogModel], align: str | None = None) -> tuple[str, list[int], str]:
    """How to place the logs: (alignment, offset per log in ms, one sentence saying so).

    `align` None: the wall clock when every log carries one (stdout lines or journald
    prefixes), else each log on its own clock. START puts each log's first event at 0.
    """
    if align == START:
        offsets = [-round(m.time_range[0]) for m in models]
        return START, offsets, "each run from its own start (the same stage lines up)"
    anchors = [m.wall_anchor for m in models]
    known = [a for a in anchors if a is not None]
    if align == RUNS and not (len(known) == len(anchors) and _comparable(known)):
        # no wall clock to place them by: each run after the one before, a minute apart
        offsets = _one_after_another(models)
        return RUNS, offsets, "each run after the one before (the log gives no wall clock)"
    if align in (None, WALL, RUNS) and all(a is not None for a in anchors):
        known = [a for a in anchors if a is not None]
        if _comparable(known):
            first = min(known)
            offsets = [round((a - first).total_seconds() * 1000) for a in known]
            # several logs far apart: nearly all of the axis would be the time between
            # them, each log a sliver. Not the runs of one log: a followed log's runs would
            # move on the axis as its last run grows (placed, then cut, then not)
            closed = None if align == RUNS else _closed_up([m.time_range for m in models], offsets)
            if closed is None:
                return WALL, offsets, "aligned on the wall clock"
            offsets, longest = closed
            return CUT, offsets, f"on the wall clock, the {duration(longest)} between logs cut"
    why = _no_shared_clock([m.source for m in models], anchors)
    return OWN, [0] * len(models), f"each on its own clock ({why})"


FAR_APART = 10  # a stretch between logs this many times the time they cover is left out
APART_MS = 60_000  # what is kept of it; and between runs placed one after the other


def _closed_up(
    ranges: Sequence[tuple[float, float]], offsets: Sequence[int]
) -> tuple[list[int], float] | None:
    """Offsets that leave out of the axis every stretch without a log (the logs' time
    `ranges` placed at `offsets`) longer than FAR_APART times the time the logs cover, a
    minute of it kept, and the longest left out; None: there is no such stretch."""
    order = sorted(range(len(ranges)), key=lambda k: ranges[k][0] + offsets[k])
    covered, lo, hi = 0.0, -math.inf, -math.inf
    for k in order:
        a, b = ranges[k][0] + offsets[k], ranges[k][1] + offsets[k]
        if a > hi:
            covered += max(0.0, hi - lo)
            lo = a
        hi = max(hi, b)
    covered += hi - lo
    limit = max(FAR_APART * covered, APART_MS)
    out, shift, longest, hi = list(offsets), 0, 0.0, -math.inf
    for k in order:
        a = ranges[k][0] + offsets[k]
        if hi > -math.inf and a - hi > limit:
            shift += round(a - hi - APART_MS)
            longest = max(longest, a - hi)
        out[k] = offsets[k] - shift
        hi = max(hi, ranges[k][1] + offsets[k])
    return (out, longest) if longest else None


def _one_after_another(models: Sequence[LogModel]) -> list[int]:
    """Offsets that put each log after the one before, a minute apart."""
    offsets: list[int] = []
    end = 0.0
    for m in models:
        start, stop = m.time_range
        off = round(end - start + (APART_MS if offsets else 0))
        offsets.append(off)
        end = stop + off
    return offsets


def _no_shared_clock(sources: Sequence[str], anchors: Sequence[datetime | None]) -> str:
    """Why logs with these wall anchors are not on one wall clock."""
    missing = [visible(s) for s, a in zip(sources, anchors, strict=True) if a is None]
    if missing:
        return f"no wall clock in {', '.join(missing)}"
    return "the logs' clocks are in different zones"


def _wall_bases(models: Sequence[LogModel], offsets: Sequence[int]) -> dict[int, datetime]:
    """Per log, the wall time of 0 on the all-hosts clock by its own anchor: its events'
    wall times as its own report gives them."""
    return {
        k: m.wall_anchor - timedelta(milliseconds=off)
        for k, (m, off) in enumerate(zip(models, offsets, strict=True))
        if m.wall_anchor is not None
    }


def _shift_blocks(b: Blocks, off: int) -> Blocks:
    return Blocks(b.starts + off, b.ends + off)


def gpu_stride(models: Sequence[LogModel]) -> int:
    """What host k's GPU ids are shifted by (k times it): above every ordinal printed."""
    top = max((g.gpu for m in models for g in m.gpus), default=0)
    top = max(top, max((int(m.parts.gpu.max()) for m in models if len(m.parts)), default=0))
    stride = MIN_GPU_STRIDE
    while stride <= top:
        stride *= 10
    return stride


def _table(models: Sequence[LogModel], offsets: list[int], stride: int) -> PartitionTable:
    ts = [m.parts for m in models]
    jobs: list[str] = []
    kinds: list[str] = []
    job_cols, kind_cols, gpu_cols = [], [], []
    for k, t in enumerate(ts):
        job_cols.append(t.job + len(jobs))
        kind_cols.append(np.where(t.kind >= 0, t.kind + len(kinds), -1).astype(np.int32))
        gpu_cols.append(np.where(t.gpu >= 0, t.gpu + k * stride, -1).astype(np.int32))
        jobs.extend(t.jobs)
        kinds.extend(t.kinds)

    def cat(name: str, shift: bool = False, rows: bool = True) -> np.ndarray:
        """One column of every table (`shift`: each table's part moved by its offset, in
        place: one copy of the column, not two; `rows`: a column of rows, else of
        segments)."""
        out = np.concatenate([getattr(t, name) for t in ts])
        if shift:
            at = 0
            for t, off in zip(ts, offsets, strict=True):
                n = len(t) if rows else len(t.seg_start)
                if off:
                    out[at : at + n] += off
                at += n
        return out

    times = ("synth_start", "synth_end", "queued", "pickup", "gpu_start", "gpu_end")
    return PartitionTable(
        jobs=tuple(jobs),
        kinds=tuple(kinds),
        job=np.concatenate(job_cols).astype(np.int32),
        partition=cat("partition"),
        kind=np.concatenate(kind_cols),
        worker=cat("worker"),
        gpu=np.concatenate(gpu_cols),
        **{name: cat(name, True) for name in times},
        lock_acquired=cat("lock_acquired", True),
        unlock=cat("unlock", True),
        failed=cat("failed"),
        start_line=cat("start_line"),
        end_line=cat("end_line"),
        seg_start=cat("seg_start", True, rows=False),
        seg_end=cat("seg_end", True, rows=False),
        seg_phase=cat("seg_phase"),
        seg_offsets=joined_offsets(ts),
    )


def _synthesis(models: Sequence[LogModel], offsets: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """The step functions of partitions in synthesis, added up."""
    times, deltas = [], []
    for m, off in zip(models, offsets, strict=True):
        if len(m.synth_times):
            times.append(m.synth_times + off)
            deltas.append(np.diff(m.synth_counts, prepend=0))
    if not times:
        return np.zeros(0), np.zeros(0, dtype=np.int32)
    t = np.concatenate(times)
    d = np.concatenate(deltas)
    if all(later[0] > earlier[-1] for earlier, later in itertools.pairwise(times)):
        # each log's steps in order, each log after the one before (a log's runs): in order
        return t, np.cumsum(d, dtype=np.int32)
    order = np.lexsort((d, t))  # ends before starts at the same ms
    return t[order], np.cumsum(d[order], dtype=np.int32)


def _run_split(
    models: Sequence[LogModel], stride: int, split: Callable[[LogModel], dict[int, Breakdown]]
) -> dict[int, Breakdown]:
    """Each log's busy split (`whole_run`, or its segments' `segments_whole`), under its
    GPUs' merged ids (time shifts change no length)."""
    out: dict[int, Breakdown] = {}
    for k, m in enumerate(models):
        for g, b in split(m).items():
            out[g + k * stride] = Breakdown(g + k * stride, b.busy_ms, b.phase_ms)
    return out


def _shifted_proofs(t: ProofTable, off: int) -> ProofTable:
    """Proofs `t` with their times shifted by `off`."""
    return replace(t, first=t.first + off, last=t.last + off, seen=t.seen + off)


def _merged_proofs(tables: Sequence[ProofTable]) -> tuple[ProofTable, I32, I64]:
    """The proofs of several logs in one list, in `proof_key` order (of two with the same
    key, the earlier log's first), the log each is from, and the order that made the list
    of the tables' proofs one after the other. Each log's are in that order
    (`ProofTable.in_key_order`); all are sorted at once, as columns (a long log has tens of
    thousands, a followed log is merged again at every snapshot, and a daemon may restart
    thousands of times)."""
    jobs: list[str] = []
    kinds: list[str] = []
    renumbered = []
    for t in tables:
        renumbered.append(
            replace(
                t,
                job=t.job + len(jobs),
                kind=np.where(t.kind >= 0, t.kind + len(kinds), -1),
            )
        )
        jobs.extend(t.jobs)
        kinds.extend(t.kinds)
    names, kind_names = tuple(jobs), tuple(kinds)

    def joined(column: str) -> np.ndarray:
        return np.concatenate([getattr(t, column) for t in renumbered])

    whole = ProofTable(
        job=joined("job"),
        kind=joined("kind"),
        partitions=joined("partitions"),
        first=joined("first"),
        last=joined("last"),
        completed=joined("completed"),
        seen=joined("seen"),
        jobs=names,
        kinds=kind_names,
    )
    hosts = np.concatenate([np.full(len(t), k, dtype=np.int32) for k, t in enumerate(renumbered)])
    # one stable sort by key: of equal keys, the earlier log's first, each log's in its
    # order (what putting each log's among those before it gave, as insort_right does; a
    # log of 50,000 restarts made that quadratic)
    order = key_order(whole.first, [names[j] for j in whole.job.tolist()])
    return whole.take(order), hosts[order], order


def merge(models: Sequence[LogModel], names: Sequence[str], align: str | None = None) -> Merged:
    """One model of several logs: host k's GPU G becomes k * stride + G (`gpu_stride`; the
    model's gpu_keys say where each is from), its times are shifted by its offset; gaps,
    proofs and lanes of every log are kept as they are."""
    alignment, offsets, note = placement(models, align)
    stride = gpu_stride(models)
    t = _table(models, offsets, stride)
    hosts: list[Host] = []
    lanes: list[Lane] = []
    gpus: list[GpuStats] = []
    workers: list[WorkerStats] = []
    gaps: list[GapTable] = []
    kernel_gaps: dict[int, Blocks] = {}
    proof_tables: list[ProofTable] = []
    failed: list[npt.NDArray[np.bool_]] = []  # per proof, as its own log says
    counts = LineCounts()
    base = 0
    for k, (m, off, name) in enumerate(zip(models, offsets, names, strict=True)):
        g0 = k * stride
        hosts.append(Host(name, m.source, off, base, g0, m.wall_anchor))
        lanes.extend(
            Lane(
                lane.gpu + g0,
                lane.worker,
                lane.sub_row,
                (
                    Segments(
                        lane.starts + off,
                        lane.ends + off,
                        lane.phases,
                        (lane.partition + base).astype(np.int32),
                    ),
                ),
            )
            for lane in m.lanes
        )
        gpus.extend(
            replace(
                g,
                gpu=g.gpu + g0,
                span=None if g.span is None else (g.span[0] + off, g.span[1] + off),
                busy=_shift_blocks(g.busy, off),
                kernel=_shift_blocks(g.kernel, off),
            )
            for g in m.gpus
        )
        workers.extend(replace(w, gpu=w.gpu + g0) for w in m.workers)
        mg = m.gaps
        gaps.append(
            GapTable(
                (mg.gpu + g0).astype(np.int32),
                mg.start + off,
                mg.end + off,
                mg.before + base,
                mg.after + base,
                mg.cause,
                np.where(mg.after_queued == NO_STAMP, NO_STAMP, mg.after_queued + off),
                t,
            )
        )
        kernel_gaps.update({g + g0: _shift_blocks(b, off) for g, b in m.kernel_gaps.items()})
        table, own = ProofTable.of(m.proofs), failed_proofs(m)
        in_order = table.key_order_index()
        if in_order is not None:
            table, own = table.take(in_order), own[in_order]
        proof_tables.append(_shifted_proofs(table, off))
        failed.append(own)
        c = m.counts
        counts = LineCounts(
            counts.timeline + c.timeline,
            counts.cuzk_timing + c.cuzk_timing,
            counts.stdout + c.stdout,
            counts.spliced + c.spliced,
            counts.malformed + c.malformed,
            counts.other + c.other,
        )
        base += len(m.parts)
    every = GapTable.concat(gaps, t)
    all_gaps = every.take(np.lexsort((every.gpu, every.start)))
    proofs, proof_hosts, order = _merged_proofs(proof_tables)
    firsts = [
        s.first_synth_start + off
        for s, off in ((m.summary, off) for m, off in zip(models, offsets, strict=True))
        if s.first_synth_start is not None
    ]
    lasts = [
        m.summary.last_gpu_end + off
        for m, off in zip(models, offsets, strict=True)
        if m.summary.last_gpu_end is not None
    ]
    summary = Summary(
        proofs_started=sum(m.summary.proofs_started for m in models),
        proofs_completed=sum(m.summary.proofs_completed for m in models),
        first_synth_start=min(firsts) if firsts else None,
        last_gpu_end=max(lasts) if lasts else None,
        gaps=GapStats.of(all_gaps.duration),
        merged={RUNS: MERGED_RUNS, START: MERGED_COMPARE}.get(align or "", MERGED_HOSTS),
        each=tuple(m.summary for m in models),
    )
    synth_t, synth_n = _synthesis(models, offsets)
    anchors = [m.wall_anchor for m in models if m.wall_anchor is not None]
    # the names as drawn (a file name or --name may hold controls); the hosts keep them exact
    shown = [visible(name) for name in names]
    keys = {
        g.gpu + k * stride: GpuKey(k, shown[k], g.gpu) for k, m in enumerate(models) for g in m.gpus
    }
    source = " + ".join(shown)
    model = LogModel(
        source=source,
        counts=counts,
        finished=all(m.finished for m in models),
        wall_anchor=min(anchors) if alignment == WALL and anchors else None,
        wall_bases=_wall_bases(models, offsets),
        now_ms=max(m.now_ms + off for m, off in zip(models, offsets, strict=True)),
        parts=t,
        lanes=tuple(sorted(lanes, key=lambda lane: (lane.gpu, lane.worker, lane.sub_row))),
        gpus=tuple(gpus),
        workers=tuple(workers),
        gaps=all_gaps,
        kernel_gaps=kernel_gaps,
        proofs=ProofList(proofs),
        proof_spans=proofs.spans(),
        summary=summary,
        synth_times=synth_t,
        synth_counts=synth_n,
        unattributed_timing_lines=sum(m.unattributed_timing_lines for m in models),
        partial_bytes=sum(m.partial_bytes for m in models),
        engine_seen=any(m.engine_seen for m in models),
        run_split=_run_split(models, stride, whole_run),
        segment_split=_run_split(models, stride, segments_whole),
        unattributed_kernel_ms=sum(m.unattributed_kernel_ms for m in models),
        starts_mid_run=any(m.starts_mid_run for m in models),
        log_names=tuple(names),
        log_ends=tuple(float(m.now_ms + off) for m, off in zip(models, offsets, strict=True)),
        proof_failed=np.concatenate([np.zeros(0, dtype=bool), *failed])[order],
        synth_by_log={
            k: (m.synth_times + off, m.synth_counts)
            for k, (m, off) in enumerate(zip(models, offsets, strict=True))
        },
        gpu_keys=keys,
        proof_hosts=proof_hosts,
        # in the order _table puts each log's jobs in
        job_hosts=np.concatenate(
            [np.full(len(m.parts.jobs), k, dtype=np.int32) for k, m in enumerate(models)]
        ),
        drawn=all(m.drawn for m in models),
        # the workers no line placed, of the logs whose own header says so (two or more)
        unplaced_workers=tuple(w for m in models if m.workers_assumed for w in m.unplaced_workers),
    )
    return Merged(model, tuple(hosts), alignment, note, tuple(m.line_facts for m in models))


class HostLines(LineReader):
    """Raw lines of a merged model: partition i's line numbers are those of its own log."""

    def __init__(self, merged: Merged, readers: Sequence[LineReader]) -> None:
        super().__init__()
        self.merged = merged
        self.readers = list(readers)

    def for_part(self, index: int) -> LineReader:
        """The reader of the log partition `index` came from (told what the core noted of
        that log's lines)."""
        return self.for_host(self.merged.host_of_part(index))

    def for_host(self, host: int) -> LineReader:
        """The reader of log `host` (told what the core noted of its lines)."""
        reader = self.readers[host]
        facts = self.merged.line_facts[host] if host < len(self.merged.line_facts) else None
        if facts is not None:
            reader.adopt(facts)
        return reader

    def reset(self) -> None:
        """Forget every index."""
        for r in self.readers:
            r.reset()


def reader_for(reader: LineReader, index: int, model: LogModel | None = None) -> LineReader:
    """The reader holding partition `index`'s lines (itself for a single log), told what the
    core noted of those lines (`model`'s, a single log's; a host's, held by HostLines)."""
    if isinstance(reader, HostLines):
        return reader.for_part(index)
    if model is not None and model.line_facts is not None:
        reader.adopt(model.line_facts)
    return reader
