"""What the viewer keeps: a model it no longer shows is freed at once, not at the cyclic
collector's next walk; once the log is read through, what lives is left out of the
collector's walks."""

from __future__ import annotations

import gc
import os
import sys
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from conftest import SAMPLES

from parsers import _core, analysis
from parsers.assembly import proof_table_of
from parsers.builder import LogBuilder
from parsers.load import read_log
from parsers.model import I64, ProofTable
from parsers.pieces import Piece, make_piece
from parsers.rawlines import LineReader
from parsers.records import LiveSnapshot
from parsers.rows import Rows
from tui.app import make_app
from tui.follow import FileSource, LiveLog
from tui.lanes import LaneDrawing


def test_a_lane_drawing_and_its_model_are_freed_when_dropped() -> None:
    drawing = LaneDrawing(read_log(SAMPLES / "curio-mixed.log"))
    dead = weakref.ref(drawing)
    gc.disable()  # a reference cycle would keep it until a collection
    try:
        del drawing
        assert dead() is None
    finally:
        gc.enable()


STEPS = 600  # pauses of 50 ms at most while the follower reads (bounded, never asserted on)


async def test_read_through_the_viewer_leaves_what_lives_out_of_collections(
    tmp_path: Path,
) -> None:
    log = tmp_path / "growing.log"
    log.write_bytes((SAMPLES / "curio-mixed.log").read_bytes())
    live = LiveLog(FileSource(log), lambda _: None)
    app = make_app(LogBuilder(source="").snapshot(), LineReader(path=log), live)
    gc.unfreeze()
    try:
        async with app.run_test(size=(120, 36)) as pilot:
            for _ in range(STEPS):
                if app.updates and app.loading is None:
                    break
                await pilot.pause(0.05)
            await pilot.pause()
            assert gc.get_freeze_count() > 0
            first = app.model
            at = first.now_ms + 1000
            interval = (  # the sample ends in a cut line: ended first
                "\n"
                f"TIMELINE,{at},GPU_START,grown-1,worker=0,partition=0\n"
                f"TIMELINE,{at + 500},GPU_END,grown-1,worker=0,partition=0,gpu_ms=500\n"
            )
            with log.open("ab") as fh:
                fh.write(interval.encode())
            for _ in range(STEPS):
                if app.model.now_ms >= at + 500:
                    break
                await pilot.pause(0.05)
            await pilot.pause()
            assert app.model.now_ms >= at + 500
            # kept out of collections, the first model must hold no cycle: nothing but this
            # test refers to it now (and the call's argument), so it goes when dropped
            assert sys.getrefcount(first) == 2
            live.halt()
    finally:
        gc.unfreeze()
        live.source.close()


def test_the_gaps_between_blocks_are_views_of_the_blocks() -> None:
    """A GPU's gaps and its kernel gaps are the stretches between its busy and kernel
    blocks: read from the blocks' own arrays, not copied (millions on a long log)."""
    model = read_log(SAMPLES / "journal-2gpu.log")
    assert len(model.gpus) == 2
    for gpu in model.gpus:
        gaps, kernel = model.kernel_gaps[gpu.gpu], gpu.kernel
        assert len(gaps.starts) == len(kernel.starts) - 1 > 0
        assert np.shares_memory(gaps.starts, kernel.ends)
        assert np.shares_memory(gaps.ends, kernel.starts)
        assert (gaps.starts == kernel.ends[:-1]).all() and (gaps.ends == kernel.starts[1:]).all()


def _rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def test_arrays_let_go_go_back_to_the_system() -> None:
    """What a snapshot made and let go is not kept resident: glibc returns only the top of
    its heap, so arrays freed below a live one stay in the process until trimmed."""
    arrays = [np.ones(12_000) for _ in range(2_000)]  # 96 KB each: in the heap, not mapped
    del arrays[:-1:2]  # half of them freed, each below a live one: 96 MB of holes
    before = _rss_mb()
    _core.release_free_memory()
    assert before - _rss_mb() > 48
    assert len(arrays) == 1_000


class _Watched(LogBuilder):
    """A builder that checks, as every record's columns are copied, that the columns of
    the snapshot before it were let go."""

    def __init__(self) -> None:
        super().__init__(source="watched")
        self.handed: list[weakref.ref[np.ndarray]] = []
        self.copies = 0

    def live_snapshot(self, rows: I64 | None, first_new: int) -> LiveSnapshot:
        if rows is None:
            self.copies += 1
            assert all(r() is None for r in self.handed), "a partial copy is still held"
        snap = super().live_snapshot(rows, first_new)
        self.handed = [weakref.ref(a) for a in snap.columns.floats.values()]
        return snap


