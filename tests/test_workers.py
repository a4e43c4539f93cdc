"""`w`: each worker's time in the phases of its GPU intervals, in the viewer as in the text
report, beside the busy split that gives an instant to one phase."""

from __future__ import annotations

import io

from conftest import SAMPLES
from helpers import build
from rich.console import Console
from textual.containers import HorizontalScroll
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
        names = _shown(screen, "names").split()
        assert names[:2] == ["worker", "GPU"] and "w0" in names and "intervals" not in names
        await pilot.press("right", "right")
        await pilot.pause()
        assert wide.scroll_x == 16
        # scrolled, the rows are still named: the worker and GPU columns stay in view
        column = screen.query_one("#workers-names", Static)
        assert column.region.width == workers_parts(early).names_width > 0
        assert screen.region.contains_region(column.region)
        assert wide.region.x >= column.region.right
        text = _shown(screen, "table")
        assert "intervals" in text and " w0 " not in f" {text} "
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


def test_a_log_with_no_worker_says_so() -> None:
    model = build(b"hello\n")
    parts = workers_parts(model)
    assert str(parts.title) == NO_WORKER and parts.figures_width == parts.names_width == 0
