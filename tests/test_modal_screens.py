"""The windows over the Gantt: their footer, made again only when its keys change, and the
Gantt below them, tinted as Textual tints it."""

from __future__ import annotations

import itertools
import re
from typing import ClassVar

import numpy as np
import pytest
from conftest import SAMPLES
from helpers import DAYS_IN_MS, shifted_log
from rich.segment import Segment
from rich.style import Style
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.color import Color
from textual.content import Content
from textual.renderables.background_screen import BackgroundScreen
from textual.widget import Widget

from parsers.builder import LogBuilder
from parsers.load import read_log
from parsers.rawlines import LineReader
from tui.app import make_app
from tui.inspector import GapDetails, InspectorScreen, describe_gap
from tui.interval import describe_interval
from tui.prose import GLUE, Prose, wrapped
from tui.screens import KeysFooter, TintedBackground

SIZE = (120, 36)


def descriptions(footer: KeysFooter) -> list[str]:
    return [str(getattr(key, "description", "")) for key in footer.children]


async def test_the_inspectors_footer_is_not_made_again_for_the_same_keys() -> None:
    path = SAMPLES / "curio-mixed.log"
    app = make_app(read_log(path), LineReader(path=path))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("n", "enter")
        await pilot.pause()
        assert isinstance(app.screen, InspectorScreen)
        footer = app.screen.query_one(KeysFooter)
        keys = list(footer.children)
        assert {"Close", "Next gap", "Prev gap", "Copy id", "Quit"} <= set(descriptions(footer))
        # what made Textual's footer compose its keys again: a focus change, a signal
        app.screen.set_focus(None)
        await pilot.pause()
        app.screen.query_one(GapDetails).focus()
        app.screen.refresh_bindings()
        await pilot.pause()
        assert list(footer.children) == keys  # the same widgets: not made again


