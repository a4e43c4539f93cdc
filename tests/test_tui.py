"""Pilot tests: the keys of the Gantt, the inspector, the gap list, the help screen."""

from __future__ import annotations

import dataclasses
import itertools
import re
from pathlib import Path

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import build
from textual.binding import Binding
from textual.widgets import Static

from cuzksim.config import SimConfig, random_config
from cuzksim.logs import simulate
from parsers.builder import LogBuilder
from parsers.durations import duration
from parsers.load import read_log
from parsers.model import LogModel
from parsers.proofs import FoundJob
from parsers.rawlines import LineReader
from tui.app import CuzkApp, make_app
from tui.gantt import AXIS_ROWS, GAP_CELLS_MIN, THRESHOLDS_MS, GanttView
from tui.gaprows import GapRows
from tui.inspector import InspectorScreen
from tui.interval import IntervalScreen
from tui.lanes import PHASE_GLYPHS
from tui.prose import Prose
from tui.screens import KEYS, GapListScreen, HelpScreen

SIZE = (120, 36)
# how the help writes a key that is not a plain character
KEY_WORDS = {
    "question_mark": "?",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
    "plus": "+",
    "minus": "-",
    "slash": "/",
    "end": "End",
}


def app_for(name: str) -> tuple[CuzkApp, LogModel]:
    path = SAMPLES / f"{name}.log"
    model = read_log(path)
    return make_app(model, LineReader(path=path)), model


def screen_text(app: CuzkApp) -> str:
    view = app.query_one(GanttView)
    return "\n".join(view.render_line(y).text for y in range(view.size.height))


def static_text(widget: Static) -> str:
    """What a Static says, unwrapped (the inspectors' prose, `tui.prose.Prose`, too)."""
    return str(widget.content)


async def test_n_then_enter_shows_the_first_gap_as_the_report_lists_it() -> None:
    app, model = app_for("curio-mixed")
    first = model.gaps[0]
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.press("plus", "plus", "plus", "n")
        assert view.selected == 0
        # centred, at the zoom the user chose
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


async def test_zoom_pan_fit_stay_inside_the_run() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        scale, t0 = view.scale, view.t0
        lo, hi = view.model.time_range
        await pilot.press("plus")
        assert view.scale == scale / 2
        await pilot.press("minus")
        assert view.scale == scale
        await pilot.press(*["minus"] * 5)
        # zooming out stops at the whole run: the axis never shows negative times
        assert view.scale == scale
        assert view.t0 >= lo - (hi - lo) * 0.02
        assert not any(line.lstrip().startswith("-") for line in screen_text(app).split())
        await pilot.press("plus", "plus", *["right"] * 40)
        # panning stops at the end of the run (with a small margin)
        assert view.t0 + view.timeline_width * view.scale <= hi + (hi - lo) * 0.02
        await pilot.press(*["h"] * 40)
        assert view.t0 >= lo - (hi - lo) * 0.02
        await pilot.press("0")
        assert (view.t0, view.scale) == (t0, scale)


async def test_centred_on_the_start_zoomed_in_the_view_shows_no_time_before_0() -> None:
    """Centring a gap near the start zoomed in kept a run-wide margin before it: on a
    100-hour log `g` on a gap 2m42s in read `-5m00s 0s 5m00s`. Before the start the
    margin is now the view's share, as on the whole run."""
    app, model = app_for("p12-gw2-merged")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        lo, _ = model.time_range
        await pilot.press(*["plus"] * 6)
        view.center_on(lo + 1.0)
        await pilot.pause()
        width = view.timeline_width * view.scale
        assert lo - width * 0.02 <= view.t0 < lo
        axis = screen_text(app).splitlines()[0]
        assert not re.search(r"(^|\s)-\d", axis), axis


async def test_a_wider_terminal_never_shows_time_past_the_run() -> None:
    """Once the user moved the view (+, n), a wider terminal keeps the zoom only as far as
    the run allows: the axis used to run past the run's end, a third of the lanes blank."""
    app, _ = app_for("journal-2gpu")
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(GanttView)
        await pilot.press("plus", "n")
        assert not view.autofit
        await pilot.resize_terminal(120, 36)
        await pilot.pause()
        lo, hi = view.model.time_range
        assert view.t0 >= lo - (hi - lo) * 0.02
        assert view.t0 + view.timeline_width * view.scale <= hi + (hi - lo) * 0.02


async def test_zoom_centres_on_the_selection_only_while_it_is_in_view() -> None:
    app, model = app_for("p9-c6")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.press("plus", "plus", "plus", "n")
        gap = model.gaps[0]
        await pilot.press(*["l"] * 9)
        assert view.t0 > gap.end  # panned away from the gap
        centre = view.t0 + view.timeline_width * view.scale / 2
        await pilot.press("plus")
        assert abs(view.t0 + view.timeline_width * view.scale / 2 - centre) <= view.scale
        # escape drops the selection; zoom then keeps the centre too
        await pilot.press("escape")
        assert view.selected is None
        assert "n: first gap" in static_text(app.query_one("#status", Static))
        centre = view.t0 + view.timeline_width * view.scale / 2
        await pilot.press("minus")
        assert abs(view.t0 + view.timeline_width * view.scale / 2 - centre) <= view.scale


async def test_the_axis_labels_its_last_tick_ending_at_it_when_there_is_room() -> None:
    """The last tick often had no label: a label starts at its tick, and near the edge there
    was no room after it. A label with no room after its tick ends at it (its last character
    over the `┴`), where that leaves a space after the label before it."""
    from tui.axis import label_room, ticks
    from tui.lanes import Window

    app, _ = app_for("p12-gw2-merged")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        drawing = app.query_one(GanttView)._drawing
        ended = 0
        for width in (40, 70, 110, 150):
            for scale in (37.0, 250.0, 1_000.0, 4_321.0):
                for t0 in np.linspace(0.0, 200_000.0, 23):
                    w = Window(float(t0), scale, width, 0, None)
                    top = "".join(drawing.axis_cells(0, w)[1])
                    marks = [k for k, ch in enumerate(drawing.axis_cells(1, w)[1]) if ch == "┴"]
                    labels = {m.start(): m.group() for m in re.finditer(r"\S+", top)}
                    for start, label in labels.items():
                        end = start + len(label) - 1
                        at_end = end in marks and end + len(label) > width
                        assert start in marks or at_end, (top, marks)
                        if at_end and start not in marks:
                            ended += 1
                            assert top[max(start - 2, 0) : start] == "  "[:start], top
                    if not marks:
                        continue
                    last, _, text = ticks(w.t0, scale, width)[-1]
                    assert last == marks[-1]
                    if last not in labels and last + 1 - len(text) not in labels:
                        # no room: ending at its tick, it would be within two spaces of the
                        # label before
                        free = [k + label_room(x) for k, x in labels.items() if k < last]
                        assert last + len(text) > width and free
                        assert last + 1 - len(text) <= max(free), (top, marks)
        assert ended > 0


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
        drawn = {
            (ch, seg.style.color.name)
            for seg in strip
            if seg.style and seg.style.color
            for ch in seg.text
            if ch in PHASE_GLYPHS.values()
        }
        # pre-lock, alloc, kernel, barrier, cleanup: each its own colour and its own glyph
        assert len({colour for _, colour in drawn}) >= 5
        assert len({ch for ch, _ in drawn}) >= 5


