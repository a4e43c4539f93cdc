"""Pilot tests: the interval inspector (`i`), stepping a worker's intervals, the mouse, and
`n` over a found job's intervals."""

from __future__ import annotations

import io
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build
from textual import events
from textual.widgets import Static

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.durations import duration
from parsers.load import read_log
from parsers.model import NAMES_BY_KEY, PHASE_KEYS, LogModel, Phase
from parsers.proofs import FoundJob
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.find import ProofScreen, find_jobs, proof_gaps
from tui.gantt import LABEL_WIDTH, WHEEL_FACTOR, GanttView
from tui.inspector import InspectorScreen
from tui.interval import IntervalScreen, same_interval

SIZE = (120, 36)


def app_for(name: str) -> tuple[CuzkApp, LogModel]:
    path = SAMPLES / f"{name}.log"
    model = read_log(path)
    return make_app(model, LineReader(path=path)), model


def facts(app: CuzkApp) -> str:
    return str(app.screen.query_one("#interval-facts", Static).content)


def by_start(model: LogModel, mask: np.ndarray) -> list[int]:
    """The partitions of `mask` that reached GPU_START, in GPU_START order (ties: index)."""
    t = model.parts
    rows = [i for i in np.flatnonzero(mask).tolist() if not np.isnan(t.gpu_start[i])]
    return sorted(rows, key=lambda i: (float(t.gpu_start[i]), i))


def worker_order(model: LogModel, index: int) -> list[int]:
    t = model.parts
    return by_start(model, (t.gpu == t.gpu[index]) & (t.worker == t.worker[index]))


def centre(view: GanttView) -> float:
    return view.t0 + view.timeline_width * view.scale / 2


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_i_after_n_shows_the_interval_after_the_gap(size: tuple[int, int]) -> None:
    app, model = app_for("curio-mixed")
    gap = model.gaps[0]
    async with app.run_test(size=size) as pilot:
        await pilot.press("n", "i")
        assert isinstance(app.screen, IntervalScreen)
        assert app.screen.index == gap.after.index
        part = model.parts.get(gap.after.index)
        assert part.gpu_start is not None and part.gpu_end is not None
        text = facts(app)
        assert f"job        {part.job}" in text
        assert f"partition  {part.partition} · worker {part.worker} · GPU{part.gpu}" in text
        assert f"length     {duration(part.gpu_end - part.gpu_start)}" in text
        # every phase as the model has it, and they add up to the interval's length
        for k in PHASE_KEYS:
            if k != "unknown" or part.phases_ms[k] > 0:
                assert f"  {NAMES_BY_KEY[k]:<10} {duration(part.phases_ms[k]):>9}" in text
        total = sum(part.phases_ms.values())
        assert abs(total - (part.gpu_end - part.gpu_start)) < 1e-6
        assert f"waited {duration(part.phases_ms['lock_wait'])} (lock wait)" in text
        assert part.queued is not None and part.synth_start is not None
        assert f"GPU_START {duration(part.gpu_start - part.queued)} later (queue time)" in text
        assert part.synth_end is not None
        assert f"= {duration(part.synth_end - part.synth_start)}" in text
        # the raw lines: its GPU_START line and its GPU_END line
        raw = str(app.screen.query_one("#interval-raw", Static).content)
        assert f"{part.start_line:>8}  TIMELINE,{part.gpu_start},GPU_START,{part.job}" in raw
        assert f"{part.end_line:>8}  TIMELINE,{part.gpu_end},GPU_END,{part.job}" in raw
        await pilot.press("escape")
        assert not isinstance(app.screen, IntervalScreen)
        assert app.gantt.selected_part == gap.after.index


