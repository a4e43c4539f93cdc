"""`w`: each worker's time in the phases of its GPU intervals, the text report's table (shares
of the worker's interval time), and how it differs from the busy split the header shows.

The busy split gives each instant of a GPU to one phase, kernel first: a worker waiting for
the GPU lock while another worker of its GPU runs kernels is kernel there, and the split's
`lock 0%` can sit beside workers that each waited a quarter of their intervals. This window
is where the viewer answers "how much did each worker wait?" as the report does."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import ClassVar

from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, HorizontalScroll, Vertical, VerticalScroll
from textual.widgets import Static

from parsers.model import LogModel
from tui.lanes import gpu_label_in, hosts_of
from tui.report import WORKER_PHASES_TITLE, cells_table, natural_width, phase_cells, worker_notes
from tui.screens import QUIT_BINDINGS, KeyScroll, KeysFooter, SafeModal

NO_WORKER = "no worker has ended a GPU interval yet"
WINDOW_MARGINS = 8  # the screen's cells outside the window's text: its margin, border, padding
VERTICAL_SCROLLBAR = 2  # the window's own, once its rows outgrow it: text is not laid under it
BOX_BORDER = 2  # the window's border, above and below
FOOTER = 1  # the keys under the window
SCREEN_MARGIN = 1  # the rows the window leaves free (at most 96 % of the screen)
# under the table: why its lock wait is not the busy split's
NOT_THE_SPLIT = (
    "Overlapping intervals each count in full here: a worker's wait for the GPU lock counts "
    "while another worker of its GPU runs kernels. The busy split (b, and the header's busy "
    "line) gives each instant of a GPU to one phase, kernel first, so that wait is kernel "
    "there."
)


@dataclass(frozen=True, slots=True)
class WorkersParts:
    """What the window shows of a model: the title of the per-worker table; the table's
    columns that name its rows (the phases, or each worker and its GPU), which stay, and
    the others, scrolled sideways when wider than the window, each drawn whole in its own
    width in cells, its titles apart from its rows (`heading_and_rows`); the notes under
    it."""

    title: Text
    names_head: Text
    names: Text
    names_width: int
    figures_head: Text
    figures: Text
    figures_width: int
    notes: Text
    # where each figures' column begins (cells): left / right scroll from one to the next,
    # never into the middle of a cell (`174ms` read as `4ms` under another title)
    stops: tuple[int, ...] = (0,)


def heading_and_rows(table: RenderableType, width: int) -> tuple[Text, Text]:
    """`table` (`cells_table`) drawn in `width` cells, cut under the rule below its titles:
    the heading stays in view while the rows under it scroll down."""
    console = Console(width=max(width, 1), file=io.StringIO(), legacy_windows=False)
    lines = []
    for segments in console.render_lines(table, console.options.update(width=width), pad=False):
        line = Text()
        for seg in segments:
            if not seg.control:
                line.append(seg.text, seg.style)
        lines.append(line)
    rule = next((k for k, line in enumerate(lines) if line.plain.strip().startswith("─")), -1)
    rows = lines[rule + 1 :]
    while rows and not rows[-1].plain.strip():  # Rich's blank line under a table
        rows.pop()
    return Text("\n").join(lines[: rule + 1]), Text("\n").join(rows)


def _column_stops(heading: Text, header: list[str]) -> tuple[int, ...]:
    """Where each column of a table (titled `header`) begins: after the last cell of the
    column before it, read off its title line as drawn (`heading`: right-aligned titles
    end where their column does)."""
    head = next((line for line in heading.plain.split("\n") if line.strip()), "")
    stops, at = [0], 0
    for title in header[:-1]:
        found = head.find(title, at)
        if found < 0:
            break
        at = found + len(title)
        stops.append(at)
    return tuple(stops)


def workers_parts(model: LogModel, room: int | None = None) -> WorkersParts:
    """The window's parts for `model` (the report's table, `phase_cells`, cut after the
    columns that name the rows), in `room` cells: the naming columns take at most half of
    it, a host's long GPU label cut in the middle (`gpu_label_in`) so that figures show."""
    if not model.workers:
        nothing = Text("")
        return WorkersParts(Text(NO_WORKER), nothing, nothing, 0, nothing, nothing, 0, nothing)
    header, rows, left = phase_cells(model)
    names = cells_table(header[:left], [row[:left] for row in rows], left)
    names_width = natural_width(names)
    over = names_width - room // 2 if room is not None else 0
    if over > 0 and left == 2:  # a row per worker: worker, GPU label
        longest = max(cell_len(row[1]) for row in rows)
        hosts, room_left = hosts_of(model), max(longest - over, 1)
        rows = [[row[0], gpu_label_in(row[1], room_left, hosts), *row[2:]] for row in rows]
        names = cells_table(header[:left], [row[:left] for row in rows], left)
        names_width = natural_width(names)
    figures = cells_table(header[left:], [row[left:] for row in rows], 0)
    notes = Text(NOT_THE_SPLIT, style="dim")
    for note in worker_notes(model, indent=""):
        notes.append("\n")
        notes.append_text(note)
    title = Text(WORKER_PHASES_TITLE, style="bold")
    width = natural_width(figures)
    # each table drawn once: its titles, and the rows that scroll under them
    names_head, name_rows = heading_and_rows(names, names_width)
    figures_head, figure_rows = heading_and_rows(figures, width)
    stops = _column_stops(figures_head, header[left:])
    return WorkersParts(
        title, names_head, name_rows, names_width, figures_head, figure_rows, width, notes, stops
    )


