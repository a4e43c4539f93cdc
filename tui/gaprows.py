"""The gap list's rows: a virtual view over the model's gap columns.

Only the rows on screen are made into text, so a list of every gap of a 68-hour log (tens of
thousands) opens at once, and a newer model of a growing log is shown by ranking its gap
columns again (numpy), not by building rows.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import numpy.typing as npt
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding, BindingType
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from parsers.durations import duration
from parsers.model import I64, GapSide, LogModel
from parsers.why import synthesis_during
from tui.lanes import (
    ONE_HOST,
    abbreviate_past,
    gpu_label_in,
    gpu_label_least,
    hosts_of,
    shared_start,
)

# column titles and the widths of the fixed ones (the job ids share what is left)
COLUMNS = ("#", "length", "at", "GPU", "side", "cause", "before", "after", "synth")
_FIXED = {"length": 8, "at": 8, "side": 7, "cause": 8, "synth": 10}
_RIGHT = {"#", "length", "at", "synth"}
ID_LEAST = 12  # a side's least room (job id, worker, partition)
_CAUSE_WORDS = ("—", "synth", "dispatch")  # by GapTable.cause


class GapRows(ScrollView, can_focus=True):
    """Every gap of at least a threshold, longest first; enter chooses one.

    Args:
        model: the model whose gaps are listed.
        threshold_ms: the shortest gap listed.
        synth: show the synth column (partitions in synthesis during the gap / the run's peak).
    """

    DEFAULT_CSS = """
    GapRows {
        height: 1fr;
        overflow-x: hidden;
        background: $surface;
        color: $foreground;
        & > .gap-rows--header { text-style: bold; background: $panel; color: $foreground; }
        & > .gap-rows--cursor {
            background: $block-cursor-background;
            color: $block-cursor-foreground;
            text-style: $block-cursor-text-style;
        }
        & > .gap-rows--odd { background: $surface-darken-1 40%; }
        & > .gap-rows--crosses { color: magenta; }
    }
    """
    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "gap-rows--header",
        "gap-rows--cursor",
        "gap-rows--odd",
        "gap-rows--crosses",
    }
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "cursor(-1)", "Up", show=False),
        Binding("down,j", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "edge(0)", "First", show=False),
        Binding("end", "edge(1)", "Last", show=False),
        Binding("enter", "choose", "Jump", show=False),
    ]

    class Chosen(Message):
        """The user chose a gap (index into the model's gaps)."""

        def __init__(self, index: int) -> None:
            super().__init__()
            self.index = index

    def __init__(self, model: LogModel, threshold_ms: int, synth: bool = False) -> None:
        super().__init__()
        self.model = model
        self.threshold_ms = threshold_ms
        self.synth = synth
        self.order: I64 = np.zeros(0, dtype=np.int64)  # row -> index into model.gaps
        self._crosses: npt.NDArray[np.bool_] = np.zeros(0, dtype=bool)  # by gap index
        self._at_width, self._length_width = _FIXED["at"], _FIXED["length"]
        self._gpu_widths = (3, 3)  # the GPU labels': the longest, the least worth keeping
        self._shared = ""  # what every job id of the model begins with
        self._hosts = ONE_HOST  # what every host's name begins and ends with
        self._shared_of: tuple[str, ...] = ()  # the ids it is of
        self.cursor_row = 0
        self.show(model)

    # -- data ---------------------------------------------------------------------------

    @property
    def row_count(self) -> int:
        """How many gaps are listed."""
        return len(self.order)

    def gap_at(self, row: int) -> int:
        """The index (into the model's gaps) of the gap on `row`."""
        return int(self.order[row])

    def show(self, model: LogModel) -> None:
        """List `model`'s gaps (a newer model of the same log), staying on the same gap."""
        current = None
        if self.row_count:
            g = self.model.gaps
            i = self.gap_at(self.cursor_row)
            current = (int(g.gpu[i]), int(g.start[i]))
        self.model = model
        gaps = model.gaps
        self.order = np.asarray(gaps.largest(len(gaps), self.threshold_ms), dtype=np.int64)
        self._crosses = gaps.crosses  # once per model, not per line drawn
        jobs = model.parts.jobs
        if jobs is not self._shared_of:  # a live model's ids are the same tuple till one comes
            self._shared, self._shared_of = shared_start(jobs), jobs
        # the times as wide as the widest (`10d 07h56m` past nine days): longest first
        listed = self.order
        starts, lengths = gaps.start[listed], gaps.duration[listed]
        edges = (float(starts.min()), float(starts.max())) if len(listed) else ()
        self._at_width = max([_FIXED["at"], *(len(duration(ms, cut=True)) for ms in edges)])
        longest = (float(lengths[0]),) if len(listed) else ()
        self._length_width = max([_FIXED["length"], *(len(duration(ms)) for ms in longest)])
        # the GPU labels once per model, not at each row drawn (a daemon restarted
        # thousands of times has as many GPUs)
        labels = [model.gpu_label(g.gpu) if model.gpu_keys else str(g.gpu) for g in model.gpus]
        self._hosts = hosts_of(model)
        self._gpu_widths = (
            max([3, *(cell_len(x) for x in labels)]),
            max([3, *(gpu_label_least(x, self._hosts) for x in labels)]),
        )
        row = 0
        if current is not None:
            index = gaps.index_of(*current)
            hits = np.flatnonzero(self.order == (-1 if index is None else index))
            row = int(hits[0]) if len(hits) else min(self.cursor_row, max(self.row_count - 1, 0))
        self.cursor_row = row
        self.virtual_size = Size(self._width(), self.row_count + 1)
        self.refresh()
        self._keep_cursor_visible()

    def row_cells(self, row: int) -> list[str]:
        """The cells of `row`, as shown (before cutting to the widths)."""
        m = self.model
        gaps = m.gaps
        i = self.gap_at(row)
        g = gaps[i]
        cells = [
            str(row + 1),  # every longer gap is listed before: the row is the rank
            duration(g.duration_ms),
            duration(g.start, cut=True),  # an instant: at or before it
            gpu_label_in(m.gpu_label(g.gpu), self._widths()["GPU"], self._hosts)
            if m.gpu_keys
            else str(g.gpu),
            "crosses" if g.crosses_proof_boundary else "mid",
            _CAUSE_WORDS[int(gaps.cause[i])],
            self._side(g.before),
            self._side(g.after),
        ]
        if self.synth:
            lo, most, peak = synthesis_during(m, g.start, g.end, g.gpu)
            cells.append(f"{most}/{peak}" + (" full" if peak and lo >= peak else ""))
        return cells

    def _side(self, side: GapSide) -> str:
        """`…1000-123 w1 p4`: the job id cut to leave room for the rest (where every id of
        the log begins alike, at its start; else in the middle)."""
        rest = f" w{side.worker}" + (f" p{side.partition}" if side.partition is not None else "")
        width = max(4, self._id_width() - len(rest))
        return abbreviate_past(side.job, width, self._shared) + rest

    # -- drawing --------------------------------------------------------------------------

    def _widths(self) -> dict[str, int]:
        """The width of each fixed column for this model."""
        widths = dict(_FIXED)
        widths["at"], widths["length"] = self._at_width, self._length_width
        widths["#"] = max(1, len(str(self.row_count)))
        if not self.synth:
            del widths["synth"]
        # several logs' labels (`restart.log run 2:GPU1`) are cut in the middle to leave
        # each side its least room (the `after` column fell off at 80 columns), no shorter
        # than what tells two hosts' GPUs apart
        room = self._width() - sum(widths.values()) - (len(widths) + 2) - 2 * ID_LEAST
        longest, least = self._gpu_widths
        widths["GPU"] = max(least, min(longest, room))
        return widths

    def _columns(self) -> list[tuple[str, int]]:
        names = COLUMNS if self.synth else COLUMNS[:-1]
        widths = self._widths()
        width = self._id_width()
        return [(name, widths.get(name, width)) for name in names]

    def _id_width(self) -> int:
        """Room for each side (job id, worker, partition): what the fixed columns leave."""
        widths = self._widths()
        gaps = len(widths) + 1  # one space between columns
        return max(ID_LEAST, (self._width() - sum(widths.values()) - gaps) // 2)

    def _line(self, cells: list[str], style: Style, crosses: Style | None = None) -> Strip:
        segments = []
        for k, ((name, width), cell) in enumerate(zip(self._columns(), cells, strict=False)):
            text = set_cell_size(cell, width)
            if name in _RIGHT and cell_len(cell) < width:
                text = " " * (width - cell_len(cell)) + cell
            cell_style = crosses if crosses is not None and name == "side" else style
            segments.append(Segment(text, cell_style))
            if k < len(cells) - 1:
                segments.append(Segment(" ", style))
        strip = Strip(segments)
        return strip.extend_cell_length(self._width(), style).crop(0, self._width())

    def render_line(self, y: int) -> Strip:
        """Line y of the widget: the column titles, then the rows from the scroll offset."""
        base = self.rich_style
        if y == 0:
            header = base + self.get_component_rich_style("gap-rows--header")
            return self._line([name for name, _ in self._columns()], header)
        row = int(self.scroll_offset.y) + y - 1
        if row >= self.row_count:
            return Strip.blank(self._width(), base)
        style = base
        if row % 2:
            style += self.get_component_rich_style("gap-rows--odd")
        if row == self.cursor_row:
            style += self.get_component_rich_style("gap-rows--cursor")
        crosses = None
        if self._crosses[self.gap_at(row)] and row != self.cursor_row:
            crosses = style + self.get_component_rich_style("gap-rows--crosses")
        return self._line(self.row_cells(row), style, crosses)

    def on_resize(self) -> None:
        """The id columns take what the width leaves."""
        self.virtual_size = Size(self._width(), self.row_count + 1)
        self.refresh()

    def _width(self) -> int:
        """The width rows are drawn in (the vertical scrollbar aside)."""
        return self.scrollable_content_region.width

    def _height(self) -> int:
        """The lines rows are drawn on, the titles' included."""
        return self.scrollable_content_region.height

    # -- moving ---------------------------------------------------------------------------

    def _page(self) -> int:
        return max(1, self._height() - 2)

    def move_cursor(self, row: int) -> None:
        """Put the cursor on `row` (kept within the list) and bring it into view."""
        self.cursor_row = max(0, min(row, self.row_count - 1))
        self._keep_cursor_visible()
        self.refresh()

    def _keep_cursor_visible(self) -> None:
        rows = max(1, self._height() - 1)  # the title line is not a row
        top = int(self.scroll_offset.y)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + rows:
            self.scroll_to(y=self.cursor_row - rows + 1, animate=False)

    def action_cursor(self, step: int) -> None:
        """One row up or down."""
        self.move_cursor(self.cursor_row + step)

    def action_page(self, step: int) -> None:
        """A screenful up or down."""
        self.move_cursor(self.cursor_row + step * self._page())

    def action_edge(self, last: int) -> None:
        """The first or the last row."""
        self.move_cursor(self.row_count - 1 if last else 0)

    def action_choose(self) -> None:
        """Jump to the gap under the cursor."""
        if self.row_count:
            self.post_message(self.Chosen(self.gap_at(self.cursor_row)))

    def on_click(self, event: Click) -> None:
        """A click puts the cursor on a row; a click on the cursor's row chooses it."""
        row = int(self.scroll_offset.y) + event.y - 1
        if event.y < 1 or row >= self.row_count:
            return
        if row == self.cursor_row:
            self.action_choose()
        else:
            self.move_cursor(row)
