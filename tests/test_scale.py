"""Logs of unusual shape: GPU ordinals in the thousands, many workers, long runs on one
worker. What they must still give (behaviour; the benchmarks measure time and memory)."""

from __future__ import annotations

import io
import json
import math
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from rich.text import Text
from textual.widgets import Static

from cuzksim.config import random_config
from cuzksim.logs import simulate
from cuzksim.scale_logs import (
    worker_line,
    write_many_workers_log,
    write_nested_log,
    write_one_worker_log,
)
from parsers.builder import LogBuilder
from parsers.export import trace_document, trace_events, write_trace
from parsers.model import GpuStats, LogModel
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.follow import FileSource, LiveLog
from tui.gantt import GanttView
from tui.header import HEADER_GPUS
from tui.report import print_report


def load(path: Path) -> LogModel:
    """The finished model of the file at `path`, as the report reads it."""
    return load_bytes(path.read_bytes(), path.name)


def load_bytes(data: bytes, name: str = "t") -> LogModel:
    """The finished model of a log's bytes."""
    b = LogBuilder(source=name)
    b.feed(data)
    return b.build()


def test_gpu_ordinals_past_4096_land_on_their_own_gpu(tmp_path: Path) -> None:
    log = write_many_workers_log(tmp_path / "big-ordinals.log", 8, first_gpu=5000)
    with log.open("ab") as out:  # the largest ordinal taken
        out.write(worker_line(9, 65_536))
        out.write(b"TIMELINE,2000,GPU_START,late,worker=9,partition=0\n")
        out.write(b"TIMELINE,2100,GPU_END,late,worker=9,partition=0,gpu_ms=100\n")
    model = load(log)
    gpus = {g.gpu: g.workers for g in model.gpus}
    assert gpus == {5000: (0, 1), 5001: (2, 3), 5002: (4, 5), 5003: (6, 7), 65_536: (9,)}
    assert {w.worker: w.gpu for w in model.workers}[9] == 65_536
    assert model.counts.malformed == 0
    assert model.counts.stdout == 9


def test_an_ordinal_past_2_16_stays_malformed(tmp_path: Path) -> None:
    log = tmp_path / "bad-ordinal.log"
    log.write_bytes(
        worker_line(0, 1)
        + worker_line(1, 2**16 + 1)
        + b"TIMELINE,100,GPU_START,j,worker=0,partition=0\n"
        + b"TIMELINE,200,GPU_END,j,worker=0,partition=0,gpu_ms=100\n"
    )
    model = load(log)
    assert model.counts.malformed == 1
    assert [g.gpu for g in model.gpus] == [1]


def report_text(path: Path) -> str:
    """The text report of the file at `path`, as `cuzk-tui LOG --report > file` writes it."""
    out = io.StringIO()
    print_report(load(path), Console(file=out, width=10_000), reader=LineReader(path=path))
    return out.getvalue()


