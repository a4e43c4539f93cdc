"""The Textual app: header figures, the Gantt, status and legend lines, and the screens."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Iterable
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from parsers.builder import LogBuilder
from parsers.model import LogModel, Phase
from parsers.rawlines import LineReader
from tui.axis import format_span
from tui.follow import FileSource, LiveLog, StreamSource, Update
from tui.gantt import GanttView
from tui.inspector import InspectorScreen
from tui.lanes import PHASE_CLASSES, PHASE_NAMES
from tui.replay import demo_writer, replay_writer
from tui.report import NO_GPU_LINES, fmt_ms, fmt_pct
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
        if model.counts.timeline and model.finished:
            text.append(f"\n{NO_GPU_LINES}", style="bold yellow")
        else:
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


class ModelUpdated(Message):
    """The follower has a newer model (posted from its thread)."""

    def __init__(self, update: Update) -> None:
        super().__init__()
        self.update = update


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

    def __init__(
        self,
        model: LogModel,
        reader: LineReader,
        live: LiveLog | None = None,
        on_exit: Callable[[], None] | None = None,
    ) -> None:
        super().__init__()
        self.model = model
        self.reader = reader
        self.live = live
        self._on_exit = on_exit
        self.status = ""  # what happened to the file, in words
        self.loading: float | None = 0.0 if live is not None else None
        self.input_ended = live is None
        self.events_at_pause: int | None = None
        self.updates = 0  # models shown so far (tests and benchmarks read it)
        self._closing = False
        self._header_for: tuple[LogModel, str] | None = None

    def compose(self) -> ComposeResult:
        """Header, Gantt, status, legend, footer."""
        yield Static(id="summary")
        yield GanttView(self.model, live=self.live is not None and self.live.follow, id="gantt")
        yield Static(id="status")
        yield Static(id="legend")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the Gantt (its keys are the main keys) and start following."""
        self.gantt.focus()
        self._refresh_text()
        if self.live is not None:
            live = self.live

            def publish(update: Update) -> None:
                self.post_message(ModelUpdated(update))  # thread-safe

            live.on_update = publish
            self.run_worker(self._follow, thread=True, exclusive=True, group="tail", name="tail")

    def _follow(self) -> None:
        """The follower's thread: a failure stops following, not the viewer."""
        assert self.live is not None
        try:
            self.live.run()
        except Exception as exc:  # a bug must not take the screen down with it
            self.call_from_thread(self._follower_failed, f"{type(exc).__name__}: {exc}")

    def _follower_failed(self, error: str) -> None:
        self.status = f"stopped following: {error}"
        self.input_ended = True
        self.loading = None
        self.gantt.live = self.gantt.pinned = False
        self.notify(self.status, severity="error", timeout=30)
        self._refresh_text()

    def on_unmount(self) -> None:
        """Stop the follower; remove what the run made (temporary files)."""
        self._closing = True
        if self.live is not None:
            self.live.halt()
        if self._on_exit is not None:
            self._on_exit()

    @property
    def gantt(self) -> GanttView:
        """The Gantt widget."""
        return self.query_one(GanttView)

    def state_text(self) -> str:
        """LIVE, PAUSED (+N new events), FINISHED, or reading N %."""
        if self.loading is not None:
            return f"reading {100 * self.loading:.0f} %"
        if self.input_ended or not self.gantt.live:
            return "FINISHED" if self.model.finished else "SNAPSHOT"
        if self.gantt.pinned:
            return "LIVE"
        new = self.model.counts.timeline - (self.events_at_pause or self.model.counts.timeline)
        return f"PAUSED +{new} new events (End/f follows)"

    def _refresh_text(self) -> None:
        state = self.state_text()
        if self.status:
            state = f"{state} · {self.status}"
        # a pan or a zoom changes only the status line: header and legend follow the model
        shown = self._header_for
        if shown is None or shown[0] is not self.model or shown[1] != state:
            self._header_for = (self.model, state)
            self.query_one("#summary", Static).update(header_text(self.model, state))
            self.query_one("#legend", Static).update(self._legend())
        self.query_one("#status", Static).update(status_text(self.gantt))

    def _legend(self) -> Text:
        text = Text()
        for phase, cls in PHASE_CLASSES.items():
            if phase == Phase.IN_FLIGHT and self.model.finished:
                continue
            text.append("█ ", style=self.gantt.get_component_rich_style(cls))
            text.append(f"{PHASE_NAMES[phase]}  ")
        text.append("░ gap", style="red")
        return text

    def on_model_updated(self, message: ModelUpdated) -> None:
        """A newer model from the follower: show it."""
        if self._closing:
            return
        try:
            self._show_update(message.update)
        except NoMatches:
            return  # closing: the follower's last word came after the screen went

    def _show_update(self, update: Update) -> None:
        self.model = update.model
        self.status = update.status
        self.loading = update.loading
        self.input_ended = update.finished or (
            self.live is not None and not self.live.follow and update.loading is None
        )
        if update.restarted:
            self.reader.reset()
            self.events_at_pause = None
            self.notify(update.status or "new run", severity="warning")
        gantt = self.gantt
        if self.input_ended:
            gantt.live = False
            gantt.pinned = False
        gantt.set_model(update.model, restarted=update.restarted)
        screen = self.screen
        if isinstance(screen, GapListScreen | InspectorScreen):
            screen.show_model(update.model)
        self.updates += 1
        self._refresh_text()

    def on_gantt_view_view_changed(self) -> None:
        """Keep the status line (and PAUSED) in step with the view."""
        if self.gantt.pinned:
            self.events_at_pause = None
        elif self.events_at_pause is None:
            self.events_at_pause = self.model.counts.timeline
        self._refresh_text()

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

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The viewer's own commands in the command palette (ctrl+p), after Textual's."""
        yield from super().get_system_commands(screen)
        if not screen.query(GanttView):
            return  # another screen (the inspector, a list) is on top
        gantt = self.gantt
        yield SystemCommand(
            "Next gap", "Select the next gap at or above the threshold (n)", gantt.action_next_gap
        )
        yield SystemCommand(
            "Previous gap", "Select the previous gap (N)", gantt.action_previous_gap
        )
        yield SystemCommand("Gap list", "Every gap, worst first (g)", self.action_gap_list)
        yield SystemCommand(
            "Inspect the selected gap", "Both sides, cause, raw lines (enter)", gantt.action_inspect
        )
        yield SystemCommand(
            "Raise the gap threshold", "Hide shorter gaps (])", gantt.action_raise_threshold
        )
        yield SystemCommand(
            "Lower the gap threshold", "Show shorter gaps ([)", gantt.action_lower_threshold
        )
        yield SystemCommand("Fit the whole run", "Zoom out to the whole run (0)", gantt.action_fit)
        if gantt.live:
            yield SystemCommand(
                "Follow the end", "Keep now in view as the log grows (End, f)", gantt.action_follow
            )


def make_app(
    model: LogModel,
    reader: LineReader,
    live: LiveLog | None = None,
    on_exit: Callable[[], None] | None = None,
) -> CuzkApp:
    """The app on a model, or following a live log (the CLI and the tests build it alike)."""
    return CuzkApp(model, reader, live, on_exit)


def _stdin_for_data() -> int:
    """Keep the piped standard input for the log; read the keys from the terminal."""
    data_fd = os.dup(0)
    try:
        tty = os.open("/dev/tty", os.O_RDONLY)
    except OSError:
        from tui.cli import fail

        fail("reading the log from standard input needs a terminal for the keys (/dev/tty)")
    os.dup2(tty, 0)
    os.close(tty)
    return data_fd


def run_app(args: argparse.Namespace) -> int:
    """Open the viewer as the command line asks."""
    from tui.cli import DEMO_NAME, check_log_path

    wpg = args.workers_per_gpu
    empty = LogBuilder(source="").snapshot()
    cleanup: Callable[[], None] | None = None
    if args.log == "-":
        stream = StreamSource(_stdin_for_data())
        live = LiveLog(stream, lambda _: None, wpg, follow=True)
        reader = LineReader(path=stream.spool_path)
        cleanup = stream.close
    elif args.demo or args.replay is not None:
        writer = (
            demo_writer() if args.demo else replay_writer(check_log_path(args.log), args.replay)
        )
        writer.start()
        source = FileSource(writer.path)
        if args.demo:
            source.name = DEMO_NAME
        live = LiveLog(source, lambda _: None, wpg, follow=not args.no_follow)
        reader = LineReader(path=writer.path)

        def cleanup() -> None:
            source.close()
            writer.cleanup()
    else:
        path = check_log_path(args.log)
        file_source = FileSource(path)
        live = LiveLog(file_source, lambda _: None, wpg, follow=not args.no_follow)
        reader = LineReader(path=path)
        cleanup = file_source.close
    make_app(empty, reader, live, on_exit=cleanup).run()
    return 0