@pytest.mark.parametrize("why", ["stale", "ripe"])
def test_a_rebuild_lets_the_live_rows_go_before_every_record_is_copied(
    why: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The settled part is made again (it went stale, or too many live rows ended): the
    columns the snapshot gave for the live rows, and the rows made of them, are let go
    before the core copies every record's (on a long log both are hundreds of MB)."""
    data = (SAMPLES / "curio-mixed.log").read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    builder = _Watched()
    builder.feed(data[:cut])
    builder.snapshot()
    assert builder.live.settled_records > 0
    # stale: the core wrote one of its records; ripe: enough of the live rows ended
    good = why == "ripe"
    monkeypatch.setattr(analysis.LiveAnalysis, "_still_good", staticmethod(lambda b, s: good))
    monkeypatch.setattr(analysis, "TAIL_ROWS", 0)
    builder.feed(data[cut:])
    rebuilds, copies = builder.live.rebuilds, builder.copies
    gc.disable()  # only references count: a cycle would hide nothing here
    try:
        builder.snapshot()
    finally:
        gc.enable()
    assert builder.live.rebuilds == rebuilds + 1
    assert builder.copies == copies + 1


def test_a_settled_part_outgrown_is_made_again_from_one_copy_of_the_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After a long read the settled part of the first model (a megabyte in) was outgrown:
    the snapshot copied the columns of every record after it (nearly all), found it
    outgrown, and copied every record's again (~60 ms more on a 685 MB log). The records
    are counted first now: one copy."""
    data = (SAMPLES / "curio-mixed.log").read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    builder = LogBuilder(source="t")
    builder.feed(data[:cut])
    builder.snapshot()
    assert builder.live.settled_records > 0
    monkeypatch.setattr(analysis, "TAIL_ROWS", 0)
    builder.feed(data[cut:])
    calls: list[bool] = []
    take = builder.live_snapshot

    def counted(rows: I64 | None, first_new: int) -> LiveSnapshot:
        calls.append(rows is None)
        return take(rows, first_new)

    monkeypatch.setattr(builder, "live_snapshot", counted)
    rebuilds = builder.live.rebuilds
    model = builder.snapshot()
    assert builder.live.rebuilds == rebuilds + 1
    assert calls == [True]  # one call, of every record
    whole = LogBuilder(source="t")
    whole.feed(data)
    assert len(model.parts) == len(whole.snapshot().parts)


def test_the_synthesis_steps_are_held_in_small_integers() -> None:
    """The step function of partitions in synthesis has a step per SYNTH_START and per
    SYNTH_END (millions on a long log): its counts are 4 bytes each, and the settled part
    keeps each step's +1/-1 in a byte."""
    builder = LogBuilder(source="")
    builder.feed((SAMPLES / "curio-mixed.log").read_bytes())
    model = builder.snapshot()
    assert len(model.synth_counts) > 0 and model.synth_counts.dtype == np.int32
    assert builder.live.settled_records > 0
    base = builder.live._base
    assert base is not None and base.piece.synth.deltas.dtype == np.int8
    assert set(base.piece.synth.deltas.tolist()) == {-1, 1}


def test_the_settled_rows_are_let_go_before_their_proofs_are_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making the settled part, what of its rows it does not keep (the float columns, the
    segments' rows, the drawn ends) is let go before its proofs are made: on a 685 MB log
    the viewer's peak was there, the proofs made beside those rows."""
    watched: list[weakref.ref[np.ndarray]] = []

    def piece_of(rows: Rows, *args: Any, **kwargs: Any) -> Piece:
        if not watched:  # the settled part's piece is the first made
            watched.extend(weakref.ref(a) for a in (rows.seg_part, rows.drawn_end))
        return make_piece(rows, *args, **kwargs)

    held: list[bool] = []

    def table_of(*args: Any) -> ProofTable:
        held.append(any(ref() is not None for ref in watched))
        return proof_table_of(*args)

    monkeypatch.setattr("parsers.analysis.make_piece", piece_of)
    monkeypatch.setattr("parsers.analysis.proof_table_of", table_of)
    builder = LogBuilder(source="")
    builder.feed((SAMPLES / "curio-mixed.log").read_bytes())
    gc.disable()  # only references count
    try:
        builder.snapshot()
    finally:
        gc.enable()
    assert builder.live.settled_records > 0
    assert held == [False]
