"""The gap list (worst first), the help screen and the find box."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, ScreenResultType
from textual.widgets import DataTable, Footer, Input, Static

from parsers.model import PHASE_NAMES, Gap, LogModel
from parsers.why import synthesis_during
from tui.lanes import GAP_GLYPH, PHASE_GLYPHS, abbreviate
from tui.report import fmt_ms

# q and ctrl+c quit from every screen (a modal screen hides the app's own bindings)
QUIT_BINDINGS: list[BindingType] = [
    Binding("q", "app.quit", "Quit"),
    Binding("ctrl+c", "app.quit", "Quit", show=False, priority=True),
]


class SafeModal(ModalScreen[ScreenResultType]):
    """A modal screen that is dismissed once, and only while it is on top.

    Textual's `dismiss` pops whatever screen is on top: a second `enter` or `escape` typed
    before the first one took effect would pop the screen below (the Gantt's: the app dies
    with ScreenStackError), and a result callback would run twice.
    """

    def __init__(self) -> None:
        super().__init__()
        self._dismissed = False

    def dismiss(self, result: ScreenResultType | None = None) -> AwaitComplete:
        """Dismiss this screen, unless it already was or another screen is on top."""
        if self._dismissed or not self.is_active:
            return AwaitComplete()
        self._dismissed = True
        return super().dismiss(result)


KEYS = [
    ("?", "this help"),
    ("q, ctrl+c", "quit (from any screen)"),
    ("n / N", "select the next / previous gap (by time) at or above the threshold"),
    ("enter", "inspect the selected gap (beside the Gantt when 160+ columns wide)"),
    ("g", "list of gaps, longest first (#1 is the longest); enter jumps to one"),
    ("/", "find a job by id, prefix or sector number; n / N step through matches"),
    ("escape", "close a window; on the Gantt, drop the selection and the search"),
    ("] / [", "raise / lower the gap threshold (0 ms … 5 s)"),
    ("+ / -", "zoom in / out (around the selection when in view)"),
    ("left right, h l", "pan"),
    ("up / down", "scroll the lanes (and the inspector)"),
    ("0", "fit the whole run"),
    ("r", "next run of a log where the daemon restarted"),
    ("f / End", "follow the end of a growing log again"),
    ("b", "show / hide where each GPU's busy time went"),
    ("y", "copy the found job's id, or the selected gap's job id (OSC 52)"),
    ("c", "with --compare: every figure before and after, and what moved"),
    ("ctrl+p", "command palette (screenshot, export the visible range as a trace, theme, …)"),
]


SYNTH_COLUMN_WIDTH = 100  # from this width the gap list shows the synth column


# The gap list shows at most this many gaps (the longest).
GAP_LIST_ROWS = 500


class GapListScreen(SafeModal[int | None]):
    """Every gap, worst first. Returns the index (into model.gaps) of the chosen one."""

    DEFAULT_CSS = """
    GapListScreen { align: center middle; }
    GapListScreen > Vertical {
        width: 98%; height: 92%; border: round $accent; background: $surface;
    }
    GapListScreen DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close"),
        *QUIT_BINDINGS,
    ]

    def __init__(self, model: LogModel, threshold_ms: int) -> None:
        super().__init__()
        self.model = model  # the newest model
        self.shown = model  # the model the rows were made from (row keys index its gaps)
        self.threshold_ms = threshold_ms
        self._order: list[int] = []
        self._signature: tuple[object, ...] = ()
        self._synth = False

    def compose(self) -> ComposeResult:
        """A table of the gaps."""
        with Vertical(id="gap-list"):
            yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Fill the table, worst first."""
        table = self.query_one(DataTable)
        # the synth column (parsers/why.py) where there is room for it
        self._synth = self.app.size.width >= SYNTH_COLUMN_WIDTH
        synth = ("synth",) if self._synth else ()
        table.add_columns("#", "length", "at", "GPU", "side", "cause", "before", "after", *synth)
        self._fill()
        table.focus()

    def show_model(self, model: LogModel) -> None:
        """The log grew: list its gaps now, staying on the same gap. The rows are made again
        only when the longest gaps, or the run's synthesis peak, changed."""
        self.model = model
        if self._rows_of(model) == self._signature:
            self._title(model.gaps.how_many(min_ms=self.threshold_ms))
            return
        table = self.query_one(DataTable)
        current = None
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                gap = self.shown.gaps[int(key)]
                current = (gap.gpu, gap.start)
        table.clear()
        self._fill()
        if current is not None:
            for row, g in enumerate(self._order):
                if (model.gaps[g].gpu, model.gaps[g].start) == current:
                    table.move_cursor(row=row)
                    break

    def _rows_of(self, model: LogModel) -> tuple[object, ...]:
        """What the rows show of `model`: its longest gaps and the synthesis peak."""
        order = model.gaps.largest(GAP_LIST_ROWS, self.threshold_ms)
        gaps = model.gaps
        keys = tuple(zip(gaps.gpu[order].tolist(), gaps.start[order].tolist(), strict=True))
        peak = int(model.synth_counts.max()) if len(model.synth_counts) else 0
        return (keys, peak if self._synth else None, self.app.size.width)

    def _id_width(self) -> int:
        """Room for each job id: what the fixed columns leave, shared by both sides."""
        fixed = 4 + 9 + 8 + 3 + 8 + 9 + 2 * len(" w00 p00") + 8 * 2 + 4
        fixed += 11 if self._synth else 0
        return max(8, (self.app.size.width - fixed) // 2)

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        model = self.shown = self.model
        # a table of tens of thousands of rows takes seconds to build: the longest ones are
        # what a reader looks at, and `]` narrows the list to the rest
        order = model.gaps.largest(GAP_LIST_ROWS, self.threshold_ms)
        width = self._id_width()
        for rank, i in enumerate(order, 1):  # all longer gaps are listed before: rank = row
            g = model.gaps[i]
            table.add_row(
                Text(str(rank), justify="right"),
                Text(fmt_ms(g.duration_ms), justify="right"),
                Text(fmt_ms(g.start), justify="right"),
                model.gpu_label(g.gpu) if model.gpu_names else str(g.gpu),
                Text("crosses", style="magenta") if g.crosses_proof_boundary else "mid",
                {"synthesis": "synth", "dispatch": "dispatch"}.get(g.cause or "", "—"),
                Text(_side(g.before.job, g.before.worker, g.before.partition, width)),
                Text(_side(g.after.job, g.after.worker, g.after.partition, width)),
                # partitions in synthesis during the gap / the run's peak (parsers/why.py)
                *((Text(synthesis_cell(model, g), justify="right"),) if self._synth else ()),
                key=str(i),
            )
        self._order = order
        self._signature = self._rows_of(model)
        self._title(model.gaps.how_many(min_ms=self.threshold_ms))

    def _title(self, count: int) -> None:
        box = self.query_one("#gap-list", Vertical)
        box.border_title = f"{count} gaps of {self.threshold_ms} ms or more, longest first"
        if count > len(self._order):
            box.border_title += f" (the {len(self._order):,} longest shown; ] raises the threshold)"
        box.border_subtitle = "enter jumps · esc closes · full ids in the inspector"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: jump to that gap."""
        key = event.row_key.value
        if key is None:
            self.dismiss(None)
            return
        # the row's gap in the newest model
        gap = self.shown.gaps[int(key)]
        self.dismiss(self.model.gaps.index_of(gap.gpu, gap.start))

    def action_dismiss_none(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


def synthesis_cell(model: LogModel, gap: Gap) -> str:
    """`4/4 full`: most partitions in synthesis during the gap, of the run's peak."""
    lo, most, peak = synthesis_during(model, gap.start, gap.end, gap.gpu)
    return f"{most}/{peak}" + (" full" if peak and lo >= peak else "")


def _side(job: str, worker: int, partition: int | None, width: int) -> str:
    return f"{abbreviate(job, width)} w{worker}" + (
        f" p{partition}" if partition is not None else ""
    )


def help_text() -> Group:
    """Every key, then what each glyph of the Gantt means."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(justify="right", style="bold", no_wrap=True)
    keys.add_column()
    for key, what in KEYS:
        keys.add_row(key, what)
    glyphs = Text("\nGlyphs\n", style="bold")
    phases = "  ".join(f"{PHASE_GLYPHS[p]} {PHASE_NAMES[p]}" for p in PHASE_GLYPHS)
    glyphs.append(f"worker lanes: {phases}\n")
    glyphs.append(
        f"busy lane: █ busy all the cell, ▁…▇ as high as the busy share, {GAP_GLYPH} idle "
        "(red: a gap at or above the threshold takes half the cell or more)\n"
        "kernel lane: ▁…█ how full of kernels; synthesis: ▁…█ partitions in synthesis\n"
        "proofs: ┣ first synthesis … last GPU_END ┫, ▶ still running, ✗ never completed; "
        "▼ now (live)\n",
        style="dim",
    )
    return Group(keys, glyphs)


class HelpScreen(SafeModal[None]):
    """Every key."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > VerticalScroll {
        width: 96%; max-width: 110; height: auto; max-height: 96%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    HelpScreen Static { width: 100%; height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark", "dismiss", "Close"),
        *QUIT_BINDINGS,
    ]

    def compose(self) -> ComposeResult:
        """The key table and the legend, scrolled when the terminal is small."""
        with VerticalScroll(id="help"):
            yield Static(help_text(), id="help-text")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        """Title the box."""
        box = self.query_one("#help", VerticalScroll)
        box.border_title = "keys"
        box.border_subtitle = "esc closes"
        box.focus()


class FindScreen(SafeModal[str | None]):
    """A one-line box: the job to look for."""

    DEFAULT_CSS = """
    FindScreen { align: center middle; }
    FindScreen > Vertical {
        width: 70; max-width: 96%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "dismiss_none", "Close")]

    def compose(self) -> ComposeResult:
        """The input."""
        with Vertical(id="find"):
            yield Input(placeholder="job id, its beginning, or a sector number")

    def on_mount(self) -> None:
        """Title the box; type right away."""
        self.query_one("#find", Vertical).border_title = "find a job"
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: look for it."""
        self.dismiss(event.value.strip() or None)

    def action_dismiss_none(self) -> None:
        """Close without looking."""
        self.dismiss(None)
