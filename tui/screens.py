"""The gap list (worst first) and the help screen."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from parsers.model import LogModel
from tui.report import fmt_ms

KEYS = [
    ("n / N", "select the next / previous gap at or above the threshold, centred"),
    ("] / [", "raise / lower the gap threshold (0, 10, 50, 100, 250, 500 ms, 1, 2, 5 s)"),
    ("enter", "open the inspector for the selected gap"),
    ("escape", "close the inspector, the gap list or this help"),
    ("g", "list of gaps, worst first; enter jumps to one"),
    ("+ / -", "zoom in / out around the selection or the centre"),
    ("left / right, h / l", "pan"),
    ("up / down", "scroll the lanes"),
    ("0", "fit the whole run"),
    ("f / End", "follow the end of a growing log again (live logs)"),
    ("?", "this help"),
    ("q", "quit"),
]


class GapListScreen(ModalScreen[int | None]):
    """Every gap, worst first. Returns the index (into model.gaps) of the chosen one."""

    DEFAULT_CSS = """
    GapListScreen { align: center middle; }
    GapListScreen > Vertical {
        width: 96%; height: 90%; border: round $accent; background: $surface;
    }
    GapListScreen DataTable { height: 1fr; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "dismiss_none", "Close")]

    def __init__(self, model: LogModel, threshold_ms: int) -> None:
        super().__init__()
        self.model = model
        self.threshold_ms = threshold_ms
        self._order: list[int] = []

    def compose(self) -> ComposeResult:
        """A table of the gaps."""
        with Vertical(id="gap-list"):
            yield DataTable(cursor_type="row", zebra_stripes=True)
        yield Footer()

    def on_mount(self) -> None:
        """Fill the table, worst first."""
        table = self.query_one(DataTable)
        table.add_columns("duration", "start", "GPU", "boundary", "cause", "before", "after")
        self._fill()
        table.focus()

    def show_model(self, model: LogModel) -> None:
        """The log grew: list its gaps now, staying on the same gap."""
        table = self.query_one(DataTable)
        current = None
        if table.row_count:
            key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
            if key is not None:
                gap = self.model.gaps[int(key)]
                current = (gap.gpu, gap.start)
        self.model = model
        table.clear()
        self._fill()
        if current is not None:
            for row, g in enumerate(self._order):
                if (model.gaps[g].gpu, model.gaps[g].start) == current:
                    table.move_cursor(row=row)
                    break

    def _fill(self) -> None:
        box = self.query_one("#gap-list", Vertical)
        table = self.query_one(DataTable)
        order = sorted(
            (i for i, g in enumerate(self.model.gaps) if g.duration_ms >= self.threshold_ms),
            key=lambda i: (-self.model.gaps[i].duration_ms, self.model.gaps[i].start),
        )
        for i in order:
            g = self.model.gaps[i]
            table.add_row(
                Text(fmt_ms(g.duration_ms), justify="right"),
                Text(fmt_ms(g.start), justify="right"),
                str(g.gpu),
                Text("crosses", style="magenta") if g.crosses_proof_boundary else "mid-proof",
                g.cause or "—",
                Text(_side(g.before.job, g.before.worker, g.before.partition)),
                Text(_side(g.after.job, g.after.worker, g.after.partition)),
                key=str(i),
            )
        self._order = order
        box.border_title = f"{len(order)} gaps of {self.threshold_ms} ms or more, worst first"
        box.border_subtitle = "enter jumps · esc closes"

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter on a row: jump to that gap."""
        key = event.row_key.value
        self.dismiss(int(key) if key is not None else None)

    def action_dismiss_none(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


def _side(job: str, worker: int, partition: int | None) -> str:
    return f"{job} w{worker}" + (f" p{partition}" if partition is not None else "")


class HelpScreen(ModalScreen[None]):
    """Every key."""

    DEFAULT_CSS = """
    HelpScreen { align: center middle; }
    HelpScreen > Vertical {
        width: auto; max-width: 96%; height: auto; max-height: 90%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close")]

    def compose(self) -> ComposeResult:
        """The key table and the legend."""
        text = Text()
        width = max(len(k) for k, _ in KEYS)
        for key, what in KEYS:
            text.append(f"{key:>{width}}  ", style="bold")
            text.append(f"{what}\n")
        text.append(
            "\nLanes: per GPU a busy lane (union of GPU_START..GPU_END; gaps ░ in red, "
            "the selected one highlighted), a kernel lane (how full of kernels each cell "
            "is), and one lane per worker with each interval split into its phases. "
            "Overlapping intervals of one worker (split proving) go on a second row w0'1. "
            "Then partitions in synthesis, and proofs (┣ first synthesis … last GPU_END ┫; "
            "▶ still running; ✗ never completed).",
            style="dim",
        )
        with Vertical(id="help"):
            yield Static(text)
        yield Footer()

    def on_mount(self) -> None:
        """Title the box."""
        self.query_one("#help", Vertical).border_title = "keys"