def test_a_much_restarted_daemon_s_report_looks_at_each_gpu_a_few_times(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each run of a restarted daemon is a worker and a GPU of the report's model; whether
    a worker's pre-lock is measured looked at every GPU once per worker: 20,000 runs took a
    minute (10,000: 20 s; 5,000: 3.5 s). The reports look at each GPU a few times."""
    import parsers.breakdown as breakdown
    from parsers.report import report_dict

    runs = 300
    data = "".join(
        f"TIMELINE,{40_000 if k % 2 == 0 else 0},GPU_START,j{k},worker=0,partition=0\n"
        f"TIMELINE,{40_001 if k % 2 == 0 else 1},GPU_END,j{k},worker=0,partition=0\n"
        for k in range(2 * runs)
    ).encode()
    model = load_bytes(data)
    assert len(model.gpus) >= runs and len(model.workers) >= runs
    looked = 0
    unmeasured = breakdown.unmeasured_phases

    def counted(g: GpuStats) -> frozenset[Any]:
        nonlocal looked
        looked += 1
        return unmeasured(g)

    monkeypatch.setattr(breakdown, "unmeasured_phases", counted)
    report_dict(model)
    print_report(model, Console(file=io.StringIO(), width=120))
    assert 0 < looked <= 20 * len(model.gpus)


def test_the_report_of_many_workers_gives_each_a_row(tmp_path: Path) -> None:
    # 600 workers, two to a GPU: the phase table and the GPU table are longer, not wider
    from tui.report import ESTIMATED_SPLIT, NO_LOCK_LINE

    text = report_text(write_many_workers_log(tmp_path / "many.log", 600))
    lines = text.splitlines()
    # (the log prints no timing line: its kernel figure is an estimate and its lock wait not
    # measured, each said in a sentence)
    lockless = NO_LOCK_LINE.format(gpus="every GPU")
    assert (
        max(len(line) for line in lines if line.strip() not in (ESTIMATED_SPLIT.strip(), lockless))
        < 160
    )
    head = next(
        k for k, line in enumerate(lines) if line.split()[:3] == ["worker", "GPU", "intervals"]
    )
    rows = [line.split() for line in lines[head + 2 : head + 2 + 600]]
    assert [r[0] for r in rows] == [f"w{w}" for w in range(600)]
    assert all(r[1] == str(int(r[0][1:]) // 2) and r[2] == "3" for r in rows)
    gpu_rows = [
        line.split() for line in lines if line.split()[1:2] and line.split()[1].startswith("w")
    ]
    assert len([r for r in gpu_rows if r[0].isdigit()]) == 300


def test_a_gap_names_a_few_workers_and_counts_the_rest(tmp_path: Path) -> None:
    # twenty workers on one GPU: the why of each gap stays one short line
    text = report_text(write_many_workers_log(tmp_path / "one-gpu.log", 20, workers_per_gpu=20))
    began = [line for line in text.splitlines() if "workers as the gap began" in line]
    assert began
    for line in began:
        assert line.count(" idle") + line.count(" picked up") + line.count(" in ") < 12
        assert "… and 12 more (" in line


def old_order(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The trace's order as it was made before it was streamed: the metadata, then the rest
    sorted by (process, thread, start, longer first), ties as made."""
    meta = [e for e in events if e["ph"] == "M"]
    rest = [e for e in events if e["ph"] != "M"]
    rest.sort(key=lambda e: (e["pid"], e["tid"], e["ts"], -e.get("dur", 0)))
    return meta + rest


def test_the_trace_is_written_as_its_events_are_made(tmp_path: Path) -> None:
    model = load(write_one_worker_log(tmp_path / "one.log", 5_000))
    out = tmp_path / "trace.json"
    tracemalloc.start()
    try:
        count = write_trace(model, out)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    size = out.stat().st_size
    # the events held at once are one track's, as numpy columns (~100 bytes an event, this
    # log's one worker making one track of nearly all of them), never a dict each: made all
    # at once as dicts they took five times the JSON they make (31 MB for 5.7 MB)
    assert peak < 1.5 * size, (peak, size)
    doc = json.loads(out.read_text())
    assert len(doc["traceEvents"]) == count == len(list(trace_events(model)))
    assert doc["traceEvents"] == old_order(doc["traceEvents"])
    assert doc == trace_document(model)


def test_a_streamed_trace_keeps_the_order_of_every_track(tmp_path: Path) -> None:
    # several GPUs, restarts, failures, spliced lines, a range cut out of the middle
    for seed in (3, 11):
        model = load_bytes(simulate(random_config(seed))[1])
        lo, hi = model.time_range
        for t0, t1 in ((-math.inf, math.inf), (lo + (hi - lo) / 3, lo + (hi - lo) / 2)):
            out = tmp_path / f"trace-{seed}.json"
            write_trace(model, out, t0, t1)
            events = json.loads(out.read_text())["traceEvents"]
            assert events and events == old_order(events)
            assert events == list(trace_events(model, t0, t1))


async def test_an_idle_viewer_does_no_work_per_gpu_or_worker_each_second(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # 400 workers on 200 GPUs, read to the end and idle: each tick of the header's clock
    # redraws the header's few GPUs, not every GPU, and never the legend
    log = write_many_workers_log(tmp_path / "idle.log", 400)
    live = LiveLog(FileSource(log), lambda _: None)
    app = make_app(LogBuilder(source="").snapshot(), LineReader(path=log), live)
    calls = {"util": 0, "legend": 0}
    util = GpuStats.timeline_util

    def counted_util(g: GpuStats) -> float:
        calls["util"] += 1
        return util.fget(g)  # type: ignore[attr-defined, no-any-return]

    legend = CuzkApp._legend

    def counted_legend(self: CuzkApp, width: int) -> Text:
        calls["legend"] += 1
        return legend(self, width)

    async with app.run_test(size=(120, 36)) as pilot:
        for _ in range(600):  # pauses while the follower reads (bounded, never asserted on)
            if app.loading is None and len(app.model.gpus) == 200:
                break
            await pilot.pause(0.05)
        assert len(app.model.gpus) == 200
        header = str(app.query_one("#summary", Static).render())
        assert f"+ {200 - HEADER_GPUS} more GPUs" in header
        # a GPU and its split each, the state, `+ N more GPUs` and the all-GPUs figure (the
        # log prints no timing line: the kernel figures are estimates)
        assert len(header.splitlines()) <= 2 * HEADER_GPUS + 3
        monkeypatch.setattr(GpuStats, "timeline_util", property(counted_util))
        monkeypatch.setattr(CuzkApp, "_legend", counted_legend)
        ticks = 5
        for _ in range(ticks):
            app._tick_clock()  # what the one-second timer calls
            await pilot.pause()
        assert calls["util"] <= ticks * HEADER_GPUS
        assert calls["legend"] == 0
        live.halt()
    live.source.close()


async def test_the_lanes_of_a_large_ordinal_are_labelled_with_it(tmp_path: Path) -> None:
    log = write_many_workers_log(tmp_path / "ordinals.log", 4, first_gpu=5000)
    app = make_app(load(log), LineReader(path=log))
    async with app.run_test(size=(120, 36)):
        view = app.query_one(GanttView)
        lines = [view.render_line(y).text for y in range(view.size.height)]
        labels = [line[:9].strip() for line in lines]
        assert "5000 busy" in labels and "5001 kern" in labels
        assert not any(label.startswith("gpu0") for label in labels)


def test_intervals_nested_deep_each_get_a_sub_row_and_the_whole_busy_time(tmp_path: Path) -> None:
    """Intervals nested 3,000 deep: the packing, the lanes and the busy split each passed
    over every sub-row (or every interval under way) at each step, quadratic (100,000 deep:
    37 s and `q` unanswered meanwhile; the Rust tests pack and sweep 200,000). Each interval
    is alone on a sub-row, in order, and the busy time is the span, all of it unknown."""
    n = 3000
    model = load(write_nested_log(tmp_path / "nested.log", n))
    lanes = [lane for lane in model.lanes if lane.worker == 0]
    assert len(lanes) == n
    for lane in lanes:  # sub-row r holds interval r alone
        (part,) = set(lane.segments.partition.tolist())
        assert model.parts.job_of(int(part)) == f"j{lane.sub_row}"
    (g,) = model.gpus
    assert g.busy_ms == 2 * n - 1 and not g.lock_printed
