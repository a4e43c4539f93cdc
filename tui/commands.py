"""The command palette, and its own entries: copy an id (OSC 52), the comparison, the visible
export."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.command import CommandInput, CommandList, CommandPalette
from textual.css.query import NoMatches
from textual.widgets import Input
from textual.worker import Worker

from parsers.durations import counted
from parsers.export import write_trace
from parsers.sanitize import CLIPBOARD_LIMIT_BYTES, clipboard_text
from parsers.writing import safe_stem, write_new
from tui.lanes import shown_id
from tui.screens import OrderedInput

if TYPE_CHECKING:
    from tui.app import CuzkApp


class ListedPalette(CommandPalette):
    """Textual's command palette, whose `enter` waits for the list of what was typed.

    The palette looks for the commands that match its text on a worker, started again at
    each key. An `enter` typed before that worker ended chose from the list of an earlier
    text: `zzzz enter` ran the command first listed for `z` (the busy split), and `gap list
    enter` typed fast in the gap list, where the palette offers fewer commands, quit the app.
    Such an `enter` is acted on once the list is the text's.
    """

    def __init__(self) -> None:
        super().__init__(id="--command-palette")  # as Textual's own opens it
        self._enter_waits = False
        self.enters = 0  # the enters its input submitted

    def compose(self) -> ComposeResult:
        """Textual's palette, whose input acts on its own keys in the order typed."""
        for widget in super().compose():
            if type(widget) is CommandInput:  # made as Textual's was
                widget = OrderedCommandInput(
                    placeholder=widget.placeholder, select_on_focus=widget.select_on_focus
                )
            yield widget

    def list_shown(self) -> bool:
        """The list of the commands matching the text is made and laid out: a click lands on
        the command it shows (none listed: the hold that waits for it runs to its end)."""
        shown = self.query_one(CommandList)
        return not self.listing() and shown.option_count > 0 and shown.region.height > 0

    def listing(self) -> bool:
        """The commands matching the text are still being looked for."""
        group = self._GATHER_COMMANDS_GROUP
        return any(w.node is self and w.group == group and not w.is_finished for w in self.workers)

    @work(exclusive=True, group=CommandPalette._GATHER_COMMANDS_GROUP)
    async def _gather_commands(self, search_value: str) -> None:
        """Textual's look for the commands matching the text, unless the palette is being
        taken down: a look started by a key typed as it closed found no list to fill and
        ended the app (NoMatches in the worker, 1 palette key storm in 30); so did a look
        the palette was taken down during (once in a full test run under load)."""
        if not self.query(CommandList):
            return
        gather = CommandPalette._gather_commands.__wrapped__  # type: ignore[attr-defined]
        try:
            await gather(self, search_value)
        except NoMatches:
            if self.query(CommandList):
                raise  # the list is there: not the palette going away

    def chose_nothing(self, enters: int) -> bool:
        """The first `enters` enters were acted on, and nothing was listed to choose: the
        last did nothing, and the palette stays (its keys after it need not wait)."""
        try:
            listed = self.query_one(CommandList)
        except NoMatches:
            # not composed yet, or being taken down: nothing is known to be done with
            return False
        # half a second after a look that found nothing, the list holds Textual's disabled
        # "No matches found" line: nothing to choose either
        nothing = listed.option_count == 0 or (
            listed.option_count == 1 and listed.get_option_at_index(0).id == self._NO_MATCHES
        )
        return self.enters >= enters and not self._enter_waits and not self.listing() and nothing

    @on(Input.Submitted)
    def _enter_once_listed(self, event: Input.Submitted) -> None:
        self.enters += 1
        if self.listing():
            event.stop()
            event.prevent_default()  # Textual's own handler acts once the list is made
            self._enter_waits = True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A look for commands ended: an `enter` that waited for it is acted on."""
        if self._enter_waits and event.worker.is_finished and not self.listing():
            self._enter_waits = False
            self._select_or_command()


class OrderedCommandInput(CommandInput, OrderedInput):
    """The palette's input, whose own keys (cursor moves, deletions, `enter`) act in the
    order typed: `gax backspace p` in one burst gave `gax` (`OrderedInput`). CommandInput
    first: Textual's queries and styles follow the first base only."""


