"""The Textual app: header figures, the Gantt, status and legend lines, and the screens."""

from __future__ import annotations

import argparse
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Static

from parsers.model import LogModel, Phase
from parsers.rawlines import LineReader
from tui.axis import format_span
from tui.gantt import PHASE_CLASSES, PHASE_NAMES, GanttView
from tui.inspector import InspectorScreen
from tui.report import fmt_ms, fmt_pct
from tui.screens import GapListScreen, HelpScreen


def header_text(model: LogModel, state: str) -> Text:
    """Source, run figures and, per GPU, the honest pair of utilizations."""
    s = model.summary
    text = Text()
    text.append("cuzk-tui ", style="bold")
    text.append(model.source)
    text.append(
        f"  run {fmt_ms(s.run_span_ms)}  proofs {s.proofs_completed}/{s.proofs_started}"
        f"  {s.s_per_proof:.2f} s/proof  "
    )
    text.append(state, style="bold reverse" if state != "FINISHED" else "dim")
    for g in model.gpus:
        text.append(f"\nGPU{g.gpu} ", style="bold")
        text.append("TIMELINE ")
        text.append(f"{fmt_pct(g.timeline_util):>7}", style="bold yellow")
        text.append("  kernel ")
        text.append(f"{fmt_pct(g.kernel_util):>7}", style="bold green")
        text.append(f"  idle {fmt_ms(g.span_ms - g.busy_ms)} in ", style="dim")
        text.append(f"{sum(1 for x in model.gaps if x.gpu == g.gpu)} gaps", style="dim")
        if g.in_flight:
            text.append(f"  (+{g.in_flight} in flight, not counted)", style="italic")
    if not model.gpus:
        text.append("\nno GPU interval in this log yet", style="dim")
    return text


def status_text(view: GanttView) -> Text:
    """Threshold, selection and zoom."""
    model = view.model
    shown = sum(1 for g in model.gaps if g.duration_ms >= view.threshold_ms)
    text = Text()
    text.append(f"gaps ≥ {fmt_ms(view.threshold_ms)}: ", style="bold")
    text.append(f"{shown}")
    gap = view.selected_gap
    if gap is not None and view.selected is not None:
        rank = sum(
            1
            for i, g in enumerate(model.gaps)
            if g.duration_ms >= view.threshold_ms and i <= view.selected
        )
        text.append(f"  │ #{rank} GPU{gap.gpu} ")
        text.append(fmt_ms(gap.duration_ms), style="bold red")
        text.append(f" at {fmt_ms(gap.start)} · ")
        text.append(
            "crosses proofs" if gap.crosses_proof_boundary else "mid-proof",
            style="magenta" if gap.crosses_proof_boundary else "",
        )
        text.append(f" · {gap.cause or 'no queue event'}")
    else:
        text.append("  │ n: first gap")
    text.append(f"  │ cell = {format_span(view.scale)}", style="dim")
    return text


class CuzkApp(App[None]):
    """cuzk-tui: why is the GPU not busier?"""

    TITLE = "cuzk-tui"
    CSS = """
    Screen { layout: vertical; }
    #summary { height: auto; padding: 0 1; background: $panel; }
    GanttView { height: 1fr; }
    #status { height: 1; padding: 0 1; background: $panel; }
    #legend { height: 1; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("q", "quit", "Quit"),
        Binding("g", "gap_list", "Gaps"),
        Binding("question_mark", "help", "Help", key_display="?"),
    ]

    def __init__(self, model: LogModel, reader: LineReader) -> None:
        super().__init__()
        self.model = model
        self.reader = reader
        self.state = "FINISHED"

    def compose(self) -> ComposeResult:
        """Header, Gantt, status, legend, footer."""
        yield Static(header_text(self.model, self.state), id="summary")
        yield GanttView(self.model, id="gantt")
        yield Static(id="status")
        yield Static(id="legend")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the Gantt: its keys are the app's main keys."""
        self.gantt.focus()
        self.on_gantt_view_view_changed()

    @property
    def gantt(self) -> GanttView:
        """The Gantt widget."""
        return self.query_one(GanttView)

    def _legend(self) -> Text:
        text = Text()
        for phase, cls in PHASE_CLASSES.items():
            if phase == Phase.IN_FLIGHT and self.model.finished:
                continue
            text.append("█ ", style=self.gantt.get_component_rich_style(cls))
            text.append(f"{PHASE_NAMES[phase]}  ")
        text.append("░ gap", style="red")
        return text

    def on_gantt_view_view_changed(self) -> None:
        """Keep the status line in step with the view."""
        self.query_one("#status", Static).update(status_text(self.gantt))
        self.query_one("#legend", Static).update(self._legend())

    def on_gantt_view_inspect_gap(self, message: GanttView.InspectGap) -> None:
        """Open the inspector."""
        self.push_screen(InspectorScreen(self.model, message.gap, self.reader))

    def action_gap_list(self) -> None:
        """The gap list; choosing one selects it in the Gantt."""

        def chosen(index: int | None) -> None:
            if index is not None:
                self.gantt.select_gap(index)

        self.push_screen(GapListScreen(self.model, self.gantt.threshold_ms), chosen)

    def action_help(self) -> None:
        """Every key."""
        self.push_screen(HelpScreen())


def make_app(model: LogModel, reader: LineReader) -> CuzkApp:
    """The app on a model (the CLI and the tests build it the same way)."""
    return CuzkApp(model, reader)


def run_app(args: argparse.Namespace) -> int:
    """Open the viewer as the command line asks."""
    from parsers.builder import LogBuilder
    from parsers.report import read_log
    from tui.cli import DEMO_NAME, check_log_path, demo_bytes

    if args.demo:
        data = demo_bytes()
        builder = LogBuilder(source=DEMO_NAME, workers_per_gpu=args.workers_per_gpu)
        builder.feed(data)
        model = builder.build()
        reader = LineReader(data=data)
    else:
        path = check_log_path(args.log)
        model = read_log(path, workers_per_gpu=args.workers_per_gpu)
        reader = LineReader(path=path)
    make_app(model, reader).run()
    return 0