class Toggled(App[None]):
    """A footer whose keys change: `x` is shown while `shown` is True."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("x", "thing", "Thing"),
        Binding("z", "other", "Other"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.shown = True

    def compose(self) -> ComposeResult:
        yield Widget()
        yield KeysFooter()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.shown if action == "thing" else True


async def test_the_footer_is_made_again_when_its_keys_change() -> None:
    app = Toggled()
    async with app.run_test(size=(80, 10)) as pilot:
        await pilot.pause()
        footer = app.query_one(KeysFooter)
        assert {"Thing", "Other"} <= set(descriptions(footer))
        app.shown = False
        app.refresh_bindings()
        await pilot.pause()
        assert "Thing" not in descriptions(footer) and "Other" in descriptions(footer)
        app.shown = True
        app.refresh_bindings()
        await pilot.pause()
        assert {"Thing", "Other"} <= set(descriptions(footer))


def test_the_screen_below_is_tinted_as_textual_tints_it() -> None:
    styles = [
        None,
        Style(),
        Style(color="red"),
        Style(bgcolor="#102030"),
        Style(color="#abcdef", bgcolor="blue", bold=True),
        Style(color="green", link="https://example.com"),
        Style.from_meta({"@click": "app.bell"}) + Style(color="yellow"),
        Style(dim=True, bgcolor="black"),
    ]
    segments = [Segment(f"{k}▇", style) for k, style in enumerate(styles)]
    segments.append(Segment("\x1b[2J", None, [(1,)]))  # type: ignore[list-item]
    for color in (Color(0, 0, 0, 0.6), Color(20, 30, 40, 0.25), Color(0, 0, 0, 0.0)):
        ours = [list(TintedBackground.process_segments(segments, color)) for _ in range(2)]
        theirs = list(BackgroundScreen.process_segments(segments, color))
        # the second pass comes from the tints worked out in the first
        assert ours[0] == theirs and ours[1] == theirs


UNIT_AFTER_NUMBER = re.compile(r"[\d…]\s*$")  # a number, or a list of them cut short
UNIT_FIRST = re.compile(r"^\s*(?:ms|s|%)(?:\W|$)")


@pytest.mark.parametrize("name", ["curio-mixed", "journal-2gpu", "p12-gw2-merged"])
def test_the_inspectors_never_wrap_a_number_away_from_its_unit(name: str) -> None:
    """The inspectors' prose wrapped `unknown 2` at one line's end and `ms` at the next
    (the window wraps at any space): each unit now stands against its number."""
    path = SAMPLES / f"{name}.log"
    model = read_log(path)
    reader = LineReader(path=path)
    texts = [describe_gap(model, model.gaps[k], reader) for k in range(len(model.gaps))]
    texts += [describe_interval(model, k) for k in range(0, len(model.parts), 7)]
    for width in range(40, 121):
        for text in texts:
            lines = [line.plain for line in wrapped(text, width)]
            for before, after in itertools.pairwise(lines):
                assert not (UNIT_AFTER_NUMBER.search(before) and UNIT_FIRST.match(after)), (
                    width,
                    before,
                    after,
                )


NAME_BEFORE_FIGURE = re.compile(
    r"(?:GPU|worker|partition|pre-lock|lock|wait|alloc|kernel|barrier|cleanup|unknown"
    r"|waited|taken|released|\(held|\(line|queued|GPU_START)\s*$"
)


@pytest.mark.parametrize("name", ["curio-mixed", "journal-2gpu"])
def test_the_inspector_never_wraps_a_name_away_from_its_figure(name: str) -> None:
    """`on GPU` at one line's end and `3)` at the next, `barrier` and `1.10s`: Textual wraps at
    any space, a no-break space too. The inspector glues them; its own wrap keeps them."""
    path = SAMPLES / f"{name}.log"
    model = read_log(path)
    reader = LineReader(path=path)
    texts = [describe_gap(model, model.gaps[k], reader) for k in range(len(model.gaps))]
    texts += [describe_interval(model, k) for k in range(0, len(model.parts), 9)]
    broken = 0
    for width in range(40, 121):
        for text in texts:
            lines = [line.plain for line in wrapped(text, width)]
            assert all(len(line) <= width for line in lines)
            assert "\u00a0" not in "".join(lines)  # a glue is drawn as a space
            for before, after in itertools.pairwise(lines):
                figure = re.match(r"\s*[\d(]", after)
                assert not (NAME_BEFORE_FIGURE.search(before) and figure), (width, before, after)
                assert not (before.endswith("whole") and after.lstrip().startswith("proof"))
            if width > 60:
                continue
            # Textual's own wrap of the same text breaks some of them
            theirs = [c.plain for c in Content.from_rich_text(text).wrap(width)]
            broken += sum(
                bool(NAME_BEFORE_FIGURE.search(a.replace("\u00a0", " ")))
                and bool(re.match(r"\s*\d", b))
                for a, b in itertools.pairwise(theirs)
            )
    assert broken > 0


def test_an_offset_days_into_a_run_is_never_wrapped_inside() -> None:
    """Days into a run the inspector wrote `2d 20h54m29.258s (2026-03-19 06:03:13.667)`:
    at 80 columns `2d` ended one line and the rest began the next. Offsets and wall times
    are written as the time axis and the report write them, glued: never wrapped inside
    (written `2d20h54m29.258s (2026-03-19T06:03:13.667)` for a while, unlike every other
    screen)."""
    days = DAYS_IN_MS
    data = shifted_log(SAMPLES / "journal-2gpu.log", days)
    builder = LogBuilder(source="days")
    builder.feed(data)
    model = builder.build()
    later = np.flatnonzero(model.gaps.start > days).tolist()  # (a spliced line: a restart)
    assert len(later) >= 10
    texts = [describe_gap(model, model.gaps[k]) for k in later]
    for text in texts:
        plain = text.plain.replace(GLUE, " ")
        assert re.search(r"idle from 2d 2\dh\d\dm\d\d\.\d{3}s \(2026-03-\d\d \d\d:", plain)
        assert not re.search(r"\dd\d|\dT\d", plain)
    for width in range(40, 121):
        for text in texts:
            lines = [line.plain for line in wrapped(text, width)]
            for before, after in itertools.pairwise(lines):
                cut = re.search(r"(\d+d|\(\d{4}-\d\d-\d\d)\s*$", before)
                assert not (cut and re.match(r"\s*\d", after)), (width, before, after)


def test_a_run_s_gpu_is_never_wrapped_inside_its_name() -> None:
    """A log whose daemon restarted names its GPUs `run 2:GPU2`: at 80 columns the gap
    inspector wrote `run` at a line's end and `2:GPU2)` on the next. The name is glued."""
    data = shifted_log(SAMPLES / "journal-2gpu.log")  # a cut line's stamp starts run 2
    builder = LogBuilder(source="runs")
    builder.feed(data)
    model = builder.build()
    named = [k for k in range(len(model.gaps)) if " " in model.gpu_label(model.gaps[k].gpu)]
    assert named
    texts = [describe_gap(model, model.gaps[k]) for k in named[:8]]
    for width in range(40, 101):
        for text in texts:
            lines = [line.plain for line in wrapped(text, width)]
            for before, after in itertools.pairwise(lines):
                assert not (before.rstrip().endswith("run") and re.match(r"\s*\d+:GPU", after))


