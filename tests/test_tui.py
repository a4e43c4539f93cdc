"""Pilot tests: the keys of the Gantt, the inspector, the gap list, the help screen."""

from __future__ import annotations

from pathlib import Path

from conftest import SAMPLES
from textual.widgets import DataTable, Static

from parsers.builder import LogBuilder
from parsers.model import LogModel
from parsers.rawlines import LineReader
from parsers.report import read_log
from tui.app import CuzkApp, make_app
from tui.gantt import AXIS_ROWS, THRESHOLDS_MS, GanttView
from tui.inspector import InspectorScreen
from tui.screens import GapListScreen, HelpScreen

SIZE = (120, 36)


def app_for(name: str) -> tuple[CuzkApp, LogModel]:
    path = SAMPLES / f"{name}.log"
    model = read_log(path)
    return make_app(model, LineReader(path=path)), model


def screen_text(app: CuzkApp) -> str:
    view = app.query_one(GanttView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


def static_text(widget: Static) -> str:
    return str(widget.render())


async def test_n_then_enter_shows_the_first_gap_as_the_report_lists_it() -> None:
    app, model = app_for("curio-mixed")
    first = model.gaps[0]
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        view = app.query_one(GanttView)
        assert view.selected == 0
        # centred
        mid = view.t0 + view.timeline_width * view.scale / 2
        assert abs(mid - (first.start + first.end) / 2) <= view.scale
        await pilot.press("enter")
        assert isinstance(app.screen, InspectorScreen)
        facts = static_text(app.screen.query_one("#gap-facts", Static))
        assert first.before.job in facts and first.after.job in facts
        assert "crosses proof boundary: yes" in facts
        assert "waiting for synthesis" in facts
        assert (
            f"worker {first.before.worker}" in facts
            and f"partition {first.after.partition}" in facts
        )
        raw = static_text(app.screen.query_one("#gap-raw", Static))
        end_line = model.parts.get(first.before.index).end_line
        assert f"{end_line:>8}  TIMELINE,{first.start},GPU_END," in raw
        await pilot.press("escape")
        assert not isinstance(app.screen, InspectorScreen)


async def test_stepping_respects_the_threshold_and_direction() -> None:
    app, model = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        for _ in range(THRESHOLDS_MS.index(1000)):
            await pilot.press("right_square_bracket")
        assert view.threshold_ms == 1000
        big = [i for i, g in enumerate(model.gaps) if g.duration_ms >= 1000]
        assert 2 <= len(big) < len(model.gaps)
        await pilot.press("n", "n")
        assert view.selected == big[1]
        await pilot.press("N")
        assert view.selected == big[0]
        await pilot.press("left_square_bracket")
        assert view.threshold_ms == 500
        status = static_text(app.query_one("#status", Static))
        assert "gaps ≥ 500 ms" in status
        # N from the first gap stays there
        await pilot.press("N")
        assert view.selected == big[0]


async def test_zoom_pan_fit() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        scale, t0 = view.scale, view.t0
        await pilot.press("plus")
        assert view.scale == scale / 2
        await pilot.press("minus")
        assert view.scale == scale
        await pilot.press("minus", "minus", "minus")
        # zooming out stops at twice the whole run
        lo, hi = view.model.time_range
        assert view.scale == (hi - lo) * 2 / view.timeline_width
        await pilot.press("right")
        assert view.t0 > t0
        await pilot.press("h")
        await pilot.press("h")
        assert view.t0 < t0
        await pilot.press("0")
        assert (view.t0, view.scale) == (t0, scale)


async def test_lanes_and_axis_are_drawn() -> None:
    app, model = app_for("p12-gw2-merged")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = screen_text(app)
        lines = text.splitlines()
        assert lines[0].startswith("time") and "s" in lines[0]
        labels = [line[:10].strip() for line in lines[AXIS_ROWS:]]
        assert labels[:4] == ["gpu0 busy", "gpu0 kern", "w0", "w0'1"] or labels[:3] == [
            "gpu0 busy",
            "gpu0 kern",
            "w0",
        ]
        assert "w1" in labels and "synthesis" not in labels  # the label says its peak
        assert any(label.startswith("synth ≤") for label in labels)
        assert "proofs" in labels
        busy = lines[AXIS_ROWS]
        assert "░" in busy or "▒" in busy  # gaps are marked
        assert "█" in busy
        header = static_text(app.query_one("#summary", Static))
        g = model.gpus[0]
        assert (
            f"{100 * g.timeline_util:.1f} %" in header and f"{100 * g.kernel_util:.1f} %" in header
        )


async def test_zoomed_in_a_worker_lane_shows_every_phase_of_an_interval() -> None:
    app, model = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        part = model.parts.get(0)
        assert part.gpu_start is not None and part.gpu_end is not None
        view.scale = (part.gpu_end - part.gpu_start) / 100
        view.center_on((part.gpu_start + part.gpu_end) / 2)
        await pilot.pause()
        row = next(i for i, r in enumerate(view.rows) if r.kind == "worker")
        strip = view.render_line(AXIS_ROWS + row)
        colours = {
            seg.style.color.name
            for seg in strip
            if seg.style
            and seg.style.color
            and seg.text.strip("█▏▎▍▌▋▊▉▐▕ ") == ""
            and seg.text.strip()
        }
        # pre-lock, alloc, kernel, barrier, cleanup are all distinct and visible
        assert len(colours) >= 5


async def test_gap_list_enter_jumps() -> None:
    app, model = app_for("p12-c15-gw1")
    worst = max(
        range(len(model.gaps)), key=lambda i: (model.gaps[i].duration_ms, -model.gaps[i].start)
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GapListScreen)
        table = app.screen.query_one(DataTable)
        assert table.row_count == len(model.gaps)
        await pilot.press("enter")
        assert not isinstance(app.screen, GapListScreen)
        assert app.query_one(GanttView).selected == worst


async def test_help_lists_every_key_and_escape_closes() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = static_text(app.screen.query_one(Static))
        for key in ("n / N", "] / [", "enter", "escape", "g", "+ / -", "left / right", "0", "q"):
            assert key in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
    assert app.return_code == 0


async def test_enter_without_a_selection_does_not_open() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("enter")
        assert not isinstance(app.screen, InspectorScreen)


async def test_job_ids_and_log_text_are_shown_literally(tmp_path: Path) -> None:
    evil = "[bold red]job[/]"
    log = tmp_path / "evil.log"
    log.write_bytes(
        (
            f"TIMELINE,1,SYNTH_START,{evil},partition=0\n"
            f"TIMELINE,10,GPU_QUEUE,{evil},partition=0\n"
            f"TIMELINE,11,GPU_START,{evil},worker=0,partition=0\n"
            f"TIMELINE,20,GPU_END,{evil},worker=0,partition=0,gpu_ms=9\n"
            "panic: \x1b[31mred[0m text and a bell \x07 [blink]here[/blink]\n"
            "TIMELINE,21,SYNTH_START,[link=x]two[/link],partition=1\n"
            "TIMELINE,30,GPU_QUEUE,[link=x]two[/link],partition=1\n"
            "TIMELINE,35,GPU_START,[link=x]two[/link],worker=0,partition=1\n"
            "TIMELINE,40,GPU_END,[link=x]two[/link],worker=0,partition=1,gpu_ms=5\n"
        ).encode()
    )
    builder = LogBuilder(source="evil.log")
    builder.feed(log.read_bytes())
    app = make_app(builder.build(), LineReader(path=log))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        facts = static_text(app.screen.query_one("#gap-facts", Static))
        assert "[bold red]job[/]" in facts  # markup kept as text
        assert "[link=x]two[/link]" in facts
        raw = static_text(app.screen.query_one("#gap-raw", Static))
        assert "TIMELINE,20,GPU_END,[bold red]job[/],worker=0" in raw
        # control characters made visible, not sent to the terminal
        assert "panic: \u241b[31mred[0m text and a bell \u2407 [blink]here[/blink]" in raw


async def test_command_palette_offers_the_viewer_commands() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        titles = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Next gap", "Gap list", "Fit the whole run", "Raise the gap threshold"):
            assert title in titles
        assert "Follow the end" not in titles  # a finished log does not grow
        titles["Next gap"].callback()
        await pilot.pause()
        assert app.query_one(GanttView).selected == 0
