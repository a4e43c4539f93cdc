"""From the builder's records to the model, whole or live: `build_model` analyses every
record at once; `LiveAnalysis` keeps the settled part of a growing log and analyses only
what may still change (the steps: parsers/rows.py, parsers/pieces.py, parsers/assembly.py).

The figures are defined in docs/analysis.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from parsers import _core
from parsers.assembly import Listed, assemble, facts_of, live_facts, proof_table_of
from parsers.later import Later
from parsers.model import (
    F64,
    I32,
    I64,
    LogModel,
)
from parsers.pieces import (
    Laid,
    Piece,
    SegmentFigures,
    Window,
    lanes_of,
    make_piece,
    per_key,
    segment_figures,
    stamp_figures,
    take_jobs,
)
from parsers.records import Columns, LiveRecords, LiveSnapshot, RunRecords
from parsers.rows import (
    EMPTY_F,
    EMPTY_I,
    SEGMENTS_APART_ROWS,
    Rows,
    distinct,
    groups_of,
    in_mask,
    make_rows,
    record_segments,
    split_rows,
    stamp_rows,
    with_segments,
)


def build_model(
    builder: RunRecords, finished: bool, drawn: bool = True, stopped: bool = False
) -> LogModel:
    """Freeze what `builder` has read into a `LogModel` (every record analysed; `drawn`:
    with the lanes and the synthesis steps, which the JSON report does without; `stopped`:
    the daemon stopped after these records, a restart followed: what never ended failed)."""
    cols = builder.columns()
    now = float(max(builder.max_stamp, 0))
    gpu = builder.gpus_of(cols.worker).astype(np.int32)
    index = np.arange(len(cols), dtype=np.int64)
    table, failed_end = stamp_rows(cols, gpu, stopped)
    c = cols.floats

    def rows_of() -> Rows:
        return with_segments(table, failed_end, record_segments(cols, now, failed_end), index, c)

    def segment() -> tuple[Rows, Later[SegmentFigures], Laid | None]:
        rows = rows_of()
        figures = Later(segment_figures, rows.table, rows.seg_part, name="cuzk-tui-segments")
        return rows, figures, lanes_of(rows) if drawn else None

    # the segments are made on a second thread (the core's loops run without the GIL,
    # numpy's sorts too) while this one reads the stamps; then what the segments give is
    # made on a third while the second lays the rows out in lanes
    later = Later(segment, name="cuzk-tui-rows") if len(cols) >= SEGMENTS_APART_ROWS else None
    stamped = stamp_figures(table, c, index, synth=drawn)
    if later is not None:
        rows, figures, laid = later.result()
        segmented = figures.result()
    else:
        rows = rows_of()
        laid = None
        segmented = segment_figures(rows.table, rows.seg_part)
    piece = make_piece(rows, drawn, stamped, segmented, laid=laid)
    return assemble([piece], facts_of(builder, finished, set(piece.gpus)))


# What a snapshot holds in place of the columns it handed over (`LiveAnalysis._settle`).
_NO_COLUMNS = Columns(
    floats={},
    job=np.zeros(0, dtype=np.int32),
    partition=np.zeros(0, dtype=np.int32),
    kind=np.zeros(0, dtype=np.int32),
    worker=np.zeros(0, dtype=np.int32),
    start_line=np.zeros(0, dtype=np.int64),
    end_line=np.zeros(0, dtype=np.int64),
    jobs=(),
    kinds=(),
)


# How long (log time) after its end an interval is taken as settled: the timing lines and
# decisions about it have come by then. Only a matter of how often the live model is made
# whole again: a settled record that changes all the same is noticed (the core lists the
# records it writes) and the model is made whole.
SETTLE_MS = 60_000


# The live rows past which the settled part is made again.
TAIL_ROWS = 4096


# The settled part is made again once this many live rows could settle (they ended
# SETTLE_MS ago) beyond those that could when it was made: the square root of the records
# (making it costs what the records do, a snapshot what the live rows do: √n balances the
# two when records come a few times slower than snapshots), at least RIPE_ROWS_MIN, at most
# TAIL_ROWS.
RIPE_ROWS_MIN = 64


@dataclass(frozen=True, slots=True)
class _Base:
    """The settled part of a live model: per worker, records whose intervals all end before
    its cut, where no unsettled interval of that worker starts; and per GPU the seam between
    the settled part's time and the live rows' (see `LiveAnalysis`)."""

    piece: Piece
    listed: Listed
    settled: npt.NDArray[np.bool_]  # by record number, for the records there were
    unsettled: I64  # record numbers below `count` that are not in it
    count: int  # records there were
    live: int  # live rows when it was made (more when something running pins a cut)
    ripe: int  # of them, those that could settle but something pinned (`_ripe`)
    cuts: dict[int, float]  # per worker (-1: records of no worker)
    seams: dict[int, float]  # per GPU of its records
    reach: Rows  # its ended intervals that end at or after their GPU's seam
    reach_index: I64  # their row numbers in the settled piece
    worker_gpu: dict[int, int]


def _cuts(
    start: F64,
    end: F64,
    may: npt.NDArray[np.bool_],
    worker: I32,
    limit: float,
    failed: npt.NDArray[np.bool_],
) -> tuple[npt.NDArray[np.bool_], dict[int, float]]:
    """Per worker, the latest cut (at most `limit`) such that every interval of it starting
    before the cut may settle and was drawn to its end before `limit`, and a failed one
    before the cut (where it is drawn to is the worker's next start); the records settled by
    those cuts. Intervals may reach past their worker's cut (a worker's next prove starts
    before the last one ends): there is a cut between any two of its starts, however busy
    its GPU. One sort per worker."""
    settled = np.zeros(len(start), dtype=bool)
    cuts: dict[int, float] = {}
    started = ~np.isnan(start)
    for w, idx in groups_of(worker, np.flatnonzero(started)):
        idx = idx[np.argsort(start[idx], kind="stable")]
        s = start[idx]
        ok = may[idx] & (end[idx] < limit)
        moved = np.where(failed[idx], end[idx], -np.inf)
        # a cut before sorted interval k (or after all): where it would lie; a cut between
        # two equal starts is none (the record order is not the time order there)
        at = np.minimum(np.append(s, limit), limit)
        valid = np.ones(len(idx) + 1, dtype=bool)
        valid[1:] = np.logical_and.accumulate(ok) & (np.maximum.accumulate(moved) < at[1:])
        valid[1:] &= s < at[1:]
        k = int(np.flatnonzero(valid)[-1])
        settled[idx[:k]] = True
        cuts[int(w)] = float(at[k])
    return settled, cuts


class LiveAnalysis:
    """Live snapshots that cost what changed, not the whole log.

    The records whose intervals ended long enough ago (SETTLE_MS) are analysed once
    (`_Base`); each snapshot analyses only the others (the live rows) and puts the two
    together. Each worker has a cut in time: its settled intervals all end before it, its
    live ones start after it, so each worker's lanes are its settled lanes then its live
    ones. The figures over a GPU's time (busy and kernel blocks, gaps, the unexplained time,
    the busy split) are cut per GPU at its seam, where the first live interval that ended
    starts: the settled part gives them before the seam, the live rows with the settled
    intervals that reach past the seam give them from the seam on (a GPU that never idles
    has intervals across any moment). The settled part is made again when one of its
    records is written (the core lists them), when the worker → GPU map changes, when a live
    interval starts before its worker's cut or ends having started before its GPU's seam, or
    when the live rows grow past TAIL_ROWS.
    """

    def __init__(self) -> None:
        self._base: _Base | None = None
        self._run = 0
        self.rebuilds = 0  # how many times the settled part was made (tests read it)

    @property
    def settled_records(self) -> int:
        """How many records the settled part holds (analysed once, not at each snapshot)."""
        return 0 if self._base is None else len(self._base.piece.rows)

    def model(self, builder: LiveRecords) -> LogModel:
        """The live model of the run being read."""
        try:
            return self._model(builder)
        except Exception:
            # the records written since the last snapshot were taken from the core: what
            # was settled cannot be trusted now, so it is made again next time
            self._base = None
            raise

    def _model(self, builder: LiveRecords) -> LogModel:
        base = self._base
        if base is not None and self._outgrown(base, builder.record_count()):
            # made again: every record's columns copied at once, not those of the records
            # after it first (after a long read, nearly all of them: ~60 ms on 685 MB)
            base = None
        # one call to the core: the live rows if the settled part stands, and the facts
        snap = builder.live_snapshot(
            base.unsettled if base is not None else None, base.count if base is not None else 0
        )
        if snap.runs != self._run:
            self._run, base = snap.runs, None
        now = float(max(snap.max_stamp, 0))
        if base is not None and not self._still_good(base, snap):
            base = None
        live = None if base is None else self._live_rows(base, builder, snap, now)
        rebuilt = base is None or live is None
        if base is None or live is None:
            if len(snap.columns) != snap.records:
                # the live rows' columns let go before every record's are copied
                snap = replace(snap, columns=_NO_COLUMNS)
                snap = builder.live_snapshot(None, 0)
            # every record's columns handed over, not kept here (nor in the snapshot):
            # `_settle` drops them and the rows made of them once split
            handed = [snap.columns]
            snap = replace(snap, columns=_NO_COLUMNS)
            open_rows = np.asarray(snap.open_rows, np.int64)
            base, live = self._settle(handed, builder, now, open_rows, snap.worker_gpu)
            self.rebuilds += 1
        self._base = base
        window = Window(
            {g: (f, np.inf) for g, f in base.seams.items()},
            base.reach,
            base.reach_index,
            base.piece.lane_ends,
        )
        tail = make_piece(live, window=window)
        facts = live_facts(builder.source, snap, now, builder.workers_per_gpu)
        model = assemble([base.piece, tail], facts, base.listed)
        if rebuilt:
            # what making the settled part took and let go goes back to the system, not
            # kept resident under the next snapshot
            _core.release_free_memory()
        return model

    @staticmethod
    def _live_rows(
        base: _Base, builder: LiveRecords, snap: LiveSnapshot, now: float
    ) -> Rows | None:
        """The rows after the settled part, or None when it must be made again (made of
        the snapshot's columns, and let go with them then)."""
        idx = np.concatenate([base.unsettled, np.arange(base.count, snap.records, dtype=np.int64)])
        cols = snap.columns
        gpu = builder.gpus_of(cols.worker, snap.worker_gpu).astype(np.int32)
        rows = make_rows(cols, gpu, now, False, idx)
        ripe = _ripe(rows, now) - base.ripe
        if (
            ripe >= min(TAIL_ROWS, max(RIPE_ROWS_MIN, math.isqrt(snap.records)))
            or _early(base, rows)
            or in_mask(base.settled, np.asarray(snap.open_rows, np.int64)).any()
        ):
            return None
        return rows

    @staticmethod
    def _outgrown(base: _Base, records: int) -> bool:
        """The live rows grew by TAIL_ROWS since the settled part was made: it is made again
        then, not sooner (an interval running for ever, a worker that died, keeps what
        follows it live: making the part again at every snapshot would settle none of it)."""
        return records - base.count + len(base.unsettled) > base.live + TAIL_ROWS

    @staticmethod
    def _still_good(base: _Base, snap: LiveSnapshot) -> bool:
        """The settled part stands (`_model` has looked, before the copy, whether the live
        rows outgrew it: `_outgrown`)."""
        if snap.touched is None or snap.worker_gpu != base.worker_gpu:
            return False
        return not in_mask(base.settled, np.asarray(snap.touched, dtype=np.int64)).any()

    @staticmethod
    def _settle(
        handed: list[Columns],
        builder: LiveRecords,
        now: float,
        open_rows: I64,
        worker_gpu: dict[int, int],
    ) -> tuple[_Base, Rows]:
        """Split the records into the settled part and the live rows (`handed`: the one
        Columns of every record, taken out: nothing else holds it)."""
        cols = handed.pop()
        gpu = builder.gpus_of(cols.worker, worker_gpu).astype(np.int32)
        held = [make_rows(cols, gpu, now, False, np.arange(len(cols), dtype=np.int64))]
        del cols, gpu
        every = held[0]
        t = every.table
        n = len(every)
        started = ~np.isnan(t.gpu_start)
        synth_open = ~np.isnan(t.synth_start) & np.isnan(t.synth_end)
        may = started & ~np.isnan(every.drawn_end) & ~synth_open
        may &= ~(np.isnan(t.gpu_end) & np.isnan(every.failed_end))  # running
        may[open_rows[(open_rows >= 0) & (open_rows < n)]] = False
        limit = now - SETTLE_MS
        failed = ~np.isnan(every.failed_end)
        settled, cuts = _cuts(t.gpu_start, every.drawn_end, may, t.worker, limit, failed)
        # a pickup that failed before its prove began settles with its worker's intervals
        # before the cut (it failed once the worker picked up another: that one is later)
        left = np.isnan(t.gpu_start) & t.failed & (t.worker >= 0)
        left[open_rows[(open_rows >= 0) & (open_rows < n)]] = False
        settled |= left & (t.pickup < per_key(cuts, t.worker, -np.inf))
        # each GPU's seam: where its first live interval that ended starts (one that ends
        # later having started before it makes the settled part again)
        ended = started & ~np.isnan(t.gpu_end) & (t.gpu >= 0)
        seams = dict.fromkeys(distinct(t.gpu[settled & ended]).tolist(), limit)
        for g, idx in groups_of(t.gpu, np.flatnonzero(ended & ~settled)):
            if g in seams:
                seams[g] = min(limit, float(t.gpu_start[idx].min()))
        elsewhere = distinct(t.job[~settled].astype(np.int64))
        # every record's rows are let go as they are split: never held beside both parts
        del every, t
        rows, live = split_rows(held, settled)
        # the core's arrays let go (the segments) go back to the system before the piece
        # is made
        _core.release_free_memory()
        bounds = {g: (-np.inf, f) for g, f in seams.items()}
        # the builder's float columns are read by the stamps' figures alone: let go before
        # the segments' figures and the lanes are made (the viewer's peak on a long log
        # was as they were made, beside them)
        stamped = stamp_figures(rows.table, rows.floats, rows.index, timed=(rows.table, bounds))
        rows = replace(rows, floats={})
        piece = make_piece(rows, stamped=stamped, window=Window(bounds, None, EMPTY_I, {}))
        r = rows.table
        reaches = ~np.isnan(r.gpu_start) & (r.gpu_end >= per_key(seams, r.gpu, np.inf))
        reach = rows.take(reaches)
        # the snapshots after read of its rows only their table and count: the builder's
        # float columns, segment rows and drawn ends are let go before the proofs are made
        # (the viewer's peak on a long log was as they were made, beside them)
        piece = replace(piece, rows=_kept_rows(rows))
        del rows, r
        only_here = np.ones(len(piece.jobs.ids), dtype=bool)
        only_here[np.isin(piece.jobs.ids, elsewhere)] = False
        listed_ids = piece.jobs.ids[only_here]
        table = proof_table_of(take_jobs(piece.jobs, only_here), piece.rows.table)
        mask = np.zeros(int(listed_ids.max()) + 1 if len(listed_ids) else 0, dtype=bool)
        mask[listed_ids] = True
        base = _Base(
            piece=piece,
            listed=Listed(table, mask),
            settled=settled,
            unsettled=np.flatnonzero(~settled).astype(np.int64),
            count=n,
            live=int(np.count_nonzero(~settled)),
            ripe=_ripe(live, now),
            cuts=cuts,
            seams=seams,
            reach=reach,
            reach_index=np.flatnonzero(reaches).astype(np.int64),
            worker_gpu=worker_gpu,
        )
        return base, live


def _kept_rows(rows: Rows) -> Rows:
    """What the settled part keeps of its rows: their table and record numbers."""
    return Rows(rows.table, EMPTY_I, EMPTY_F, EMPTY_F, rows.index, {})


def _ripe(rows: Rows, now: float) -> int:
    """How many of the rows ended (or failed) SETTLE_MS before `now`."""
    t = rows.table
    ended = ~(np.isnan(t.gpu_end) & np.isnan(rows.failed_end))
    return int(np.count_nonzero(ended & (rows.drawn_end < now - SETTLE_MS)))


def _early(base: _Base, rows: Rows) -> bool:
    """Live rows the settled part cannot be put beside: an interval starting before its
    worker's cut, or one that ended having started before its GPU's seam."""
    t = rows.table
    if (t.gpu_start < per_key(base.cuts, t.worker, -np.inf)).any():  # NaN compares False
        return True
    ended = ~np.isnan(t.gpu_end) & (t.gpu >= 0)
    return bool((t.gpu_start[ended] < per_key(base.seams, t.gpu[ended], -np.inf)).any())
