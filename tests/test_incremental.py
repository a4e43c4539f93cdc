"""Live snapshots made incrementally (parsers.analysis.LiveAnalysis) equal the model made
from every record, at every step of a growing log, whatever the cuts and the log."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from helpers import build, live_model

from cuzksim.config import SimConfig
from cuzksim.engine import EngineSim
from cuzksim.logs import simulate
from parsers import analysis
from parsers.analysis import build_model
from parsers.breakdown import BUSY_ORDER, Breakdown, busy_breakdown
from parsers.builder import LogBuilder
from parsers.model import ROW_FIELDS, SEGMENT_FIELDS, LogModel, PartitionTable
from parsers.report import report_dict
from parsers.rows import Rows, make_rows, split_rows


def _rows(model: LogModel) -> list[tuple[Any, ...]]:
    """Every record with its segments, in a canonical order (live models order them apart)."""
    t = model.parts
    out = []
    for i in range(len(t)):
        a, b = int(t.seg_offsets[i]), int(t.seg_offsets[i + 1])
        row = tuple(
            np.nan_to_num(np.asarray(getattr(t, name)[i], dtype=np.float64), nan=-1.0).item()
            for name in ROW_FIELDS
        )
        segs = tuple(
            zip(
                t.seg_start[a:b].tolist(),
                t.seg_end[a:b].tolist(),
                t.seg_phase[a:b].tolist(),
                strict=True,
            )
        )
        out.append((row, segs))
    return sorted(out)


def _side(model: LogModel, i: int) -> tuple[Any, ...]:
    t = model.parts
    return (t.job_of(i), int(t.worker[i]), int(t.partition[i]), int(t.start_line[i]))


def canonical(model: LogModel) -> dict[str, Any]:
    """Everything a live model shows, with record numbers replaced by what they name."""
    t = model.parts
    gaps = model.gaps
    return {
        "rows": _rows(model),
        "gpus": [
            (
                g.gpu,
                g.workers,
                g.span,
                g.busy.starts.tolist(),
                g.busy.ends.tolist(),
                g.kernel.starts.tolist(),
                g.kernel.ends.tolist(),
                g.in_flight,
                _round(g.kernel_range_ms),
                _round(g.kernel_estimate_ms),
            )
            for g in model.gpus
        ],
        "gaps": [
            (
                int(gaps.gpu[k]),
                int(gaps.start[k]),
                int(gaps.end[k]),
                _side(model, int(gaps.before[k])),
                _side(model, int(gaps.after[k])),
                int(gaps.cause[k]),
                int(gaps.after_queued[k]),
            )
            for k in range(len(gaps))
        ],
        "kernel_gaps": {
            g: (b.starts.tolist(), b.ends.tolist()) for g, b in model.kernel_gaps.items()
        },
        "lanes": [
            (
                lane.gpu,
                lane.worker,
                lane.sub_row,
                lane.starts.tolist(),
                lane.ends.tolist(),
                lane.phases.tolist(),
                [_side(model, int(i)) for i in lane.partition.tolist()],
            )
            for lane in model.lanes
        ],
        "workers": [
            (w.worker, w.gpu, w.intervals, _round(tuple(w.phases_ms.values())))
            for w in model.workers
        ],
        "proofs": list(model.proofs),
        "summary": model.summary,
        "synth": (model.synth_times.tolist(), model.synth_counts.tolist()),
        "now": model.now_ms,
        "jobs": len(t.jobs),
        "mid_run": model.starts_mid_run,
    }


def _round(x: Any) -> Any:
    """Sums made in another order differ in the last bits."""
    if x is None:
        return None
    if isinstance(x, tuple):
        return tuple(round(v, 4) for v in x)
    return round(float(x), 4)


def _split(split: dict[int, Breakdown]) -> dict[int, Any]:
    return {
        g: (_round(b.busy_ms), _round(tuple(b.phase_ms.get(p, 0.0) for p in BUSY_ORDER)))
        for g, b in split.items()
    }


CONFIGS = [
    dict(era="p12", fail_prove=0.05, fail_synth=0.03, jitter=True, splice=0.01),
    dict(era="p9", fail=0.05, stdout="plain", stdout_share=0.5, ids="curio"),
    dict(era="feb", gpus=1, gw=3, mix=0.2),
    dict(era="p12", gpus=3, gw=2, capture="journal-short-precise", spans=True, circuits=0.3),
]


def _follow_and_compare(data: bytes, rnd: random.Random, report: bool = False) -> int:
    """Feed `data` to a live builder in random chunks; each snapshot must equal the model
    made from every record (`report`: their JSON reports too). Returns the snapshots made."""
    live = LogBuilder(source="t")
    whole = LogBuilder(source="t")
    pos = steps = 0
    while pos < len(data):
        size = rnd.choice([1, 7, 100, 1000, 5000, 20000])
        chunk = data[pos : pos + size]
        pos += size
        live.feed(chunk)
        whole.feed(chunk)
        if rnd.random() < 0.3:
            live.flush_pending()
            whole.flush_pending()
        got = live.snapshot()
        if not live.timeline_seen:
            continue  # the model of the tracing lines (parsers/tracing.py), not the analysis'
        want = build_model(whole, finished=False)
        assert canonical(got) == canonical(want), f"step {steps} at byte {pos}"
        assert got.run_split is not None
        assert got.proof_spans is not None
        spans = got.proof_spans
        for made, name in ((spans.first, "first_synth_start"), (spans.last, "last_gpu_end")):
            values = [getattr(p, name) for p in got.proofs]
            assert np.nan_to_num(made, nan=-1).tolist() == [-1 if v is None else v for v in values]
        seen = [-1 if p.last_seen is None else p.last_seen for p in got.proofs]
        assert np.nan_to_num(spans.seen, nan=-1).tolist() == seen
        assert got.proof_spans.completed.tolist() == [p.completed for p in got.proofs]
        assert _split(got.run_split) == _split(busy_breakdown(want))
        if report:
            assert report_dict(got) == report_dict(want), f"step {steps} at byte {pos}"
        steps += 1
    return steps


@pytest.mark.parametrize("case", range(12))
def test_live_snapshots_equal_whole_models(case: int, monkeypatch: pytest.MonkeyPatch) -> None:
    rnd = random.Random(case)
    # a short settling time and a small live part: the settled part moves and is made again
    monkeypatch.setattr(analysis, "SETTLE_MS", rnd.choice([0, 500, 5_000, 60_000]))
    monkeypatch.setattr(analysis, "TAIL_ROWS", rnd.choice([1, 8, 64, 4096]))
    extra = CONFIGS[case % len(CONFIGS)]
    config = SimConfig(seed=100 + case, proofs=rnd.randint(4, 14), concurrency=3, **extra)  # type: ignore[arg-type]
    _, data = simulate(config)
    assert _follow_and_compare(data, rnd) > 3


def test_the_settled_part_is_kept_while_a_log_grows() -> None:
    """With the shipped settings, a log growing a line at a time makes its settled part
    again only now and then (each snapshot analyses the live rows only)."""
    _, data = simulate(SimConfig(seed=5, proofs=40, concurrency=4, jitter=True))
    lines = data.splitlines(keepends=True)
    b = LogBuilder(source="t")
    b.feed(b"".join(lines[:200]))
    b.snapshot()
    steps = 0
    for k in range(200, len(lines), 5):
        b.feed(b"".join(lines[k : k + 5]))
        b.snapshot()
        steps += 1
    assert steps > 100
    assert b.live.rebuilds <= steps // 10


def test_the_settled_part_keeps_of_its_rows_what_later_snapshots_read() -> None:
    """The settled part is kept beside every model shown: of its rows, only their table
    (joined into each model) and their record numbers, not the builder's float columns,
    segment rows or drawn ends its piece was made from; the models stay those of a build."""
    _, data = simulate(SimConfig(seed=9, proofs=40, concurrency=3))
    b, live = live_model(data)
    base = b.live._base
    assert base is not None and len(base.piece.rows) > 0
    kept = base.piece.rows
    assert kept.floats == {} and len(kept.drawn_end) == len(kept.failed_end) == 0
    assert len(kept.seg_part) == 0 and len(kept.table) == len(kept)
    whole = LogBuilder(source="t")
    whole.feed(data)
    assert canonical(live) == canonical(build_model(whole, finished=False))


def test_the_columns_a_settled_part_is_made_of_are_gone_before_its_piece_is_made(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Making the settled part holds its rows' copy and the piece made of them: the columns
    of every record (and the rows made of them) are dropped first, by the snapshot and the
    analysis alike, so the peak of a long log's opening is not two copies of its records."""
    import weakref

    from parsers import pieces

    _, data = simulate(SimConfig(seed=9, proofs=40, concurrency=3))
    b = LogBuilder(source="t")
    b.feed(data)
    fetched: list[weakref.ref[np.ndarray]] = []
    alive_at_piece: list[int] = []
    take = b.live_snapshot

    def live_snapshot(rows: Any, first_new: int) -> Any:
        snap = take(rows, first_new)
        fetched.extend(weakref.ref(a) for a in snap.columns.floats.values())
        return snap

    make_piece = pieces.make_piece

    def watched(*args: Any, **kwargs: Any) -> Any:
        # a column still alive is the memory of the piece's own rows (moved in place), never
        # a second copy beside them
        own = _memory_of(args[0])
        alive_at_piece.append(sum(a is not None and id(a) not in own for a in map(_deref, fetched)))
        return make_piece(*args, **kwargs)

    monkeypatch.setattr(b, "live_snapshot", live_snapshot)
    monkeypatch.setattr(analysis, "make_piece", watched)
    live = b.snapshot()
    assert fetched and alive_at_piece
    assert alive_at_piece[0] == 0  # the settled piece: no fetched column beside its rows
    whole = LogBuilder(source="t")
    whole.feed(data)
    assert canonical(live) == canonical(build_model(whole, finished=False))