def test_a_raw_line_goes_on_beside_its_number_and_breaks_after_a_comma() -> None:
    """The gap inspector at 80x24: each TIMELINE line's number stood alone on its row, the
    line under it broken inside its job id. A word no wrapped line holds is folded from
    where it begins, after its last comma (or `=`, `;`) that leaves the line a quarter full."""
    from rich.text import Text

    from tui.inspector import append_raw_lines

    path = SAMPLES / "p12-c15-gw1.log"
    rows = LineReader(path=path).lines(1, 400)
    text = Text()
    append_raw_lines(text, rows, set())
    ids = set(read_log(path).parts.jobs)
    for width in (60, 70, 78):
        lines = [line.plain for line in wrapped(text, width)]
        assert all(len(line) <= width for line in lines)
        numbered = [line for line in lines if re.match(r" *\d+  ", line)]
        assert len(numbered) == len(rows)
        assert not [line for line in numbered if not line.split()[1:]], "a number alone"
        long = [row for row in rows if b"TIMELINE," in row.data and len(row.data) > width - 10]
        assert long
        joined = "\n".join(lines)
        # an id that fits a wrapped line is never broken inside
        shown = [i for i in ids if any(i.encode() in row.data for row in rows)]
        fit = [i for i in shown if len(i) + 1 <= width - 10]
        assert fit and all(i in joined for i in fit)


def test_the_interval_inspector_wraps_a_labelled_line_after_its_label() -> None:
    """`lock       waited 1.80s …, taken …,` went on at the margin with `released …`: a
    labelled line's wrapped part goes on after the label's column."""
    path = SAMPLES / "journal-2gpu.log"
    model = read_log(path)
    texts = [describe_interval(model, k) for k in range(0, len(model.parts), 5)]
    starts = {"Interval", "job", "partition", "GPU_START", "GPU_END", "length", "phases", "lock"}
    starts |= {"synthesis", "queue", "pickup", "segments", "never"}
    went_on = 0
    for width in range(40, 101, 3):
        for text in texts:
            lines = [line.plain for line in wrapped(text, width)]
            assert all(len(line) <= width and "\u2063" not in line for line in lines)
            for line in lines[lines.index("") :]:  # after the heading (prose, no label)
                # a line of its own, or indented: a table's row, or a wrapped part (a
                # labelled line's after the label's eleven cells)
                own = not line or line.split(" ", 1)[0] in starts
                went_on += re.match(r" {11}\S", line) is not None
                assert own or line.startswith(" "), (width, line)
    assert went_on > 0
    assert "\u2063" not in str(Prose(texts[0]))


def test_a_raw_line_wider_than_the_window_goes_on_under_its_text() -> None:
    """The inspectors' raw lines: a line longer than the window left its number alone on a
    line of its own and went on at the margin. It goes on under its text now."""
    from tui.inspector import raw_context

    path = SAMPLES / "journal-2gpu.log"
    model = read_log(path)
    reader = LineReader(path=path)
    for k in range(0, len(model.gaps), 5):
        text = raw_context(model, reader, model.gaps[k])
        for width in (60, 80, 120):
            lines = [line.plain for line in wrapped(text, width)]
            for line in lines:
                assert len(line) <= width and "\u2063" not in line
                # a title, a numbered line (its number, then its text), or its wrapped part
                numbered = re.match(r" *\d+  \S", line) is not None
                under = line.startswith(" " * 10) and not line[10:11].isspace()
                assert not line or line.startswith("gap ") or numbered or under, (width, line)