async def test_n_and_N_step_the_workers_intervals_by_gpu_start_and_stop_at_the_ends() -> None:
    app, model = app_for("curio-mixed")  # split proving: a worker's lane has sub-rows
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "i")
        screen = app.screen
        assert isinstance(screen, IntervalScreen)
        order = worker_order(model, screen.index)
        assert len(order) > 3
        view = app.gantt
        for _ in range(len(order)):
            await pilot.press("N")
        assert screen.index == order[0]  # stopped at the first
        seen = [screen.index]
        for _ in range(len(order) + 2):  # two more than there are: it stops at the last
            await pilot.press("n")
            if screen.index != seen[-1]:
                seen.append(screen.index)
        assert seen == order
        # the Gantt follows: the interval is selected and centred
        assert view.selected_part == order[-1] and view.selected is None
        start, end = model.parts.gpu_start[order[-1]], model.parts.gpu_end[order[-1]]
        assert view.t0 <= start and end <= view.t0 + view.timeline_width * view.scale
        text = facts(app)
        assert f"Interval {len(order)} of {len(order)} of worker" in text


async def test_n_pressed_past_the_last_interval_says_so_once() -> None:
    """Each `n` past a worker's last interval added a toast: ten presses piled ten over the
    inspector. The notice said again takes the place of the one showing."""
    app, model = app_for("curio-mixed")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("n", "i")
        screen = app.screen
        assert isinstance(screen, IntervalScreen)
        for _ in range(len(worker_order(model, screen.index)) + 10):
            await pilot.press("n")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert said == ["last interval of the worker"]
        await pilot.press("N")  # another notice still shows beside it, once each
        for _ in range(len(worker_order(model, screen.index)) + 3):
            await pilot.press("N")
        await pilot.pause()
        said = [str(n.message) for n in app._notifications]
        assert sorted(said) == ["first interval", "last interval of the worker"]


async def test_a_click_on_a_worker_lane_selects_the_interval_under_it() -> None:
    app, model = app_for("curio-mixed")
    async with app.run_test(size=SIZE) as pilot:
        view = app.gantt
        await pilot.press("plus", "plus")
        await pilot.pause()
        y = next(y for y, r in enumerate(view.rows) if r.kind == "worker") + 2  # the axis rows
        lane = model.lanes[view.rows[y - 2].lane]
        # a cell whose centre a segment of the lane covers
        for x in range(LABEL_WIDTH, view.size.width):
            t = view.t0 + (x - LABEL_WIDTH + 0.5) * view.scale
            hit = np.flatnonzero((lane.starts <= t) & (t < lane.ends))
            if len(hit):
                break
        else:
            pytest.fail("no interval in view")
        expected = int(lane.partition[hit[0]])
        t0, scale = view.t0, view.scale
        assert await pilot.click(GanttView, offset=(x, y))
        assert view.selected_part == expected
        assert (view.t0, view.scale) == (t0, scale)  # a click does not move the view
        await pilot.press("enter")
        assert isinstance(app.screen, IntervalScreen) and app.screen.index == expected
        await pilot.press("escape")
        # a click on the axis or the label gutter selects nothing else
        assert await pilot.click(GanttView, offset=(2, y))
        assert await pilot.click(GanttView, offset=(x, 0))
        assert view.selected_part == expected
        await pilot.press("escape")
        assert view.selected_part is None


async def test_the_wheel_zooms_around_the_pointer() -> None:
    app, _ = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.gantt
        await pilot.pause()
        x = LABEL_WIDTH + view.timeline_width // 3
        cell = x - LABEL_WIDTH + 0.5
        before, scale = view.t0 + cell * view.scale, view.scale
        view.post_message(events.MouseScrollUp(view, x, 5, 0, -1, 0, False, False, False))
        await pilot.pause()
        assert view.scale == pytest.approx(scale / WHEEL_FACTOR)
        assert view.t0 + cell * view.scale == pytest.approx(before)  # still under the pointer
        view.post_message(events.MouseScrollUp(view, x, 5, 0, -1, 0, False, False, False))
        view.post_message(events.MouseScrollDown(view, x, 5, 0, 1, 0, False, False, False))
        await pilot.pause()
        assert view.scale == pytest.approx(scale / WHEEL_FACTOR)
        assert view.t0 + cell * view.scale == pytest.approx(before)
        # shift + wheel scrolls the lanes, and leaves the zoom
        view.post_message(events.MouseScrollDown(view, x, 5, 0, 1, 0, True, False, False))
        await pilot.pause()
        assert view.scale == pytest.approx(scale / WHEEL_FACTOR)