class WorkersScreen(SafeModal[None]):
    """Each worker's phases, kept up to date while the log grows."""

    DEFAULT_CSS = """
    WorkersScreen { align: center middle; }
    WorkersScreen > Vertical {
        width: 98%; height: auto; max-height: 96%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    WorkersScreen Static { height: auto; }
    #workers-head, #workers-rows { height: auto; }
    #workers-rows { margin: 0 0 1 0; }
    #workers-body { height: auto; }
    #workers-wide-head { height: auto; overflow-x: hidden; }
    #workers-wide { height: auto; scrollbar-size-horizontal: 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,w", "dismiss", "Close"),
        # before the scrolled box's own (a cell at a time)
        Binding("left,h", "side(-1)", "Left", show=False, priority=True),
        Binding("right,l", "side(1)", "Right", show=False, priority=True),
        *QUIT_BINDINGS,
    ]

    def __init__(self, model: LogModel) -> None:
        super().__init__()
        self.model = model
        self._stops: tuple[int, ...] = (0,)  # the figures' columns (WorkersParts.stops)

    def compose(self) -> ComposeResult:
        """The table, scrolled both ways when the terminal is small: the columns that name
        the rows stay as the figures scroll sideways, the titles as the rows scroll down."""
        with Vertical(id="workers"):
            yield Static(id="workers-title")
            with Horizontal(id="workers-head"):
                yield Static(id="workers-names-head")
                with HorizontalScroll(id="workers-wide-head"):  # moved with the figures
                    yield Static(id="workers-table-head")
            with KeyScroll(id="workers-body"):
                with Horizontal(id="workers-rows"):
                    yield Static(id="workers-names")
                    with HorizontalScroll(id="workers-wide"):
                        yield Static(id="workers-table")
                yield Static(id="workers-notes")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Title the box; the arrows scroll it, the titles over the figures with them."""
        box = self.query_one("#workers", Vertical)
        box.border_title = "workers: time in each phase of their GPU intervals"
        box.border_subtitle = "esc closes · arrows scroll"
        wide = self.query_one("#workers-wide", HorizontalScroll)
        self.watch(wide, "scroll_x", self._scrolled_sideways)
        self.show_model(self.model)
        self.query_one("#workers-body", VerticalScroll).focus()

    def _scrolled_sideways(self, x: float) -> None:
        head = self.query_one("#workers-wide-head", HorizontalScroll)
        head.scroll_to(x=x, animate=False, immediate=True, force=True)

    def show_model(self, model: LogModel) -> None:
        """The log grew: its figures now (the table whole, scrolled sideways when wider
        than the window; the title and the notes wrapped to the window)."""
        self.model = model
        room = max(self.app.size.width - WINDOW_MARGINS - VERTICAL_SCROLLBAR, 1)
        parts = workers_parts(model, room)
        self._stops = parts.stops
        # the figures' room beside the columns that stay; wider than it, the table gets as
        # much again after its last column, so that each column's start can be scrolled to
        # (the end never shows a cell cut in two)
        shown = max(room - parts.names_width, 1)
        figures = parts.figures_width + shown if parts.figures_width > shown else 0
        table = figures or parts.figures_width or room
        for name, part, cells in (
            ("title", parts.title, room),
            ("names-head", parts.names_head, parts.names_width),
            ("table-head", parts.figures_head, table),
            ("names", parts.names, parts.names_width),
            ("table", parts.figures, table),
            ("notes", parts.notes, room),
        ):
            static = self.query_one(f"#workers-{name}", Static)
            static.styles.width = cells
            static.update(part)
        # the rows scroll under the titles: the box is at most the screen's height less the
        # footer and a margin, the rows' part what its border and its other parts leave
        title_lines = len(parts.title.wrap(self.app.console, room))
        head_lines = len(parts.names_head.plain.split("\n")) if parts.names_width else 0
        fixed = BOX_BORDER + title_lines + head_lines
        body = self.query_one("#workers-body", VerticalScroll)
        body.styles.max_height = max(self.app.size.height - FOOTER - SCREEN_MARGIN - fixed, 3)

    def on_resize(self, event: events.Resize) -> None:
        """The terminal changed size: the title and the notes wrapped to it again."""
        self.show_model(self.model)

    def action_side(self, direction: int) -> None:
        """Scroll the figures sideways a column at a time (to where the next begins)."""
        wide = self.query_one("#workers-wide", HorizontalScroll)
        x = round(wide.scroll_x)
        stops = self._stops
        ahead = [s for s in stops if s > x] if direction > 0 else [s for s in stops if s < x]
        ahead = [s for s in ahead if s <= wide.max_scroll_x]  # the last ones show it all
        if ahead:
            target = ahead[0] if direction > 0 else ahead[-1]
            wide.scroll_to(x=target, animate=False, immediate=True)