async def test_gap_list_enter_jumps() -> None:
    app, model = app_for("p12-c15-gw1")
    worst = max(
        range(len(model.gaps)), key=lambda i: (model.gaps[i].duration_ms, -model.gaps[i].start)
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        assert isinstance(app.screen, GapListScreen)
        table = app.screen.query_one(GapRows)
        assert table.row_count == len(model.gaps)
        await pilot.press("enter")
        assert not isinstance(app.screen, GapListScreen)
        assert app.query_one(GanttView).selected == worst


async def test_a_gap_chosen_from_the_list_is_shown_cells_wide() -> None:
    """A gap chosen in the gap list is to be looked at: one narrower than GAP_CELLS_MIN cells
    at the current zoom (a few ms in a whole run's view) is zoomed in on until it is that
    wide, and centred."""
    app, model = app_for("p12-c15-gw1")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.pause()
        shortest = min(range(len(model.gaps)), key=lambda i: model.gaps[i].duration_ms)
        gap = model.gaps[shortest]
        assert gap.duration_ms < view.scale  # under a cell of the run's view
        await pilot.press("g")
        await pilot.press("end", "enter")
        await pilot.pause()
        assert view.selected == shortest
        cells = gap.duration_ms / view.scale
        assert cells >= GAP_CELLS_MIN - 1e-9 or view.scale == view.min_scale
        t1 = view.t0 + view.timeline_width * view.scale
        assert view.t0 <= gap.start and gap.end <= t1


async def test_a_selected_gap_narrower_than_its_cell_is_drawn_as_a_gap() -> None:
    """`n` keeps the zoom: a 2 ms gap in a 4.5 s cell was drawn as its cell's busy bar
    (`▇`, 99 % busy), and the status line named a gap the lane did not show. The cells of
    a selected gap that has no cell to itself show the gap's glyph, in the selection's
    colours."""
    from dataclasses import replace

    from tui.lanes import GAP_GLYPH, STYLE_IDS

    app, model = app_for("p12-c15-gw1")
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(GanttView)
        await pilot.pause()
        shortest = min(range(len(model.gaps)), key=lambda i: model.gaps[i].duration_ms)
        view.select_gap(shortest)  # as n reaches it: the zoom stays
        await pilot.pause()
        gap = model.gaps[shortest]
        assert gap.duration_ms < view.scale / 2
        row = next(i for i, r in enumerate(view.rows) if r.kind == "busy")
        chars, styles = view._drawing.row_cells(view.rows[row], view._window(view.size.width))
        picked = np.flatnonzero(styles == STYLE_IDS["gantt--gap-selected"])
        assert len(picked) >= 1 and all(chars[k] == GAP_GLYPH for k in picked)
        # a gap with cells of its own is drawn as it is unselected (its edges' bars kept)
        longest = max(range(len(model.gaps)), key=lambda i: model.gaps[i].duration_ms)
        view.select_gap(longest, reveal=True)
        await pilot.pause()
        w = view._window(view.size.width)
        chars, styles = view._drawing.row_cells(view.rows[row], w)
        assert (styles == STYLE_IDS["gantt--gap-selected"]).sum() >= 4
        plain, _ = view._drawing.row_cells(view.rows[row], replace(w, selected=None))
        assert chars.tolist() == plain.tolist()


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_help_shows_every_key_readably_and_escape_closes(size: tuple[int, int]) -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=size) as pilot:
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        body = app.screen.query_one("#help-text", Static)
        # the box is as wide as its text allows, and shows it (the bug: an empty 2x2 box)
        assert body.size.width >= min(size[0] - 10, 90) and body.size.height >= 10
        text = "\n".join(strip.text for strip in body.render_lines(body.region.reset_offset))
        for key, _ in KEYS:
            assert key in text
        for binding in (*GanttView.BINDINGS, *CuzkApp.BINDINGS):
            assert isinstance(binding, Binding)
            key = binding.key.split(",")[0]
            assert KEY_WORDS.get(key, key) in text, binding
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        await pilot.press("q")
    assert app.return_code == 0


@pytest.mark.parametrize("width", range(40, 121, 2))
def test_the_help_never_wraps_a_glyph_from_its_word(width: int) -> None:
    """At 80 columns the legend ended a line with `▀` and began the next with `cleanup`;
    `✗` / `failed` came apart at others."""
    from rich.console import Console

    from tui.screens import help_text

    console = Console(width=width, record=True, color_system=None)
    console.print(help_text())
    lines = [line.rstrip() for line in console.export_text().splitlines()]
    assert max(len(line) for line in lines) <= width
    joined = " ".join(" ".join(lines).split())
    for pair in ("▀ cleanup", "✗ failed", "▶ still", "▼ now", "░ idle", "▁…▇ as", "┣ first"):
        # every time it is said it is on one line
        assert sum(line.count(pair) for line in lines) == joined.count(pair) > 0, pair


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
            "\x1b[2K erased\n"
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
        # colour codes drawn as colour; other control characters made visible, not sent
        assert "panic: red[0m text and a bell \u2407 [blink]here[/blink]" in raw
        assert "\u241b[2K erased" in raw
        content = app.screen.query_one("#gap-raw", Static).content
        assert isinstance(content, Prose)  # wrapped under each line's text (tui/prose.py)
        plain = content.text.plain
        coloured = [
            plain[span.start : span.end]
            for span in content.text.spans
            # SGR 31: standard colour 1, red
            if "red" in str(span.style) or "color(1)" in str(span.style)
        ]
        assert any(c.startswith("red") for c in coloured)  # "[0m" without ESC resets nothing


async def test_command_palette_offers_the_viewer_commands() -> None:
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        titles = {c.title: c for c in app.get_system_commands(app.screen)}
        for title in ("Next gap", "Gap list", "Fit the whole run", "Raise the gap threshold"):
            assert title in titles
        assert "Follow the end" not in titles  # a finished log does not grow
        # Textual's key panel (its own keys beside a few of the viewer's) is left out
        assert titles.keys().isdisjoint({"Keys", "Maximize", "Minimize"})
        assert {"Quit", "Theme", "Screenshot"} <= titles.keys()
        titles["Next gap"].callback()
        await pilot.pause()
        assert app.query_one(GanttView).selected == 0


def text_of_widget(rows: GapRows) -> list[str]:
    """The lines the gap rows show now."""
    return [rows.render_line(y).text for y in range(rows.size.height)]


@pytest.mark.parametrize("size", [(80, 24), SIZE])
async def test_the_gap_list_says_when_each_gap_began_days_into_a_run(
    size: tuple[int, int],
) -> None:
    """Days into a run a gap began at `2d 20h54m` or `10d 07h56m`: the "at" column is as
    wide as that, never cut to `2d 20h54`."""
    lines = []
    for k, start in enumerate((1_000, 245_640_000, 891_364_000, 891_400_000)):
        lines.append(f"TIMELINE,{start},GPU_START,j{k},worker=0,partition=0")
        lines.append(f"TIMELINE,{start + 1_000},GPU_END,j{k},worker=0,partition=0,gpu_ms=1")
    builder = LogBuilder(source="days.log")
    builder.feed(("\n".join(lines) + "\n").encode())
    model = builder.build()
    app = make_app(model, LineReader())
    async with app.run_test(size=size) as pilot:
        await pilot.press("g")
        rows = app.screen.query_one(GapRows)
        shown = "\n".join(text_of_widget(rows))
    assert [duration(g.start) for g in model.gaps] == ["2.00 s", "2d 20h14m", "10d 07h36m"]
    for g in model.gaps:
        assert f" {duration(g.start)} " in shown, shown
        assert f" {duration(g.duration_ms)} " in shown, shown  # `7d 11h22m` long


async def test_a_long_gap_list_lists_every_gap_and_opens_at_once() -> None:
    """Tens of thousands of gaps: every one is in the list (rows are made as they come into
    view), longest first; the end of the list is a key away."""
    n = 30_000
    lines = []
    for k in range(n):
        start = 1000 * k
        end = start + 900 - (k % 7)  # gaps of 100..106 ms
        lines.append(f"TIMELINE,{start},GPU_START,j{k},worker=0,partition=0")
        lines.append(f"TIMELINE,{end},GPU_END,j{k},worker=0,partition=0,gpu_ms=1")
    builder = LogBuilder(source="many.log")
    builder.feed(("\n".join(lines) + "\n").encode())
    model = builder.build()
    assert len(model.gaps) == n - 1
    app = make_app(model, LineReader())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("g")
        screen = app.screen
        assert isinstance(screen, GapListScreen)
        rows = screen.query_one(GapRows)
        assert rows.row_count == n - 1
        longest = max(g.duration_ms for g in model.gaps)
        assert model.gaps[rows.gap_at(0)].duration_ms == longest
        title = str(screen.query_one("#gap-list").border_title)
        assert f"{n - 1} gaps" in title
        await pilot.press("end")
        await pilot.pause()
        assert rows.cursor_row == n - 2
        last = model.gaps[rows.gap_at(n - 2)]
        assert last.duration_ms == min(g.duration_ms for g in model.gaps)
        # the last row is on screen, numbered by its rank
        shown = "\n".join(text_of_widget(rows))
        assert f"{n - 1} " in shown
        await pilot.press("enter")
        await pilot.pause()
        assert app.query_one(GanttView).selected == rows.gap_at(n - 2)