async def test_after_a_search_n_visits_the_jobs_intervals_only() -> None:
    app, model = app_for("curio-mixed")
    job = find_jobs(model, "porep-1000-10")[0]
    t = model.parts
    numbers = [k for k, name in enumerate(t.jobs) if name == job.job]
    order = by_start(model, np.isin(t.job, numbers))
    assert len(order) > 1
    async with app.run_test(size=SIZE) as pilot:
        view = app.gantt
        await pilot.press("slash", *"porep-1000-10", "enter")
        assert isinstance(app.screen, ProofScreen)
        await pilot.press("escape")  # the proof view closes, the highlight stays
        assert app.screen.active_bindings["n"].binding.description == "Next interval"
        seen: list[int] = []
        for _ in range(len(order) + 2):
            await pilot.press("n")
            assert view.selected is None and view.selected_part is not None
            if not seen or seen[-1] != view.selected_part:
                seen.append(view.selected_part)
        assert seen == order  # in GPU_START order, stopping at the last
        await pilot.press("N")
        assert view.selected_part == order[-2]
        await pilot.press("i")
        assert isinstance(app.screen, IntervalScreen) and app.screen.index == order[-2]
        await pilot.press("escape", "escape")  # the window, then the search
        assert view.found_jobs == () and view.selected_part is None
        assert app.screen.active_bindings["n"].binding.description == "Next gap"
        await pilot.press("n")
        assert view.selected == 0  # gaps again


async def test_the_proof_view_opens_its_first_interval_and_its_gaps() -> None:
    app, model = app_for("curio-mixed")
    job = "porep-1000-10"
    t = model.parts
    numbers = [k for k, name in enumerate(t.jobs) if name == job]
    first = by_start(model, np.isin(t.job, numbers))[0]
    gaps = proof_gaps(model, FoundJob(job))
    assert 0 < len(gaps) < 9
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *job, "enter")
        proof = app.screen
        assert isinstance(proof, ProofScreen)
        await pilot.press("i")
        assert isinstance(app.screen, IntervalScreen) and app.screen.index == first
        await pilot.press("escape")
        assert app.screen_stack[-1] is proof  # back to the proof view
        await pilot.press("1")
        assert isinstance(app.screen, InspectorScreen)
        assert app.screen.gap == model.gaps[gaps[0]]
        assert app.gantt.selected == gaps[0]
        await pilot.press("escape")
        assert app.screen_stack[-1] is proof
        await pilot.press(str(len(gaps) + 1))  # a number past its gaps: said, nothing opens
        assert app.screen_stack[-1] is proof


async def test_i_without_a_selection_takes_the_interval_at_the_centre_of_the_view() -> None:
    app, model = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.gantt
        await pilot.press("plus", "plus", "plus")
        mid = centre(view)
        await pilot.press("i")
        assert isinstance(app.screen, IntervalScreen)
        lane = model.lanes[0]
        k = int(np.flatnonzero(lane.ends > mid)[0])  # the one covering it, or the next
        assert app.screen.index == int(lane.partition[k])