def test_a_settled_record_written_again_makes_the_settled_part_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(analysis, "SETTLE_MS", 0)
    lines = [
        "TIMELINE,1000,SYNTH_START,a,partition=0",
        "TIMELINE,1100,SYNTH_END,a,partition=0",
        "TIMELINE,1200,GPU_START,a,worker=0,partition=0",
        "TIMELINE,1300,GPU_END,a,worker=0,partition=0",
        "TIMELINE,2000,SYNTH_START,b,partition=0",
        "TIMELINE,2100,SYNTH_END,b,partition=0",
        "TIMELINE,2200,GPU_START,b,worker=0,partition=0",
        "TIMELINE,2300,GPU_END,b,worker=0,partition=0",
    ]
    b = LogBuilder(source="t")
    b.feed("".join(x + "\n" for x in lines).encode())
    first = b.snapshot()
    assert len(first.gaps) == 1 and b.live.rebuilds == 1
    b.feed(b"TIMELINE,5000,SYNTH_START,c,partition=0\n")
    b.snapshot()
    assert b.live.rebuilds == 1  # a new record: the settled part stays
    # a late queue event of settled record a: the core says it was written
    b.feed(b"TIMELINE,1150,GPU_QUEUE,a,partition=0\n")
    model = b.snapshot()
    assert b.live.rebuilds == 2
    assert model.gaps[0].after_queued is None or model.gaps[0].cause is not None
    whole = LogBuilder(source="t")
    whole.feed("".join(x + "\n" for x in lines).encode())
    whole.feed(b"TIMELINE,5000,SYNTH_START,c,partition=0\nTIMELINE,1150,GPU_QUEUE,a,partition=0\n")
    assert canonical(model) == canonical(build_model(whole, finished=False))


