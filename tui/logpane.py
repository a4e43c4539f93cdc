"""The log pane (`L`): the log's own lines at the selection, scrolled through the whole log,
with a regex search (`/`, `n`, `N`) and a jump to a line or a time (`:`)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from typing import ClassVar, NamedTuple

import numpy as np
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Footer, Input, Static

from parsers._core import LineRegex
from parsers.hosts import HostLines, reader_for
from parsers.linesearch import LineSearch, compile_search
from parsers.linestamps import LineStamps
from parsers.model import Gap, LogModel
from parsers.proofs import FoundJob, job_numbers
from parsers.rawlines import LineReader
from parsers.sanitize import visible
from parsers.timespec import PANE_FORMS, parse_time, resolve
from tui.lanes import LOG_NAME_CELLS, abbreviate
from tui.loglines import SHOW_BYTES, LogLines
from tui.screens import QUIT_BINDINGS, HelpScreen, OrderedInput, SafeModal

SEARCH_TURN_S = 0.05  # a search reads for this long, then lets the screen answer keys


class LogAt(NamedTuple):
    """Where the pane opens: the log (its reader, the partitions whose lines it holds), the
    line, and what the line is."""

    reader: LineReader
    parts: tuple[int, int]  # first partition of the log, past its last
    line: int
    why: str
    name: str | None = None  # the log's, when the model holds several


def _log_of(
    reader: LineReader, model: LogModel, part: int
) -> tuple[LineReader, int, int, str | None]:
    """The reader of the log partition `part` came from, that log's partitions, and its name
    (None: the model holds one log)."""
    if isinstance(reader, HostLines) and reader.merged.hosts:
        return _host_log(reader, model, reader.merged.host_of_part(part))
    return reader_for(reader, part, model), 0, len(model.parts), None


def _host_log(
    reader: HostLines, model: LogModel, host: int
) -> tuple[LineReader, int, int, str | None]:
    """Log `host` of several: its reader, its partitions (first, past its last), its name."""
    firsts = [h.first_part for h in reader.merged.hosts]
    end = firsts[host + 1] if host + 1 < len(firsts) else len(model.parts)
    return reader.for_host(host), firsts[host], end, reader.merged.hosts[host].name


def log_at(
    model: LogModel,
    reader: LineReader,
    gap: Gap | None,
    job: FoundJob | None,
    view_ms: float,
    interval: int | None = None,
) -> LogAt:
    """Where the pane opens: at the interval's first line (its GPU_START), else at the gap's
    edge (the GPU_END before it), else at the job's first TIMELINE line the model knows,
    else at the line whose stamp is nearest the view's middle, else at the first line.

    Args:
        model: the model shown.
        reader: the app's reader (of several logs, when the model merges them).
        gap: the selected gap.
        job: the proof found (`/` on the Gantt).
        view_ms: the middle of the Gantt's view.
        interval: the partition the interval inspector shows.
    """
    t = model.parts
    if interval is not None and 0 <= interval < len(t) and t.start_line[interval] > 0:
        log, first, end, name = _log_of(reader, model, interval)
        start = int(t.start_line[interval])
        return LogAt(log, (first, end), start, "the interval's first line", name)
    if gap is not None:
        part = gap.before.index
        log, first, end, name = _log_of(reader, model, part)
        return LogAt(log, (first, end), int(t.end_line[part]), "the GPU_END before the gap", name)
    mine = np.flatnonzero(np.isin(t.job, job_numbers(model, job))) if job is not None else None
    # a job with no partition (a log without TIMELINE lines: its tracing lines tell it), of
    # several logs: its own log, from its first line
    host = job.log if job is not None and (mine is None or not len(mine)) else None
    if host is not None and isinstance(reader, HostLines) and 0 <= host < len(reader.readers):
        assert job is not None
        log, first, end, name = _host_log(reader, model, host)
        return LogAt(
            log, (first, end), 1, f"job {visible(job.job)}'s log (no TIMELINE line of it)", name
        )
    if job is not None and mine is not None and len(mine):
        lines = np.concatenate([t.start_line[mine], t.end_line[mine]])
        known = lines > 0
        if known.any():
            k = int(np.argmin(np.where(known, lines, np.iinfo(np.int64).max)))
            part = int(mine[k % len(mine)])
            log, first, end, name = _log_of(reader, model, part)
            return LogAt(log, (first, end), int(lines[k]), f"job {visible(job.job)}", name)
    stamps = LineStamps.of(t)
    line = stamps.nearest(view_ms)
    if line is not None:
        found = stamps.at_line(line)
        part = found[0] if found is not None else 0
        log, first, end, name = _log_of(reader, model, part)
        if (first, end) != (0, len(t)):  # several logs: the nearest line of this one
            own = LineStamps.of(t, first, end).nearest(view_ms)
            line = own if own is not None else line
        why = "the TIMELINE line nearest the view's middle"
        return LogAt(log, (first, end), line, why, name)
    log, first, end, name = _log_of(reader, model, 0)
    return LogAt(log, (first, end), 1, "the log's first line", name)


class LogPaneScreen(SafeModal[None]):
    """The log's own lines; `/` searches, `n`/`N` step, `:` jumps, esc closes.

    Args:
        at: where to open (`log_at`).
        model: the model shown (its partitions' lines and stamps: `:` to a time, and the
            Gantt following the cursor).
        latest: the model shown now (`r` reads the log again, for a growing log).
    """

    DEFAULT_CSS = """
    LogPaneScreen { align: center middle; }
    LogPaneScreen > #logpane {
        width: 100%; height: 1fr; border: round $accent; background: $surface;
    }
    /* a long word (the forms a time may take) wraps: up to four lines, then cut */
    LogPaneScreen > #logpane-status { height: auto; max-height: 4; padding: 0 1; }
    LogPaneScreen > #logpane-status { background: $panel; text-overflow: ellipsis; }
    LogPaneScreen > Input { display: none; }
    LogPaneScreen > Input.-open { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        # priority: the prompt would take the keys typed after escape (SafeModal)
        Binding("escape", "close", "Close", priority=True),
        Binding("slash", "prompt('/')", "Search", key_display="/"),
        Binding("n", "search_next(1)", "Next"),
        Binding("N", "search_next(-1)", "Prev", show=False),
        Binding("colon", "prompt(':')", "Go to", key_display=":"),
        Binding("r", "reload", "Reload", show=False),
        Binding("question_mark", "help", "Help", key_display="?", show=False),
        *QUIT_BINDINGS,
    ]

    class AtTimeline(Message):
        """The cursor is on a partition's GPU_START or GPU_END line (stamped `ms`)."""

        def __init__(self, part: int, ms: float, line: int) -> None:
            super().__init__()
            self.part = part
            self.ms = ms
            self.line = line

    def __init__(self, at: LogAt, model: LogModel, latest: Callable[[], LogModel]) -> None:
        super().__init__()
        self.at = at
        self.model = model
        self.latest = latest
        self.stamps = LineStamps.of(model.parts, *at.parts)
        self.pattern: LineRegex | None = None
        self.pattern_text = ""
        self.searching: LineSearch | None = None
        # n and N typed while a search runs: each searched in turn from where the one
        # before it left the cursor, as they would have been typed slowly
        self.queued: list[int] = []
        self.prompt_kind = "/"
        self.said = ""
        self.placed = False  # until the cursor is on the line asked for (keys typed wait)

    def compose(self) -> ComposeResult:
        """The lines, the status line, the prompt (shown for / and :), the footer."""
        yield LogLines(self.at.reader, 0, id="logpane")
        yield Static(id="logpane-status")
        yield OrderedInput(id="logpane-prompt")
        yield Footer(compact=True)

    @property
    def lines(self) -> LogLines:
        """The lines widget."""
        return self.query_one(LogLines)

    def on_mount(self) -> None:
        """Count the lines, put the cursor on the line asked for."""
        self.lines.border_subtitle = "/ search · n/N · : line or time · esc closes"
        self._count()
        if self.lines.total:
            # once laid out: the view's height decides where the middle is
            self.call_after_refresh(self._place)
            self.say(f"line {self.at.line:,}: {self.at.why}")
        else:
            self.placed = True
        self.lines.focus()

    def _place(self) -> None:
        """The cursor on the line asked for, in the middle of the view."""
        self.lines.go_to(self.at.line, True)
        self.placed = True

    def _count(self) -> None:
        """How many lines the log holds; said when none can be read."""
        lines = self.lines
        try:
            total = self.at.reader.line_count()
        except OSError as exc:
            total = 0
            self.say(f"cannot read the log: {exc.strerror or exc}")
        lines.set_total(total)
        title = f"the log's own lines: {total:,}"
        if self.at.name is not None:  # several logs: which one
            title = f"{title} · {abbreviate(self.at.name, LOG_NAME_CELLS)}"
        lines.border_title = title
        if not total:
            known = bool(len(self.stamps))
            self.say(
                "this log's own lines cannot be read again (read from a pipe or an archive "
                "that was not kept)"
                if known
                else "the log holds no complete line yet"
            )

    def say(self, text: str) -> None:
        """One line in the status (made visible and literal: it may quote the log or a typed
        text, whose `[red]` is not markup)."""
        self.said = visible(text)
        self.query_one("#logpane-status", Static).update(Text(self.said))

    # -- the prompt ---------------------------------------------------------------------

    def action_prompt(self, kind: str) -> None:
        """Open the prompt: `/` a regex to search for, `:` a line number or a time."""
        self._stop_search()
        self.prompt_kind = kind
        box = self.query_one(Input)
        box.placeholder = (
            "regex (case ignored unless it has a capital)"
            if kind == "/"
            else "line number, or a time: 12.5s, 3m20s, 1h05m, 12:30:05"
        )
        box.value = ""
        box.add_class("-open")
        box.focus()  # after on_mount's focus of the lines (`L/` in one burst); held keys follow

    def _close_prompt(self) -> None:
        box = self.query_one(Input)
        box.remove_class("-open")
        # now, not after the keys already typed (`focus` waits its turn): `esc q` quits
        self.set_focus(self.lines)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter in the prompt: search or jump."""
        event.stop()
        text = event.value.strip()
        self._close_prompt()
        if not text:
            return
        if self.prompt_kind == "/":
            self.search(text)
        else:
            self.jump(text)

    def closes_on(self, key: str) -> bool:
        """Its closing key once no search runs and the prompt is closed (before, `escape`
        stops the search, or closes the prompt)."""
        idle = not self._searching and not self.query_one(Input).has_class("-open")
        return idle and super().closes_on(key)

    def action_close(self) -> None:
        """Esc: stop a search (and the n typed after it), else close the prompt, else close
        the pane."""
        if self._searching:
            self._stop_search()
            self.say("search stopped")
        elif self.query_one(Input).has_class("-open"):
            self._close_prompt()
        else:
            self.dismiss(None)

    # -- search -------------------------------------------------------------------------

    def search(self, text: str) -> None:
        """Look for `text` (a regex) from the cursor down."""
        try:
            pattern = compile_search(text)
        except ValueError as exc:
            self.say(f"/{text}: {exc}")
            return
        self.pattern, self.pattern_text = pattern, text
        self.lines.highlight(pattern)
        self._start_search(1)

    def action_search_next(self, direction: int) -> None:
        """`n`: the next match below the cursor; `N`: the one above."""
        if self.pattern is None:
            self.say("nothing searched yet: / and a regex")
            return
        if self.searching is not None:
            self.queued.append(direction)
            return
        self._start_search(direction)

    def _start_search(self, direction: int) -> None:
        """Search from the cursor (a search running, or any queued after it, is stopped)."""
        self._stop_search()
        self._search_from_cursor(direction)

    def _search_from_cursor(self, direction: int) -> None:
        assert self.pattern is not None
        self.searching = LineSearch(
            self.at.reader, self.pattern, self.lines.cursor, forward=direction > 0
        )
        self._run_search(self.searching)

    @property
    def _searching(self) -> bool:
        """A search runs, or an n typed during the last one waits for its turn."""
        return self.searching is not None or bool(self.queued)

    def _stop_search(self) -> None:
        self.searching = None
        self.queued.clear()
        self.workers.cancel_group(self, "logsearch")

    def _next_queued(self) -> None:
        """The next n or N typed while the last search ran, from where that one ended."""
        if self.queued and self.searching is None and self.pattern is not None:
            self._search_from_cursor(self.queued.pop(0))

    @work(exclusive=True, group="logsearch")
    async def _run_search(self, search: LineSearch) -> None:
        """Read the log a turn at a time (SEARCH_TURN_S), letting keys in between; with no
        match past the cursor, on from the other end of the log back to the cursor's line
        (as vim does; the message says so)."""
        where, end = ("below", "top") if search.forward else ("above", "bottom")
        started = search.at
        wrapped = False
        try:
            await self._read_through(search)
            if self.searching is search and search.found is None:
                # the log's other end, up to the cursor's line (itself searched last)
                wrapped = True
                # back from the log's last line now, not the pane's count (the log grows)
                first = 0 if search.forward else self.at.reader.line_count() + 1
                search = LineSearch(
                    self.at.reader, search.pattern, first, search.forward, until=started
                )
                self.searching = search
                await self._read_through(search)
        except OSError as exc:
            self.say(f"cannot read the log: {exc.strerror or exc}")
            self.searching = None
            self.queued.clear()
            return
        if self.searching is not search:
            return  # stopped, or another search began
        self.searching = None
        shown = f"/{self.pattern_text}"
        if search.found is None:
            self.say(f"{shown}: no match in the log")
            # those typed after it the same way would find none either
            same = 1 if search.forward else -1
            while self.queued and self.queued[0] == same:
                self.queued.pop(0)
        else:
            if search.found > self.lines.total:
                self._count()  # the log grew since the pane counted its lines: the match is new
            self.lines.go_to(search.found, centre=True)
            # in one status line of 80 columns: what it says of a wrap is cut short when
            # it also says the match cannot be shown
            notes = [f"from the {end}: none {where} line {started:,}"] if wrapped else []
            if not self.lines.show_match(search.found):
                notes = [f"from the {end}"] if wrapped else []
                notes.append(f"match beyond the {SHOW_BYTES:,} bytes shown")
            said = f"{shown}: line {search.found:,}"
            self.say(said + (f" ({'; '.join(notes)})" if notes else ""))
        # after this worker ends: a worker started from it would cancel it (exclusive)
        self.call_next(self._next_queued)

    async def _read_through(self, search: LineSearch) -> None:
        """Step `search` to its end, a turn at a time, saying how far it has read."""
        while True:
            turn_end = time.monotonic() + SEARCH_TURN_S
            while not search.step() and time.monotonic() < turn_end:
                pass
            if search.done or self.searching is not search:
                return
            self.say(f"searching… line {search.at:,} (esc stops)")
            await asyncio.sleep(0)

    # -- jump ---------------------------------------------------------------------------

    def jump(self, text: str) -> None:
        """`:` and a line number, or a time as the viewer writes it: its first TIMELINE
        line at or after that time; the lines shown from their start (a search may have
        scrolled them sideways, past where the line jumped to begins; a jump that goes
        nowhere leaves them as they are)."""
        # `1,337` as the pane writes a line number too; `²` and `٣` are digits to isdigit
        digits = text.replace(",", "") if re.fullmatch(r"\d{1,3}(,\d{3})+", text) else text
        if digits.isascii() and digits.isdigit():
            number = int(digits)
            if not self.lines.total:
                return
            self.lines.x = 0
            self.lines.go_to(number, centre=True)
            past = " (the last)" if number > self.lines.total else ""
            self.say(f"line {self.lines.cursor:,}{past}")
            return
        try:
            # a bare number is a line here, not the ms the command line's times take
            ms = resolve(parse_time(text, PANE_FORMS), self.model.wall_anchor)
        except ValueError as exc:
            self.say(f":{text}: {exc}")
            return
        line = self.stamps.first_at_or_after(ms)
        if line is None:
            self.say(f":{text}: no GPU_START or GPU_END line at or after it")
            return
        self.lines.x = 0
        self.lines.go_to(line, centre=True)
        self.say(f":{text}: line {line:,}, the first GPU_START or GPU_END at or after it")

    def action_help(self) -> None:
        """Every key (the pane's among them), over the pane."""
        self.app.push_screen(HelpScreen())

    def action_reload(self) -> None:
        """Read the log's length again (a growing log), with the model shown now."""
        self.model = self.latest()
        self.stamps = LineStamps.of(self.model.parts, *self.at.parts)
        self._count()
        self.say(f"{self.lines.total:,} lines")

    # -- the Gantt follows -------------------------------------------------------------

    def on_log_lines_cursor_moved(self, message: LogLines.CursorMoved) -> None:
        """On a partition's GPU_START or GPU_END line: tell the app (the Gantt shows it)."""
        found = self.stamps.at_line(message.line)
        if found is not None:
            self.post_message(self.AtTimeline(found[0], found[1], message.line))