def test_an_interval_is_the_same_one_in_a_newer_model() -> None:
    model = read_log(SAMPLES / "curio-mixed.log")
    again = read_log(SAMPLES / "curio-mixed.log")
    for index in (0, len(model.parts) // 2, len(model.parts) - 1):
        assert same_interval(model, again, index) == index
    # a model without it: none
    tiny = read_log(SAMPLES / "tiny.log")
    assert same_interval(model, tiny, 5) is None


def test_a_failed_interval_shows_its_lines_to_its_workers_next_start() -> None:
    """A failed interval (no GPU_END) showed its GPU_START line alone: now the lines from
    it to its worker's next GPU_START, where the log says it ended, both edges marked."""
    from tui.interval import interval_raw, next_start_line

    path = SAMPLES / "journal-2gpu.log"
    model = read_log(path)
    t = model.parts
    failed = np.flatnonzero(t.failed).tolist()
    assert failed
    rows = path.read_bytes().split(b"\n")
    for i in failed:
        first, nxt = int(t.start_line[i]), next_start_line(model, i)
        assert nxt is not None and nxt > first
        ahead = rows[nxt - 1]
        assert b"GPU_START" in ahead and f"worker={int(t.worker[i])},".encode() in ahead
        text = interval_raw(model, LineReader(path=path), i).plain
        assert text.startswith(f"raw lines {first}–{nxt} (no GPU_END")
        assert f"{first:>8}  " in text and f"{nxt:>8}  " in text
    done = int(np.flatnonzero(~np.isnan(t.gpu_end))[0])  # an ended one: as before
    text = interval_raw(model, LineReader(path=path), done).plain
    assert text.startswith(f"raw lines {int(t.start_line[done])}–{int(t.end_line[done])}\n")


def test_an_interval_running_where_the_log_ends_shows_its_lines_to_the_last(
    tmp_path: Path,
) -> None:
    """An interval running when the log ends, nothing after it on its worker, showed its
    GPU_START line alone: now every line from it to the log's last, as far as it is known."""
    from tui.interval import interval_raw

    _, data = simulate(SimConfig(seed=5, proofs=10, concurrency=3))
    data = data[: data.rfind(b"\n", 0, int(len(data) * 0.7)) + 1]
    path = tmp_path / "cut.log"
    path.write_bytes(data)
    model = read_log(path)
    t = model.parts
    running = np.flatnonzero(~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed)
    assert len(running)
    total = data.count(b"\n")
    rows = data.split(b"\n")
    for i in running.tolist():
        first = int(t.start_line[i])
        text = interval_raw(model, LineReader(path=path), i).plain
        assert text.startswith(
            f"raw lines {first}–{total} (no GPU_END: running when the log ends; "
            "to the log's last line)"
        )
        assert f"{total:>8}  " in text and rows[total - 1][-20:].decode() in text


def test_a_proof_s_gaps_line_up_and_its_queue_column_says_it_is_a_wait() -> None:
    """`… GPU 0  before it  waiting for synthesis` over `… GPU 1  after it  waiting…`: the
    words after `before it` / `after it` were a column apart; and the `queued` column, a
    duration between two times, read as a time."""
    from rich.console import Console

    from tui.find import describe_proof

    _, data = simulate(SimConfig(seed=12, proofs=8, gpus=4, gw=3, stdout="plain"))
    model = build(data)
    job = max(model.parts.jobs, key=lambda j: len(proof_gaps(model, FoundJob(j))))
    sides = {model.gaps[k].after.job == job for k in proof_gaps(model, FoundJob(job))}
    assert sides == {True, False}  # gaps before it and after it
    console = Console(width=200, record=True, file=io.StringIO())
    console.print(describe_proof(model, FoundJob(job)))
    lines = console.export_text().splitlines()
    assert any(line.split()[:1] == ["part"] and "in queue" in line for line in lines)
    rows = [line for line in lines if re.search(r"(before|after|inside) it", line)]
    found = [re.search(r"(before|after|inside) it +", line) for line in rows]
    words = {m.start() for m in found if m is not None}
    causes = {m.end() for m in found if m is not None}  # where the cause's words begin
    assert len(rows) >= 2 and len(words) == 1 and len(causes) == 1, rows


def test_an_interval_no_lock_line_places_says_its_wait_is_not_known() -> None:
    """An interval with no timing line: `lock waited 0ms (lock wait), not placed: no lock
    line for it` read as a measured wait of none."""
    from tui.interval import describe_interval

    model = build(
        b"TIMELINE,100,SYNTH_START,jobA,partition=0\n"
        b"TIMELINE,200,GPU_START,jobA,worker=0,partition=0\n"
        b"TIMELINE,900,GPU_END,jobA,worker=0,partition=0\n"
    )
    text = describe_interval(model, 0).plain
    lock = next(line for line in text.splitlines() if line.startswith("lock"))
    assert "waited" not in lock and "not known" in lock, lock
    # with a lock line, the wait it measured
    placed = read_log(SAMPLES / "p12-gw2-merged.log")
    waits = describe_interval(placed, 1).plain
    assert any(line.startswith("lock") and "waited" in line for line in waits.splitlines())


def test_an_engine_without_lock_lines_shows_no_wait_it_did_not_measure() -> None:
    """The p9 engine prints no lock line: its interval read `pre-lock 0 ms`, `lock wait
    0 ms` and `waited 0ms (lock wait), taken 52.483s`, the lock placed back from the end of
    the kernels. Its wait is `–`, and the lock's place is said to be inferred; an engine
    that prints lock lines keeps its measured wait."""
    from tui.interval import describe_interval

    old = read_log(SAMPLES / "p9-c6.log")
    assert not any(g.lock_printed for g in old.gpus)
    done = int(np.flatnonzero(~np.isnan(old.parts.gpu_end))[0])
    text = " ".join(describe_interval(old, done).plain.split())
    assert "pre-lock – lock wait –" in text
    assert "waited" not in text and "(inferred: the log holds no lock line" in text
    current = read_log(SAMPLES / "p12-gw2-merged.log")
    assert all(g.lock_printed for g in current.gpus)
    t = current.parts
    waited = int(np.flatnonzero(~np.isnan(t.lock_acquired) & ~np.isnan(t.gpu_end))[0])
    text = " ".join(describe_interval(current, waited).plain.split())
    assert "lock wait –" not in text and "(lock wait), taken" in text and "inferred" not in text


def test_every_inspector_writes_an_unplaced_lock_s_wait_as_unmeasured() -> None:
    """The gap inspector still said `pre-lock 0ms lock wait 0ms` of the p9 engine's intervals
    where the interval inspector said `–`; and on a current engine an interval whose own lock
    line was lost said `lock wait 0 ms` over `lock not placed, its wait not known`. Wherever
    no lock line places an interval's lock, both inspectors write its wait `–`."""
    from cuzksim.logs import lose_lines
    from tui.inspector import describe_gap
    from tui.interval import describe_interval

    old = read_log(SAMPLES / "p9-c6.log")
    gap_text = " ".join(describe_gap(old, old.gaps[0]).plain.split())
    assert "pre-lock –" in gap_text and "lock wait –" in gap_text
    assert "pre-lock 0ms" not in gap_text
    _, data = simulate(SimConfig(seed=2, proofs=6, gpus=1, gw=2, stdout="plain"))
    lost = build(lose_lines(data, "lock", 0.5, seed=1))
    assert all(g.lock_printed for g in lost.gpus)  # some lock lines came: the engine prints them
    t = lost.parts
    unplaced = np.flatnonzero(np.isnan(t.lock_acquired) & ~np.isnan(t.gpu_end))
    placed = np.flatnonzero(~np.isnan(t.lock_acquired) & ~np.isnan(t.gpu_end))
    assert len(unplaced) and len(placed)
    text = " ".join(describe_interval(lost, int(unplaced[0])).plain.split())
    assert "pre-lock – lock wait –" in text and "not placed, its wait not known" in text
    text = " ".join(describe_interval(lost, int(placed[0])).plain.split())
    assert "lock wait –" not in text and "(lock wait), taken" in text


def test_an_interval_whose_lock_line_was_lost_shows_no_wait_it_did_not_measure(
    tmp_path: Path,
) -> None:
    """A current engine, one worker's lock lines lost: its unlock line still places the
    lock (back from it), the time before it one unknown segment, yet the inspector read
    `pre-lock 0 ms`, `lock wait 0 ms` and intervals.csv `0`. They are `–` and empty, the
    lock's place said to be inferred from no lock line of its; the other worker's, which
    kept their lines, keep their figures."""
    import csv

    from parsers import export
    from parsers.load import model_of_bytes
    from tui.interval import describe_interval

    _, data = simulate(SimConfig(seed=3, proofs=4, gpus=1, gw=2, stdout="plain"))
    whole = model_of_bytes(data, "whole.log")
    t = whole.parts
    lines = data.split(b"\n")
    lost = {
        k
        for i in np.flatnonzero((t.worker == 0) & ~np.isnan(t.gpu_end)).tolist()
        for k in range(int(t.start_line[i]) - 1, int(t.end_line[i]))
        if b"pre_lock_cpu_ms" in lines[k]
    }
    model = model_of_bytes(b"\n".join(x for k, x in enumerate(lines) if k not in lost), "l.log")
    t = model.parts
    ended = ~np.isnan(t.gpu_end)
    # placed from its unlock line, the time before the lock unknown
    placed = np.flatnonzero(ended & (t.worker == 0) & ~np.isnan(t.lock_acquired))
    # the intervals that kept their lock line: a pre-lock segment first
    first = t.seg_phase[np.minimum(t.seg_offsets[:-1], len(t.seg_phase) - 1)]
    kept = np.flatnonzero(ended & (np.diff(t.seg_offsets) > 0) & (first == Phase.PRE_LOCK))
    assert len(placed) and len(kept)
    lost_one = " ".join(describe_interval(model, int(placed[0])).plain.split())
    assert "pre-lock – lock wait –" in lost_one
    assert "(inferred: no lock line of its; the wait is not measured)" in lost_one
    with_line = [" ".join(describe_interval(model, int(i)).plain.split()) for i in kept]
    assert any("(lock wait), taken" in text for text in with_line)
    export.write_csv(model, tmp_path / "csv")
    with (tmp_path / "csv" / "intervals.csv").open() as f:
        rows = {int(r["index"]): r for r in csv.DictReader(f)}
    assert rows[int(placed[0])]["lock_wait_ms"] == rows[int(placed[0])]["pre_lock_ms"] == ""
    assert all(rows[int(i)]["pre_lock_ms"] not in ("", "0") for i in kept)


def test_a_job_whose_id_is_the_search_is_found_first() -> None:
    """`/ porep-1000-12` opened `ps-porep-1000-12-45196` (job 1 of 3): it started first,
    and the matches went by time. The job whose id was typed whole comes first (case
    aside), the others after it by time."""
    lines = []
    for t, job in (
        (100, "ps-porep-1000-12-45196"),
        (200, "porep-1000-12"),
        (300, "porep-1000-120"),
    ):
        lines += [
            f"TIMELINE,{t},SYNTH_START,{job},partition=0",
            f"TIMELINE,{t + 10},SYNTH_END,{job},partition=0",
            f"TIMELINE,{t + 20},GPU_START,{job},worker=0,partition=0",
            f"TIMELINE,{t + 60},GPU_END,{job},worker=0,partition=0",
        ]
    model = build(("\n".join(lines) + "\n").encode())
    for query in ("porep-1000-12", "PoRep-1000-12"):
        assert [f.job for f in find_jobs(model, query)] == [
            "porep-1000-12",
            "ps-porep-1000-12-45196",
            "porep-1000-120",
        ]
    assert find_jobs(model, "porep-1000")[0].job == "ps-porep-1000-12-45196"  # by time


def test_the_proof_view_times_its_partitions_after_it_began() -> None:
    """Hours into a log, the proof view's `synth at` and `GPU at` were the run's clock cut
    to the minute: every row of a proof read `7h36m`. They are now the time after the proof
    began (`+2.41s`), which its head gives to the millisecond, as are its gaps."""
    from rich.console import Console

    from parsers.durations import offset
    from tui.find import describe_proof

    hours = 7 * 3_600_000 + 36 * 60_000 + 10_677
    lines = []
    for p, (synth, gpu) in enumerate(((0, 35_200), (1_850, 40_800), (5_600, 36_600))):
        s, g = hours + synth, hours + gpu
        lines += [
            f"TIMELINE,{s},SYNTH_START,porep-1000-7,partition={p}",
            f"TIMELINE,{s + 30_000},SYNTH_END,porep-1000-7,partition={p}",
            f"TIMELINE,{g},GPU_START,porep-1000-7,worker=0,partition={p}",
            f"TIMELINE,{g + 3_500},GPU_END,porep-1000-7,worker=0,partition={p}",
        ]
    model = build(("\n".join(sorted(lines, key=lambda x: int(x.split(",")[1]))) + "\n").encode())
    screen = Console(file=io.StringIO(), width=100)
    screen.print(describe_proof(model, find_jobs(model, "porep-1000-7")[0]))
    text = screen.file.getvalue()  # type: ignore[attr-defined]
    assert f"begun at {offset(hours)}" in text and offset(hours) == "7h36m10.677s"
    rows = [r.split() for r in text.splitlines() if r.split()[1:2] == ["w0"]]
    assert [(r[3], r[6]) for r in rows] == [
        ("+0ms", "+35.2s"),
        ("+1.85s", "+40.8s"),
        ("+5.60s", "+36.6s"),
    ]
    # the GPU idle between its partitions: after 36.6 + 3.5 s, before 40.8 s
    assert "at +40.1s" in text
    assert "7h36m " not in text


async def test_min_gap_is_the_threshold_the_viewer_opens_at(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`cuzk-tui LOG --min-gap 500` opened with every gap (`gaps ≥ 0 ms`), the option
    silently ignored: it is the threshold the Gantt opens at, which `n` and the status
    line keep to."""
    from tui import launch
    from tui.options import options_of, parse_args

    opened: list[int] = []
    monkeypatch.setattr(launch, "find_terminal", lambda *_: None)
    monkeypatch.setattr(CuzkApp, "run", lambda self, *_, **__: opened.append(self.min_gap_ms))
    log = str(SAMPLES / "curio-mixed.log")
    assert launch.run_app(options_of(parse_args([log, "--min-gap", "500"]))) == 0
    assert opened == [500]
    app, model = app_for("curio-mixed")
    app.min_gap_ms = 5000
    async with app.run_test(size=SIZE) as pilot:
        assert app.gantt.threshold_ms == 5000
        assert "gaps ≥ 5.00 s: " in str(app.query_one("#status", Static).content)
        seen = set()
        for _ in range(4):
            await pilot.press("n")
            assert app.gantt.selected is not None
            seen.add(app.gantt.selected)
        durations = model.gaps.duration
        assert seen and all(durations[k] >= 5000 for k in seen)
        assert (durations < 5000).any()  # shorter gaps were passed over


def test_a_proof_begun_before_the_log_is_timed_from_its_first_seen_start() -> None:
    """In a log begun mid-proof, one partition on a GPU before another's synthesis is seen:
    the proof began at the first start of either kind, and no partition's time reads as
    before it (`GPU at -4.00s` under `begun at 5.000s`)."""
    from rich.console import Console

    from tui.find import describe_proof

    lines = [
        "TIMELINE,1000,GPU_START,porep-1000-7,worker=0,partition=0",
        "TIMELINE,4000,GPU_END,porep-1000-7,worker=0,partition=0",
        "TIMELINE,5000,SYNTH_START,porep-1000-7,partition=1",
        "TIMELINE,8000,SYNTH_END,porep-1000-7,partition=1",
        "TIMELINE,9000,GPU_START,porep-1000-7,worker=0,partition=1",
        "TIMELINE,12000,GPU_END,porep-1000-7,worker=0,partition=1",
    ]
    model = build(("\n".join(lines) + "\n").encode())
    screen = Console(file=io.StringIO(), width=100)
    screen.print(describe_proof(model, find_jobs(model, "porep-1000-7")[0]))
    text = screen.file.getvalue()  # type: ignore[attr-defined]
    assert "begun at 1.000s" in text
    rows = [r.split() for r in text.splitlines() if r.split()[1:2] == ["w0"]]
    assert [(r[3], r[6]) for r in rows] == [("—", "+0ms"), ("+4.00s", "+8.00s")]
    assert "at +3.00s" in text and "-" not in "".join(r[6] for r in rows)