def test_an_interval_running_for_ever_does_not_make_every_snapshot_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A worker that died in a prove keeps everything after it live; the settled part before
    it is kept all the same, and each snapshot still equals the whole model."""
    monkeypatch.setattr(analysis, "SETTLE_MS", 0)
    monkeypatch.setattr(analysis, "TAIL_ROWS", 50)

    def partition(job: str, t: int, worker: int) -> str:
        return (
            f"TIMELINE,{t},SYNTH_START,{job},partition=0\n"
            f"TIMELINE,{t + 10},SYNTH_END,{job},partition=0\n"
            f"TIMELINE,{t + 20},GPU_START,{job},worker={worker},partition=0\n"
            f"TIMELINE,{t + 90},GPU_END,{job},worker={worker},partition=0\n"
        )

    head = partition("a", 0, 0) + "TIMELINE,200,GPU_START,dead,worker=1,partition=0\n"
    live, whole = LogBuilder(source="t"), LogBuilder(source="t")
    live.feed(head.encode())
    whole.feed(head.encode())
    live.snapshot()
    for k in range(200):
        more = partition(f"j{k}", 1000 + 100 * k, 0).encode()
        live.feed(more)
        whole.feed(more)
        got = live.snapshot()
        if k % 20 == 0:
            assert canonical(got) == canonical(build_model(whole, finished=False))
    assert any(lane.worker == 1 for lane in got.lanes)  # still drawn, running
    # made again every TAIL_ROWS new records, not at every snapshot
    assert live.live.rebuilds <= 1 + 200 // 50


def _engine_lines(n: int) -> bytes:
    """Two GPUs, each busy 150 ms of every 200, staggered: one of them is always busy."""
    out = [
        "2026-03-16T09:08:03.7Z  INFO cuzk_core::engine: pipeline GPU worker started "
        f"worker_id={w} gpu={w} sub_id=0\n"
        for w in (0, 1)
    ]
    for i in range(n):
        s = 1000 + 100 * i
        w = i % 2
        out.append(
            f"TIMELINE,{s},GPU_START,j{i},worker={w},partition=0\n"
            f"TIMELINE,{s + 150},GPU_END,j{i},worker={w},partition=0\n"
        )
    return "".join(out).encode()


def test_each_gpu_settles_on_its_own_even_when_some_gpu_is_always_busy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No moment finds every GPU idle: each GPU gets its own cut, so the log still settles
    (one cut for all GPUs settled nothing, and found it in quadratic time)."""
    monkeypatch.setattr(analysis, "SETTLE_MS", 1000)
    data = _engine_lines(4000)
    live, whole = LogBuilder(source="t"), LogBuilder(source="t")
    half = data.index(b"\n", len(data) // 2) + 1
    for part in (data[:half], data[half:]):
        live.feed(part)
        whole.feed(part)
        got = live.snapshot()
        assert canonical(got) == canonical(build_model(whole, finished=False))
    base = live.live._base
    assert base is not None and int(base.settled.sum()) > 0.95 * base.count
    assert set(base.cuts) == {0, 1}


def test_a_worker_only_picked_up_in_the_live_rows_is_on_its_gpu() -> None:
    lines = [
        "TIMELINE,0,SYNTH_START,a,partition=0",
        "TIMELINE,10,SYNTH_END,a,partition=0",
        "TIMELINE,20,GPU_START,a,worker=0,partition=0",
        "TIMELINE,30,GPU_END,a,worker=0,partition=0",
        "TIMELINE,100000,SYNTH_START,b,partition=0",
        "TIMELINE,100010,SYNTH_END,b,partition=0",
        "TIMELINE,100020,GPU_PICKUP,b,worker=1,partition=0",
    ]
    b = LogBuilder(source="t")
    b.feed("".join(x + "\n" for x in lines).encode())
    (gpu,) = b.snapshot().gpus
    assert gpu.workers == (0, 1)


def test_a_restart_while_following_names_the_new_run_s_jobs() -> None:
    def part(job: str, t: int) -> str:
        return (
            f"TIMELINE,{t},SYNTH_START,{job},partition=0\n"
            f"TIMELINE,{t + 20},GPU_START,{job},worker=0,partition=0\n"
            f"TIMELINE,{t + 90},GPU_END,{job},worker=0,partition=0\n"
        )

    b = LogBuilder(source="t")
    b.feed(part("first-run-job", 100_000).encode())
    b.snapshot()
    b.feed(part("second-run-job", 100).encode())  # offsets from 0 again: a restart
    assert [p.job for p in b.snapshot().proofs] == ["first-run-job", "second-run-job"]


def test_a_pickup_that_failed_settles_with_the_worker_that_left_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A partition picked up and never started failed once its worker picked up another: it
    settles with that worker's intervals, so a snapshot says it failed even once every
    later interval of its worker has settled (the live rows hold none of them then)."""
    monkeypatch.setattr(analysis, "SETTLE_MS", 0)
    monkeypatch.setattr(analysis, "TAIL_ROWS", 1)
    lines = [
        "TIMELINE,0,GPU_PICKUP,a,worker=0,partition=0",
        "TIMELINE,10,GPU_PICKUP,b,worker=0,partition=0",
        "TIMELINE,20,GPU_START,b,worker=0,partition=0",
        "TIMELINE,500,GPU_END,b,worker=0,partition=0",
    ]
    # worker 1 goes on proving; worker 0 has nothing more
    for k in range(6):
        at = 1000 + 1000 * k
        lines += [
            f"TIMELINE,{at},GPU_PICKUP,c{k},worker=1,partition=0",
            f"TIMELINE,{at + 10},GPU_START,c{k},worker=1,partition=0",
            f"TIMELINE,{at + 500},GPU_END,c{k},worker=1,partition=0",
        ]
    live, whole = LogBuilder(source="t"), LogBuilder(source="t")
    for line in lines:
        for b in (live, whole):
            b.feed(line.encode() + b"\n")
        got = live.snapshot()
        assert canonical(got) == canonical(build_model(whole, finished=False)), line
    t = got.parts
    assert [bool(t.failed[i]) for i in range(len(t)) if t.job_of(i) == "a"] == [True]
    assert live.live.settled_records > 0


def test_a_failed_snapshot_makes_the_settled_part_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """The core's list of written records is taken at the start of a snapshot: one that
    fails must not leave a settled part those writes may have made stale."""
    _, data = simulate(SimConfig(seed=9, proofs=6, concurrency=3))
    half = data.index(b"\n", len(data) // 2) + 1
    b = LogBuilder(source="t")
    b.feed(data[:half])
    b.snapshot()
    assert b.live._base is not None

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("broken")

    monkeypatch.setattr(analysis, "make_piece", broken)
    b.feed(data[half:])
    with pytest.raises(RuntimeError):
        b.snapshot()
    assert b.live._base is None


def test_a_joined_table_puts_each_column_together_when_it_is_read() -> None:
    """A live model's table is its parts' rows one after the other; a column is copied only
    when something reads it (the screen reads few of a long log's)."""
    parts = [build(simulate(SimConfig(seed=seed, proofs=2, gpus=2))[1]).parts for seed in (81, 82)]
    table = PartitionTable.joined(parts)
    assert len(table) == sum(len(t) for t in parts)
    assert not table._cols, "nothing is copied before it is read"
    assert table.gpu_start.tolist() == np.concatenate([t.gpu_start for t in parts]).tolist()
    assert list(table._cols) == ["gpu_start"]
    for name in (*ROW_FIELDS, "seg_start", "seg_end", "seg_phase"):
        joined = np.concatenate([getattr(t, name) for t in parts])
        assert np.array_equal(getattr(table, name), joined, equal_nan=joined.dtype.kind == "f")
    # each row's segments are where its offsets say
    first = len(parts[0])
    for i in (0, first - 1, first, len(table) - 1):
        t, k = (parts[0], i) if i < first else (parts[1], i - first)
        a, b = int(table.seg_offsets[i]), int(table.seg_offsets[i + 1])
        c, d = int(t.seg_offsets[k]), int(t.seg_offsets[k + 1])
        assert table.seg_start[a:b].tolist() == t.seg_start[c:d].tolist()
    assert PartitionTable.joined(parts[:1]) is parts[0]


def test_a_row_of_a_live_models_table_is_read_from_its_part() -> None:
    """The inspector reads a few rows of a live model: each from the part that holds it,
    without putting the table's columns together (every one of a long log's), nor does
    what it asks of the row (whether a lock line gave its wait: the segment columns put
    together took 9 MB more of the viewer's peak on a 252 MB log)."""
    from parsers.breakdown import interval_unmeasured

    _, model = live_model(simulate(SimConfig(seed=9, proofs=40, concurrency=3))[1])
    table = model.parts
    assert len(table._parts) == 2 and len(table._parts[0]) and len(table._parts[1])
    joined = set(table._cols)  # what making the model put together (none, each part asked)
    rows = [table.get(i) for i in range(len(table))]
    asked = [interval_unmeasured(model, row) for row in rows]
    assert set(table._cols) == joined, "no column is put together for a row"
    whole = table.replaced()  # every column put together
    assert rows == [whole.get(i) for i in range(len(table))]
    assert [r.index for r in rows] == list(range(len(table)))
    from parsers.breakdown import LOCK_KEYS, lock_unmeasured

    every = lock_unmeasured(model, np.arange(len(table)))  # the CSV's: the same rule
    assert [bool(a) for a in asked] == every.tolist()
    assert asked.count(LOCK_KEYS) == int(every.sum())


def test_the_why_of_a_live_models_gaps_puts_no_column_together() -> None:
    """The inspector's deeper why of a gap (who waited, what failed inside it, the CPU
    path's lines) reads a live model's table part by part: the same as of the whole table,
    and no column copied (on a 252 MB log the copies were 8 MB of the viewer's peak)."""
    from dataclasses import replace

    from parsers.why import gap_why

    data = simulate(SimConfig(seed=23, proofs=60, concurrency=3, fail=0.05, fail_prove=0.05))[1]
    _, model = live_model(data)
    table = model.parts
    assert len(table._parts) == 2
    gaps = [model.gaps[k] for k in range(len(model.gaps))]
    whys = [gap_why(model, g) for g in gaps]
    assert not table._cols, "no column is put together for a gap's why"
    n = len(table)
    items = [(table.item("worker", i), table.item("gpu_start", i)) for i in range(-n, n)]
    with pytest.raises(IndexError):
        table.item("worker", n)
    assert not table._cols
    whole = replace(model, parts=table.replaced())  # every column put together
    w = whole.parts
    assert np.array_equal(
        items, [(w.worker[i], w.gpu_start[i]) for i in range(-n, n)], equal_nan=True
    )
    assert whys == [gap_why(whole, g) for g in gaps]
    assert any(w.failed_in for w in whys) and any(w.at_queue for w in whys)
    assert any(w.cpu is not None for w in whys)


# Two GPUs of two workers each, synthesis far ahead of them: each GPU is busy nearly all its
# span and its two workers' intervals overlap (one waits on the lock while the other runs).
GPU_BOUND = dict(gpus=2, gw=2, pw=60, concurrency=12)


def _busy_share(sim: EngineSim, gpu: int) -> float:
    """The truth's share of GPU `gpu`'s span that some interval of it covers."""
    spans = sorted(
        (p.gpu_start, p.gpu_end)
        for p in sim.partitions
        if p.gpu == gpu and p.gpu_start is not None and p.gpu_end is not None
    )
    covered, reach = 0.0, -np.inf
    for s, e in spans:
        covered += max(0.0, e - max(s, reach))
        reach = max(reach, e)
    return covered / (spans[-1][1] - spans[0][0])


def test_a_busy_gpu_settles_as_the_log_grows(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a GPU-bound log no moment finds a GPU idle, yet the records that ended long ago are
    settled (analysed once), and the settled part is made again only now and then."""
    monkeypatch.setattr(analysis, "TAIL_ROWS", 64)
    sim, data = simulate(SimConfig(seed=7, proofs=80, **GPU_BOUND))  # type: ignore[arg-type]
    assert min(_busy_share(sim, g) for g in (0, 1)) > 0.999  # never idle
    rnd = random.Random(7)
    live = LogBuilder(source="t")
    pos = steps = 0
    while pos < 0.9 * len(data):
        size = rnd.choice([100, 1000, 5000, 20000])
        live.feed(data[pos : pos + size])
        pos += size
        live.snapshot()
        steps += 1
    model = live.snapshot()
    t = model.parts
    ended_long_ago = int(np.count_nonzero(t.gpu_end < model.now_ms - analysis.SETTLE_MS))
    assert ended_long_ago > 500
    assert live.live.settled_records >= ended_long_ago - 2 * analysis.TAIL_ROWS
    assert live.live.rebuilds <= 4 + len(t) // analysis.TAIL_ROWS < steps // 2


def _kill_worker(data: bytes, worker: int, starts: int) -> bytes:
    """`data` as if `worker` died in its `starts`-th prove: none of its TIMELINE lines after
    that GPU_START (the interval never ends, the worker takes nothing more)."""
    out, seen, dead = [], 0, False
    mark = b"worker=%d," % worker
    for line in data.splitlines(keepends=True):
        if b"TIMELINE," in line and mark in line:
            if dead:
                continue
            if b",GPU_START," in line:
                seen += 1
                dead = seen == starts
        out.append(line)
    return b"".join(out)


BUSY_CONFIGS = [
    dict(era="p12", fail_prove=0.03, jitter=True, splice=0.01),
    dict(era="p9", fail=0.03, jitter=True, stdout_share=0.5, ids="curio"),
    dict(era="feb", fail_prove=0.02, splice=0.005, fail_synth=0.02),
]


@pytest.mark.parametrize("case", range(12))
def test_live_snapshots_of_a_busy_gpu_equal_whole_models(
    case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """GPU-bound logs (no moment finds a GPU idle), fed in random chunks: the settled part
    and the live rows overlap in time near each seam, and every figure is still the whole
    model's; one of the four workers dies in a prove in half of them."""
    rnd = random.Random(1000 + case)
    monkeypatch.setattr(analysis, "SETTLE_MS", rnd.choice([0, 500, 5_000, 60_000]))
    monkeypatch.setattr(analysis, "TAIL_ROWS", rnd.choice([1, 4, 8, 16]))
    extra = BUSY_CONFIGS[case % len(BUSY_CONFIGS)]
    config = SimConfig(seed=200 + case, proofs=rnd.randint(8, 14), **GPU_BOUND, **extra)  # type: ignore[arg-type]
    sim, data = simulate(config)
    assert min(_busy_share(sim, g) for g in (0, 1)) > 0.97
    if case % 2:
        data = _kill_worker(data, rnd.randrange(4), rnd.randint(3, 12))
    assert _follow_and_compare(data, rnd, report=True) > 3


def _made_rows(b: LogBuilder) -> Rows:
    """Every record of `b` as the live analysis makes its rows (fresh arrays each call)."""
    cols = b.columns()
    gpu = b.gpus_of(cols.worker, b.worker_gpu).astype(np.int32)
    return make_rows(cols, gpu, float(b.max_stamp), False, np.arange(len(cols), dtype=np.int64))


def _deref(ref: Callable[[], np.ndarray | None]) -> np.ndarray | None:
    return ref()


def _arrays_of(rows: Rows) -> list[np.ndarray]:
    """Every array `rows` holds."""
    t = rows.table
    named = [getattr(t, name) for name in ROW_FIELDS + SEGMENT_FIELDS]
    return [
        *named,
        rows.seg_part,
        rows.drawn_end,
        rows.failed_end,
        rows.index,
        *rows.floats.values(),
    ]


def _memory_of(*parts: Rows) -> set[int]:
    """The ids of the arrays whose memory `parts` hold: each array's, or the one it views."""
    return {id(a if a.base is None else a.base) for p in parts for a in _arrays_of(p)}


def _same_rows(a: Rows, b: Rows) -> None:
    for name in ROW_FIELDS + SEGMENT_FIELDS:
        assert np.array_equal(getattr(a.table, name), getattr(b.table, name), equal_nan=True), name
    assert (a.table.jobs, a.table.kinds) == (b.table.jobs, b.table.kinds)
    for x, y in (
        (a.seg_part, b.seg_part),
        (a.drawn_end, b.drawn_end),
        (a.failed_end, b.failed_end),
        (a.index, b.index),
    ):
        assert x.dtype == y.dtype and np.array_equal(x, y, equal_nan=True)
    assert list(a.floats) == list(b.floats)
    for key, values in a.floats.items():
        assert np.array_equal(values, b.floats[key], equal_nan=True), key


@pytest.mark.parametrize("seed", [3, 11])
def test_rows_split_as_they_are_let_go_are_the_rows_taken(seed: int) -> None:
    _, data = simulate(SimConfig(seed=seed, proofs=30, concurrency=3, gpus=2, fail=0.05))
    b = LogBuilder(source="t")
    b.feed(data)
    rng = np.random.default_rng(seed)
    n = len(_made_rows(b))
    for keep in (
        np.ones(n, dtype=bool),
        np.zeros(n, dtype=bool),
        np.arange(n) < n // 2,
        rng.random(n) < 0.5,
        rng.random(n) < 0.05,
        # a few rows apart, as in a long read's settled part: taken run by run
        ~np.isin(np.arange(n), [1, n // 2, n - 1]),
        np.isin(np.arange(n), [0, n // 3]),
    ):
        reference = _made_rows(b)
        held = [_made_rows(b)]
        kept, rest = split_rows(held, keep)
        assert held == []
        _same_rows(kept, reference.take(keep))
        _same_rows(rest, reference.take(~keep))
        for part, mask in ((kept, keep), (rest, ~keep)):
            # each row's segments are those it had, row after row
            t, was = part.table, reference.table
            slices = [
                np.arange(was.seg_offsets[i], was.seg_offsets[i + 1])
                for i in np.flatnonzero(mask).tolist()
            ]
            at = np.concatenate([np.zeros(0, np.int64), *slices])
            assert t.seg_start.tolist() == was.seg_start[at].tolist()
            assert np.diff(t.seg_offsets).tolist() == [len(s) for s in slices]
            assert part.seg_part.tolist() == [k for k, s in enumerate(slices) for _ in s]


def test_rows_split_in_place_leave_shared_memory_as_take_reads_it() -> None:
    """The part moved to the front of the whole's own arrays (run by run) is moved only in
    arrays whose memory is theirs alone: a column held twice, a column that views another
    and the column it views are split as `take` splits them."""
    _, data = simulate(SimConfig(seed=4, proofs=30, concurrency=3, gpus=2))
    b = LogBuilder(source="t")
    b.feed(data)
    n = len(_made_rows(b))
    keep = ~np.isin(np.arange(n), [1, n // 2, n - 1])

    def shared() -> Rows:
        rows = _made_rows(b)
        t = rows.table
        # a column that views another's memory, and one held twice
        table = t.replaced(queued=t.synth_start[:], pickup=t.gpu_start)
        floats = dict(rows.floats, synth_start=table.synth_start, queued=table.queued)
        floats["pickup"] = table.pickup
        return Rows(table, rows.seg_part, rows.drawn_end, rows.failed_end, rows.index, floats)

    reference = shared()
    kept, rest = split_rows([shared()], keep)
    _same_rows(kept, reference.take(keep))
    _same_rows(rest, reference.take(~keep))
    assert kept.table.seg_start.base is not None  # the rest moved in place


def test_rows_split_are_never_held_beside_their_parts(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each array of the rows split is let go once both of its parts are made: none is alive
    when the parts' tables are made (take's are made beside the whole), and a float column
    the table shares with `floats` is split once, its parts shared the same way."""
    import weakref

    from parsers import rows as rows_module

    _, data = simulate(SimConfig(seed=5, proofs=30, concurrency=3))
    b = LogBuilder(source="t")
    b.feed(data)
    made = PartitionTable
    alive_at_table: list[int] = []
    refs: list[weakref.ref[np.ndarray]] = []

    def watched(**kwargs: Any) -> PartitionTable:
        alive_at_table.append(sum(r() is not None for r in refs))
        return made(**kwargs)

    monkeypatch.setattr(rows_module, "PartitionTable", watched)
    alive_ids: list[set[int]] = []
    watching = watched

    def watched_ids(**kwargs: Any) -> PartitionTable:
        alive_ids.append({id(a) for a in map(_deref, refs) if a is not None})
        return watching(**kwargs)

    monkeypatch.setattr(rows_module, "PartitionTable", watched_ids)
    for split, every in ((True, 3), (True, 0), (False, 3)):
        held = [_made_rows(b)]
        t = held[0].table
        arrays = [getattr(t, name) for name in (*ROW_FIELDS, "seg_start", "seg_end", "seg_phase")]
        arrays += [*held[0].floats.values(), held[0].seg_part]
        refs[:] = [weakref.ref(a) for a in arrays]
        del t, arrays
        n = len(held[0])
        # by mask (a row in three let go), or run by run (two rows let go)
        keep = np.arange(n) % every > 0 if every else ~np.isin(np.arange(n), [2, n // 2])
        alive_at_table.clear()
        alive_ids.clear()
        if split:
            kept, rest = split_rows(held, keep)
            # what is still alive of the whole is the memory the part with more rows was
            # moved into (run by run), never an array beside its parts
            own = _memory_of(kept, rest)
            assert all(ids <= own for ids in alive_ids)
            moved = sum(len(ids) for ids in alive_ids)
            assert moved == 0 if every else moved > 0
            for part in (kept, rest):
                assert part.floats["gpu_start"] is part.table.gpu_start
                assert part.floats["synth_end"] is part.table.synth_end
        else:  # the test tells: take's tables are made beside every array of the whole
            whole = held.pop()
            whole.take(keep)
            assert alive_at_table == [len(refs)]
            del whole


@pytest.mark.parametrize("seed", [1, 8, 21])
def test_a_lane_holds_its_intervals_segments_as_the_table_has_them(seed: int) -> None:
    """Each lane's segments are those of its intervals, one interval after another, each
    interval's as the table holds them (the core gathers them in one pass); every segment
    of a started interval of a worker is on exactly one of its lanes."""
    _, data = simulate(SimConfig(seed=seed, proofs=30, concurrency=4, gw=2, fail=0.05))
    model = build(data)
    t = model.parts
    seen: list[int] = []
    for lane in model.lanes:
        s = lane.segments
        members = list(dict.fromkeys(s.partition.tolist()))  # in the lane's order
        for i in members:
            assert int(t.worker[i]) == lane.worker
        lo = t.seg_offsets[np.array(members)]
        hi = t.seg_offsets[np.array(members) + 1]
        idx = np.concatenate([np.arange(a, b) for a, b in zip(lo, hi, strict=True)])
        assert np.array_equal(s.starts, t.seg_start[idx])
        assert np.array_equal(s.ends, t.seg_end[idx])
        assert np.array_equal(s.phases, t.seg_phase[idx])
        assert s.partition.dtype == np.int32
        seen.extend(members)
    started = np.flatnonzero(~np.isnan(t.gpu_start) & (t.worker >= 0))
    with_segments = [int(i) for i in started if t.seg_offsets[i + 1] > t.seg_offsets[i]]
    assert sorted(seen) == sorted(with_segments)


@pytest.mark.parametrize("seed", range(6))
def test_proofs_merged_as_columns_are_in_the_order_of_their_objects(seed: int) -> None:
    """A live model puts the proofs made at a snapshot among the settled ones as columns:
    the order is the one `proof_key` gives the objects (first SYNTH_START, none last, then
    job id), ties of first SYNTH_START and proofs with none among them."""
    from parsers.model import ProofTable, merge_positions, proof_key

    rng = random.Random(seed)
    names = tuple(f"job-{rng.randrange(1000):03d}-{k}" for k in range(200))
    ids = list(range(len(names)))
    rng.shuffle(ids)

    def table(rows: list[int]) -> ProofTable:
        first = np.array([rng.choice([np.nan, 1000.0, 3000.0, rng.randrange(5000)]) for _ in rows])
        n = len(rows)
        t = ProofTable(
            job=np.array(rows, dtype=np.int64),
            kind=np.full(n, -1, dtype=np.int64),
            partitions=np.ones(n, dtype=np.int64),
            first=first,
            last=np.full(n, np.nan),
            completed=np.zeros(n, dtype=bool),
            seen=np.full(n, np.nan),
            jobs=names,
            kinds=(),
        )
        order = sorted(range(n), key=lambda k: proof_key(t.proofs()[k]))
        return t.take(np.array(order, dtype=np.int64))

    kept, made = table(ids[:150]), table(ids[150:])
    merged = kept.insert(merge_positions(kept, made), made, names, ())
    every = kept.proofs() + made.proofs()
    assert merged.proofs() == tuple(sorted(every, key=proof_key))
    assert sum(p.first_synth_start == 1000 for p in every) > 10  # ties were put in place


@pytest.mark.parametrize("case", range(3))
def test_live_snapshots_of_a_log_with_lines_cut_before_their_partition(
    case: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A job's partitions may be in the settled part and its cut line's record in the live
    rows, or the other way round: every snapshot counts the job's partitions as the whole
    model does (a record of no partition is none of a job of partitions)."""
    rnd = random.Random(300 + case)
    monkeypatch.setattr(analysis, "SETTLE_MS", rnd.choice([0, 500, 5_000]))
    monkeypatch.setattr(analysis, "TAIL_ROWS", rnd.choice([1, 8, 64]))
    _, data = simulate(SimConfig(seed=300 + case, proofs=8, concurrency=3))
    lines = data.split(b"\n")
    starts = [i for i, x in enumerate(lines) if b",SYNTH_START," in x and b",partition=" in x]
    for at in rnd.sample(starts, 4):
        lines[at] = lines[at][: lines[at].index(b",partition=")]
    cut = b"\n".join(lines)
    assert _follow_and_compare(cut, rnd, report=True) > 3

    def proofs(log: bytes) -> list[tuple[str, int, bool]]:
        return [(p.job, p.partitions, p.completed) for p in build(log).proofs]

    assert proofs(cut) == proofs(data)


def test_what_each_update_asks_of_every_row_puts_no_column_together() -> None:
    """The viewer asks at each update whether a proof failed, whether any interval started
    and the gaps' next `queued`: asked of the whole table, a live model put those columns of
    its settled rows together (9 MB more on a 252 MB log, copied at every update). Asked of
    each part, nothing is put together, and the answers are the whole table's."""
    from dataclasses import replace

    from parsers.proofs import failed_proofs
    from parsers.report import no_gpu_sentence

    cfg = SimConfig(seed=12, proofs=40, concurrency=3, fail=0.05, fail_prove=0.05)
    _, model = live_model(simulate(cfg)[1])
    table = model.parts
    assert len(table._parts) == 2
    failed = failed_proofs(model)
    sentence = no_gpu_sentence(model)
    rows = np.array([0, len(table._parts[0]) - 1, len(table._parts[0]), -1], dtype=np.int64)
    taken = {name: table.take(name, rows) for name in ("queued", "failed", "gpu_end")}
    assert not table._cols, f"put together: {sorted(table._cols)}"
    whole = replace(model, parts=table.replaced())
    assert failed.any() and failed.tolist() == failed_proofs(whole).tolist()
    assert sentence is None and no_gpu_sentence(whole) is None
    for name, got in taken.items():
        expected = getattr(whole.parts, name)[rows]
        assert np.array_equal(got, expected, equal_nan=got.dtype.kind == "f")
    with pytest.raises(IndexError):
        table.take("queued", np.array([len(table)], dtype=np.int64))
    with pytest.raises(ValueError):  # a value per segment, not per row
        table.take("seg_start", rows)