async def test_the_header_clock_ticking_after_the_screen_went_is_harmless() -> None:
    """A live log's header clock ticks each second: a tick between the screen's removal and
    the app's end (closing) draws nothing and raises nothing."""
    from textual.css.query import NoMatches

    app, _ = app_for("curio-mixed")
    async with app.run_test(size=SIZE):
        await app.query_one(GanttView).remove()
        with pytest.raises(NoMatches):
            app._refresh_text()  # what the tick drew, unguarded
        app._tick_clock()


async def test_escape_closes_textuals_keys_panel_before_anything_else() -> None:
    app, _ = app_for("p9-c6")
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.press("n")  # a selection, which escape drops when no panel is open
        view = app.query_one(GanttView)
        assert view.selected is not None
        app.action_show_help_panel()  # the palette's "Keys"
        await pilot.pause()
        assert app.screen.query("HelpPanel")
        await pilot.press("escape")
        await pilot.pause()
        assert not app.screen.query("HelpPanel")
        assert view.selected is not None  # the panel went first
        await pilot.press("escape")
        await pilot.pause()
        assert view.selected is None


def test_the_proof_table_is_one_line_a_partition_at_80_columns() -> None:
    """In the proof view at 80x24 (a box ~72 columns inside), every partition is one row
    and no value is cut or wrapped mid-unit."""
    import io

    from rich.console import Console

    from tui.find import describe_proof

    model = read_log(SAMPLES / "p9-c6.log")
    proof = model.proofs[0]
    out = io.StringIO()
    Console(file=out, width=72, color_system=None).print(describe_proof(model, FoundJob(proof.job)))
    lines = out.getvalue().splitlines()
    head = next(k for k, line in enumerate(lines) if line.lstrip().startswith("part"))
    rows = [line for line in lines[head + 2 :] if line.strip()][: proof.partitions]
    assert "…" not in lines[head]
    assert len(rows) == proof.partitions
    for k, row in enumerate(rows):
        assert row.split()[0] == str(k) and "…" not in row, row
        assert all(
            cell[-1] in "sm" or cell == "—" or cell.startswith("w") or cell.isdigit()
            for cell in row.split()
        ), row


def test_the_proof_view_says_running_only_of_a_partition_on_a_gpu() -> None:
    """In a finished log the proof view said `running` in the `on GPU` column of partitions
    that were never on a GPU (synthesized and never queued, or still in synthesis), while
    the proofs lane drew the proof failed. They show `—`; `running` is a growing log's
    partition on a GPU now."""
    import io

    from rich.console import Console

    from tui.find import describe_proof

    def on_gpu(model: LogModel, job: str) -> dict[int, str]:
        out = io.StringIO()
        Console(file=out, width=100, color_system=None).print(describe_proof(model, FoundJob(job)))
        lines = out.getvalue().splitlines()
        head = next(k for k, line in enumerate(lines) if line.lstrip().startswith("part"))
        cells = [line.split() for line in lines[head + 2 :] if line.strip()]
        rows = itertools.takewhile(lambda c: c[0].isdigit(), cells)
        return {int(c[0]): f"{c[-2]} {c[-1]}" for c in rows}

    _, data = simulate(random_config(5550024))
    model = build(data)
    job = next(p.job for p in model.proofs if p.job.startswith("259e364a"))
    t = model.parts
    shown = on_gpu(model, job)
    rows = {t.get(i).partition or 0: t.get(i) for i in range(len(t)) if t.job_of(i) == job}
    never = [k for k, part in rows.items() if part.gpu_start is None and not part.failed]
    assert never and all(shown[k] == "— —" for k in never), shown  # on GPU, kernel
    assert not any("running" in x for x in shown.values())
    # a cut of the log in the middle of an interval: that partition is running
    builder = LogBuilder(source="cut")
    cut = int(min(p.gpu_start + 1 for p in rows.values() if p.gpu_start is not None))
    lines = data.splitlines(True)
    upto = next(k for k, line in enumerate(lines) if _stamp(line) >= cut)
    builder.feed(b"".join(lines[:upto]))
    live = builder.snapshot()
    assert any(x.startswith("running ") for x in on_gpu(live, job).values())


def _stamp(line: bytes) -> int:
    """A TIMELINE line's stamp (others: -1)."""
    return int(line.split(b",")[1]) if line.startswith(b"TIMELINE,") else -1


def test_a_failed_prove_whose_lines_explain_it_ends_in_its_failed_glyph() -> None:
    """A prove that ran its kernels and then failed (seed 5550024, w7 partition 3 of
    259e364a) has phase segments to its end and no failed segment: its worker's row drew it
    as a completed interval, with no ✗, while the kernel lane and the busy split leave it
    out (a failed prove is not busy time). Its last cell is ✗ now; completed intervals end
    in no ✗."""
    from tui.lanes import LaneDrawing, Row, Window

    _, data = simulate(random_config(5550024))
    model = build(data)
    t = model.parts
    drawing = LaneDrawing(model)
    lo, hi = model.time_range
    width = 400
    w = Window(lo, (hi - lo) / width, width, 0, None)
    ends = {True: 0, False: 0}
    for k, lane in enumerate(model.lanes):
        chars, _ = drawing.row_cells(Row("worker", "", lane.gpu, k, lane.sub_row), w)
        seg = lane.segments
        last = np.append(seg.partition[1:] != seg.partition[:-1], True)
        for part, end in zip(seg.partition[last].tolist(), seg.ends[last].tolist(), strict=True):
            cell = int(np.ceil((end - lo) / w.scale)) - 1
            failed = bool(t.failed[part])
            assert (chars[cell] == "✗") == failed, (k, part, chars[cell])
            ends[failed] += 1
    assert ends[True] and ends[False]
    explained = [i for i in np.flatnonzero(t.failed).tolist() if t.get(i).phases_ms["kernel"] > 0]
    assert explained  # the case: a failed prove that ran kernels


def test_a_worker_in_a_failed_prove_is_said_to_be_in_one() -> None:
    """A gap can lie over a failed prove (not busy time); a worker whose failed prove ran
    kernels there was said to be `running kernels`, as if the GPU were busy."""
    from parsers.why import worker_states

    _, data = simulate(random_config(5550024))
    model = build(data)
    t = model.parts
    (i,) = [i for i in np.flatnonzero(t.failed).tolist() if t.get(i).phases_ms["kernel"] > 0]
    part = t.get(i)
    assert part.gpu is not None and part.gpu_start is not None and part.worker is not None
    states = {s.worker: s for s in worker_states(model, part.gpu, part.gpu_start + 3000)}
    said = states[part.worker]
    assert said.state == "running kernels in a failed prove"
    assert (said.job, said.partition) == (part.job, part.partition)
    assert all(
        s.state.endswith("failed prove") == (s.worker == part.worker) for s in states.values()
    )


