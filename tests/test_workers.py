"""`w`: each worker's time in the phases of its GPU intervals, in the viewer as in the text
report, beside the busy split that gives an instant to one phase."""

from __future__ import annotations

import io

from conftest import SAMPLES
from helpers import build
from rich.console import Console
from textual.containers import HorizontalScroll, VerticalScroll
from textual.pilot import Pilot
from textual.widgets import Static

from cuzksim.config import SimConfig
from cuzksim.logs import simulate
from parsers.breakdown import whole_run
from parsers.model import Phase
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.workers import NO_WORKER, NOT_THE_SPLIT, WorkersScreen, workers_parts


def _shown(screen: WorkersScreen, name: str) -> str:
    """What the window's part `name` holds, as text in one line."""
    static = screen.query_one(f"#workers-{name}", Static)
    console = Console(width=1000, file=io.StringIO())
    console.print(static.content)
    return " ".join(console.file.getvalue().split())  # type: ignore[attr-defined]


async def _opened(app: CuzkApp, pilot: Pilot[None]) -> WorkersScreen:
    """The window `w` opens over the Gantt."""
    await pilot.press("w")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, WorkersScreen)
    return screen


async def test_w_shows_each_worker_s_lock_wait_that_the_busy_split_gives_to_kernel() -> None:
    """Two workers on one GPU each wait ~28 % of their intervals for the lock while the other
    runs kernels: the busy split says `lock 0%`; the window says each worker's wait."""
    path = SAMPLES / "p12-gw2-merged.log"
    model = build(path.read_bytes())
    split = whole_run(model)[0]
    assert split.share(Phase.LOCK_WAIT) < 0.01
    waits = [w.phases_ms["lock_wait"] / sum(w.phases_ms.values()) for w in model.workers]
    assert len(waits) == 2 and all(share > 0.2 for share in waits)
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _opened(app, pilot)
        table = _shown(screen, "table")
        for share in waits:
            assert f"{100 * share:.1f}%" in table
        assert _shown(screen, "notes") == " ".join(NOT_THE_SPLIT.split())
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, WorkersScreen)


