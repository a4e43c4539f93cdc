"""Two runs compared: the text report (`--compare A B`) and the viewer's comparison screen."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import ClassVar

from rich import box
from rich.console import Console, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widget import Widget
from textual.widgets import Static

from parsers.compare import (
    Figure,
    compare,
    fmt_delta,
    fmt_noise,
    judged,
    unjudged_sentence,
    unpaired_sentence,
)
from parsers.model import LogModel
from parsers.sanitize import visible
from tui.prose import HANG, Prose
from tui.screens import QUIT_BINDINGS, TextBoxScreen


def _cell(f: Figure) -> Text:
    text = Text(fmt_delta(f), justify="right")
    if f.improved is True:
        text.stylize("bold green")
    elif f.improved is False:
        text.stylize("bold red")
    elif f.moved:
        text.stylize("bold")
    else:
        text.stylize("dim")
    return text


# What the tables' last column says, and why some figures are never judged (the levels and
# the reasons: docs/analysis.md, the table of noise levels)
NOISE_LEGEND = (
    "noise: how far the figure moves between two runs of one setting; – never judged: "
    "counts, totals, histogram bins, the median gap (of gaps in two sizes it is either), "
    "gap durations where a run has fewer than 10 such gaps, s/proof under 3 proofs"
)


def compare_renderables(
    a: LogModel, b: LogModel, figures: list[Figure] | None = None
) -> list[RenderableType]:
    """The comparison: a table per section, then one line per figure that moved."""
    figures = compare(a, b) if figures is None else figures
    head = Text()
    head.append("cuzk-tui compare\n", style="bold")
    head.append("before ", style="dim")
    head.append(visible(a.source))  # literal: never markup, nor a control
    head.append("\nafter  ", style="dim")
    head.append(visible(b.source))
    alone = unpaired_sentence(a, b)
    if alone is not None:
        head.append(f"\n{alone}", style="bold yellow")
    verdicts = [(f.section, v) for f in figures if (v := f.verdict()) is not None]
    out: list[RenderableType] = [
        head,
        Text("\nWhat moved beyond noise (docs/analysis.md)", style="bold"),
    ]
    unjudged = unjudged_sentence(a, b, figures)
    if unjudged is not None:
        out.append(Text(f"  {unjudged}", style="bold yellow"))
    if not verdicts and any(map(judged, figures)):
        out.append(Text("  nothing moved beyond noise", style="dim"))
    for section, v in verdicts:
        style = "green" if v.endswith("better") else "red" if v.endswith("worse") else ""
        # wrapped after its section's name where the tables are narrower (`…(+28.8
        # points): wo` was cut)
        name = f"{section}: "
        line = f"  {name}{HANG}{v[len(name) :]}" if v.startswith(name) else f"  {v}"
        out.append(Prose(Text(line, style=style)))
    out += [Text(""), Prose(Text(NOISE_LEGEND, style="dim")), Text("")]
    sections: list[str] = []
    for f in figures:
        if f.section not in sections:
            sections.append(f.section)
    for section in sections:
        # one space between columns, none at the edges: a GPU's table fits 80 columns
        table = Table(
            box=box.SIMPLE_HEAD,
            title=section,
            title_justify="left",
            title_style="bold",
            pad_edge=False,
            collapse_padding=True,
        )
        for col in ("figure", "before", "after", "difference", "noise"):
            table.add_column(col, justify="left" if col == "figure" else "right", no_wrap=True)
        for f in figures:
            if f.section == section:
                noise = Text(fmt_noise(f), style="dim")
                table.add_row(f.name, f.shown(after=False), f.shown(after=True), _cell(f), noise)
        out.append(table)
    return out


def natural_width(shown: list[RenderableType]) -> int:
    """The cells the widest of `shown` takes when nothing is cut or wrapped (prose wraps to
    the others' width)."""
    console = Console(width=NATURAL_MAX, file=io.StringIO(), color_system=None)
    widths = (
        Measurement.get(console, console.options, r).maximum
        for r in shown
        if not isinstance(r, Prose)
    )
    return max(widths, default=1)


NATURAL_MAX = 1000  # wider, a table would be cut all the same (a hostile name)


def print_compare(a: LogModel, b: LogModel, console: Console) -> None:
    """Print the comparison."""
    console.print(Group(*compare_renderables(a, b)))


class CompareScreen(TextBoxScreen):
    """The comparison's figures over the two stacked Gantts (key `c`)."""

    # the tables as wide as their figures, the box scrolled sideways where it is narrower (at
    # 80 columns a cell cut to `-38.6 poi…` said nothing)
    DEFAULT_CSS = """
    CompareScreen > VerticalScroll { overflow-x: auto; width: 100%; padding: 0 0 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,c", "dismiss", "Close"),
        *QUIT_BINDINGS,
    ]
    BOX_TITLE = "before → after"
    BOX_SUBTITLE = "↑↓←→ scroll · esc closes"

    def __init__(self, before: LogModel, after: LogModel) -> None:
        super().__init__()
        self.before = before
        self.after = after

    def parts(self) -> Iterator[Widget]:
        """The verdicts wrapped to the box's width, the tables as wide as their figures
        (the box scrolls sideways to them: at 60 columns the verdicts were wrapped to the
        tables' width, `-20 %): bett` cut at the box's edge)."""
        for shown in compare_renderables(self.before, self.after):
            part = Static(shown)
            part.styles.width = "100%" if isinstance(shown, Prose) else natural_width([shown])
            if isinstance(shown, Text) and not shown.plain:
                part.styles.height = 1  # a blank line between parts (alone it takes none)
            yield part