def test_a_proof_whose_partition_failed_is_drawn_failed_while_the_log_grows() -> None:
    """Following, a proof with a failed partition (its worker moved on without a GPU_END)
    and none under way is drawn ✗, not ▶ running to now; at every cut of the log, a proof
    drawn ✗ never completes later."""
    from parsers.proofs import failed_proofs

    data = (SAMPLES / "journal-2gpu.log").read_bytes()
    done = read_log(SAMPLES / "journal-2gpu.log")
    completed = {p.job for p in done.proofs if p.completed}
    t = done.parts
    with_failed = {t.job_of(i) for i in np.flatnonzero(t.failed).tolist()}
    live = LogBuilder(source="j")
    live.feed(data)
    model = live.snapshot()
    assert not model.finished
    drawn_failed = {p.job for p, f in zip(model.proofs, failed_proofs(model), strict=True) if f}
    assert drawn_failed and drawn_failed == with_failed - completed
    for cut in range(len(data) // 10, len(data), len(data) // 10):
        part = LogBuilder(source="j")
        part.feed(data[: data.rindex(b"\n", 0, cut) + 1])
        m = part.snapshot()
        flagged = {p.job for p, f in zip(m.proofs, failed_proofs(m), strict=True) if f}
        assert not flagged & completed, cut


def test_a_pickup_whose_worker_moved_on_is_drawn_failed_while_the_log_grows() -> None:
    """Following, a partition picked up and never started is failed once its worker picked
    up another (the daemon prints GPU_PICKUP and nothing more for it): its proof is drawn ✗,
    not ▶ running to now for as long as the log grows. Before that it may still start."""
    from parsers.proofs import failed_proofs

    head = [
        "TIMELINE,100,SYNTH_START,job-a,partition=0",
        "TIMELINE,200,SYNTH_END,job-a,partition=0,synth_ms=100",
        "TIMELINE,201,GPU_QUEUE,job-a,partition=0",
        "TIMELINE,210,GPU_PICKUP,job-a,worker=0,partition=0",
        "TIMELINE,300,SYNTH_START,job-b,partition=0",
        "TIMELINE,400,SYNTH_END,job-b,partition=0,synth_ms=100",
        "TIMELINE,401,GPU_QUEUE,job-b,partition=0",
    ]
    rest = [
        "TIMELINE,410,GPU_PICKUP,job-b,worker=0,partition=0",
        "TIMELINE,420,GPU_START,job-b,worker=0,partition=0",
        "TIMELINE,900,GPU_END,job-b,worker=0,partition=0,gpu_ms=480",
    ]

    def drawn_failed(lines: list[str]) -> dict[str, bool]:
        live = LogBuilder(source="t")
        live.feed(("\n".join(lines) + "\n").encode())
        model = live.snapshot()
        assert not model.finished
        return {p.job: bool(f) for p, f in zip(model.proofs, failed_proofs(model), strict=True)}

    assert drawn_failed(head) == {"job-a": False, "job-b": False}  # job-a may still start
    assert drawn_failed(head + rest[:1]) == {"job-a": True, "job-b": False}
    assert drawn_failed(head + rest) == {"job-a": True, "job-b": False}


@pytest.mark.parametrize("size", [(80, 24), SIZE])
@pytest.mark.parametrize("finished", [True, False])
async def test_the_legend_breaks_between_items_and_says_now_only_while_live(
    size: tuple[int, int], finished: bool
) -> None:
    """The legend's lines fit the screen and break between its items, never inside one (at
    80 columns `share` had been left at the end of a line, its glyphs on the next); the now
    marker and running intervals are in it only while the log may grow."""
    path = SAMPLES / "curio-mixed.log"
    if finished:
        model = read_log(path)
    else:
        live = LogBuilder(source=path.name)
        live.feed(path.read_bytes())
        model = live.snapshot()
    assert model.finished == finished
    app = make_app(model, LineReader(path=path))
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        legend = str(app.query_one("#legend", Static).render())
    lines = legend.splitlines()
    assert len(lines) >= 2
    assert all(len(line) <= size[0] - 2 for line in lines), lines
    items = ["▄ pre-lock", "█ kernel", "busy █▆▄▂▁ share", "░ gap", "kern ▁▄█", "┣━┫ proof"]
    for item in [*items, "✗ failed"]:
        assert any(item in line for line in lines), (item, lines)
    assert legend.count("✗ failed") == 1, lines  # the workers' ✗ and the proofs' are one
    assert not any(line.startswith("│") or line.endswith("│") for line in lines), lines
    for item in ("▼ now", "▶ running", "▸ running"):
        assert any(item in line for line in lines) == (not finished), (item, lines)


async def test_the_legend_is_as_tall_as_its_lines_after_a_resize() -> None:
    """Narrowed from 120x36 to 80x24, the legend kept the height of the old text wrapped at
    the new width: a blank line stood above the key bar."""
    app, _ = app_for("tiny")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        for _ in range(3):
            await pilot.pause()
        legend = app.query_one("#legend", Static)
        lines = str(legend.render()).splitlines()
        assert all(len(line) <= 78 for line in lines)
        assert legend.size.height == len(lines), (legend.size.height, lines)


async def test_a_gap_selected_in_the_whole_runs_view_keeps_it_whole_on_a_resize() -> None:
    """`n` at 120x36, then the terminal made 80x24: the view kept the zoom of 120 columns
    and the run's last minutes went out of it, though nobody had zoomed. A view the user
    zoomed keeps its zoom."""
    app, _ = app_for("p12-c15-gw1")
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(GanttView)
        await pilot.pause()
        await pilot.press("n")
        await pilot.pause()
        assert view.selected is not None and not view.is_zoomed
        await pilot.resize_terminal(80, 24)
        for _ in range(3):
            await pilot.pause()
        assert view.selected is not None and not view.is_zoomed
        await pilot.press("plus", "n")
        await pilot.pause()
        scale = view.scale
        await pilot.resize_terminal(100, 30)
        for _ in range(3):
            await pilot.pause()
        assert view.is_zoomed and view.scale == scale


def test_a_terminal_that_cannot_write_the_enter_symbol_gets_the_key_spelled() -> None:
    """With --ascii (or an ASCII locale) the footer's ⏎ was drawn `?`, the help's own key."""
    import io
    from types import SimpleNamespace

    app, _ = app_for("tiny")
    enter = Binding("enter", "inspect", "Inspect")
    assert app.get_key_display(enter) == "⏎"  # no terminal of its own: Textual's symbol
    for encoding, shown in (("ascii", "enter"), ("utf-8", "⏎"), ("latin-1", "enter")):
        screen = io.TextIOWrapper(io.BytesIO(), encoding=encoding)
        app.terminal = SimpleNamespace(screen=screen)  # type: ignore[assignment]
        assert app.get_key_display(enter) == shown
        assert app.get_key_display(Binding("n", "next", "Next")) == "n"


async def test_an_ascii_legend_shows_each_glyph_the_lanes_draw_once() -> None:
    """With --ascii the legend said `> running` twice (a worker's `▸` and a proof's `▶`),
    and its busy sample `#=___` left out the `,` the busy lane draws (`▄`)."""
    import io
    from types import SimpleNamespace

    from tui.ascii_glyphs import ERRORS

    app, _ = app_for("p12-c15-gw1")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        busy_row = next(k for k, row in enumerate(view.rows) if row.kind == "busy")
        lane = view.render_line(AXIS_ROWS + busy_row).text
        drawn = set(lane[10:].encode("ascii", ERRORS).decode()) - {" ", "|"}
        screen = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
        app.terminal = SimpleNamespace(screen=screen)  # type: ignore[assignment]
        app.model = dataclasses.replace(app.model, finished=False)  # under way: `▸`, `▶`
        legend = app.drawn_as(app._legend(200).plain)
    assert legend.count("> running") == 1, legend
    busy = legend.split("busy ", 1)[1].split()[0]
    assert drawn - {"."} <= set(busy), (drawn, busy)  # `.`: the gap, said beside it
    assert "," in busy


def test_signs_an_ascii_terminal_cannot_write_are_spelled_not_stood_in_for() -> None:
    """≤ and ≥ have one-cell stand-ins (< and >) that say another threshold: where the
    output cannot write them they are spelled, before the text is laid out."""
    import subprocess
    import sys

    from tui.ascii_glyphs import spelled
    from tui.gantt import LABEL_WIDTH, synth_label

    assert spelled("gaps ≥ 5 ms", "ascii") == "gaps >= 5 ms"
    assert spelled("gaps ≥ 5 ms", "utf-8") == "gaps ≥ 5 ms"
    assert spelled("gaps ≥ 5 ms", None) == "gaps ≥ 5 ms"
    for peak in (3, 10, 100, 12345):
        for encoding in ("ascii", "utf-8"):
            label = synth_label(peak, encoding)
            assert len(label) < LABEL_WIDTH and label.endswith(str(peak))  # never cut
            assert ("<=" in label) == (encoding == "ascii")
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", str(SAMPLES / "p9-c6.log"), "--report", "--ascii"],
        capture_output=True,
        check=True,
    ).stdout.decode("ascii")
    assert "<50|<=500|>500" in out
    # several hosts: each host's table and the one of every host at once
    out = subprocess.run(
        [sys.executable, "-m", "tui.cli", "--report", "--ascii"]
        + [str(SAMPLES / name) for name in ("p9-c6.log", "journal-2gpu.log")],
        capture_output=True,
        check=True,
    ).stdout.decode("ascii")
    assert out.count("<50|<=500|>500") == 3 and "|<500|" not in out