async def test_a_table_wider_than_the_window_scrolls_alone_and_follows_the_log() -> None:
    """Six workers: a row each, wider than 80 columns; left / right scroll the table (the
    title and the notes stay), and a grown log's figures replace the window's."""
    _, data = simulate(SimConfig(seed=5, era="feb", gpus=3, gw=2, proofs=8, stdout="plain"))
    lines = data.split(b"\n")
    early, model = build(b"\n".join(lines[: len(lines) // 2])), build(data)
    app = make_app(early, LineReader(data=data))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _opened(app, pilot)
        wide = screen.query_one("#workers-wide", HorizontalScroll)
        assert wide.max_scroll_x > 0
        assert _shown(screen, "names-head").split()[:2] == ["worker", "GPU"]
        names = _shown(screen, "names").split()
        assert "w0" in names and "intervals" not in names
        await pilot.press("right", "right")
        await pilot.pause()
        # a column at a time: the third column's start, never inside a cell
        stops = workers_parts(early, 80 - 8 - 2).stops
        assert len(stops) > 3 and wide.scroll_x == stops[2]
        for _ in range(len(stops) + 2):  # to its end: still at a column's start
            await pilot.press("right")
        await pilot.pause()
        assert wide.scroll_x in stops and wide.scroll_x > stops[2]
        shown = screen.query_one("#workers-table", Static)
        assert wide.scroll_x + wide.size.width >= workers_parts(early, 80 - 8 - 2).figures_width
        assert shown.size.width >= wide.scroll_x + wide.size.width
        # scrolled, the rows are still named: the worker and GPU columns stay in view
        column = screen.query_one("#workers-names", Static)
        assert column.region.width == workers_parts(early).names_width > 0
        assert screen.region.contains_region(column.region)
        assert wide.region.x >= column.region.right
        text = _shown(screen, "table-head") + " " + _shown(screen, "table")
        assert "intervals" in text and " w0 " not in f" {text} "
        # the titles over the figures moved with them
        head = screen.query_one("#workers-wide-head", HorizontalScroll)
        assert head.scroll_x == wide.scroll_x
        assert "prints no allocation line" in _shown(screen, "notes")
        screen.show_model(model)
        await pilot.pause()
        assert str(model.workers[0].intervals) in _shown(screen, "table")
        assert screen.model is model
        # a smaller terminal: the notes wrap to it again (they stay whole, unscrolled)
        notes = screen.query_one("#workers-notes", Static)
        wide_notes = notes.size.width
        await pilot.resize_terminal(60, 24)
        await pilot.pause()
        assert notes.size.width < wide_notes and notes.size.width <= 60 - 8


async def test_the_titles_stay_over_the_figures_as_the_rows_scroll_down() -> None:
    """Forty workers at 80×24: scrolled down, the table's title row went out of view after
    14 rows, and no column said what its figures were. The titles stay; the rows scroll
    under them to the last worker."""
    _, data = simulate(SimConfig(seed=15, proofs=6, gpus=2, gw=20, stdout="plain"))
    model = build(data)
    assert len(model.workers) == 40
    app = make_app(model, LineReader(data=data))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _opened(app, pilot)
        body = screen.query_one("#workers-body", VerticalScroll)
        assert body.max_scroll_y > 0
        await pilot.press("end")
        await pilot.pause()
        assert body.scroll_y == body.max_scroll_y > 0
        names_head = screen.query_one("#workers-names-head", Static)
        table_head = screen.query_one("#workers-wide-head", HorizontalScroll)
        for head in (names_head, table_head):
            assert screen.region.contains_region(head.region) and head.region.height >= 2
        assert _shown(screen, "names-head").split()[:2] == ["worker", "GPU"]
        assert "intervals" in _shown(screen, "table-head")
        # the last worker's row is in view, under the titles, and the window fits the screen
        last = f"w{model.workers[-1].worker}"
        names = screen.query_one("#workers-names", Static)
        rows = names.region.y  # where the first row is drawn (above the window: scrolled)
        row_of_last = _shown(screen, "names").split().index(last) // 2
        assert body.region.y <= rows + row_of_last < body.region.bottom
        assert names_head.region.bottom <= body.region.y
        box = screen.query_one("#workers")
        assert box.region.bottom <= 24 - 1  # the footer's row stays free


def test_a_log_with_no_worker_says_so() -> None:
    model = build(b"hello\n")
    parts = workers_parts(model)
    assert str(parts.title) == NO_WORKER and parts.figures_width == parts.names_width == 0


def test_the_report_s_worker_table_at_80_columns_goes_on_below_not_wrapped() -> None:
    """At an 80-column terminal the per-worker table of 40 workers wrapped each cell on two
    lines and cut its titles to `work…`, `inte…`; the GPU table folded `w0,w1,…,w` /
    `18,w19` mid-name. The figures go on in a second table, each naming its rows, and
    workers one after another are a range."""
    from tui.report import phase_table, worker_ranges

    assert worker_ranges(list(range(20))) == "w0–w19"
    assert worker_ranges([0, 1, 2, 5, 7, 8, 9]) == "w0–w2,w5,w7–w9"
    assert worker_ranges([3, 4]) == "w3,w4" and worker_ranges([]) == ""
    _, data = simulate(SimConfig(seed=15, proofs=6, gpus=2, gw=20, stdout="plain"))
    model = build(data)
    assert len(model.workers) == 40
    narrow = Console(width=80, file=io.StringIO(), record=True)
    narrow.print(phase_table(model))
    lines = narrow.export_text().splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80 and "…" not in "".join(lines)
    heads = [line.split() for line in lines if line.split()[:2] == ["worker", "GPU"]]
    assert len(heads) >= 2  # the figures in two tables or more, each naming its rows
    for w in model.workers:  # each worker once in each table, on one line
        assert sum(line.split()[:1] == [f"w{w.worker}"] for line in lines) == len(heads)
    wide = Console(width=10_000, file=io.StringIO(), record=True)
    wide.print(phase_table(model))
    assert (
        sum(line.split()[:2] == ["worker", "GPU"] for line in wide.export_text().splitlines()) == 1
    )


async def test_a_host_s_long_name_leaves_the_figures_room() -> None:
    """A host whose file name is 90 characters: its GPU label made the worker/GPU columns,
    which stay, wider than the window, and no figure could be scrolled into view."""
    from parsers.hosts import merge

    _, data = simulate(SimConfig(seed=15, proofs=4, gpus=1, gw=6, stdout="plain"))
    one = build(data)
    name = "a-very-long-host-name-for-a-gpu-server-in-rack-17-row-3-datacenter-west-and-more.log"
    both = merge([one, one], [name, "b.log"]).model
    assert len(both.workers) > 5  # a row per worker: worker, GPU label, figures
    app = make_app(both, LineReader(data=b""))
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await _opened(app, pilot)
        names = screen.query_one("#workers-names", Static)
        wide = screen.query_one("#workers-wide", HorizontalScroll)
        assert names.region.width <= (80 - 8) // 2 and wide.region.width >= 20
        assert "…" in _shown(screen, "names") and "pre-lock" in _shown(screen, "table-head")


def test_where_a_gpu_s_kernel_is_an_estimate_its_workers_kernel_says_what_it_is() -> None:
    """Half the C++ lines lost: the busy split said kernel ≈40.4 s, the workers' kernel 3.4 s
    and 0.7 s, with nothing to tell the two apart. Under the workers' table a note says
    theirs is the time the lines place, the GPU's an estimate; none where it is not."""
    from cuzksim.logs import lose_lines
    from tui.report import PLACED_KERNEL, worker_notes

    _, data = simulate(SimConfig(seed=2, proofs=8, gpus=3, gw=2, stdout="plain"))
    lost = build(lose_lines(data, "cpp", 0.5, seed=1))
    assert all(g.kernel_is_estimate for g in lost.gpus)
    notes = [note.plain for note in worker_notes(lost)]
    assert any(PLACED_KERNEL.split("{gpus}")[1] in note for note in notes), notes
    assert any("kernel (every GPU): " in note for note in notes)  # all three: not listed
    whole = build(data)
    assert not any(g.kernel_is_estimate for g in whole.gpus) and worker_notes(whole) == []


def test_a_worker_whose_engine_prints_no_lock_line_has_no_wait_of_0() -> None:
    """The p9 engine: the worker table read `pre-lock 0ms 0.0%`, `lock wait 0ms 0.0%` while
    the truth has ~30 % of its busy time before the lock (in unknown here). The cells are
    `–`, and a note says why; a current engine's are figures."""
    from parsers.load import read_log
    from tui.report import NO_LOCK_LINE, phase_cells, worker_notes

    old = read_log(SAMPLES / "p9-c6.log")
    _, rows, _ = phase_cells(old)
    cells = {row[0]: row[1:] for row in rows}
    assert cells["pre-lock"] == cells["lock wait"] == ["–"] * len(old.workers)
    assert cells["kernel"][0] != "–"
    said = [note.plain.strip() for note in worker_notes(old)]
    assert NO_LOCK_LINE.format(gpus="GPU0") in said
    current = read_log(SAMPLES / "p12-gw2-merged.log")
    _, rows, _ = phase_cells(current)
    assert all("–" not in row for row in rows)
    assert not any("no lock line" in note.plain for note in worker_notes(current))


def test_a_worker_none_of_whose_intervals_got_a_lock_line_has_no_wait_of_0() -> None:
    """A current engine whose lock lines were lost for one worker's intervals (or begin
    later in the log): that worker's table read `pre-lock 0ms`, `lock wait 0ms` while its
    time before the lock sat in unknown. Its cells are `–`, `null` in the JSON, a note says
    why; a worker some of whose intervals kept theirs has figures, and a note says of how
    many intervals they are."""
    from parsers.load import model_of_bytes
    from parsers.report import report_dict
    from tui.report import LOCK_PARTLY_PLACED, NO_LOCK_PLACED, phase_cells, worker_notes

    _, data = simulate(SimConfig(seed=3, proofs=4, gpus=1, gw=2, stdout="plain"))
    kept, last, w1_starts = [], b"", 0
    for line in data.split(b"\n"):
        if b"GPU_START" in line:
            last = b"worker=0" if b"worker=0" in line else b"worker=1"
            w1_starts += last == b"worker=1"
        # the lock lines after worker 0's starts, and after every other of worker 1's
        if b"pre_lock_cpu_ms" in line and (last == b"worker=0" or w1_starts % 2):
            continue
        kept.append(line)
    model = model_of_bytes(b"\n".join(kept), "lost.log")
    (gpu,) = model.gpus
    assert gpu.lock_printed
    w0, w1 = model.workers
    assert w0.lock_lines == 0 < w1.lock_lines < w1.intervals
    _, rows, _ = phase_cells(model)
    cells = {row[0]: row[1:] for row in rows}
    assert cells["pre-lock"][0] == cells["lock wait"][0] == "–"
    assert "–" not in (cells["pre-lock"][1], cells["lock wait"][1], cells["unknown"][0])
    said = [note.plain.strip() for note in worker_notes(model)]
    assert NO_LOCK_PLACED.format(workers="w0", their="its") in said
    counts = f"w1: {w1.lock_lines} of {w1.intervals}"
    assert LOCK_PARTLY_PLACED.format(counts=counts) in said
    doc = report_dict(model)["workers"]
    assert doc[0]["phases_ms"]["lock_wait"] is None and doc[0]["lock_lines"] == 0
    assert doc[1]["phases_ms"]["lock_wait"] is not None
