"""Screenshots of the views a user sees (review the report before --snapshot-update)."""

from __future__ import annotations

from typing import Any

from conftest import SAMPLES

from parsers.load import read_log
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.gantt import GanttView

SIZE = (120, 36)


def _app(name: str = "curio-mixed") -> CuzkApp:
    path = SAMPLES / f"{name}.log"
    return make_app(read_log(path), LineReader(path=path))


def test_overview(snap_compare: Any) -> None:
    assert snap_compare(_app(), terminal_size=SIZE)


def test_zoomed_in_segments(snap_compare: Any) -> None:
    """Two workers sharing one GPU, zoomed in until each interval shows its phases."""
    app = _app("p12-gw2-merged")
    table = app.model.parts
    # an interval that waited for the lock: its neighbourhood shows every phase
    waited = next(i for i in range(len(table)) if table.get(i).phases_ms["lock_wait"] > 1000)
    part = table.get(waited)
    start, end = part.gpu_start, part.gpu_end
    assert start is not None and end is not None

    async def zoom(pilot: Any) -> None:
        await pilot.pause()  # the first layout fits the whole run; zoom after it
        view = app.query_one(GanttView)
        view.autofit = False  # as a zoom key does: a later layout must not fit the run again
        view.scale = (end - start) / 40
        view.center_on(end)
        await pilot.pause()

    assert snap_compare(app, run_before=zoom, terminal_size=SIZE)


def test_inspector(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["n", "enter"], terminal_size=SIZE)


def test_gap_list(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["g"], terminal_size=SIZE)


def test_help(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["question_mark"], terminal_size=SIZE)


def test_help_small_terminal(snap_compare: Any) -> None:
    assert snap_compare(_app(), press=["question_mark"], terminal_size=(80, 24))


def test_small_terminal(snap_compare: Any) -> None:
    assert snap_compare(_app("p9-c6"), press=["n"], terminal_size=(80, 24))
