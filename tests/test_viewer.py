"""Pilot tests of the viewer as a user drives it: first fit, states, numbering, find, layout."""

from __future__ import annotations

import gzip
import itertools
import os
import time
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build
from rich.color import Color, ColorSystem
from textual.pilot import Pilot
from textual.widgets import Static

from cuzksim.config import random_config
from cuzksim.logs import simulate
from parsers.breakdown import (
    BUSY_ORDER,
    alloc_unprinted,
    busy_breakdown,
    inferred_phases,
    unmeasured_phases,
)
from parsers.builder import LogBuilder
from parsers.durations import duration
from parsers.hosts import merge
from parsers.load import read_log, read_runs
from parsers.model import PHASE_NAMES, Phase
from parsers.proofs import FoundJob
from parsers.rawlines import LineReader
from parsers.sources import open_log
from tui.app import CuzkApp, make_app
from tui.find import ProofScreen, find_jobs
from tui.follow import FileSource, LiveLog, StreamSource
from tui.gantt import (
    AXIS_ROWS,
    LABEL_WIDTH,
    LIVE_MIN_SPAN_MS,
    MARGIN,
    PAST_END,
    THRESHOLDS_MS,
    GanttView,
)
from tui.gaprows import GapRows
from tui.header import status_text
from tui.inspector import GapDetails, InspectorScreen
from tui.interval import IntervalDetails
from tui.lanes import PHASE_CLASSES, PHASE_GLYPHS, STYLE_IDS
from tui.palettes import PALETTES
from tui.report import NO_TIMELINE
from tui.screens import GapListScreen, HelpScreen

SIZE = (120, 36)
SMALL = (80, 24)
STEPS = 600  # pauses of 50 ms at most while a follower reads (bounded, never asserted on)


def app_for(name: str) -> CuzkApp:
    path = SAMPLES / f"{name}.log"
    return make_app(read_log(path), LineReader(path=path))


def live_app(source: FileSource | StreamSource, follow: bool, path: Path) -> CuzkApp:
    live = LiveLog(source, lambda _: None, follow=follow)
    # a spool is not held open, as launch reads it (removed, its blocks go back at once)
    reader = LineReader(path=path, keep_open=isinstance(source, FileSource))
    return make_app(LogBuilder(source="").snapshot(), reader, live)


def text_of(app: CuzkApp, selector: str) -> str:
    return str(app.query_one(selector, Static).render())


def lane_text(app: CuzkApp) -> list[str]:
    view = app.query_one(GanttView)
    return [view.render_line(y).text for y in range(view.size.height)]


async def until_finished(app: CuzkApp, pilot: object) -> None:
    for _ in range(STEPS):
        if app.input_ended and app.updates:
            return
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("the follower did not finish")


def fits_the_run(view: GanttView) -> bool:
    lo, hi = view.model.time_range
    t1 = view.t0 + view.timeline_width * view.scale
    return view.scale == view.max_scale and view.t0 <= lo and t1 >= hi


# -- the first fit is on the data -----------------------------------------------------


async def test_no_follow_opens_on_the_whole_run(tmp_path: Path) -> None:
    path = SAMPLES / "p12-c15-gw1.log"
    app = live_app(FileSource(path), False, path)
    async with app.run_test(size=SMALL) as pilot:
        await until_finished(app, pilot)
        view = app.query_one(GanttView)
        assert fits_the_run(view)
        assert "FINISHED" in text_of(app, "#summary")
        assert "cell = 50µs" not in text_of(app, "#status")


async def test_the_lanes_end_where_the_scrollbar_begins() -> None:
    # journal-2gpu has more lanes than 80x24 has rows: the scrollbar takes the last cells
    app = app_for("journal-2gpu")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        assert view.show_vertical_scrollbar
        drawn = view.scrollable_content_region.width
        assert view.timeline_width == drawn - LABEL_WIDTH
        assert fits_the_run(view)  # the run's end left of the scrollbar, not under it
        assert {len(view.render_line(y).text) for y in range(view.size.height)} == {drawn}
        # the last axis label whole: a unit ends it
        assert view.render_line(0).text.rstrip()[-1] == "s"
        # fewer lanes (no resize): the scrollbar goes, and the time takes its cells back
        few = read_log(SAMPLES / "p9-c6.log")
        view.set_model(few)
        await pilot.pause()
        assert not view.show_vertical_scrollbar
        assert view.timeline_width == view.size.width - LABEL_WIDTH
        assert fits_the_run(view)
        view.set_model(read_log(SAMPLES / "journal-2gpu.log"))
        await pilot.pause()
        assert view.show_vertical_scrollbar
        assert view.timeline_width == drawn - LABEL_WIDTH
        assert fits_the_run(view)