def test_the_gpu_lines_of_the_header_fit_80_columns_whole() -> None:
    """At 80 columns the GPU line was cut (`+1 ru…`): under 100 columns its figures are
    not padded, and the line, what it is a share of and `+N running` with it, fits."""
    from rich.cells import cell_len

    from parsers.breakdown import whole_run
    from tui.header import header_text
    from tui.replay import demo_bytes

    data = demo_bytes()
    live = LogBuilder(source="demo")
    live.feed(data[: len(data) // 3])
    model = live.snapshot()
    assert all(g.in_flight for g in model.gpus)
    for width in (80, 120):
        lines = header_text(model, "LIVE", whole_run(model), width=width).plain.split("\n")
        gpu_lines = [line for line in lines if line.startswith("GPU")]
        assert len(gpu_lines) == len(model.gpus)
        for line in gpu_lines:
            assert "of span: TIMELINE" in line and line.endswith("running"), line
            assert cell_len(line) + 1 <= width - 1, (width, line)  # the header's own margin


def test_a_narrow_header_keeps_each_gpu_s_name() -> None:
    """At 60 columns the GPU lines read `  of span: TIMELINE 40.7% …` both: the name gave
    way to the figures. The figures' end is cut instead."""
    from parsers.breakdown import whole_run
    from tui.header import header_text

    model = read_log(SAMPLES / "curio-mixed.log")
    for width in (40, 60):
        lines = header_text(model, "FINISHED", whole_run(model), width=width).plain.split("\n")
        gpu_lines = [line for line in lines if "of span:" in line]
        assert [line.split()[0] for line in gpu_lines] == ["GPU0", "GPU1"], gpu_lines


async def test_a_log_cut_with_running_and_failed_proves_keeps_a_two_line_legend() -> None:
    """A log read once that ends with proves running, some failed before: the legend named
    ✗ failed twice (the workers' and the proofs', one glyph) and took three lines at 80x24,
    the synthesis row pushed off the screen. ✗ is named once; two lines."""
    lines = (SAMPLES / "journal-2gpu.log").read_bytes().splitlines(keepends=True)
    live = LogBuilder(source="cut.log")
    live.feed(b"".join(lines[:1920]))
    model = live.build()
    t = model.parts
    assert (t.failed & ~np.isnan(t.gpu_start)).any()
    assert any(g.in_flight for g in model.gpus)
    app = make_app(model, LineReader(path=SAMPLES / "journal-2gpu.log"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        legend = str(app.query_one("#legend", Static).render())
    assert legend.count("✗ failed") == 1 and "▶ running" in legend and "▸ running" in legend
    assert len(legend.splitlines()) == 2, legend


def test_what_runs_gives_way_before_a_gpu_s_name_is_cut() -> None:
    """A log cut while proves ran, half its C++ lines lost (wide kernel estimates): at 80
    columns `+1 running` took the room of the GPU's name (`G of span: …`). The name stays
    whole; with room, `+N running` is there too."""
    from rich.cells import cell_len

    from cuzksim.logs import lose_lines
    from parsers.breakdown import whole_run
    from parsers.load import model_of_bytes
    from tui.header import header_text

    _, data = simulate(SimConfig(seed=2, proofs=8, gpus=2, gw=2, stdout="plain"))
    lines = lose_lines(data, "cpp", 0.5, seed=1).split(b"\n")
    starts = [k for k, line in enumerate(lines) if b"GPU_START" in line]
    model = model_of_bytes(b"\n".join(lines[: starts[69] + 3]) + b"\n", "lost-mid.log")
    assert any(g.in_flight for g in model.gpus)
    for width in (80, 120):
        text = header_text(model, "FINISHED", whole_run(model), width=width).plain
        gpu_lines = [line for line in text.split("\n") if " of span: " in line]
        assert [line.split(" of span")[0] for line in gpu_lines] == ["GPU0", "GPU1"], gpu_lines
        assert all(cell_len(line) + 1 <= width - 1 for line in gpu_lines), gpu_lines
        if width == 120:
            assert any(line.endswith("running") for line in gpu_lines), gpu_lines


def test_the_state_line_of_the_header_gives_way_with_the_source_name() -> None:
    """A long source name pushed the figures off the state line at 80 columns (`14.11
    s/…`): the name is cut in the middle now, the figures stay whole."""
    from rich.cells import cell_len

    from parsers.breakdown import whole_run
    from tui.header import header_text

    name = "cuzk-daemon-" + "x" * 60 + "-host-17.log"
    model = LogBuilder(source=name).build()
    for width in (80, 120, 200):
        first = header_text(model, "FINISHED", whole_run(model), width=width).plain
        first = first.split("\n")[0]
        assert first.endswith(model.summary.s_per_proof_shown), first
        assert cell_len(first) <= width - 2, (width, first)
        if width == 200:
            assert name in first  # room: whole
        else:
            # its kind (`.log`) left out before its own part is cut
            assert name not in first and "cuzk-daemon" in first and "host-17 " in first


def test_a_log_name_that_does_not_fit_loses_its_kind_before_its_own_part() -> None:
    """At 80 columns the header read `rest….log` (`restart.log` in 9 cells), `demo (…d
    run)`, `pipeline-fai…-merged.log`: what tells no log from another (`.log`, `.gz`, the
    demo's `(built-in simulated run)`) goes before the name is cut."""
    from tui.header import short_name, source_in

    model = LogBuilder(source="restart.log").build()
    assert source_in(model, 11) == "restart.log" and source_in(model, 9) == "restart"
    assert source_in(model, 5) == "re…rt"
    assert short_name("daemon.log.gz") == "daemon" and short_name(".log") == ".log"
    assert short_name("demo (built-in simulated run)") == "demo"
    evil = LogBuilder(source="a\x1b[2Jb.log").build()  # never a control, short or not
    assert "\x1b" not in source_in(evil, 6) and source_in(evil, 6).startswith("a")


def test_figures_too_long_for_the_state_line_go_on_their_own_line() -> None:
    """A restarted daemon's log read from standard input at 80 columns: `proofs 10/11 (1
    failed) in 2 runs, last 9/10 in 5m00s  33.41 s/p…` (cut by the screen, the source
    gone): the figures go whole on a line of their own, the source beside the state."""
    from rich.cells import cell_len

    from parsers.breakdown import whole_run
    from tui.header import header_text

    data = (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "curio-mixed.log").read_bytes()
    b = LogBuilder(source="stdin")
    b.feed(data)
    model = b.build()
    assert model.restarted
    s = model.summary
    for width in (80, 160):
        lines = header_text(model, "FINISHED · input closed", whole_run(model), width=width)
        first, second = lines.plain.split("\n")[:2]
        assert all(cell_len(line) <= width - 2 for line in (first, second)), (first, second)
        if width == 80:
            assert first.strip() == "FINISHED · input closed  stdin"
            assert second.strip().endswith(s.s_per_proof_shown) and "2 runs" in second
        else:  # room: all on the state line
            assert "stdin" in first and first.endswith(s.s_per_proof_shown), first


def test_a_short_name_left_a_cell_or_two_goes_beside_the_state_whole() -> None:
    """`cuzk-tui restart.log` (a restarted daemon) at 80 columns read `LIVE  r  proofs
    10/11 …`: the figures left its name one cell. They go on a line of their own where
    they leave a name fewer cells than it, or than SOURCE_LEAST_CELLS, and stay beside it
    where there is room."""
    from rich.cells import cell_len

    from parsers.breakdown import whole_run
    from tui.header import SOURCE_LEAST_CELLS, header_text

    data = (SAMPLES / "tiny.log").read_bytes() + (SAMPLES / "curio-mixed.log").read_bytes()
    b = LogBuilder(source="restart.log")
    b.feed(data)
    model = b.build()
    s = model.summary
    for width in (80, 100, 160):
        lines = header_text(model, "LIVE", whole_run(model), width=width).plain.split("\n")
        assert all(cell_len(line) <= width - 2 for line in lines), lines
        first = lines[0]
        if width == 80:
            assert first.split() == ["LIVE", "restart.log"], first
            assert lines[1].strip().endswith(s.s_per_proof_shown) and "2 runs" in lines[1]
        else:  # room: the name whole, the figures beside it
            assert "restart.log" in first and first.endswith(s.s_per_proof_shown), first
    # a long name cut in the middle keeps the figures beside it
    long = LogBuilder(source="cuzk-" + "x" * 40 + ".log")
    long.feed(data)
    first = header_text(long.build(), "LIVE", width=100).plain.split("\n")[0]
    assert "…" in first and first.endswith(s.s_per_proof_shown), first
    assert cell_len(first.split()[1]) >= SOURCE_LEAST_CELLS


@pytest.mark.parametrize("names", [("journal-2gpu", "p12-gw2-merged"), ("node-01", "node-02")])
@pytest.mark.parametrize("running", [False, True])
def test_the_header_of_two_logs_fits_80_columns_with_every_figure(
    names: tuple[str, str], running: bool
) -> None:
    """Two logs at 80 columns: the state line was cut before `s/proof` (`proofs 15/18…`),
    each GPU line before its gap count (`in 17…`). The state's note goes to a line of its
    own and the hosts' names give way now (their `:GPU2` whole): the figures whole, with
    `+N running` where intervals run, and two hosts' GPUs told apart."""
    from rich.cells import cell_len

    from parsers.breakdown import whole_run
    from parsers.hosts import merge
    from tui.header import header_text

    models = []
    for sample in ("journal-2gpu", "p12-gw2-merged"):
        data = (SAMPLES / f"{sample}.log").read_bytes()
        b = LogBuilder(source=sample)
        b.feed(data[: len(data) * 2 // 3] if running else data)
        models.append(b.snapshot())
    hosts = [f"{n}.log" for n in names]
    merged = merge(models, hosts)
    model = merged.model
    assert any(g.in_flight for g in model.gpus) == running
    state = f"FINISHED · {merged.note}"
    for width in (80, 100, 120, 200):
        lines = header_text(model, state, whole_run(model), width=width).plain.split("\n")
        assert all(cell_len(line) <= width - 2 for line in lines), (width, lines)
        # the figures whole: of several hosts, no s/proof (each host's is its own)
        assert lines[0].startswith(" FINISHED") and lines[0].endswith(" hosts"), lines[0]
        # the state's note whole, beside the figures or on a line of its own
        assert merged.note in lines[0] or lines[1] == merged.note, lines[:2]
        gpu_lines = [line for line in lines if ":GPU" in line]
        assert len(gpu_lines) == len(model.gpus)
        labels = [line.split(" of span:")[0] for line in gpu_lines]
        if not running or width >= 100:  # at 80 with `+N running`, 3 cells of a host's name
            assert len(set(labels)) == len(labels), labels  # each GPU told from the others
        for line, label, g in zip(gpu_lines, labels, model.gpus, strict=True):
            assert label.endswith("".join(model.gpu_label(g.gpu).rpartition(":")[1:])), line
            ends = (f"+{g.in_flight} running",) if g.in_flight else ("gap", "gaps")
            assert line.endswith(ends), line


def test_a_proof_two_cells_long_is_drawn_with_both_ends() -> None:
    """Zoomed out, a proof of two cells was drawn `━━`, the same as the middle of a longer
    one: it is `┣┫` now (`┣✗` failed), and a proof of one cell `━` (`✗` failed)."""
    from tui.lanes import LaneDrawing, Row, Window

    done = (
        b"TIMELINE,0,SYNTH_START,a,partition=0\nTIMELINE,40,SYNTH_END,a,partition=0\n"
        b"TIMELINE,50,GPU_START,a,worker=0,partition=0\n"
        b"TIMELINE,100,GPU_END,a,worker=0,partition=0,gpu_ms=50\n"
    )
    failed = (
        b"TIMELINE,0,SYNTH_START,b,partition=0\nTIMELINE,40,SYNTH_END,b,partition=0\n"
        b"TIMELINE,100,GPU_PICKUP,b,worker=0,partition=0\n"
        b"TIMELINE,150,GPU_PICKUP,c,worker=0,partition=0\n"
    )
    for data, end in ((done, "┫"), (failed, "✗")):
        drawing = LaneDrawing(_built(data))
        (row,) = [r for r in drawing.rows if r.kind == "proofs"][:1]
        assert isinstance(row, Row)
        for scale, want in ((60.0, "┣" + end), (200.0, "━" if end == "┫" else "✗")):
            w = Window(t0=0.0, scale=scale, width=10, threshold_ms=0, selected=None)
            chars, _ = drawing.row_cells(row, w)
            assert "".join(chars).strip() == want, (scale, "".join(chars))


def test_a_proof_that_begins_in_the_cell_another_ends_in_shows_both() -> None:
    """Zoomed out, two proofs of one row that meet in a cell were drawn `┣━┣━┫`: the second's
    ┣ took the first's ┫, which read as a proof that never ended. The cell is `╋` now (a ✗
    of a failed proof stays a ✗)."""
    from tui.lanes import LaneDrawing, Row, Window

    def proof(job: str, t: int, completed: bool) -> bytes:
        lines = (
            f"TIMELINE,{t},SYNTH_START,{job},partition=0\n"
            f"TIMELINE,{t + 40},SYNTH_END,{job},partition=0\n"
            f"TIMELINE,{t + 50},GPU_START,{job},worker=0,partition=0\n"
        )
        if completed:
            lines += f"TIMELINE,{t + 150},GPU_END,{job},worker=0,partition=0,gpu_ms=100\n"
        return lines.encode()

    # 50 ms cells. Completed, a runs 0-150 ms (cells 0-3) and b 160-310 (cells 3-6); failed,
    # a's last line is at 50 ms (cells 0-1), b runs 60-210 (cells 1-4)
    for a_done, b_at, want in ((True, 160, "┣━━╋━━┫"), (False, 60, "┣✗━━┫")):
        data = proof("a", 0, a_done)
        if not a_done:  # a's worker picks up another job: a's interval failed
            data += b"TIMELINE,55,GPU_PICKUP,x,worker=0,partition=0\n"
        data += proof("b", b_at, True)
        drawing = LaneDrawing(_built(data))
        rows = [r for r in drawing.rows if r.kind == "proofs"]
        assert isinstance(rows[0], Row)
        w = Window(t0=0.0, scale=50.0, width=10, threshold_ms=0, selected=None)
        chars, _ = drawing.row_cells(rows[0], w)
        assert "".join(chars).strip() == want, "".join(chars)


def _built(data: bytes) -> LogModel:
    b = LogBuilder(source="t")
    b.feed(data)
    return b.build()


def test_the_gap_counts_by_size_stand_under_their_headings() -> None:
    """The report's `<50|≤500|>500` column: each count right under its part of the heading,
    however many digits a count has (they were centred on ` | `, and drifted)."""
    from io import StringIO

    from rich.console import Console

    from parsers.model import GapStats, GapTable
    from tui.report import gap_stats_table

    gaps = read_log(SAMPLES / "journal-2gpu.log").gaps
    many = GapTable.concat([gaps] * 400, gaps.parts)  # counts of up to five digits
    for table, encoding in ((gaps, None), (many, None), (many, "ascii")):
        console = Console(width=200, file=StringIO(), record=True)
        console.print(gap_stats_table(table, GapStats.of(table.duration), encoding))
        lines = [line for line in console.export_text().splitlines() if "|" in line]
        assert len(lines) >= 6  # the heading and a row per kind of gap
        bars = {tuple(i for i, c in enumerate(line) if c == "|") for line in lines}
        assert len(bars) == 1, lines
    assert GapStats.of(many.duration).over_500 >= 10_000  # wider than its heading


@pytest.mark.parametrize("width", [66, 80, 100])
def test_a_report_at_a_terminal_keeps_figures_whole_and_indents_what_wraps(width: int) -> None:
    """At 80 columns the GPU table of a days-long log wrapped its figures inside (`4d` over
    `02h04m`); it fits from 78 columns now (narrower, a figure wraps at its space). At any
    width a gap's long lines went on at the margin, not under their indent."""
    from dataclasses import replace
    from io import StringIO

    from rich.console import Console

    from parsers.model import Blocks, GpuStats
    from parsers.rawlines import LineReader
    from tui.report import fmt_pct, print_report

    path = SAMPLES / "journal-2gpu.log"
    model = read_log(path)
    day = 86_400_000

    def days_long(g: GpuStats) -> GpuStats:  # `4d 00h04m`-long figures, with spaces inside
        assert g.span is not None
        end = g.span[1] + 4 * day
        busy = Blocks(np.append(g.busy.starts, g.span[1]), np.append(g.busy.ends, end - day))
        return replace(g, span=(g.span[0], end), busy=busy)

    model = replace(model, gpus=tuple(days_long(g) for g in model.gpus))
    out = StringIO()
    console = Console(width=width, file=out, force_terminal=True, color_system=None)
    print_report(model, console, top=3, reader=LineReader(path=path))
    lines = out.getvalue().splitlines()
    assert max(len(line) for line in lines) <= width
    for g in model.gpus if width >= 80 else ():
        row = next(line for line in lines if re.match(rf"\s*{g.gpu}\s+w\d", line))
        cells = (duration(g.span_ms, "cell"), duration(g.busy_ms, "cell"), fmt_pct(g.timeline_util))
        assert all(cell in row for cell in cells), row
    ranks = [k for k, line in enumerate(lines) if re.match(r"\s+\d+\.\s+\d", line)]
    assert len(ranks) == 3
    end = next(k for k in range(ranks[-1], len(lines)) if not lines[k].strip())
    body = [line for k, line in enumerate(lines[ranks[0] : end], ranks[0]) if k not in ranks]
    assert len(body) > 3 * 6  # the gaps' lines, some wrapped at this width
    assert all(line.startswith(" " * 6) for line in body), body
    # a unit never begins a line apart from its number (`1865` / `ms (max …`)
    assert not [line for line in lines if re.match(r"\s*(?:ms|%)(?:\W|$)", line)], lines


def test_one_gpu_past_the_header_s_is_one_more_gpu() -> None:
    """Three logs' five GPUs: the header said `+ 1 more GPUs`."""
    from parsers.hosts import merge
    from tui.header import HEADER_GPUS, header_text

    names = ["journal-2gpu.log", "curio-mixed.log", "p9-c6.log"]
    model = merge([read_log(SAMPLES / n) for n in names], names).model
    assert len(model.gpus) == HEADER_GPUS + 1
    assert "+ 1 more GPU (g lists" in header_text(model, "FINISHED").plain


def test_a_gpu_busy_at_no_moment_of_the_view_says_so_not_zero_shares() -> None:
    """Zoomed into a restarted log's second run, the first run's GPUs were given a line of
    `kernel 0% barrier 0% … (nothing busy)`: shares of nothing, read as figures."""
    from parsers.breakdown import busy_breakdown, whole_run
    from tui.header import header_text

    _, first = simulate(SimConfig(seed=41, proofs=3, gpus=1, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=42, proofs=3, gpus=1, gw=2, stdout="plain"))
    builder = LogBuilder(source="restarted")
    builder.feed(first + second)
    model = builder.build()
    earlier, later = model.gpus
    assert earlier.span is not None and later.span is not None
    view = busy_breakdown(model, later.span[0], later.span[1])
    assert view[earlier.gpu].busy_ms == 0 and view[later.gpu].busy_ms > 0
    lines = header_text(model, "FINISHED", whole_run(model), view, width=120).plain.split("\n")
    views = [line.strip() for line in lines if line.strip().startswith("busy, view:")]
    assert views[0] == "busy, view: nothing busy in this view"
    assert "kernel" in views[1] and "%" in views[1] and "nothing" not in views[1]


async def test_the_gap_list_and_the_report_write_a_threshold_and_no_gap_as_the_status_does() -> (
    None
):
    """The status line said `gaps ≥ 2.00 s: 38` and the gap list `38 gaps of 2000 ms or
    more`; a report with no gap said `Largest 0 gaps`."""
    from textual.containers import Vertical

    from tui.report import largest_title
    from tui.screens import GapListScreen

    model = read_log(SAMPLES / "p9-c6.log")
    app = make_app(model, LineReader(path=SAMPLES / "p9-c6.log"))
    async with app.run_test(size=(120, 36)) as pilot:
        view = app.query_one(GanttView)
        while view.threshold_ms < 2000:  # the threshold up to seconds
            await pilot.press("]")
            await pilot.pause()
        threshold = view.threshold_ms
        assert threshold >= 1000
        await pilot.press("g")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, GapListScreen)
        title = str(screen.query_one("#gap-list", Vertical).border_title)
        assert f"of {duration(threshold)} or more" in title and " ms or more" not in title
    assert (
        largest_title(0) == "No gap"
        and largest_title(1, 500) == "Largest 1 gap (of at least 500 ms)"
    )


def _two_runs() -> tuple[LogModel, CuzkApp]:
    """A log of two runs of two GPUs of two workers (the daemon restarted), and its app."""
    _, first = simulate(SimConfig(seed=13, proofs=3, gpus=2, gw=2, stdout="plain"))
    _, second = simulate(SimConfig(seed=14, proofs=3, gpus=2, gw=2, stdout="plain"))
    model = build(first + second)
    return model, make_app(model, LineReader(data=first + second))


async def test_a_restarted_log_opens_on_its_last_run_from_its_first_proof_s_start() -> None:
    """A restarted daemon's log opens on its last run, framed from the run's first
    GPU_START: its first proof (synthesized before) began off the left edge, its `┣` cut."""
    model, app = _two_runs()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        runs = view.run_spans()
        assert len(runs) == 2 and model.gpu_keys is not None
        t = model.parts
        last_run = [g for g, key in model.gpu_keys.items() if key.host == 1]
        mine = np.isin(t.gpu, last_run) & ~np.isnan(t.synth_start)
        first_synth = float(t.synth_start[mine].min())
        first_start = min(g.span[0] for g in model.gpus if g.gpu in last_run and g.span)
        assert runs[1][:2] == (1, first_synth) and first_synth < first_start
        assert view.t0 <= first_synth  # the first proof whole, from its start


async def test_each_run_of_a_restarted_log_is_shown_from_its_title_down() -> None:
    """Two runs whose last has fewer lanes than the view is high: it opened with the run
    before's last three rows at the top, under an axis that named `run 1`, and its times.
    The lanes end in blank rows, so each run's title comes to the top, the last one's too."""
    _, app = _two_runs()
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        last = [k for k, row in enumerate(view.rows) if row.kind == "title"][-1]
        assert len(view.rows) - last < view.size.height - AXIS_ROWS  # fewer rows than fit
        top = view.rows[int(view.scroll_offset.y)]
        assert (top.kind, top.log) == ("title", 1)
        for run in (0, 1):
            await pilot.press("r")
            await pilot.pause()
            top = view.rows[int(view.scroll_offset.y)]
            assert (top.kind, top.log) == ("title", run) and view.current_run() == run


async def test_a_run_with_no_gpu_interval_does_not_shift_the_runs_in_view() -> None:
    """A first run that ended before any GPU interval, then two more: the run spans left it
    out and their places were taken for runs, so the header showed run 2's GPUs over run
    3's view, the lanes scrolled to run 2 and `r` said `run 1 of 2`."""
    tiny = (SAMPLES / "tiny.log").read_bytes()
    early = b"".join(tiny.splitlines(keepends=True)[:6]).replace(b"T09:0", b"T08:0")
    data = early + tiny + (SAMPLES / "curio-mixed.log").read_bytes()
    model = build(data)
    assert model.restarted and model.log_names is not None and len(model.log_names) == 3
    app = make_app(model, LineReader(data=data))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        view = app.query_one(GanttView)
        assert view.current_run() == 2
        header = str(app.query_one("#summary", Static).render())
        gpu_lines = [line for line in header.splitlines() if "of span:" in line]
        assert gpu_lines[0].lstrip().startswith("run 3:GPU"), header
        said = []
        for _ in range(3):
            await pilot.press("r")
            await pilot.pause()
            said.append([str(n.message) for n in app._notifications])
            run = view.current_run()
            y = int(view.scroll_offset.y)  # its title in view, on top as far as they scroll
            shown = view.rows[y : y + view.size.height - AXIS_ROWS]
            assert ("title", run) in [(r.kind, r.log) for r in shown], run
        assert said == [["run 1 of 3"], ["run 2 of 3"], ["run 3 of 3"]]


async def test_a_restarted_log_s_header_and_i_are_of_the_run_in_view() -> None:
    """Three runs of two GPUs: the viewer opens on run 3, yet the header's four GPU lines
    were runs 1 and 2's (`busy, view: nothing busy in this view` each) and `i` opened an
    interval of run 1's first worker, moving the view there."""
    logs = [
        simulate(SimConfig(seed=s, proofs=2, gpus=2, gw=1, stdout="plain"))[1] for s in (8, 7, 6)
    ]
    data = b"".join(logs)
    model = build(data)
    assert model.gpu_keys is not None and len(model.gpus) == 6
    app = make_app(model, LineReader(data=data))
    async with app.run_test(size=(120, 36)) as pilot:
        await pilot.pause()
        header = str(app.query_one("#summary", Static).render())
        gpu_lines = [line for line in header.splitlines() if "of span:" in line]
        assert gpu_lines[0].lstrip().startswith("run 3:GPU0"), header
        await pilot.press("i")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, IntervalScreen)
        part = model.parts.get(screen.index)
        assert part.gpu is not None and model.gpu_keys[part.gpu].host == 2


def test_an_id_that_begins_as_every_id_does_is_cut_at_its_start() -> None:
    from tui.lanes import abbreviate_past, shared_start

    ids = ["porep-1000-293", "porep-1000-287", "porep-1000-1296"]
    shared = shared_start(ids)
    assert shared == "porep-1000-"
    assert abbreviate_past("porep-1000-293", 9, shared) == "…1000-293"
    assert abbreviate_past("porep-1000-293", 14, shared) == "porep-1000-293"  # it fits
    # its own part longer than the room: that part cut in the middle, after the `…`
    assert abbreviate_past("porep-1000-" + "x" * 20 + "9", 9, shared) == "…xxxx…xx9"
    # ids that share no start (UUIDs), or little, are cut in the middle as ever
    uuids = ["fa22c0de-0000-4000-8000-00000000e6b0", "7173aaaa-0000-4000-8000-00000000f3da"]
    assert shared_start(uuids) == ""
    assert abbreviate_past(uuids[0], 9, "") == "fa22…e6b0"
    assert shared_start(["ab1", "ab2"]) == "ab" and abbreviate_past("ab1x", 3, "ab") == "a…x"
    assert shared_start(["one"]) == "" and shared_start([]) == ""
    # a control in the id stays escaped, as everywhere
    assert "\x1b" not in abbreviate_past("porep-1000-\x1b]2;x\x07-293", 9, shared)


async def test_the_gap_list_at_80_columns_shows_what_tells_the_ids_apart() -> None:
    """Curio's ids of one miner all begin `porep-1000-`: at 80 columns the gap list showed
    `pore…-293`, four cells spent on what every row shares."""
    app = make_app(read_log(SAMPLES / "journal-2gpu.log"), LineReader())
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("g")
        await pilot.pause()
        rows = app.screen.query_one(GapRows)
        line = "".join(seg.text for seg in rows.render_line(1))
        sides = re.findall(r"(\S+) w\d p\d", line)
        assert len(sides) == 2 and all(s.startswith("…1000-") for s in sides), line


def test_an_id_cut_at_its_start_keeps_its_column_s_width() -> None:
    from rich.cells import cell_len

    from tui.lanes import abbreviate_past, shared_start

    wide = ["証明-ジョブ-一二三四", "証明-ジョブ-五六七八"]
    for width in range(2, 16):
        cut = abbreviate_past(wide[0], width, shared_start(wide))
        assert cell_len(cut) == min(width, cell_len(wide[0]))  # exactly: columns align


def test_a_host_s_name_is_cut_where_the_cut_tells_the_names_apart() -> None:
    """`prover-east-01.log`, `prover-west-01.log`, `prover-west-11.log`: the end all three
    share is `1.log`, and leaving it out read `prover-east-0`, another host's name. Only an
    end from a dot on is left out; a cut keeps what tells the names apart where a cut can
    (`prov…t-01` was east or west)."""
    from rich.cells import cell_len

    from tui.lanes import HostNames, host_in, shared_end, shared_start

    names = ["prover-east-01.log", "prover-west-01.log", "prover-west-11.log"]
    assert shared_end(names) == ".log" and shared_end(["a.us-1.log", "b.us-1.log"]) == ".us-1.log"
    assert shared_end(["run 1", "run 2"]) == "" and shared_end(["x1", "y1"]) == ""
    hosts = HostNames(tuple(names), shared_start(names), shared_end(names))
    assert [host_in(n, 14, hosts) for n in names] == [n.removesuffix(".log") for n in names]
    for width in range(8, 14):  # a cut that tells them apart exists: it is the one taken
        cuts = [host_in(n, width, hosts) for n in names]
        assert len(set(cuts)) == 3 and all(cell_len(c) <= width for c in cuts), cuts
    assert [host_in(n, 9, hosts) for n in names] == ["…-east-01", "…-west-01", "…-west-11"]
    for width in range(0, 8):  # none does: cut all the same, never wider
        assert all(cell_len(host_in(n, width, hosts)) <= max(width, 0) for n in names)
    # a name whose stem is another name keeps its end (both read `abc.log` before)
    alike = ["abc.log", "abc.log.log"]
    hosts = HostNames(tuple(alike), shared_start(alike), shared_end(alike))
    assert [host_in(n, 9, hosts) for n in alike] == ["abc.log", "….log.log"]
    # without a shared start: a third of the start, the rest from the end
    mixed = [*names, "a.log"]
    hosts = HostNames(tuple(mixed), shared_start(mixed), shared_end(mixed))
    assert host_in("prover-east-01.log", 10, hosts) == "pro…ast-01"


def test_hosts_that_differ_only_in_the_middle_are_cut_to_their_middle() -> None:
    """`prover-east-01.log` and `prover-west-01.log` share their start and their end: a
    cut to six cells or fewer that keeps a start and an end read `…t-01` or `…-01` for both.
    The middle from where they differ is shown instead (`…east…`); a column of GPU labels
    is never made narrower than what tells the hosts apart."""
    from rich.cells import cell_len

    from tui.lanes import HostNames, gpu_label_least, host_in, shared_end, shared_start

    names = ["prover-east-01.log", "prover-west-01.log"]
    hosts = HostNames(tuple(names), shared_start(names), shared_end(names))
    assert [host_in(n, 6, hosts) for n in names] == ["…east…", "…west…"]
    assert [host_in(n, 4, hosts) for n in names] == ["…ea…", "…we…"]
    assert [host_in(n, 8, hosts) for n in names] == ["…east-01", "…west-01"]  # as before
    for width in range(3, 16):
        cuts = [host_in(n, width, hosts) for n in names]
        assert len(set(cuts)) == 2 and all(cell_len(c) <= width for c in cuts), cuts
    assert hosts.apart_cells() == 3
    three = [*names, "prover-west-11.log"]
    hosts = HostNames(tuple(three), shared_start(three), shared_end(three))
    assert hosts.apart_cells() == 7  # `…ast-01`, `…est-01`, `…est-11`
    assert gpu_label_least("prover-east-01.log:GPU0", hosts) == 7 + len(":GPU0")
    assert gpu_label_least("prover-east-01.log:GPU0") == 3 + len(":GPU0")


def test_hosts_whose_names_begin_alike_keep_what_tells_them_apart() -> None:
    """`--compare feb1.log feb2.log` at 80 columns: both runs' GPUs read `feb…og:GPU0`."""
    from parsers.hosts import START, merge
    from tui.header import header_text
    from tui.lanes import HostNames, gpu_label_in

    feb = HostNames(("feb1.log", "feb2.log"), "feb", ".log")
    assert gpu_label_in("feb1.log:GPU0", 11, feb) == "feb1:GPU0"  # the shared end left out
    assert gpu_label_in("feb1.log:GPU0", 8, feb) == "…b1:GPU0"  # then the shared start
    assert gpu_label_in("feb1.log:GPU0", 11) == "f….log:GPU0"  # nothing shared: its end
    assert gpu_label_in("feb1.log:GPU0", 13, feb) == "feb1.log:GPU0"  # it fits
    a, b = read_log(SAMPLES / "p12-c15-gw1.log"), read_log(SAMPLES / "tiny.log")
    model = merge([a, b], ["feb1.log", "feb2.log"], START).model
    for width in (60, 64, 70):  # the middle cut gave `f…g:GPU0` to both
        text = header_text(model, "FINISHED", width=width).plain
        lines = text.splitlines()
        labels = [line.split(" ")[0] for line in lines if ":GPU" in line.split(" ")[0]]
        assert len(labels) == 2 and labels[0] != labels[1], (width, labels)
        assert "1" in labels[0] and "2" in labels[1], (width, labels)
