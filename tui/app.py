"""The Textual app: header figures, the Gantt, status and legend lines, and the screens."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import signal
import sys
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import numpy as np
from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import CommandPalette
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.dom import DOMNode
from textual.driver import Driver
from textual.errors import NoWidget
from textual.filter import LineFilter, NoColor
from textual.message import Message
from textual.notifications import Notification, Notify, SeverityLevel
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static

from parsers.breakdown import BUSY_ORDER, Breakdown, busy_breakdown, whole_run
from parsers.durations import duration
from parsers.model import PHASE_NAMES, LogModel, Phase, ProofTable
from parsers.proofs import failed_proofs
from parsers.rawlines import LineReader
from parsers.report import missing_timeline
from parsers.sanitize import visible
from parsers.writing import write_new, write_text_new
from tui.ascii_glyphs import ERRORS
from tui.find import GAP_KEYS, ProofScreen, find_jobs
from tui.follow import InputState, LiveLog, Update
from tui.gantt import STEP_NOTICES, GanttView
from tui.header import header_fit, status_text
from tui.inspector import GapDetails, InspectorScreen
from tui.interval import IntervalScreen
from tui.lanes import GAP_GLYPH, PHASE_CLASSES, PHASE_GLYPHS
from tui.logpane import LogPaneScreen, log_at
from tui.screens import (
    QUIT_BINDINGS,
    AskScreen,
    FindScreen,
    GapListScreen,
    HelpScreen,
    KeysFooter,
    SafeModal,
    keys_placed,
)
from tui.terminal import Terminal, exit_watchdog, hangup_safe
from tui.workers import WorkersScreen

T = TypeVar("T")
IDLE_AFTER_S = 5.0  # no new line for this long: the log is idle, not live
LEGEND_MARGINS = 2  # the legend's padding, left and right (#legend)
# the longest keys typed ahead wait for the box or window they were typed for (it opens in
# milliseconds), and how often a hold looks whether that has come (or a box has closed);
# counted in the looks the app made, not in wall time: a loaded host that stalls the app
# for a second must not end the hold before the box it waits for could come
HOLD_KEYS_S = 1.0
HOLD_POLL_S = 0.02
HOLD_POLLS = round(HOLD_KEYS_S / HOLD_POLL_S)
# the looks the keys after a key that may open a window (a command chosen in the palette,
# `enter` or `i` on the Gantt) wait for it to open; once it has, they wait for it to be up
OPEN_POLLS = 5
# keys on the Gantt that open a window when there is something to show (a gap or an
# interval to inspect; `c`: the comparison, with --compare)
MAY_OPEN_KEYS = ("enter", "i", "c")
# keys on the Gantt that open a window whose widget takes the keys typed after them
WINDOW_KEYS: dict[str, type[Screen[Any]]] = {
    "L": LogPaneScreen,
    "g": GapListScreen,
    "question_mark": HelpScreen,
}
# keys on a window that open another over it, whose widget takes the keys typed after them
WINDOW_KEYS_OVER: dict[type[Screen[Any]], dict[str, type[Screen[Any]]]] = {
    InspectorScreen: {"L": LogPaneScreen},
    IntervalScreen: {"L": LogPaneScreen},
    LogPaneScreen: {"question_mark": HelpScreen},
    ProofScreen: {"i": IntervalScreen, **{str(n): InspectorScreen for n in range(1, GAP_KEYS + 1)}},
}
# of them, those that may open none (a proof with no interval yet, or fewer gaps than the
# number): the keys after them wait OPEN_POLLS looks for the window to open
MAY_OPEN_OVER = frozenset({"i", *(str(n) for n in range(1, GAP_KEYS + 1))})
# what is held with the keys typed ahead (`CuzkApp.on_event`): they, the mouse wheel and
# the buttons, which scroll or click the window a key asked for as they would have had they
# come a moment later (a move only hovers: it goes where the pointer is)
WHEEL = (
    events.MouseScrollUp,
    events.MouseScrollDown,
    events.MouseScrollLeft,
    events.MouseScrollRight,
)
HELD_MOUSE = (*WHEEL, events.MouseDown, events.MouseUp)
Held = events.Key | events.Paste | events.MouseEvent
# the longest a `q` waits for the screen to act on the keys typed before it
QUIT_AFTER_KEYS_S = 0.5
# how long after the palette's `enter` its screenshot is taken (the palette gone by then)
SCREENSHOT_DELAY_S = 0.1
# keys that close a text box: the keys typed after them are not the box's
CLOSING_KEYS = ("enter", "escape")

# The windows about one run's rows: closed when the log is truncated or rotated.
RUN_SCREENS = (InspectorScreen, IntervalScreen, ProofScreen, LogPaneScreen)
# keys that may open a text box (`/` on the Gantt and in the log pane, `:` there, the
# palette, whose commands may ask for text): a `q` typed after one may be text
BOX_KEYS = frozenset({"slash", "colon", "ctrl+p"})
# keys whose effect outlives the app (`y` copies an id to the clipboard): a `q` typed after
# one waits for it to be acted on
LASTING_KEYS = frozenset({"y"})
HEADER_SHARE = 3  # the header takes at most a third of the screen's rows, as it can
SWITCH_INTERVAL_S = 0.001  # the interpreter's switch interval while the screen is up


def escape_and_key(event: events.Key) -> tuple[events.Key, events.Key] | None:
    """`esc` and a letter that came in one read (over SSH, typed quickly, or pasted) are
    one key to Textual's parser, alt and the letter: the two keys they were typed as (None:
    not such a key). `esc` with a key that is not a letter is split as the parser reads it
    (tui/terminal.py: `tolerant_parser`); `esc b` and `esc f` are ctrl+left and ctrl+right
    there, word moves in a text box."""
    char = event.character
    if not event.key.startswith("alt+") or char is None or len(char) != 1 or not char.isalpha():
        return None
    return events.Key("escape", "\x1b"), events.Key(char, char)


def _proofs_under_way(model: LogModel) -> bool:
    """Whether a proof of `model` is drawn `▶`: it did not complete and did not fail."""
    if not len(model.proofs):
        return False
    return bool((~ProofTable.of(model.proofs).completed & ~failed_proofs(model)).any())


class ModelUpdated(Message):
    """The follower has a newer model (posted from its thread)."""

    def __init__(self, update: Update) -> None:
        super().__init__()
        self.update = update


def _freeze_long_lived() -> None:
    """Collect, then leave every object there is out of later collections (they are still
    freed when no longer referenced, but a cycle among them is kept)."""
    gc.collect()
    gc.freeze()


# Textual's palette commands the viewer leaves out (`CuzkApp.get_system_commands`)
TEXTUAL_ONLY = frozenset({"Keys", "Maximize", "Minimize"})


# The title of `b`'s notices, and the titles of the notices about the view: taken down when
# a screen opens over it
BUSY_SPLIT_NOTICE = "busy split"
VIEW_NOTICES = frozenset({BUSY_SPLIT_NOTICE})


@dataclass(frozen=True, slots=True)
class Notice:
    """A notification the app gave, as given, and until when it shows."""

    message: str
    title: str
    severity: SeverityLevel
    until: float  # time.monotonic()


Said = tuple[str, str, str]  # a notice's message, title and severity


def _takes_the_place(new: Said, old: Said) -> bool:
    """Whether notice `new` takes the place of `old`: the same said again, or where `r`
    went (`STEP_NOTICES`) after where it went before."""
    return new == old or (new[1] in STEP_NOTICES and old[1] in STEP_NOTICES)


class CuzkApp(App[None]):
    """cuzk-tui: why is the GPU not busier?"""

    TITLE = "cuzk-tui"
    CSS = """
    Screen { layout: vertical; }
    #summary, #status { padding: 0 1; background: $panel; }
    #summary, #status { text-wrap: nowrap; text-overflow: ellipsis; }
    #summary { height: auto; }
    #main { height: 1fr; }
    GanttView { height: 1fr; width: 1fr; }
    #side { width: 45%; display: none; border-left: vkey $accent; padding: 0 1; }
    #side.-open { display: block; }
    #status { height: 1; }
    #legend { height: auto; padding: 0 1; }
    /* a notice holds a file's name whole at 80 columns (Textual's: half the screen); a
       short one covers no more of the status line than it needs (Textual's: 60 cells) */
    Toast { width: auto; max-width: 75%; }
    """
    # ? and q lead the footer: they are on every screen, so they are bound on each
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("question_mark", "help", "Help", key_display="?"),
        *QUIT_BINDINGS,
        Binding("g", "gap_list", "Gaps"),
        Binding("L", "log_lines", "Log", show=False),  # in the help: the footer fits 80 columns
        Binding("b", "toggle_breakdown", "Busy split", show=False),
        Binding("w", "workers", "Workers", show=False),
        # the palette's own commands (tui/commands.py): copy an id, the comparison's figures
        Binding("y", "copy_id", "Copy id", show=False),
        Binding("c", "compare", "Compare", show=False),
        # Textual's own keys panel (the palette's "Keys") closes with escape, as every other
        # window here does; before the Gantt's escape (which drops a selection)
        Binding("escape", "hide_help_panel", "Close keys", show=False, priority=True),
        # the inspector beside the Gantt closes with escape as the one over it does: the
        # selection stays (the Gantt's escape, next, drops it)
        Binding("escape", "close_side", "Close inspector", show=False, priority=True),
    ]
    SIDE_MIN_WIDTH = 160  # from this width the inspector opens beside the Gantt

    def __init__(
        self,
        model: LogModel,
        reader: LineReader,
        live: LiveLog | None = None,
        on_exit: Callable[[], None] | None = None,
        palette: str = "default",
        screenshot_dir: Path | None = None,
        use_clipboard: bool = True,
        compared: tuple[LogModel, LogModel] | None = None,
        terminal: Terminal | None = None,
    ) -> None:
        self.terminal = terminal  # before Textual asks for the driver, which draws on it
        self._no_color = NoColor()
        super().__init__()
        # no smooth scrolling: over SSH each frame of it is bytes sent and CPU spent, and a
        # details window still scrolled 0.6 s after `home`
        self.animation_level = "none"
        self.use_clipboard = use_clipboard  # y: OSC 52, or only show the id
        self.compared = compared  # --compare: (before, after) for the figures screen
        self.model = model
        self.reader = reader
        self.live = live
        self._on_exit = on_exit
        self.palette = palette
        self.screenshot_dir = screenshot_dir or Path.cwd()
        self.inputs: tuple[Path, ...] = ()  # the files read: no export or screenshot over them
        self.status = ""  # what happened to the file, in words
        self.input_state = InputState.FOLLOWING  # what the follower knows of its input
        self.encoding_hint: str | None = None  # a UTF-16 log: said instead of "no TIMELINE"
        self.loading: float | None = 0.0 if live is not None else None
        self.input_ended = live is None
        self.replay_speed: float | None = None  # --replay: the log is played, not followed
        self.min_gap_ms = 0  # --min-gap: the gap threshold the Gantt opens at
        self.events_at_pause: int | None = None
        self.updates = 0  # models shown so far (tests and benchmarks read it)
        self.show_breakdown = True
        # the busy split only where it leaves the lanes their room, until `b` asks for it
        self.fit_breakdown = True
        self._breakdown_cut = False  # the header left it out for room
        self._unmounted = False
        self._ending = False  # exit() was called: no window opens any more, no key is acted on
        # keys typed faster than the app answers, held until what they were typed for is up
        # (None: none held): after a key that asks for a text box (`/` on the Gantt, `/`
        # and `:` in the log pane, ctrl+p: the palette), until the box has the focus, else they
        # reach what is below as commands (`/jobng`: n steps a gap, g opens the gap list); after
        # a key that opens a window (WINDOW_KEYS, WINDOW_KEYS_OVER), until its widget has the
        # focus; after the key
        # that closes a box, until it has closed, else they are typed into it
        self._held_keys: list[Held] | None = None
        self._hold_ready: Callable[[], bool] = bool
        self._hold_window: type[Screen[Any]] | None = None  # the window the keys wait for
        self._hold_for_box = False  # the keys wait for a text box, which may take a `q`
        self._hold_polls_left = 0  # looks the hold may still make before it gives up
        self._releasing = 0  # hand-outs of held keys under way (one may start in another)
        self._hold_timer: Timer | None = None  # looks whether the hold is over
        self._screenshots_due = 0  # screenshots asked for, not yet taken
        self._exit_requested = False
        self._watchdog = False  # an ending signal started the exit watchdog
        self._notices: list[Notice] = []  # what notify gave (`_drop_view_notices`)
        # notices said and not shown yet (their Notify queued), and those taken down before
        # they showed (`take_down`), by identity
        self._unshown: dict[str, str] = {}
        self._taken_early: set[str] = set()
        self._previous_handlers: dict[int, Any] = {}  # what signal.getsignal returned
        self._up = False  # mounted, not yet unmounting
        self._switch_interval: float | None = None
        self._frozen = False  # the long-lived objects kept out of the collector's walks
        self._header_for: tuple[object, ...] | None = None
        self._texts: dict[str, Text] = {}  # what each Static shows
        self._header_model: LogModel | None = None
        self._legend_for: tuple[LogModel, str, int, bool] | None = None
        self._palette: CommandPalette | None = None  # the last palette opened
        self._run_split: tuple[LogModel, dict[int, Breakdown]] | None = None
        self._view_split: tuple[LogModel, tuple[float, float], dict[int, Breakdown]] | None = None

    def compose(self) -> ComposeResult:
        """Header, Gantt (and the side inspector), status, legend, footer."""
        yield Static(id="summary")
        with Horizontal(id="main"):
            gantt = GanttView(
                self.model, live=self.live is not None and self.live.follow, id="gantt"
            )
            gantt.threshold_ms = self.min_gap_ms
            if self.palette != "default":
                gantt.add_class(f"-{self.palette}")
            yield gantt
            yield GapDetails(id="side")
        yield Static(id="status")
        yield Static(id="legend")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Focus the Gantt (its keys are the main keys), catch signals, start following."""
        self.gantt.focus()
        self._refresh_text()
        self._catch_signals()
        self.screen_change_signal.subscribe(self, self._drop_view_notices)
        if self.live is not None:
            live = self.live

            def publish(update: Update) -> None:
                self.post_message(ModelUpdated(update))  # thread-safe

            live.on_update = publish
            # The reader thread is pure Python and holds the interpreter in turns of the switch
            # interval; every numpy call of a redraw gives it up and waits a whole turn to get it
            # back. At 5 ms (the default) a 50 ms redraw took up to a second during a burst and
            # keys waited behind it; at 1 ms keys answer within ~50 ms (benchmarks/bench_live.py).
            self._switch_interval = sys.getswitchinterval()
            sys.setswitchinterval(SWITCH_INTERVAL_S)
            self.run_worker(self._follow, thread=True, exclusive=True, group="tail", name="tail")
            self.set_interval(1.0, self._tick_clock)  # the idle clock in the header

    def exit(
        self,
        result: None = None,
        return_code: int = 0,
        message: RenderableType | None = None,
    ) -> None:
        """End the app (q, ctrl+c, a signal). The messages queued go on being handled until it
        ends, but Textual mounts nothing more: a window opened now (a key typed before q, still
        on its way) would stay empty, and its on_mount fail to find its widgets."""
        self._ending = True
        super().exit(result, return_code, message)

    def request_exit(self) -> None:
        """End as `q` does, now or as soon as the app is up (a signal while it starts)."""
        self._exit_requested = True
        if self._up:
            self.exit()

    def end_by_signal(self, signum: int) -> None:
        """A signal asks the viewer to end: as `q` does, and if that hangs (a terminal that
        went away mid-write), the process still ends a few seconds later, cleaned up."""
        if not self._watchdog:
            self._watchdog = True
            exit_watchdog(self._on_exit, 128 + signum)
        self.request_exit()

    def get_line_filters(self) -> Sequence[LineFilter]:
        """Textual's filters, and on a terminal that has no colours (TERM=dumb) one that
        takes them out: Textual would send 24-bit colour there."""
        filters = super().get_line_filters()
        if self.console.color_system is not None:
            return filters
        return [*filters, self._no_color]

    def action_command_palette(self) -> None:
        """Open the command palette (one whose `enter` waits for its list: ListedPalette)."""
        from tui.commands import ListedPalette

        if not self.use_command_palette or isinstance(self.screen, CommandPalette):
            return
        last = self._palette
        if last is not None and last in self.screen_stack:
            return  # under another window: one palette at a time
        if last is not None and last.is_attached:
            # still being taken down, with the palette's id: opened beside it, the new one
            # ended the app (DuplicateIds, 1 palette key storm in 30)
            self.call_after_refresh(self.action_command_palette)
            return
        self._palette = ListedPalette()
        self.push_screen(self._palette)

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on POSIX terminals one that survives a hang-up."""
        driver = super().get_driver_class()
        return driver if sys.platform == "win32" else hangup_safe(driver, self.terminal)

    def _catch_signals(self) -> None:
        """SIGTERM, SIGHUP (terminal closed) and SIGINT end the app as `q` does."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                self._previous_handlers[sig] = signal.getsignal(sig)
                loop.add_signal_handler(sig, self.end_by_signal, sig)
        self._up = True
        if self._exit_requested:
            self.exit()

    def _release_signals(self) -> None:
        """Give the signals back to whoever had them (the CLI's clean-up handler), not to the
        default action, which would end the process before its temporary files are gone."""
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
                loop.remove_signal_handler(sig)
                handler = self._previous_handlers.get(sig)
                if handler is not None:
                    signal.signal(sig, handler)

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

    async def on_event(self, event: events.Event) -> None:
        """A key that arrives once the app is ending (keys typed faster than it answers are
        still queued, or on their way back from a widget) is dropped: after exit() a window
        it opened would be empty (see exit), and once no screen is left Textual would look
        for the screen to give it to and fail with ScreenStackError.

        `esc` and a key typed together come as alt and the key: they are the two keys.
        Keys typed ahead (faster than the app answers) are held for what an earlier key
        asked for: after `/`, ctrl+p, `L`, `g` or `?` (and the keys that open a window over a
        window: WINDOW_KEYS_OVER), until the box or the window is up; after a
        key that closes a box or a window (`enter`, `escape`), until it has closed; the
        mouse wheel turned and the buttons pressed meanwhile are held with them. A `q`
        that no box can take quits at once, the keys held before it dropped unless one lasts
        beyond the app (`?` held down for a while would otherwise open and close the help
        once a key before it quits)."""
        if isinstance(event, events.Key | events.Paste) and (self._ending or not self.screen_stack):
            return
        if isinstance(event, events.Key) and not event.is_forwarded:
            typed = escape_and_key(event)
            if typed is not None and event.key not in self.screen.active_bindings:
                for key in typed:  # nothing binds alt and the key: `esc`, then the key
                    await self.on_event(key)
                return
        held = self._held_keys
        if isinstance(event, events.MouseDown) and not event.is_forwarded and held is None:
            footer_key = self._footer_key(event)
            if footer_key is not None:
                # acted on now, as that key (`_footer_key`): a click on `/`, then `abc`,
                # puts the letters in the box
                await self.on_event(footer_key)
                return
        if isinstance(event, events.Paste) and not event.is_forwarded and held is not None:
            held.append(events.Paste(event.text))  # a paste after the `/`: for the box too
            return
        if isinstance(event, HELD_MOUSE) and not event.is_forwarded and held is not None:
            held.append(event)  # the wheel or a click after `g`: for the list, not the Gantt
            return
        if isinstance(event, events.Key) and not event.is_forwarded:
            if held is not None and event.key == "q" and self._quits_past(held):
                self._quit_when_done()
                return
            if held is not None and event.key != "ctrl+c":
                held.append(events.Key(event.key, event.character))
                return
            if event.key == "q" and self._q_quits():
                self._quit_after_keys()
                return
            if self._closes_something(event.key):
                closed = self._closed_test(event.key)  # of the box or the window open now
                await super().on_event(event)
                self._hold(closed, None)
                return
            if event.key in MAY_OPEN_KEYS and self._on_gantt():
                await super().on_event(event)  # a window may open: the keys wait for it
                self._hold(lambda: self._window_up(SafeModal), SafeModal, polls=OPEN_POLLS)
                return
            asked = self._window_asked_for(event.key)
            if asked is not None or self._asks_for_a_box(event.key):
                await super().on_event(event)  # the box or the window is asked for
                if asked is not None:
                    window, polls = asked
                    self._hold(lambda: self._window_up(window), window, polls=polls)
                else:
                    box = self._box_window(event.key)
                    self._hold(lambda: isinstance(self.focused, Input), box, for_box=True)
                return
        await super().on_event(event)

    @property
    def holding_keys(self) -> bool:
        """Keys typed ahead wait for a box or a window to open or close."""
        return self._held_keys is not None or self._releasing > 0

    def _q_quits(self) -> bool:
        """`q` would quit now: it is bound to quit where it is, and no text box takes it."""
        active = self.screen.active_bindings.get("q")
        return (
            active is not None
            and active.binding.action in ("app.quit", "quit")
            and not isinstance(self.focused, Input)
        )

    def _quit_after_keys(self) -> None:
        """Quit once the keys read before the `q` have been acted on. A priority binding acts
        as the app reads the key, while a key before it travels from the focused widget up
        to the app (whose bindings it finds on the way back): `y q` in one read quit before
        the `y` copied its id. The quit follows that path, each step queued behind the key
        (at most QUIT_AFTER_KEYS_S, should a widget on it be going away)."""

        def up_from(node: DOMNode) -> None:
            parent = node.parent
            if node is self or parent is None:
                self._quit_when_done()
            else:
                parent.call_later(up_from, parent)

        start = self.focused or self.screen
        start.call_later(up_from, start)
        self.set_timer(QUIT_AFTER_KEYS_S, self._quit_when_done)

    def _quit_when_done(self) -> None:
        """Quit, once the screenshots asked for before the `q` are taken."""
        if self._screenshots_due:
            self.set_timer(SCREENSHOT_DELAY_S, self._quit_when_done)
        elif not self._ending:
            self.exit()

    def _quits_past(self, held: Sequence[Held]) -> bool:
        """A `q` typed after the keys `held` would quit when its turn came, and they do
        nothing that outlives the app: it quits where it is now (`_q_quits`), no text box is
        waited for, none of them may open one (or is a paste, for one; or a click, which
        may be on the footer's `/`), none copies to the clipboard."""
        keep = BOX_KEYS | LASTING_KEYS
        return (
            not self._hold_for_box
            and self._q_quits()
            and all(
                isinstance(k, WHEEL) or (isinstance(k, events.Key) and k.key not in keep)
                for k in held
            )
        )

    def _asks_for_a_box(self, key: str) -> bool:
        """`key` asks for a text box, the keys after it to be typed in it: `/` on the Gantt
        (the find box), `/` and `:` in the log pane (its prompt), the palette's key on any
        screen (its input)."""
        if key == self.COMMAND_PALETTE_BINDING:
            return (
                self.use_command_palette
                and not isinstance(self.focused, Input)
                and not isinstance(self.screen, CommandPalette)
            )
        if isinstance(self.screen, LogPaneScreen):
            return key in ("slash", "colon") and not isinstance(self.focused, Input)
        return key == "slash" and self._on_gantt()

    def _box_window(self, key: str) -> type[Screen[Any]] | None:
        """The window of the box `key` asks for (None: the log pane's prompt, in the pane)."""
        if key == self.COMMAND_PALETTE_BINDING:
            return CommandPalette
        return None if isinstance(self.screen, LogPaneScreen) else FindScreen

    def _closes_something(self, key: str) -> bool:
        """`key` closes the text box that has the focus (`enter`, `escape`) or the window on
        top."""
        if isinstance(self.focused, Input):
            return key in CLOSING_KEYS
        screen = self.screen
        return isinstance(screen, SafeModal) and screen.closes_on(key)

    def _closed_test(self, key: str) -> Callable[[], bool]:
        """Whether the box or the window open now has closed (by `key`) and what is below
        has the focus: the keys typed after the key that closes it wait for that (a key that
        quits while the find's answer mounts finds its widgets half removed). The palette's
        `enter` with nothing listed closes nothing: the keys wait only until it is acted on."""
        from tui.commands import ListedPalette

        box = isinstance(self.focused, Input)
        window = self.screen
        palette = window if key == "enter" and isinstance(window, ListedPalette) else None
        enters = palette.enters + 1 if palette is not None else 0
        # a box's `enter` with nothing typed leaves it up: the keys wait only until it is read
        ask = window if key == "enter" and isinstance(window, AskScreen) else None
        blanks = ask.blank_enters + 1 if ask is not None else 0

        def closed() -> bool:
            if palette is not None and palette is self.screen:
                return palette.chose_nothing(enters)
            if ask is not None and ask is self.screen and ask.blank_enters >= blanks:
                return True
            if self.focused is None:
                return False
            if window is not self.screen and not getattr(window, "answered", True):
                return False  # gone, its answer not acted on yet (the find's opens the proof)
            return not isinstance(self.focused, Input) if box else window is not self.screen

        return closed

    def _on_gantt(self) -> bool:
        """The Gantt has the keys (no window is open)."""
        return len(self.screen_stack) == 1 and isinstance(self.focused, GanttView)

    def _window_asked_for(self, key: str) -> tuple[type[Screen[Any]], int] | None:
        """The window `key` opens from the Gantt or over the window on top, whose widget takes
        the keys after it, and the looks those wait for it to open (None: no window)."""
        if self._on_gantt():
            window = WINDOW_KEYS.get(key)
            return None if window is None else (window, HOLD_POLLS)
        if isinstance(self.focused, Input):
            return None  # the key is the box's text
        for below, keys in WINDOW_KEYS_OVER.items():
            if isinstance(self.screen, below) and key in keys:
                return keys[key], OPEN_POLLS if key in MAY_OPEN_OVER else HOLD_POLLS
        return None

    def _window_up(self, window: type[Screen[Any]]) -> bool:
        """The window is on top, placed, and one of its widgets has the focus (its keys'
        target)."""
        screen = self.screen
        placed = not isinstance(screen, SafeModal) or screen.placed
        return isinstance(screen, window) and placed and screen.focused is not None

    def _hold(
        self,
        ready: Callable[[], bool],
        window: type[Screen[Any]] | None,
        keys: Sequence[Held] = (),
        polls: int = HOLD_POLLS,
        for_box: bool = False,
    ) -> None:
        """Hold the keys typed from now (after `keys`) until `ready()`, or `polls` looks at
        most (`window`: the window they wait for; another opening first ends the hold;
        `for_box`: it is a text box's)."""
        self._held_keys = list(keys)
        self._hold_ready = ready
        self._hold_window = window
        self._hold_for_box = for_box
        self._hold_polls_left = polls
        # never held for good; stopped once released, so it cannot end a later hold (a
        # timer skips the ticks a stalled loop missed: a stall costs the hold one look)
        self._hold_timer = self.set_interval(HOLD_POLL_S, self._poll_hold)

    def _poll_hold(self) -> None:
        """One look of the hold's: one fewer left. The keys are handed out from the app's
        own loop, not from the timer's task, which stopping the timer cancels."""
        self._hold_polls_left -= 1
        self.call_next(self._check_hold)

    def _release_later(self) -> None:
        """Hand out the keys held now once the app has handled what is queued (those of a
        hold begun meanwhile wait for what they wait for)."""
        held = self._held_keys

        async def release() -> None:
            if held is not None and self._held_keys is held:
                await self._release_keys()

        self.call_next(release)

    async def _check_hold(self) -> None:
        """The keys held, handled once what they wait for has come (or no longer may); with
        a click among them, once the window shows what the click would land on too."""
        held = self._held_keys
        if held is None:
            return
        if not self.screen_stack or self._hold_polls_left <= 0:
            await self._release_keys()  # no screen left (ending): the keys are dropped
        elif self._hold_ready() and (
            not any(isinstance(k, events.MouseDown) for k in held) or self._clickable()
        ):
            await self._release_keys()

    def _clickable(self) -> bool:
        """The screen shows what a click would land on: its footer's keys placed, and the
        palette's list made (`ListedPalette`)."""
        from tui.commands import ListedPalette

        if isinstance(self.screen, ListedPalette) and not self.screen.list_shown():
            return False
        return all(keys_placed(f) for f in self.screen.query(Footer))

    def on_command_palette_closed(self, event: CommandPalette.Closed) -> None:
        """A command was chosen: the keys typed after the palette's `enter` wait for it to
        run (Textual runs it once the palette has closed) and for the window it opens to
        be up, as after the key that opens that window; OPEN_POLLS looks for it to open
        (a command that opens none: the keys go where they would)."""
        if event.option_selected and self._held_keys is not None:
            self._hold_for_box = True  # the command may ask for text (what if…)
            self._hold_window = SafeModal
            self._hold_ready = lambda: self._window_up(SafeModal)
            self._hold_polls_left = OPEN_POLLS

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        """A widget took the focus: the box or the window the keys are held for may be up."""
        if self._held_keys is not None:
            self.call_next(self._check_hold)

    async def _release_keys(self) -> None:
        """The keys held, handled now, in the order typed (to the box or the window once it
        has the focus; where they were typed when it did not open). Those after a key that
        closes a box or a window are held again, until it has closed (`on_event`)."""
        held, self._held_keys = self._held_keys, None
        if self._hold_timer is not None:
            self._hold_timer.stop()
            self._hold_timer = None
        self._releasing += 1
        try:
            for key in held or []:
                # one that begins a hold of its own: the rest go to it
                await self.on_event(self._footer_key(key) or key)
        finally:
            self._releasing -= 1

    def _footer_key(self, event: Held) -> events.Key | None:
        """A press of a mouse button on a key of the footer, as that key (None: elsewhere).
        The footer's key acts on a press by posting the key to the app, behind the input
        read after the press: given as the key, it acts in its turn (a click on `/` then
        `n` puts `n` in the box), whether it was held or not."""
        if not isinstance(event, events.MouseDown):
            return None
        try:
            widget, _ = self.get_widget_at(event.x, event.y)
        except NoWidget:
            return None
        key = getattr(widget, "key", None)
        if isinstance(key, str) and any(isinstance(a, Footer) for a in widget.ancestors):
            return events.Key(key, None)
        return None

    def on_unmount(self) -> None:
        """Stop the follower; remove what the run made (temporary files)."""
        self._unmounted = True
        self._up = False
        self._release_signals()
        if self.live is not None:
            self.live.halt()
            if self._switch_interval is not None:
                sys.setswitchinterval(self._switch_interval)
        if self._on_exit is not None:
            self._on_exit()

    @property
    def gantt(self) -> GanttView:
        """The Gantt widget."""
        return self.query_one(GanttView)

    def idle_seconds(self) -> float | None:
        """How long ago the log last grew (None: unknown)."""
        if self.live is None:
            return None
        last = self.live.source.last_change()
        return None if last is None else max(0.0, time.time() - last)

    def log_quiet(self) -> bool:
        """The log followed has not grown for IDLE_AFTER_S (the header says IDLE)."""
        if self.replay_speed is not None or self.input_ended:
            return False
        idle = self.idle_seconds()
        return idle is not None and idle >= IDLE_AFTER_S

    def state_text(self) -> str:
        """reading N %, LIVE, IDLE (for how long), REPLAY 20x (a log played, not followed),
        FINISHED; with the new events held back."""
        if self.loading is not None:
            return f"reading {100 * self.loading:.0f} %"
        if self.input_ended:
            return "FINISHED"
        idle = self.idle_seconds()
        if self.replay_speed is not None:
            state = f"REPLAY {self.replay_speed:g}x"
        elif idle is None or idle < IDLE_AFTER_S:
            state = "LIVE"
        else:
            state = f"IDLE {duration(idle * 1000, 'age')}"
        if not self.gantt.pinned and self.gantt.live and self.events_at_pause is not None:
            new = self.model.counts.timeline - self.events_at_pause
            if new > 0:
                state += f" +{new} new (f)"
        return state

    def _breakdowns(self) -> tuple[dict[int, Breakdown] | None, dict[int, Breakdown] | None]:
        if not self.show_breakdown:
            return None, None
        if self._run_split is None or self._run_split[0] is not self.model:
            self._run_split = (self.model, whole_run(self.model))
        gantt = self.gantt
        if not gantt.is_zoomed:
            return self._run_split[1], None
        window = (gantt.t0, gantt.t0 + gantt.timeline_width * gantt.scale)
        # the header is redrawn each second for the idle clock: the split only when it changes
        cached = self._view_split
        if cached is None or cached[0] is not self.model or cached[1] != window:
            cached = self._view_split = (self.model, window, busy_breakdown(self.model, *window))
        return self._run_split[1], cached[2]

    def _tick_clock(self) -> None:
        """The header's idle clock, each second while the screen is up."""
        if self._unmounted:
            return
        try:
            self._refresh_text()
        except NoMatches:
            return  # closing: the tick came after the screen went

    def _refresh_text(self) -> None:
        state = self.state_text()
        quiet = self.log_quiet()
        self.gantt.set_quiet(quiet)
        if self.status:
            state = visible(f"{state} · {self.status}")  # the status may quote a path
        gantt = self.gantt
        # the view's split is of the time the lanes show: their width too (a scrollbar that
        # comes as the header grows by the split's lines takes two cells)
        zoom = (gantt.t0, gantt.scale, gantt.timeline_width) if gantt.is_zoomed else None
        # the model by identity (models hold arrays: == would compare them)
        size = (self.size.width, self.size.height)
        breakdown = (self.show_breakdown, self.fit_breakdown)
        # a restarted daemon's run in view: its GPUs head the header
        in_view = gantt.current_run()
        key = (id(self.model), state, zoom, breakdown, size, self.palette, in_view)
        # a pan or a zoom changes only the status line, unless the header shows the view's split
        if self._header_for != key or self._header_model is not self.model:
            self._header_for, self._header_model = key, self.model
            run, view = self._breakdowns()
            styles = {p: self._colour(PHASE_CLASSES[p]) for p in BUSY_ORDER}
            # the lanes keep two thirds of the screen: the busy lines give way first, until
            # `b` asks for them
            rows = self.size.height // HEADER_SHARE if self.fit_breakdown else None
            header, self._breakdown_cut = header_fit(
                self.model, state, run, view, styles, self.size.width, rows, in_view
            )
            self._show_text("#summary", header)
            # the header's clock ticks each second; the legend changes with the model
            shown = self._legend_for
            room = self.size.width - LEGEND_MARGINS
            if (
                shown is None
                or shown[0] is not self.model
                or shown[1:] != (self.palette, room, quiet)
            ):
                self._legend_for = (self.model, self.palette, room, quiet)
                # made for a new width: laid out again, or it keeps the height the old text
                # took wrapped at that width (a blank line above the keys once narrowed)
                self._show_text("#legend", self._legend(room), layout=True)
        reason = None
        if self.loading is None and missing_timeline(self.model) is not None:
            # why the log shows nothing: its encoding, the read that stopped, or no TIMELINE
            stopped = self.status if self.input_state is InputState.STOPPED else None
            piped = self.live.source.encoding_hint() if self.live is not None else None
            reason = self.encoding_hint or piped or stopped or missing_timeline(self.model)
        gantt.empty_message = reason or ""
        # the status line's padding takes a cell each side
        self._show_text("#status", status_text(gantt, self.size.width - 2))

    def _show_text(self, selector: str, text: Text, layout: bool = False) -> None:
        """Put `text` in a Static, unless it shows it already; the screen is laid out again
        only when the Static's height changes (the header's clock ticks every second), or
        when `layout` says so."""
        shown = self._texts.get(selector)
        if shown != text:
            self._texts[selector] = text
            same_height = shown is not None and shown.plain.count("\n") == text.plain.count("\n")
            self.query_one(selector, Static).update(text, layout=layout or not same_height)

    def _colour(self, component: str) -> Style:
        """A Gantt colour without the Gantt's background (for the header and the legend)."""
        return Style(color=self.gantt.get_component_rich_style(component).color)

    def _legend(self, width: int) -> Text:
        """Every glyph the Gantt draws, with its colour, in lines of `width` cells broken
        between items (a group's `│` is left out at the start of a line)."""
        t = self.model.parts
        live = not self.model.finished
        # a finished log may end with intervals and proofs under way (docs/analysis.md)
        running = live or t.any_row(
            lambda p: ~np.isnan(p.gpu_start) & np.isnan(p.gpu_end) & ~p.failed
        )
        under_way = live or _proofs_under_way(self.model)
        items: list[tuple[bool, Text]] = []  # (begins a group, the item)
        failed_proves = t.any_row(lambda p: p.failed & ~np.isnan(p.gpu_start))
        for phase, cls in PHASE_CLASSES.items():
            if phase == Phase.IN_FLIGHT and not running:
                continue
            if phase == Phase.FAILED and not failed_proves:
                continue
            glyph = (PHASE_GLYPHS[phase], self._colour(cls))
            items.append((False, Text.assemble(glyph, f" {PHASE_NAMES[phase]}")))
        busy, gap = self._colour("gantt--busy"), self._colour("gantt--gap")
        # the heights an ASCII terminal draws apart (`#`, `=`, `,`, `_`) each shown
        items.append((True, Text.assemble("busy ", ("█▆▄", busy), ("▂▁", gap), " share")))
        items.append((False, Text.assemble((GAP_GLYPH, gap), " gap")))
        kernel = self._colour("gantt--kernel-lane")
        items.append((True, Text.assemble("kern ", ("▁▄█", kernel))))
        items.append((True, Text.assemble(("┣━┫", self._colour("gantt--proof")), " proof")))
        if under_way:
            items.append((False, Text("▶ running")))
        if not failed_proves:  # else said once, with the workers' glyphs: the same ✗
            items.append((False, Text("✗ failed")))
        if live and not self.gantt.quiet:
            items.append((False, Text("▼ now")))
        text = Text()
        used = 0
        drawn: set[str] = set()
        for group, item in items:
            # an item drawn as another was is said once (`▸ running` and `▶ running` are
            # both `> running` in ASCII)
            if (seen := self.drawn_as(item.plain)) in drawn:
                continue
            drawn.add(seen)
            lead = " │ " if group else " "
            if used and used + len(lead) + item.cell_len > width:
                text.append("\n")
                used = 0
            if used:
                text.append(lead)
                used += len(lead)
            text.append_text(item)
            used += item.cell_len
        return text

    def on_model_updated(self, message: ModelUpdated) -> None:
        """A newer model from the follower: show it."""
        if self._unmounted:
            return
        start = time.thread_time()
        try:
            self._show_update(message.update)
        except NoMatches:
            return  # closing: the follower's last word came after the screen went
        live = self.live
        if live is not None and message.update.following:
            # the update and the redraw it brings are paid from the follower's CPU budget
            # (not those of reading what the file held: following starts after them)
            self.call_after_refresh(lambda: live.budget.charge(time.thread_time() - start))

    def _show_update(self, update: Update) -> None:
        if update.model is self.model and not update.restarted and update.loading is not None:
            # how far a long read is, with the model shown already: the status line only
            self.status, self.loading = update.status, update.loading
            self.input_state = update.state
            self.updates += 1
            self._refresh_text()
            return
        self.model = update.model
        self.status = update.status
        self.input_state = update.state
        self.loading = update.loading
        if update.loading is None and not self._frozen:
            # read through: what lives now (the interpreter's, the toolkit's, the model's
            # ~80,000 objects) lives on; a full collection walked them all (65 ms of a core
            # on a 100-hour log), and the first window opened after the read made one
            self._frozen = True
            self.call_after_refresh(_freeze_long_lived)
        self.input_ended = update.finished or (
            self.live is not None and not self.live.follow and update.loading is None
        )
        if update.restarted:
            self.reader.reset()
            self.events_at_pause = None
            self._close_run_screens()
            self.notify(update.status or "new run", severity="warning")
        gantt = self.gantt
        if self.input_ended:
            gantt.live = False
            gantt.pinned = False
        gantt.set_model(update.model, restarted=update.restarted)
        for screen in self.screen_stack:  # an inspector may be open over the proof view
            if isinstance(
                screen,
                GapListScreen | InspectorScreen | ProofScreen | IntervalScreen | WorkersScreen,
            ):
                screen.show_model(update.model)
        side = self.query_one("#side", GapDetails)
        if side.has_class("-open"):
            side.show(update.model, gantt.selected_gap, self.reader)
        self.updates += 1
        self._refresh_text()

    def _close_run_screens(self) -> None:
        """The log was truncated or rotated: the windows over the view that show a gap, an
        interval, a proof or the log's lines of the run before close (their rows are not in
        the new run's model: `L` on the inspector of a truncated log read a row past them)."""
        # a box typed into (the log pane's `/`) stays, and what is under it: closed from
        # under it, the keys still being typed went to the Gantt (`q` quit). What they
        # show is of the model they were opened on (their keys read that, never the new one)
        if isinstance(self.focused, Input):
            return  # being typed into (the log pane's `/` or `:`): the user closes it
        while len(self.screen_stack) > 1 and isinstance(self.screen, RUN_SCREENS):
            self.pop_screen()

    def on_gantt_view_view_changed(self) -> None:
        """Keep the status line (and the new-event count) in step with the view."""
        try:
            gantt = self.gantt
        except NoMatches:
            return  # the view's last word came while the screen was being torn down
        if gantt.pinned:
            self.events_at_pause = None
        elif self.events_at_pause is None:
            self.events_at_pause = self.model.counts.timeline
        side = self.query_one("#side", GapDetails)
        if side.has_class("-open"):
            if gantt.selected_gap is None:
                side.remove_class("-open")
            elif side.gap is not gantt.selected_gap:
                side.show(self.model, gantt.selected_gap, self.reader)
        self._refresh_text()

    def open_screen(
        self,
        screen: Screen[T],
        callback: Callable[[T | None], None] | None = None,
        over: Screen[Any] | None = None,
    ) -> None:
        """Open a window over the Gantt (or over the window `over`), unless another is open.

        Keys typed faster than the app answers arrive after the window they asked for (or
        another) is already open: `enter /` must not stack a find box on an inspector, where
        `q` would be typed into the box instead of quitting.
        """
        if self._ending or self._unmounted:
            return  # ending: Textual would mount none of its widgets (see exit)
        if len(self.screen_stack) > 1 and self.screen is not over:
            return
        answer = callback
        tracked = screen if answer is not None and isinstance(screen, SafeModal) else None
        if tracked is not None:
            tracked.answered = False

        def closed(result: T | None) -> None:
            try:
                if answer is not None:
                    answer(result)
            finally:
                if tracked is not None:
                    tracked.answered = True
                # narrowed while it was open: the inspector beside the Gantt goes over it now
                self.call_after_refresh(lambda: self._fit_side(self.size.width))

        self.push_screen(screen, closed)
        awaited = self._hold_window is not None and isinstance(screen, self._hold_window)
        if self._held_keys is not None and not awaited:
            self._release_later()  # another window came first: the keys are its
        elif self._held_keys is not None:  # the window the keys wait for: until it is up
            self._hold_polls_left = max(self._hold_polls_left, HOLD_POLLS)

    def on_resize(self, event: events.Resize) -> None:
        """Narrowed, the inspector beside the Gantt may have to go over it; widened, the
        one over it goes beside it (`_fit_side`)."""
        self._fit_side(event.size.width)

    def _fit_side(self, width: int) -> None:
        """Below SIDE_MIN_WIDTH the inspector beside the Gantt (45 % of a narrow screen)
        becomes the one over it, on the same gap; with another window on top, once that one
        has closed (`open_screen` looks again then). From SIDE_MIN_WIDTH the one over the
        Gantt (alone on it) goes beside it, on the same gap."""
        if width >= self.SIDE_MIN_WIDTH:
            screen = self.screen
            if len(self.screen_stack) == 2 and isinstance(screen, InspectorScreen):
                inspected = screen.gap
                screen.dismiss(None)
                self.post_message(GanttView.InspectGap(inspected))
            return
        if len(self.screen_stack) > 1:
            return
        try:
            side = self.query_one("#side", GapDetails)
        except NoMatches:
            return
        if not side.has_class("-open"):
            return
        side.remove_class("-open")
        gap = self.gantt.selected_gap
        if gap is not None:
            self.open_screen(InspectorScreen(self.model, gap, self.reader))

    def on_gantt_view_inspect_gap(self, message: GanttView.InspectGap) -> None:
        """Open the inspector: beside the Gantt on a wide terminal, over it otherwise."""
        if self.size.width >= self.SIDE_MIN_WIDTH:
            side = self.query_one("#side", GapDetails)
            side.add_class("-open")
            side.show(self.model, message.gap, self.reader)
            self._drop_view_notices(None)  # the notices' corner is the inspector's now
            return
        self.open_screen(InspectorScreen(self.model, message.gap, self.reader))

    def action_step_inspected(self, direction: int) -> None:
        """`n`/`N` in the inspector: the Gantt selects the next gap, the inspector shows it."""
        gantt = self.gantt
        gantt.step_gap(direction)
        gap = gantt.selected_gap
        screen = self.screen
        if gap is not None and isinstance(screen, InspectorScreen):
            screen.show_gap(self.model, gap)

    def on_gantt_view_inspect_interval(self, message: GanttView.InspectInterval) -> None:
        """Open the interval inspector over the Gantt."""
        self.open_screen(IntervalScreen(self.model, message.index, self.reader))

    def on_interval_screen_shown(self, message: IntervalScreen.Shown) -> None:
        """`n`/`N` in the interval inspector: the Gantt selects that interval and centres it
        (one of the model the Gantt shows: an interval of a newer model's is not, nor
        of the run before a truncation)."""
        if isinstance(self.screen, IntervalScreen) and self.screen.model is self.model:
            self.gantt.select_interval(message.index)

    def on_proof_screen_inspect_interval(self, message: ProofScreen.InspectInterval) -> None:
        """`i` in the proof view: its first interval, over the proof view (esc goes back)."""
        self.gantt.select_interval(message.index)
        self.open_screen(
            IntervalScreen(self.model, message.index, self.reader), over=message.screen
        )

    def on_proof_screen_inspect_gap(self, message: ProofScreen.InspectGap) -> None:
        """A gap's number in the proof view: the gap inspector, over the proof view."""
        gantt = self.gantt
        gantt.select_gap(message.index)
        gap = gantt.selected_gap
        if gap is not None:
            self.open_screen(InspectorScreen(self.model, gap, self.reader), over=message.screen)

    def on_gantt_view_find_job(self) -> None:
        """The find box; a match highlights the job and shows its proof."""

        def chosen(query: str | None) -> None:
            if query:
                self.find(query)

        self.open_screen(FindScreen(), chosen)
        if not isinstance(self.screen, FindScreen):  # not opened: the keys go where they would
            self._release_later()

    def find(self, query: str) -> None:
        """Look for a job by id, prefix or sector number."""
        matches = find_jobs(self.model, query)
        if not matches:
            self.notify(f"no job matches {query!r}", severity="warning")
            return
        self.gantt.show_found(matches, 0)
        self.open_screen(ProofScreen(self.model, matches, 0))

    def action_step_match(self, direction: int) -> None:
        """`n`/`N` in the proof view: the next match, highlighted in the Gantt too."""
        gantt = self.gantt
        if gantt.found_jobs:
            index = (gantt.found_index + direction) % len(gantt.found_jobs)
            gantt.show_found(gantt.found_jobs, index)
            screen = self.screen
            if isinstance(screen, ProofScreen):
                screen.show_match(self.model, gantt.found_jobs, index)

    def action_gap_list(self) -> None:
        """The gap list; choosing one selects it in the Gantt."""

        def chosen(index: int | None) -> None:
            if index is not None and index < len(self.gantt.model.gaps):
                self.gantt.select_gap(index, reveal=True)

        screen = GapListScreen(self.model, self.gantt.threshold_ms)
        self.open_screen(screen, chosen)

    def action_log_lines(self) -> None:
        """The log's own lines at the selection (the inspector's interval or gap, the
        selected gap, the job found, else the view's middle): over the Gantt, or over an
        inspector."""
        gantt = self.gantt
        screen = self.screen
        inspecting = isinstance(screen, (InspectorScreen, IntervalScreen))
        if len(self.screen_stack) > 1 and not inspecting:
            return
        gap = screen.gap if isinstance(screen, InspectorScreen) else gantt.selected_gap
        job = gantt.found_jobs[gantt.found_index] if gantt.found_jobs else None
        middle = gantt.t0 + gantt.timeline_width * gantt.scale / 2
        interval = screen.index if isinstance(screen, IntervalScreen) else None
        # an inspector's gap or interval is a row of the model it shows (the newer one's
        # where the log grew and it is there still, else the one it was picked in)
        model = screen.model if isinstance(screen, InspectorScreen | IntervalScreen) else self.model
        at = log_at(model, self.reader, gap, job, middle, interval)
        pane = LogPaneScreen(at, self.model, lambda: self.model)
        if inspecting:
            self.push_screen(pane)  # over the inspector: esc goes back to it
        else:
            self.open_screen(pane)

    def on_log_pane_screen_at_timeline(self, message: LogPaneScreen.AtTimeline) -> None:
        """The pane's cursor is on a partition's GPU_START or GPU_END: the Gantt centres on
        it, and selects the gap that line begins or ends (at or above the threshold)."""
        gantt = self.gantt
        gaps = self.model.gaps
        t = self.model.parts
        if message.part >= len(t):
            return
        side = gaps.before if t.end_line[message.part] == message.line else gaps.after
        at = np.flatnonzero((side == message.part) & (gaps.duration >= gantt.threshold_ms))
        if len(at):
            gantt.select_gap(int(at[0]))
        else:
            gantt.pinned = gantt.autofit = False
            gantt.center_on(message.ms)

    def action_help(self) -> None:
        """Every key."""
        self.open_screen(HelpScreen())

    def action_workers(self) -> None:
        """Each worker's time in the phases of its GPU intervals (tui/workers.py)."""
        self.open_screen(WorkersScreen(self.model))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Escape closes the keys panel only while it is open (else it goes on to the
        Gantt or the window on top)."""
        if action == "hide_help_panel":
            return bool(self.screen.query("HelpPanel"))
        if action == "close_side":
            return len(self.screen_stack) == 1 and self._side_open()
        return True

    def _side_open(self) -> bool:
        """The inspector beside the Gantt is open."""
        try:
            return self.query_one("#side", GapDetails).has_class("-open")
        except NoMatches:
            return False

    def action_close_side(self) -> None:
        """Close the inspector beside the Gantt; the gap stays selected."""
        with contextlib.suppress(NoMatches):
            self.query_one("#side", GapDetails).remove_class("-open")

    def action_copy_id(self) -> None:
        """Copy the found job's id, else the selected gap's job id (tui/commands.py)."""
        from tui.commands import copy_id

        copy_id(self)

    def action_compare(self) -> None:
        """The comparison's figures (with --compare)."""
        from tui.commands import show_compare

        show_compare(self)

    def action_toggle_breakdown(self) -> None:
        """Show or hide where the busy time went, saying what its shares are of (left out of
        a short screen for room: shown whole, the lanes' room notwithstanding). A log with
        no GPU interval has none to split: said, and nothing toggled."""
        if not self.model.gpus:
            why = missing_timeline(self.model) or "no GPU interval read yet"
            self.notify(f"no busy time to split: {why}", title=BUSY_SPLIT_NOTICE)
            return
        if not (self.show_breakdown and self.fit_breakdown and self._breakdown_cut):
            self.show_breakdown = not self.show_breakdown
        self.fit_breakdown = False
        self._refresh_text()
        if self.show_breakdown:
            self.notify(
                "busy: each phase's share of the GPU's TIMELINE busy time (each instant given "
                "to one phase); TIMELINE and kernel above are shares of the span (? for more)",
                title=BUSY_SPLIT_NOTICE,
            )

    def _drop_view_notices(self, screen: Screen[Any] | None) -> None:
        """A screen opened over the view (`screen`; None: the inspector beside it): the
        notices about the view (what `b`'s shares are of) are taken down, not left over it;
        warnings and errors stay (shown again, for the time they had left)."""
        if screen is self.screen_stack[0]:
            return
        now = time.monotonic()
        live = [n for n in self._notices if n.until > now]
        if not any(n.title in VIEW_NOTICES and n.severity == "information" for n in live):
            self._notices = live
            return
        self.clear_notifications()
        self._notices = []
        for n in live:
            if not (n.title in VIEW_NOTICES and n.severity == "information"):
                self.notify(n.message, title=n.title, severity=n.severity, timeout=n.until - now)

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None:
        """Every notification (a widget's too) as literal, visible text: messages quote typed
        queries, paths and errors, which are neither markup nor terminal controls. Its lines
        are the message's own: each is made visible, the line breaks kept. Each is noted, so
        that a screen opened over the view can take down the view's own."""
        lines = "\n".join(visible(line) for line in message.split("\n"))
        now = time.monotonic()
        shown = self.NOTIFICATION_TIMEOUT if timeout is None else timeout
        # those gone already are let go: a viewer open for days keeps only what shows; one
        # said again is said once
        said = (message, title, severity)
        self._notices = [
            n
            for n in self._notices
            if n.until > now and not _takes_the_place(said, (n.message, n.title, n.severity))
        ]
        self._notices.append(Notice(message, title, severity, now + shown))
        # as App.notify, its identity kept: a key typed after the one that said it may take
        # it down before its Notify is handled
        notice = Notification(lines, visible(title), severity, shown, markup=False)
        self._unshown[notice.identity] = title
        self.post_message(Notify(notice))

    def _on_notify(self, event: Notify) -> None:
        """A notification said again while it shows takes the place of the one showing, its
        time started again: `n` pressed ten times past a worker's last interval piled ten
        toasts over the inspector. `r`'s notice takes the place of the one before it."""
        new = event.notification
        self._unshown.pop(new.identity, None)
        if new.identity in self._taken_early:
            self._taken_early.discard(new.identity)
            event.prevent_default()  # App's own handler (called after this one) shows it
            return
        said = (new.message, new.title, new.severity)
        for old in list(self._notifications):
            if _takes_the_place(said, (old.message, old.title, old.severity)):
                self._unnotify(old, refresh=False)
        super()._on_notify(event)

    def take_down(self, titles: Collection[str]) -> None:
        """Take down the notices with these titles now (what they said no longer holds)."""
        self._notices = [n for n in self._notices if n.title not in titles]
        # said by a key typed just before (`r` then `0` in one burst): its Notify still queued
        self._taken_early.update(k for k, title in self._unshown.items() if title in titles)
        for shown in list(self._notifications):
            if shown.title in titles:
                self._unnotify(shown)

    def get_key_display(self, binding: Binding) -> str:
        """A key as the footer shows it; spelled out (`enter`) where the terminal's encoding
        cannot write Textual's symbol (⏎ in ASCII would be `?`, the help's key)."""
        shown = super().get_key_display(binding)
        try:
            shown.encode(self.terminal_encoding or "utf-8")
        except (UnicodeEncodeError, LookupError):
            return binding.key.split(",")[0].replace("_", " ")
        return shown

    def drawn_as(self, text: str) -> str:
        """What the terminal shows of `text`: its ASCII stand-ins where its encoding cannot
        write a character (tui/ascii_glyphs.py)."""
        encoding = self.terminal_encoding or "utf-8"
        try:
            return text.encode(encoding, ERRORS).decode(encoding)
        except LookupError:
            return text

    @property
    def terminal_encoding(self) -> str | None:
        """The encoding the viewer's terminal is written in (None: not its own terminal)."""
        return getattr(self.terminal.screen, "encoding", None) if self.terminal else None

    def _screenshot_soon(self) -> None:
        """The palette's screenshot, taken once the palette has gone from the screen (as
        Textual's, 0.1 s later); a `q` typed after it waits for it (`_quit_after_keys`)."""
        self._screenshots_due += 1

        def take() -> None:
            try:
                self.deliver_screenshot()
            finally:
                self._screenshots_due -= 1

        self.set_timer(SCREENSHOT_DELAY_S, take)

    def deliver_screenshot(
        self,
        filename: str | None = None,
        path: str | None = None,
        time_format: str | None = None,
    ) -> str | None:
        """Save the screen as SVG in the screenshot folder (default: here) as a new file (never
        over another, nor through a symlink) and say where."""
        folder = Path(path) if path is not None else self.screenshot_dir
        if filename is not None:
            stem, suffix = os.path.splitext(os.path.basename(filename))
        else:
            stem, suffix = f"cuzk-tui-{time.strftime('%Y%m%d-%H%M%S')}", ".svg"
        try:
            svg = self.export_screenshot()
            saved, _ = write_new(
                folder, stem, suffix or ".svg", lambda p: write_text_new(p, svg, self.inputs)
            )
        except OSError as exc:
            self.notify(f"cannot save the screenshot: {exc.strerror or exc}", severity="error")
            return None
        shown = Path(os.path.abspath(saved))  # the name whole on a line, the folder after
        self.notify(f"saved {shown.name}\nin {shown.parent}", title="Screenshot")
        return str(saved)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """The viewer's own commands in the command palette (ctrl+p), after Textual's theme,
        quit and screenshot (saved by `deliver_screenshot`). Not Textual's key panel, which
        lists Textual's own keys (ctrl+q, tab) beside a few of ours (the help, ?, lists the
        viewer's), nor its maximize, which only squeezes the timeline."""
        for command in super().get_system_commands(screen):
            if command.title == "Screenshot":
                yield command._replace(callback=self._screenshot_soon)
            elif command.title not in TEXTUAL_ONLY:
                yield command
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
        yield SystemCommand("Find a job", "By id, prefix or sector number (/)", gantt.action_find)
        yield SystemCommand(
            "Raise the gap threshold", "Hide shorter gaps (])", gantt.action_raise_threshold
        )
        yield SystemCommand(
            "Lower the gap threshold", "Show shorter gaps ([)", gantt.action_lower_threshold
        )
        yield SystemCommand("Fit the whole run", "Zoom out to the whole run (0)", gantt.action_fit)
        yield SystemCommand(
            "Busy time split",
            "Show or hide where the busy time went (b)",
            self.action_toggle_breakdown,
        )
        if gantt.live:
            yield SystemCommand(
                "Follow the end", "Keep now in view as the log grows (End, f)", gantt.action_follow
            )
        from tui.commands import commands
        from tui.whatif import commands as what_if

        yield from commands(self)
        yield from what_if(self)


def make_app(
    model: LogModel,
    reader: LineReader,
    live: LiveLog | None = None,
    on_exit: Callable[[], None] | None = None,
    palette: str = "default",
    screenshot_dir: Path | None = None,
    use_clipboard: bool = True,
    compared: tuple[LogModel, LogModel] | None = None,
    terminal: Terminal | None = None,
) -> CuzkApp:
    """The app on a model, or following a live log (the CLI and the tests build it alike)."""
    return CuzkApp(
        model, reader, live, on_exit, palette, screenshot_dir, use_clipboard, compared, terminal
    )