async def test_a_finished_pipe_shows_the_whole_run(tmp_path: Path) -> None:
    data = (SAMPLES / "curio-mixed.log").read_bytes()
    read_fd, write_fd = os.pipe()
    os.write(write_fd, data[: len(data) // 2])
    source = StreamSource(read_fd)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        for _ in range(STEPS):
            if app.updates:
                break
            await pilot.pause(0.05)
        os.write(write_fd, data[len(data) // 2 :])
        os.close(write_fd)
        await until_finished(app, pilot)
        view = app.query_one(GanttView)
        assert (
            view.model.summary.proofs_completed
            == read_log(SAMPLES / "curio-mixed.log").summary.proofs_completed
        )
        assert fits_the_run(view)
        assert "FINISHED" in text_of(app, "#summary")
    source.close()


# -- threshold and numbering -----------------------------------------------------------


async def test_raising_the_threshold_drops_a_selection_below_it() -> None:
    app = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.press("n", *["right_square_bracket"] * 9)
        assert view.threshold_ms == THRESHOLDS_MS[-1]
        assert view.selected is None
        status = text_of(app, "#status")
        assert "#" not in status and "n: first gap" in status


async def test_the_status_line_and_the_gap_list_number_gaps_alike() -> None:
    app = app_for("curio-mixed")
    ranks = app.model.gaps.ranks()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n")
        view = app.query_one(GanttView)
        assert view.selected is not None
        rank = ranks[view.selected]
        assert f"#{rank} " in text_of(app, "#status")
        await pilot.press("g")
        assert isinstance(app.screen, GapListScreen)
        table = app.screen.query_one(GapRows)
        # row k of the list is gap #k+1, and it is the gap the status line calls that
        assert table.row_cells(rank - 1)[0] == str(rank)
        assert table.gap_at(rank - 1) == view.selected
        assert table.row_cells(0)[0] == "1"


# -- states ----------------------------------------------------------------------------


async def test_the_status_line_keeps_the_zoom_and_drops_a_gap_s_details_first() -> None:
    """At 80 columns the status line was cut at its end, the zoom's `cell = …` first."""
    app = app_for("journal-2gpu")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.press("n", *["plus"] * 6)
        view = app.query_one(GanttView)
        gap = view.selected_gap
        assert gap is not None
        full = status_text(view).plain
        assert f"· {gap.cause}" in full and " at " in full
        for width in range(50, 140):
            said = status_text(view, width).plain
            assert len(said) <= width and said.endswith(f"cell = {duration(view.scale, 'span')}")
            assert (said == full) == (len(full) <= width)
            assert f"#{app.model.gaps.rank_of(view.selected or 0)} " in said
        assert len(full) > SMALL[0] - 2  # this one is cut at 80 columns, not the zoom
        assert text_of(app, "#status") == status_text(view, SMALL[0] - 2).plain


async def test_the_status_line_keeps_the_zoom_with_a_job_found_and_an_interval() -> None:
    """A job found and one of its intervals selected: at 80 columns the line was the
    interval's words, the job's id twice, and no `cell = …`."""
    app = app_for("p12-c15-gw1")
    async with app.run_test(size=SMALL) as pilot:
        view = app.query_one(GanttView)
        job = app.model.proofs[0].job
        await pilot.press("slash", *job[:6], "enter", "escape", "n")
        await pilot.pause()
        assert view.found_jobs and view.selected_part is not None
        full = status_text(view).plain
        assert "(i inspects)" in full and f"job {job[:6]}" in full
        cell = f"cell = {duration(view.scale, 'span')}"
        for width in range(len("gaps ≥ 0 ms: 24 │ ") + len(cell), 140):
            said = status_text(view, width).plain
            assert len(said) <= width and said.endswith(cell), (width, said)
            assert (said == full) == (len(full) <= width)
        assert text_of(app, "#status").endswith(cell)


@pytest.mark.parametrize("follow", [False, True])
async def test_a_view_zoomed_in_pans_at_most_a_share_of_itself_past_the_end(
    follow: bool, tmp_path: Path
) -> None:
    """Zoomed in on the 100-hour log, `right` went on an hour past the run's end (its
    margin), screens of nothing; a followed log the same."""
    path = SAMPLES / "p12-c15-gw1.log"
    app = live_app(FileSource(path), follow, path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot) if not follow else await pilot.pause(1.0)
        view = app.query_one(GanttView)
        await pilot.press("n", *["plus"] * 8)
        view.center_on(view.model.time_range[1])  # at the end, then on past it
        for _ in range(20):
            view.action_pan(1)
        await pilot.pause()
        width_ms = view.timeline_width * view.scale
        lo, hi = view.model.time_range
        assert width_ms < (hi - lo) / 20  # zoomed in well past the run's margin
        end = view.t0 + width_ms
        assert hi <= end <= hi + PAST_END * width_ms + 1e-6
        assert PAST_END * width_ms < (hi - lo) * MARGIN / 2


async def test_a_short_screen_leaves_the_busy_split_out_until_b_asks() -> None:
    """Two logs' four GPUs at 80x24: the header's busy lines (run and view, zoomed in)
    took 14 of 24 rows, and left 3 lanes. The header takes at most a third of the rows:
    the run's split gives way first (zoomed in), then any; `b` shows it whole."""
    names = ["journal-2gpu.log", "curio-mixed.log"]
    model = merge([read_log(SAMPLES / n) for n in names], names).model
    for size in (SMALL, SIZE):
        app = make_app(model, LineReader(path=SAMPLES / names[0]))
        async with app.run_test(size=size) as pilot:
            await pilot.pause()

            def head(app: CuzkApp = app) -> str:
                return text_of(app, "#summary")

            room = size[1] // 3
            if size == SMALL:
                assert "busy" not in head() and head().count("\n") < room
                await pilot.press("b")  # asked for: whole, room or not
                assert head().count("busy:") == 4
                await pilot.press("b")
                assert "busy" not in head()
                await pilot.press("b", "plus")
                assert head().count("busy, run:") == 4 and head().count("busy, view:") == 4
            else:
                assert head().count("busy:") == 4 and head().count("\n") < room
                await pilot.press("plus")  # zoomed in: the view's split, not the run's
                assert head().count("busy, view:") == 4 and "busy, run" not in head()
                assert head().count("\n") < room


def _hour_old(tmp_path: Path) -> Path:
    """tiny.log, last written an hour ago."""
    log = tmp_path / "old.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    hour_ago = time.time() - 3600
    os.utime(log, (hour_ago, hour_ago))
    return log


async def _read(app: CuzkApp, pilot: Pilot[None]) -> None:
    """Until the follower has read the file once."""
    for _ in range(STEPS):
        if app.updates and app.loading is None:
            return
        await pilot.pause(0.05)


async def test_an_old_file_opened_to_follow_is_idle_not_live(tmp_path: Path) -> None:
    log = _hour_old(tmp_path)
    app = live_app(FileSource(log), True, log)
    async with app.run_test(size=SIZE) as pilot:
        await _read(app, pilot)
        header = text_of(app, "#summary")
        assert "IDLE 1h00m" in header or "IDLE 59m" in header
        assert "LIVE" not in header and "PAUSED" not in header
        app.live.halt()  # type: ignore[union-attr]
    app.live.source.close()  # type: ignore[union-attr]


def _now_drawn(app: CuzkApp) -> tuple[bool, bool]:
    """Whether the axis and the legend show the now marker."""
    lines = lane_text(app)
    axis = next(k for k, line in enumerate(lines) if line.startswith("time"))
    return "▼" in lines[axis + 1], "▼ now" in text_of(app, "#legend")


async def test_a_log_quiet_for_a_while_draws_no_now_marker(tmp_path: Path) -> None:
    """Followed, a log idle for an hour drew `▼ now` at its last stamp, an hour before now:
    the GPU looked busy until now. While the log is IDLE there is no now marker, on the
    axis or in the legend; once it grows again (its time changes) the marker is back."""
    log = _hour_old(tmp_path)
    app = live_app(FileSource(log), True, log)
    async with app.run_test(size=SIZE) as pilot:
        await _read(app, pilot)
        app.gantt.fit()  # the whole log: its last stamp in view
        await pilot.pause()
        assert "IDLE" in text_of(app, "#summary")
        assert _now_drawn(app) == (False, False)
        os.utime(log)  # written to just now
        app._refresh_text()  # the header's clock, each second
        await pilot.pause()
        assert "LIVE" in text_of(app, "#summary")
        assert _now_drawn(app) == (True, True)
        app.live.halt()  # type: ignore[union-attr]
    app.live.source.close()  # type: ignore[union-attr]


async def test_a_writer_that_is_done_makes_the_log_finished(tmp_path: Path) -> None:
    log = tmp_path / "demo.log"
    log.write_bytes((SAMPLES / "tiny.log").read_bytes())
    live = LiveLog(FileSource(log), lambda _: None, ended=lambda: True)
    app = make_app(LogBuilder(source="").snapshot(), LineReader(path=log), live)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        assert "FINISHED" in text_of(app, "#summary")
        assert app.model.finished and app.model.counts.timeline > 0
    live.source.close()


# -- screenshot ------------------------------------------------------------------------


async def test_screenshot_goes_to_the_chosen_folder_and_says_where(tmp_path: Path) -> None:
    path = SAMPLES / "tiny.log"
    app = make_app(read_log(path), LineReader(path=path), screenshot_dir=tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        command = next(c for c in app.get_system_commands(app.screen) if c.title == "Screenshot")
        command.callback()
        for _ in range(STEPS):
            if list(tmp_path.glob("*.svg")):
                break
            await pilot.pause(0.05)
        saved = list(tmp_path.glob("*.svg"))
        assert len(saved) == 1
        # the name whole on a line of its own (a toast wraps a long path anywhere)
        said = f"saved {saved[0].name}\nin {saved[0].resolve().parent}"
        assert any(said == str(n.message) for n in app._notifications)


# -- where the busy time went ---------------------------------------------------------


def test_the_busy_split_adds_up_to_the_timeline_busy_time() -> None:
    for name in ("p12-c15-gw1", "p12-gw2-merged", "curio-mixed"):
        model = read_log(SAMPLES / f"{name}.log")
        split = busy_breakdown(model)
        for g in model.gpus:
            b = split[g.gpu]
            assert abs(sum(b.phase_ms.values()) - b.busy_ms) < 1e-6
            assert abs(b.busy_ms - g.busy_ms) <= 0.01 * g.busy_ms, name
            # kernel time first: the split's kernel is the GPU's kernel union
            assert abs(b.phase_ms[Phase.KERNEL] - g.kernel_busy_ms) < 1.0, name


async def test_the_header_splits_busy_time_for_the_run_and_the_view() -> None:
    app = app_for("p12-gw2-merged")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        header = text_of(app, "#summary")
        assert "\n  busy:" in header and "view" not in header
        assert "of span: TIMELINE" in header
        for name in ("kernel", "barrier", "cleanup", "lock wait", "alloc", "pre-lock", "unknown"):
            assert name in header
        await pilot.press("plus", "plus")
        header = text_of(app, "#summary")
        assert "\n  busy, run:" in header and "\n  busy, view:" in header
        await pilot.press("b")
        assert "barrier" not in text_of(app, "#summary")


async def test_the_busy_split_s_notice_goes_when_a_screen_opens_over_the_view() -> None:
    """`b`'s notice says what the header's shares are of; it stayed over the inspector that
    `enter` opened a few seconds later. A warning stays: it is no notice about the view."""
    app = app_for("p12-gw2-merged")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("b", "b")
        await pilot.pause()
        assert app.show_breakdown
        assert [n.title for n in app._notifications] == ["busy split"]
        app.notify("a warning", severity="warning")
        await pilot.press("n", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        assert [n.title for n in app._notifications] == [""]
        await pilot.press("escape", "b", "b")
        await pilot.pause()
        assert "busy split" in [n.title for n in app._notifications]  # asked again: said again
    wide = app_for("p12-gw2-merged")
    async with wide.run_test(size=(CuzkApp.SIDE_MIN_WIDTH, 40)) as pilot:
        await pilot.pause()
        await pilot.press("b", "b")
        await pilot.pause()
        assert [n.title for n in wide._notifications] == ["busy split"]
        await pilot.press("n", "enter")  # the inspector opens beside the Gantt, where notices go
        await pilot.pause()
        assert wide.query_one("#side").has_class("-open")
        assert list(wide._notifications) == []


async def test_the_view_s_split_is_of_the_time_the_lanes_show(tmp_path: Path) -> None:
    """Zoomed, the header grows by a `busy, view:` line per GPU; the lanes, shorter, took a
    scrollbar and two cells less width, and the split stayed that of the wider window (seed
    5550009, 3 GPUs: GPU2 barrier 30 % shown, 31 % drawn)."""
    _, data = simulate(random_config(5550009))
    path = tmp_path / "run.log"
    path.write_bytes(data)
    model = read_log(path)
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        wide = app.gantt.timeline_width
        await pilot.press("plus")
        await pilot.pause()
        gantt = app.gantt
        assert gantt.timeline_width < wide  # the scrollbar came
        split = busy_breakdown(model, gantt.t0, gantt.t0 + gantt.timeline_width * gantt.scale)
        lines = [x for x in text_of(app, "#summary").splitlines() if "busy, view:" in x]
        assert len(lines) == len(model.gpus)
        unprinted = alloc_unprinted(model)  # an inferred phase is marked an estimate
        for g, line in zip(model.gpus, lines, strict=True):
            b = split[g.gpu]
            for phase in BUSY_ORDER:
                name = PHASE_NAMES[phase]
                if f" {name} " in line and phase in unmeasured_phases(g):
                    assert f" {name} –" in line, (name, line)  # not measured: never 0 %
                elif f" {name} " in line:
                    about = "≈" if phase in inferred_phases(g, unprinted) else ""
                    assert f" {name} {about}{100 * b.share(phase):.0f}%" in line, (name, line)


async def test_the_busy_split_of_a_log_without_gpu_intervals_says_why_there_is_none() -> None:
    path = SAMPLES / "real" / "monolithic-merged.log"  # the pipeline disabled: no TIMELINE
    app = make_app(read_log(path), LineReader(path=path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        shown = app.show_breakdown
        for _ in range(2):
            await pilot.press("b")
            assert app.show_breakdown == shown  # nothing to show or hide
        said = [str(n.message) for n in app._notifications]
        assert said and all(m.startswith("no busy time to split: no TIMELINE lines") for m in said)
        assert not any("share" in m for m in said)
        # no gap to step to: the status line does not offer one
        status = text_of(app, "#status")
        assert "gaps ≥ 0 ms: 0" in status and "n: first gap" not in status


# -- the busy lane is shaded by its idle share ------------------------------------------


async def test_a_mostly_busy_gpu_does_not_look_red() -> None:
    app = app_for("p12-c15-gw1")  # 94 % TIMELINE busy
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        row = next(i for i, r in enumerate(view.rows) if r.kind == "busy")
        chars, styles = view._drawing.row_cells(view.rows[row], view._window(view.size.width))
        drawn = styles != 0
        red = (styles == STYLE_IDS["gantt--gap"]).sum()
        assert red < 0.15 * drawn.sum()
        # every glyph of the lane is in the legend
        legend = text_of(app, "#legend")
        # (the legend's heights `█▆▄▂▁` stand for the levels between them: `▇▅▃`)
        assert set("".join(chars.tolist())) - {" "} <= set(legend) | set("▏▎▍▌▋▊▉▐▕▇▅▃")


# -- 80x24 ----------------------------------------------------------------------------


async def test_at_80_columns_the_footer_shows_quit_help_and_gaps() -> None:
    app = app_for("p9-c6")
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        svg = app.export_screenshot()
        for word in ("Quit", "Help", "Gaps", "Next", "Find"):
            assert word in svg, word


async def test_the_header_never_wraps() -> None:
    app = app_for("curio-mixed")
    async with app.run_test(size=SMALL) as pilot:
        app.status = "log was truncated — new run, and a long explanation that goes on"
        app._refresh_text()
        await pilot.pause()
        summary = app.query_one("#summary", Static)
        lines = str(summary.render()).count("\n") + 1
        assert summary.size.height == lines


@pytest.mark.parametrize("size", [SMALL, SIZE])
async def test_the_gap_list_fits_and_cuts_ids_in_the_middle(size: tuple[int, int]) -> None:
    app = app_for("p12-c15-gw1")
    async with app.run_test(size=size) as pilot:
        await pilot.press("g")
        await pilot.pause()
        table = app.screen.query_one(GapRows)
        line = table.render_line(1).text  # the first row, under the titles
        assert table.row_cells(0)[7] in line  # the after column is not cut
        before = table.row_cells(0)[6]
        job = app.model.gaps[table.gap_at(0)]
        head, _, tail = before.split(" w")[0].partition("…")
        assert job.before.job.startswith(head) and job.before.job.endswith(tail)
        assert len(head) >= 4 and len(tail) >= 3


# -- stepping while inspecting ------------------------------------------------------------


async def test_n_steps_inside_the_inspector_and_q_quits_from_it() -> None:
    app = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.press("n", "enter")
        assert isinstance(app.screen, InspectorScreen)
        scale = view.scale
        await pilot.press("n")
        assert isinstance(app.screen, InspectorScreen)
        assert view.selected == 1
        facts = str(app.screen.query_one("#gap-facts", Static).content)
        gap = app.model.gaps[1]
        assert f"by time 2 of {len(app.model.gaps)}" in facts
        assert f"GPU {gap.gpu} idle from" in facts
        if gap.duration_ms < 0.8 * view.timeline_width * scale:
            assert view.scale == scale  # the zoom stays when the gap fits
        await pilot.press("N")
        assert view.selected == 0
        await pilot.press("q")
    assert app.return_code == 0 and not app.is_running


async def test_on_a_wide_terminal_the_inspector_opens_beside_the_gantt() -> None:
    app = app_for("p9-c6")
    async with app.run_test(size=(170, 40)) as pilot:
        await pilot.press("n", "enter")
        assert not isinstance(app.screen, InspectorScreen)
        side = app.query_one("#side")
        assert side.has_class("-open") and side.size.width > 40
        view = app.query_one(GanttView)
        assert view.size.width < 130  # the Gantt stays in view beside it
        await pilot.press("n")
        facts = str(app.query_one("#gap-facts", Static).content)
        assert f"by time 2 of {len(app.model.gaps)}" in facts
        # escape closes it as it closes the one over the Gantt: the gap stays selected (it
        # was dropped with it); the next escape drops the selection
        selected = view.selected
        await pilot.press("escape")
        assert not side.has_class("-open") and view.selected == selected is not None
        await pilot.press("escape")
        assert view.selected is None


async def test_widened_the_inspector_over_the_gantt_goes_beside_it() -> None:
    """The inspector opened over the Gantt on a narrow terminal, then the terminal widened
    to SIDE_MIN_WIDTH: it goes beside the Gantt, on the same gap (it stayed over it)."""
    app = app_for("p9-c6")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("n", "n", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        view = app.query_one(GanttView)
        gap = view.selected_gap
        await pilot.resize_terminal(170, 40)
        for _ in range(3):
            await pilot.pause()
        side = app.query_one("#side", GapDetails)
        assert not isinstance(app.screen, InspectorScreen)
        assert side.has_class("-open") and side.gap == gap == view.selected_gap
        await pilot.resize_terminal(100, 30)  # and back over it, narrowed again
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen) and app.screen.gap == gap


async def test_the_gap_inspected_beside_the_gantt_stays_in_view() -> None:
    """The last gap (N), inspected on a wide terminal: the Gantt narrowed beside the
    inspector to 0s–2m30s and the gap, at 4m27s, was no longer drawn. The view keeps it."""
    app = app_for("journal-2gpu")
    async with app.run_test(size=(170, 40)) as pilot:
        await pilot.press("N")
        await pilot.pause()
        view = app.query_one(GanttView)
        gap = view.selected_gap
        assert gap is not None

        def shown() -> bool:
            assert gap is not None
            return view.t0 <= gap.start and gap.end <= view.t0 + view.timeline_width * view.scale

        assert shown()
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one("#side").has_class("-open") and view.size.width < 130
        assert view.selected_gap == gap and shown()


async def test_narrowed_the_inspector_beside_the_gantt_goes_over_it() -> None:
    """The inspector opened beside the Gantt on a wide terminal, then the terminal narrowed
    below SIDE_MIN_WIDTH: it is the one over the Gantt now, on the same gap (it had stayed
    beside it, at 45 % of the narrow screen)."""
    app = app_for("p9-c6")
    async with app.run_test(size=(170, 40)) as pilot:
        await pilot.press("n", "n", "enter")
        side = app.query_one("#side")
        assert side.has_class("-open")
        view = app.query_one(GanttView)
        gap = view.selected_gap
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        assert not side.has_class("-open")
        assert isinstance(app.screen, InspectorScreen) and app.screen.gap == gap
        await pilot.press("escape")
        await pilot.resize_terminal(170, 40)  # wide again: nothing opens by itself
        await pilot.pause()
        assert not isinstance(app.screen, InspectorScreen) and not side.has_class("-open")
        # narrowed with another window over the side inspector: it goes over the Gantt once
        # that window has closed (it had been closed, and nothing opened)
        await pilot.press("enter")
        assert side.has_class("-open")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.resize_terminal(100, 30)
        await pilot.pause()
        await pilot.press("escape")
        for _ in range(3):
            await pilot.pause()
        assert not side.has_class("-open")
        assert isinstance(app.screen, InspectorScreen) and app.screen.gap == gap


# -- finding a job --------------------------------------------------------------------------


def test_find_matches_an_id_a_prefix_or_a_sector_number() -> None:
    model = read_log(SAMPLES / "curio-mixed.log")
    assert find_jobs(model, "porep-1000-10") == (FoundJob("porep-1000-10"),)
    assert FoundJob("porep-1000-10") in find_jobs(model, "porep")
    # a sector number is a whole token
    assert find_jobs(model, "10") == (FoundJob("porep-1000-10"),)
    assert find_jobs(model, "nothing-like-it") == ()
    # a part of an id anywhere in it, case aside: `porep` finds `ps-porep-…`
    jobs = [p.job for p in model.proofs]
    inside = find_jobs(model, "1000-1")
    assert inside and all("1000-1" in f.job for f in inside)
    assert {f.job for f in find_jobs(model, "OREP")} == {j for j in jobs if "orep" in j.lower()}


async def test_slash_finds_a_job_highlights_it_and_shows_its_proof() -> None:
    app = app_for("curio-mixed")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("slash", *"porep", "enter")
        assert isinstance(app.screen, ProofScreen)
        view = app.query_one(GanttView)
        matches = find_jobs(app.model, "porep")
        assert view.found_jobs == matches and len(matches) > 1
        facts = str(app.screen.query_one("#proof-facts", Static).render())
        del facts
        first = matches[0]
        await pilot.press("n")
        assert view.found_index == 1
        await pilot.press("N")
        assert view.found_index == 0
        await pilot.press("escape")
        # its partitions are highlighted on its worker lanes and on the proofs row
        found_bg = view.get_component_rich_style("gantt--found").bgcolor
        rows = [
            view.render_line(AXIS_ROWS + i)
            for i, r in enumerate(view.rows)
            if r.kind in ("worker", "proofs")
        ]
        assert any(seg.style and seg.style.bgcolor == found_bg for strip in rows for seg in strip)
        assert first.job.split("-")[-1] in text_of(app, "#status")
        await pilot.press("escape")
        assert view.found_jobs == ()


def test_the_proofs_rows_mark_the_found_jobs_proofs_and_no_others() -> None:
    """A found job's proofs are marked on the proofs rows, read from the proofs' columns:
    the marked proofs are those named, and drawing makes no proof object."""
    import numpy as np

    from parsers.model import ProofList
    from tui.lanes import LaneDrawing, Window

    model = read_log(SAMPLES / "curio-mixed.log")
    assert isinstance(model.proofs, ProofList) and model.proofs._made is None
    drawing = LaneDrawing(model)
    names = [model.proofs.table.jobs[j] for j in model.proofs.table.job.tolist()]
    jobs = frozenset(FoundJob(n) for n in names[::3])
    drawing.set_found(np.zeros(0, dtype=np.int64), jobs)
    t0, t1 = np.nanmin(drawing.proof_starts), np.nanmax(drawing.proof_ends)
    w = Window(float(t0), float(t1 - t0) / 400 + 1, 400, 0, None)
    rows = 0
    for spec in drawing.rows:
        if spec.kind != "proofs":
            continue
        # the cells marked are those of the row's proofs of the jobs found, each alone
        want = np.zeros(w.width, dtype=bool)
        for i in drawing.proof_rows[spec.lane].tolist():
            if FoundJob(names[i]) in jobs:
                alone = LaneDrawing(model)
                alone.set_found(np.zeros(0, dtype=np.int64), frozenset([FoundJob(names[i])]))
                want |= alone._found_cells(spec, w)
        got = drawing._found_cells(spec, w)
        assert got.tolist() == want.tolist()
        rows += bool(got.any())
    assert rows >= 1
    assert model.proofs._made is None


# -- colours ---------------------------------------------------------------------------------


def _lab(hex_colour: str, deuteranope: bool) -> tuple[float, float, float]:
    def lin(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = (lin(int(hex_colour[i : i + 2], 16)) for i in (1, 3, 5))
    if deuteranope:  # Machado et al. 2009, severity 1
        r, g, b = (
            0.367322 * r + 0.860646 * g - 0.227968 * b,
            0.280085 * r + 0.672501 * g + 0.047413 * b,
            -0.011820 * r + 0.042940 * g + 0.968881 * b,
        )
        r, g, b = (min(max(c, 0.0), 1.0) for c in (r, g, b))
    x = (0.4124 * r + 0.3576 * g + 0.1805 * b) / 0.95047
    y = 0.2126 * r + 0.7152 * g + 0.0722 * b
    z = (0.0193 * r + 0.1192 * g + 0.9505 * b) / 1.08883

    def f(t: float) -> float:
        return t ** (1 / 3) if t > 0.008856 else 7.787 * t + 16 / 116

    return 116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))


def _delta_e(a: str, b: str, deuteranope: bool) -> float:
    la, lb = _lab(a, deuteranope), _lab(b, deuteranope)
    return float(sum((p - q) ** 2 for p, q in zip(la, lb, strict=True)) ** 0.5)


def test_phases_differ_by_glyph_and_in_16_colours() -> None:
    assert len(set(PHASE_GLYPHS.values())) == len(PHASE_GLYPHS)
    for name, palette in PALETTES.items():
        phases = [palette[PHASE_CLASSES[p]] for p in Phase]
        ansi = {Color.parse(c).downgrade(ColorSystem.STANDARD).number for c in phases}
        assert len(ansi) == len(phases), name


def test_the_okabe_ito_palette_keeps_phases_apart_with_deuteranopia() -> None:
    palette = PALETTES["okabe-ito"]
    phases = [palette[PHASE_CLASSES[p]] for p in Phase]
    worst = min(_delta_e(a, b, True) for a, b in itertools.combinations(phases, 2))
    assert worst >= 12
    kernel = palette["gantt--kernel"]
    for other in ("gantt--lock-wait", "gantt--alloc"):
        assert _delta_e(kernel, palette[other], True) >= 30


async def test_the_palette_option_recolours_the_gantt() -> None:
    path = SAMPLES / "tiny.log"
    app = make_app(read_log(path), LineReader(path=path), palette="okabe-ito")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        colour = view.get_component_rich_style("gantt--kernel").color
        assert colour is not None and colour.triplet is not None
        assert colour.triplet.hex == PALETTES["okabe-ito"]["gantt--kernel"]


# -- compressed and foreign files -------------------------------------------------


async def test_the_viewer_reads_a_gzip_log_to_its_end(tmp_path: Path) -> None:
    gz = tmp_path / "daemon.log.gz"
    gz.write_bytes(gzip.compress((SAMPLES / "curio-mixed.log").read_bytes()))
    source = StreamSource(open_log(gz), name=gz.name)
    app = live_app(source, True, source.spool_path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        plain = read_log(SAMPLES / "curio-mixed.log")
        assert app.model.summary == plain.summary
        assert "FINISHED" in text_of(app, "#summary")
        await pilot.press("n", "enter")  # raw lines come from the decompressed spool
        raw = str(app.screen.query_one("#gap-raw", Static).content)
        assert "GPU_END" in raw
    source.close()


async def test_a_file_without_timeline_lines_says_so_in_place_of_the_gantt(
    tmp_path: Path,
) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("hello\nworld\n")
    app = live_app(FileSource(notes), False, notes)
    async with app.run_test(size=SMALL) as pilot:
        await until_finished(app, pilot)
        await pilot.pause()
        assert NO_TIMELINE in "\n".join(lane_text(app))
    app.live.source.close()  # type: ignore[union-attr]


# -- the README ---------------------------------------------------------------------------


def test_the_readme_lists_every_module_and_its_definitions_are_in_the_repo() -> None:
    root = Path(__file__).parent.parent
    readme = (root / "README.md").read_text()
    for package in ("parsers", "tui", "cuzksim"):
        for module in (root / package).glob("*.py"):
            if module.name != "__init__.py":
                assert f"`{module.name}`" in readme, module
    assert "ANALYSIS.md" not in readme and (root / "docs" / "analysis.md").is_file()
    assert "kernel_util_range" in (root / "docs" / "analysis.md").read_text()
    assert "python3 -m venv" in readme.split("```")[1] and "3.11" in readme


async def test_a_log_cut_while_proofs_run_ends_with_them_running_not_failed(
    tmp_path: Path,
) -> None:
    """Read once (`--no-follow`), a log that ends while partitions are on the GPU: nothing
    says they failed (the log may have been cut while they ran), so they are running when
    the log ends: `+N running` in the header, the proofs under way drawn ▶, not ✗, the
    legend naming ▶ and ▸, the inspector saying so. Had the daemon restarted after them
    (a second run follows), they failed, and their proofs are ✗."""
    from parsers.proofs import failed_proofs
    from parsers.report import report_dict
    from tui.interval import describe_interval
    from tui.report import running_lines

    lines = (SAMPLES / "curio-mixed.log").read_bytes().splitlines(keepends=True)
    cut = b"".join(lines[: len(lines) * 2 // 3])
    path = tmp_path / "cut.log"
    path.write_bytes(cut)
    app = live_app(FileSource(path), False, path)
    async with app.run_test(size=SIZE) as pilot:
        await until_finished(app, pilot)
        await pilot.pause()
        model = app.model
        assert model.finished
        t = model.parts
        open_ = np.flatnonzero(~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed)
        assert len(open_) == sum(g.in_flight for g in model.gpus) > 0
        assert "running" in text_of(app, "#summary")
        legend = text_of(app, "#legend")
        assert "▶ running" in legend and "▸ running" in legend and "▼ now" not in legend
        under_way = [
            p.job
            for p, f in zip(model.proofs, failed_proofs(model), strict=True)
            if not p.completed and not f
        ]
        assert under_way
        text = "\n".join(lane_text(app))
        assert "▶" in text
        said = describe_interval(model, int(open_[0])).plain
        assert "none: running when the log ends" in said
        # the report and the JSON say as much as the header
        doc = report_dict(model)["gpus"]
        assert [g["running"] for g in doc] == [g.in_flight for g in model.gpus]
        (line,) = running_lines(model)
        each = ", ".join(f"GPU{g.gpu} {g.in_flight}" for g in model.gpus if g.in_flight)
        assert f"intervals running when the log ends: {each} " in str(line)
    app.live.source.close()  # type: ignore[union-attr]
    # the daemon restarted after the cut: what was under way failed
    restart = b"2026-03-16T09:40:00.000000Z  INFO cuzk_core::engine: starting cuzk engine\n"
    again = build(cut + restart + (SAMPLES / "tiny.log").read_bytes())
    assert again.run_lines is not None and len(again.run_lines) == 2
    t = again.parts  # the second run's intervals all ended
    assert not (~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed).any()
    stopped = {p.job for p, f in zip(again.proofs, failed_proofs(again), strict=True) if f}
    assert set(under_way) <= stopped
    # ... and so they are beside another log (each run a log of its own), or compared
    restarted = tmp_path / "restarted.log"
    restarted.write_bytes(cut + restart + (SAMPLES / "tiny.log").read_bytes())
    runs = read_runs(restarted)
    beside = merge([*runs, read_log(SAMPLES / "p9-c6.log")], ["r1", "r2", "other"]).model
    drawn = {p.job for p, f in zip(beside.proofs, failed_proofs(beside), strict=True) if f}
    assert set(under_way) <= drawn


async def test_a_prove_begun_on_the_log_s_last_stamp_is_drawn_running(tmp_path: Path) -> None:
    """A log read once that ends on a GPU_START: the prove has no length, and its lane drew
    nothing where the header said `+N running` (it was ✗ when such proves failed). Its cell
    shows ▸."""
    lines = (SAMPLES / "p12-gw2-merged.log").read_bytes().splitlines(keepends=True)
    path = tmp_path / "start.log"
    path.write_bytes(b"".join(lines[:416]))
    model = read_log(path)
    t = model.parts
    lone = np.flatnonzero(
        ~np.isnan(t.gpu_start) & np.isnan(t.gpu_end) & ~t.failed & (t.gpu_start == model.now_ms)
    )
    assert len(lone) == 1
    worker = int(t.worker[lone[0]])
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        rows = [r for r in lane_text(app) if r.startswith(f" w{worker} ")]
        assert len(rows) == 1 and rows[0].rstrip().endswith(PHASE_GLYPHS[Phase.IN_FLIGHT])


async def test_an_empty_log_draws_no_time_scale(tmp_path: Path) -> None:
    """An empty log (a daemon just started) drew an axis of `0ms 1ms 2ms 3ms 4ms`, a now
    marker and `cell = 50µs`: a scale of no time. It draws the axis line alone until the
    log has an interval; then the ticks come."""
    empty = tmp_path / "empty.log"
    empty.write_bytes(b"")
    app = make_app(LogBuilder(source="empty.log").snapshot(), LineReader(path=empty))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        axis = [line for line in lane_text(app) if line.startswith("time")]
        assert axis and not any(c.isdigit() for c in axis[0])
        below = lane_text(app)[lane_text(app).index(axis[0]) + 1]
        assert "▼" not in below and "┴" not in below
        assert "cell =" not in text_of(app, "#status")
    app = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        axis = [line for line in lane_text(app) if line.startswith("time")]
        assert axis and any(c.isdigit() for c in axis[0])
        assert "cell =" in text_of(app, "#status")


async def test_a_daemon_just_begun_is_drawn_over_a_minute_its_synthesis_up_to_now() -> None:
    """A growing log whose first lines are a millisecond apart (a daemon just begun) was
    drawn on a scale of milliseconds, its synthesis across the whole width; each new line
    rescaled it. Under a minute, a growing log is drawn over its first minute, and the
    synthesis under way ends at its last stamp (the log says nothing after it)."""
    lines = (SAMPLES / "tiny.log").read_bytes().splitlines(keepends=True)
    for head in (3, 9):  # one SYNTH_START; then the first GPU_START, 33 s in
        live = LogBuilder(source="tiny.log")
        live.feed(b"".join(lines[:head]))
        model = live.snapshot()
        assert not model.finished
        app = make_app(model, LineReader(path=SAMPLES / "tiny.log"))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            view = app.gantt
            assert view.timeline_width * view.scale >= LIVE_MIN_SPAN_MS == 60_000
            text = lane_text(app)
            synth = next(r for r in text if r.startswith("synth"))[LABEL_WIDTH:]
            now_cell = int((model.now_ms - view.t0) / view.scale)
            axis = next(k for k, r in enumerate(text) if r.startswith("time"))
            assert text[axis + 1][LABEL_WIDTH + now_cell] == "▼"
            assert synth[now_cell + 1 :].strip() == "", synth
            assert (synth[:now_cell].strip() != "") == (head == 9), synth
            assert "1m00s" in text[axis]
            if head == 3:  # the proof, begun in the last cell drawn: under way, not a lone ━
                proofs = next(r for r in text if r.startswith("proofs"))[LABEL_WIDTH:]
                assert proofs.strip() == "▶", proofs
    # a daemon just restarted: its new run's first minute (the view opens on the last run)
    restart = b"2026-03-16T09:40:00.000000Z  INFO cuzk_core::engine: starting cuzk engine\n"
    live = LogBuilder(source="tiny.log")
    live.feed(b"".join(lines) + restart + b"".join(lines[:3]))
    model = live.snapshot()
    assert model.restarted and not model.finished
    app = make_app(model, LineReader(path=SAMPLES / "tiny.log"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.gantt.timeline_width * app.gantt.scale >= LIVE_MIN_SPAN_MS
    # a finished log is fitted to its own span, however short
    app = make_app(read_log(SAMPLES / "tiny.log"), LineReader(path=SAMPLES / "tiny.log"))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        lo, hi = app.model.time_range
        assert app.gantt.timeline_width * app.gantt.scale < (hi - lo) * 1.1


@pytest.mark.parametrize("inspector", ["gap", "interval"])
async def test_arrow_keys_that_come_together_each_scroll_the_details(inspector: str) -> None:
    """Eight ↓ sent at once (a key held down, typed ahead over SSH) moved the inspector's
    details one line: each animated scroll began where the last was still on its way."""
    app = app_for("p12-gw2-merged")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("n", "enter" if inspector == "gap" else "i")
        await pilot.pause()
        details = app.screen.query_one(GapDetails if inspector == "gap" else IntervalDetails)
        assert details.max_scroll_y >= 8  # room to scroll eight lines at 80x24
        for _ in range(8):
            app.screen.action_scroll(1)  # type: ignore[attr-defined]
        assert details.scroll_y == 8
        # `end` lands at once, not over the next second (the screen is not animated)
        details.action_scroll_end()  # as the key calls it, without waiting for the end
        await pilot.pause(0.2)
        assert details.scroll_y == details.max_scroll_y
        await pilot.press("home")
        assert details.scroll_y == 0


def test_the_interval_inspector_counts_a_workers_intervals_as_the_report_does() -> None:
    """The interval inspector said `Interval 2 of 26 of worker 1`, the report `intervals 25`
    for the same worker: one of its intervals failed. It says which are not ended now."""
    from tui.interval import describe_interval, worker_intervals

    model = read_log(SAMPLES / "journal-2gpu.log")
    t = model.parts
    failed = np.flatnonzero(t.failed & ~np.isnan(t.gpu_start))
    assert len(failed)
    checked = 0
    for w in model.workers:
        rows = np.flatnonzero((t.worker == w.worker) & (t.gpu == w.gpu))
        started = rows[~np.isnan(t.gpu_start[rows])]
        if not len(started):
            continue
        order = worker_intervals(model, int(started[0]))
        head = describe_interval(model, int(started[0])).plain.splitlines()[0]
        lost = int(np.sum(t.failed[order] & np.isnan(t.gpu_end[order])))
        assert len(order) == w.intervals + lost, (w, head)
        assert head.endswith(f"(by GPU_START; {lost} failed)" if lost else "(by GPU_START)")
        checked += lost
    assert checked == len(failed)


async def test_a_short_notice_covers_no_more_of_the_status_line_than_it_needs() -> None:
    """`r` of several logs says `log 1 of 2: prover-east-01.log`: its toast was 60 cells
    wide at 80 columns, over the status line and the legend. A notice is as wide as its
    text; a long one still takes up to three quarters of the screen (a file's name whole)."""
    from textual.widgets._toast import Toast

    app = app_for("tiny")
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.pause()

        async def toast(message: str) -> Toast:
            app.notify(message)
            await pilot.pause()
            return list(app.screen.query(Toast))[-1]

        said = "log 1 of 2: prover-east-01.log"
        assert (await toast(said)).outer_size.width <= len(said) + 4  # padding and edge
        name = "cuzk-tui-" + "x" * 40 + ".svg"  # as long as a line of it may be
        long = await toast(f"saved {name}\nin /tmp/{'folder/' * 12}")
        # up to three quarters of 80 columns: the name whole on its line (3 lines + padding)
        assert 56 <= long.outer_size.width <= 60 and long.outer_size.height <= 7