def selected_id(app: CuzkApp) -> tuple[str, str] | None:
    """(the id, what it is): the job of the interval inspected, the job found with /, else
    the job of the gap selected or inspected (or of the interval selected)."""
    from tui.find import ProofScreen
    from tui.inspector import InspectorScreen
    from tui.interval import IntervalScreen

    gantt = app.gantt
    screen = app.screen
    if isinstance(screen, IntervalScreen):
        return screen.model.parts.job_of(screen.index), "the job of the interval"
    if isinstance(screen, ProofScreen):  # the match it shows
        return screen.jobs[screen.index].job, "the job found"
    if not isinstance(screen, InspectorScreen) and gantt.found_jobs:
        # on the Gantt a job found comes first, a gap selected before the search or not
        return gantt.found_jobs[gantt.found_index].job, "the job found"
    gap = screen.gap if isinstance(screen, InspectorScreen) else gantt.selected_gap
    if gap is None and gantt.selected_part is not None:
        return app.model.parts.job_of(gantt.selected_part), "the job of the interval"
    if gap is None:
        return None
    index = app.model.gaps.index_of(gap.gpu, gap.start)
    rank = f" #{app.model.gaps.rank_of(index)}" if index is not None else ""
    # the partition after the gap is the one the GPU waited for
    return gap.after.job, f"the job after gap{rank}"


def copy_id(app: CuzkApp) -> None:
    """`y`: put the id on the terminal's clipboard (OSC 52, works over SSH), and say so: only
    its printable characters, at most CLIPBOARD_LIMIT_BYTES (a clipboard is pasted into a
    shell, where a control character runs what follows it)."""
    chosen = selected_id(app)
    if chosen is None:
        app.notify("nothing to copy: select a gap (n) or find a job (/) first", severity="warning")
        return
    raw, what = chosen
    clip = clipboard_text(raw)
    notes = [what]
    if clip.removed:
        notes.append(f"{clip.removed} control or format characters left out")
    if clip.cut:
        notes.append(f"cut to {CLIPBOARD_LIMIT_BYTES} bytes")
    shown = shown_id(clip.text)  # the note cut where the id is long; the clipboard whole
    if not app.use_clipboard:
        notes.append("clipboard off: --no-clipboard")
        app.notify(f"{shown}\n({'; '.join(notes)})", title="id")
        return
    app.copy_to_clipboard(clip.text)
    app.notify(f"{shown}\n({'; '.join(notes)})", title="copied")


def show_compare(app: CuzkApp) -> None:
    """`c`: the comparison's tables and verdicts (only with --compare)."""
    if app.compared is None:
        app.notify("c shows a comparison: cuzk-tui --compare BEFORE AFTER", severity="warning")
        return
    from tui.compare import CompareScreen

    app.open_screen(CompareScreen(*app.compared))


def export_visible(app: CuzkApp) -> None:
    """Write the visible time range as a trace into the screenshot folder, and say where."""
    gantt = app.gantt
    t0 = gantt.t0
    t1 = t0 + gantt.timeline_width * gantt.scale
    # the part of the run in view: the margin drawn before its first event (or after its
    # last) holds nothing, and the file's name and its window_ms say the same times
    model = app.model
    if model.summary.first_synth_start is None and not any(g.span for g in model.gpus):
        app.notify("the log has no event to export yet", severity="warning")
        return
    first, last = model.time_range
    # to whole ms: the name's times are the window, `--from T0 --to T1` writes this trace
    t0, t1 = float(math.floor(max(t0, first))), float(math.ceil(min(t1, last)))
    if t1 <= t0:
        app.notify("nothing of the run is in view to export", severity="warning")
        return
    stem = f"cuzk-trace-{safe_stem(app.model.source)}-{t0:.0f}-{t1:.0f}ms"
    try:
        path, n = write_new(
            app.screenshot_dir,
            stem,
            ".json",
            lambda p: write_trace(app.model, p, t0, t1, app.inputs, exclusive=True),
        )
    except OSError as exc:
        app.notify(f"cannot write the trace: {exc.strerror or exc}", severity="error")
        return
    # the name whole on a line of its own: a toast wraps a long path anywhere
    where = Path(os.path.abspath(path))
    app.notify(
        f"{where.name}\nin {where.parent}\n({counted(n, 'event')}; open in ui.perfetto.dev)",
        title="trace",
    )


def commands(app: CuzkApp) -> Iterator[SystemCommand]:
    """The command palette's entries of this module: export, copy, compare."""
    yield SystemCommand(
        "Export the visible range as a trace",
        "Trace Event Format JSON for Perfetto / chrome://tracing, in the screenshot folder",
        lambda: export_visible(app),
    )
    yield SystemCommand(
        "Copy the id", "The found job's, or the selected gap's job id (y)", app.action_copy_id
    )
    if app.compared is not None:
        yield SystemCommand("Compare", "Every figure before and after (c)", app.action_compare)
