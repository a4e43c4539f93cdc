"""The gap list (worst first), the help screen, the find box, and the boxes they are made of."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import events
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.color import Color
from textual.containers import Vertical, VerticalScroll
from textual.renderables.background_screen import BackgroundScreen
from textual.screen import ModalScreen, ScreenResultType
from textual.widget import Widget
from textual.widgets import Footer, Input, Static

from parsers.durations import counted, duration
from parsers.model import PHASE_NAMES, LogModel
from tui.gaprows import GapRows
from tui.lanes import GAP_GLYPH, PHASE_GLYPHS
from tui.prose import GLUE, Prose

# q and ctrl+c quit from every screen (a modal screen hides the app's own bindings). Both
# with priority: they act as the app reads them, on the windows open then. Without it, `q`
# was acted on only once it came back up from the widget it was given to, against the
# window on top by then: a find box opened meanwhile (a `/` still on its way) took it, and
# the viewer stayed open. A text box that has the keys still takes `q` as text (Textual
# leaves out a binding of a key the focused Input takes).
QUIT_BINDINGS: list[BindingType] = [
    Binding("q", "app.quit", "Quit", priority=True),
    Binding("ctrl+c", "app.quit", "Quit", show=False, priority=True),
]


def keys_placed(footer: Footer) -> bool:
    """The footer's keys are drawn and placed: a click on one can be told from the footer
    around it (a window's footer is composed after the window is up)."""
    if isinstance(footer, KeysFooter) and not footer.shows_current_keys():
        return False
    return bool(footer.children) and all(c.region.width > 0 for c in footer.children)


class KeysFooter(Footer):
    """Textual's Footer, recomposed only when the keys it shows change.

    The Footer recomposes (a widget per key, each styled again) on every signal that the
    bindings may have changed: a screen's resume, each focus change, and the screen below
    on its suspend. Opening a screen sends three or four of them; the keys shown are the
    same after all but the first.
    """

    def __init__(self, *, compact: bool = False) -> None:
        super().__init__(compact=compact)
        self._keys: tuple[object, ...] | None = None

    def _keys_shown(self) -> tuple[object, ...]:
        """What the footer's compose draws: each shown binding, enabled or not, and the
        command palette's key."""
        palette = self.app.COMMAND_PALETTE_BINDING
        return (
            self.show_command_palette,
            *(
                (key, b.binding, b.enabled, b.tooltip)
                for key, b in self.screen.active_bindings.items()
                if b.binding.show or key == palette
            ),
        )

    def shows_current_keys(self) -> bool:
        """It was composed for the keys the screen binds now."""
        return self.is_attached and self._keys == self._keys_shown()

    async def recompose(self) -> None:
        """Recompose, unless the keys drawn are the ones shown already."""
        keys = self._keys_shown() if self.is_attached else None
        if keys is not None and keys == self._keys and self.children:
            return
        await super().recompose()
        self._keys = keys


class TintedBackground(BackgroundScreen):
    """The screen below a modal one, tinted as Textual tints it, each style's tint worked
    out once.

    Textual's BackgroundScreen tints every segment anew (four colour conversions and two
    new styles each) of the whole screen below, the Gantt's many segments, each time the
    modal screen is drawn: three times as the inspector opens.
    """

    _tints: ClassVar[LRUCache[tuple[Style | None, Color], Style]] = LRUCache(4096)

    @classmethod
    def process_segments(cls, segments: Iterable[Segment], color: Color) -> Iterable[Segment]:
        """`segments` tinted by `color`, as Textual's own are, without links or meta."""
        tints = cls._tints
        tint = super().process_segments
        for segment in segments:
            text, style, control = segment
            if control:
                yield segment
                continue
            tinted = tints.get((style, color))
            if tinted is None:
                (one,) = tint([Segment(" ", style)], color)
                tinted = one.style or Style()
                tints[(style, color)] = tinted
            yield Segment(text, tinted)


# the actions of a window's bindings that close it
CLOSING_ACTIONS = ("dismiss", "dismiss_none", "close")


class SafeModal(ModalScreen[ScreenResultType]):
    """A modal screen that is dismissed once, and only while it is on top.

    Textual's `dismiss` pops whatever screen is on top: a second `enter` or `escape` typed
    before the first one took effect would pop the screen below (the Gantt's: the app dies
    with ScreenStackError), and a result callback would run twice.

    A screen whose focus can be in a text box binds its `escape` with priority: Textual hands
    each key to the focused widget as it reads it, and acts on a binding only once the key
    comes back up from that widget. The keys typed after the `escape`, already on their way
    to the box when the screen closed, went into it: `/`, `esc`, `q` left the viewer open.
    With priority the screen closes as the `escape` is read, before the next key is given out.
    """

    def __init__(self) -> None:
        super().__init__()
        self._dismissed = False
        # the window acts on keys as they come (False while it is first placed: keys typed
        # ahead wait for it, see CuzkApp._hold)
        self.placed = True
        # what it was closed with has been acted on (False from its opening with a callback
        # until that callback has run: the callback may open a window, which the keys typed
        # after the closing key wait for)
        self.answered = True

    def closes_on(self, key: str) -> bool:
        """`key` closes this window: it is bound to its closing action (the keys typed
        after it wait until it has closed: see CuzkApp.on_event)."""
        return any(
            isinstance(b, Binding)
            and b.action in CLOSING_ACTIONS
            and key in (k.strip() for k in b.key.split(","))
            for b in self.BINDINGS
        )

    def render(self) -> RenderableType:
        """The screen below, tinted (or the plain background when it is opaque)."""
        below = super().render()
        if type(below) is BackgroundScreen:
            return TintedBackground(below.screen, below.color)
        return below

    def dismiss(self, result: ScreenResultType | None = None) -> AwaitComplete:
        """Dismiss this screen, unless it already was or another screen is on top."""
        if self._dismissed or not self.is_active:
            return AwaitComplete()
        self._dismissed = True
        return super().dismiss(result)


KEYS = [
    ("?", "this help"),
    ("q, ctrl+c", "quit (from any screen)"),
    (
        "n / N",
        "next / previous gap (by time) at or above the threshold (a job found: its intervals)",
    ),
    ("enter", "inspect the selected gap (beside the Gantt from 160 columns) or interval"),
    ("i", "inspect the GPU interval at the selection (n / N step)"),
    ("g", "list of gaps, longest first (#1 is the longest); enter jumps to one"),
    (
        "/",
        "find a job by id, prefix or sector number; n / N step matches, i its interval, "
        "1 … 9 its gaps",
    ),
    (
        "L",
        "the log's own lines at the selected gap, the job found or the view (also from "
        "either inspector); in them: / regex, n / N, : line or time, arrows, page, home / end",
    ),
    ("escape", "close a window; on the Gantt, drop the selection and the search (n: gaps again)"),
    ("] / [", "raise / lower the gap threshold (0 ms … 5 s)"),
    ("+ / -", "zoom in / out (around the selection when in view)"),
    ("left right, h l", "pan"),
    ("up / down", "scroll the lanes (and the inspector)"),
    ("0", "fit the whole run"),
    ("click, wheel", "select the interval under the pointer; zoom around it (shift: scroll)"),
    ("r", "next run of a log where the daemon restarted; of several logs, the next log"),
    ("f / End", "follow the end of a growing log again"),
    ("b", "show / hide where each GPU's busy time went (shares of it; a short screen: once asked)"),
    ("w", "each worker's time in the phases of its GPU intervals (its lock wait in full)"),
    ("y", "copy the inspected interval's, the found job's or the selected gap's job id (OSC 52)"),
    ("c", "with --compare: every figure before and after, and what moved"),
    ("ctrl+p", "command palette (what if…, screenshot, export the visible range as a trace, …)"),
]


SYNTH_COLUMN_WIDTH = 100  # from this width the gap list shows the synth column


class GapListScreen(SafeModal[int | None]):
    """Every gap, worst first. Returns the index (into model.gaps) of the chosen one."""

    DEFAULT_CSS = """
    GapListScreen { align: center middle; }
    GapListScreen > Vertical {
        width: 98%; height: 92%; border: round $accent; background: $surface;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close"),
        *QUIT_BINDINGS,
    ]

    def __init__(self, model: LogModel, threshold_ms: int) -> None:
        super().__init__()
        self.model = model
        self.threshold_ms = threshold_ms

    def compose(self) -> ComposeResult:
        """The rows of the gaps (made as they come into view)."""
        with Vertical(id="gap-list"):
            # the synth column (parsers/why.py) where there is room for it
            synth = self.app.size.width >= SYNTH_COLUMN_WIDTH
            yield GapRows(self.model, self.threshold_ms, synth=synth)
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Say what is listed; the rows take the keys."""
        rows = self.query_one(GapRows)
        self._title(rows.row_count)
        rows.focus()

    def show_model(self, model: LogModel) -> None:
        """The log grew: list its gaps now, staying on the same gap."""
        self.model = model
        rows = self.query_one(GapRows)
        rows.show(model)
        self._title(rows.row_count)

    def _title(self, count: int) -> None:
        box = self.query_one("#gap-list", Vertical)
        shown = counted(count, "gap")
        # the threshold as the status line writes it (`gaps ≥ 2.00 s`)
        box.border_title = f"{shown} of {duration(self.threshold_ms)} or more, longest first"
        box.border_subtitle = "enter jumps · esc closes · full ids in the inspector"

    def closes_on(self, key: str) -> bool:
        """Its closing keys, and `enter` on a row (none while its rows are being made or
        taken down: a key typed then had ended the app, NoMatches)."""
        rows = self.query(GapRows)
        listed = key == "enter" and bool(rows) and rows.first().row_count > 0
        return listed or super().closes_on(key)

    def on_gap_rows_chosen(self, event: GapRows.Chosen) -> None:
        """Enter on a row: jump to that gap."""
        self.dismiss(event.index)

    def action_dismiss_none(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


# a glyph (a word of no letter or digit: `✗`, `▁…▇`, `┫,`) and the word after it
_GLYPH_THEN_WORD = re.compile(r"(?<!\S)([^\w\s(]+) (?=\S)")


def glyphs_glued(text: Text) -> Text:
    """`text` with each glyph glued to the word it names (`✗ failed` is never wrapped
    apart, drawn through `Prose`); as long, so its styles stay in place."""
    out = text.copy()
    out.plain = _GLYPH_THEN_WORD.sub(lambda m: m.group(1) + GLUE, text.plain)
    return out


def help_text() -> Group:
    """Every key, then what each glyph of the Gantt means."""
    keys = Table.grid(padding=(0, 2))
    keys.add_column(justify="right", style="bold", no_wrap=True)
    keys.add_column()
    for key, what in KEYS:
        keys.add_row(key, what)
    glyphs = Text()
    glyphs.append("\nGlyphs\n", style="bold")  # the heading alone: the text has no style
    phases = "  ".join(f"{PHASE_GLYPHS[p]} {PHASE_NAMES[p]}" for p in PHASE_GLYPHS)
    glyphs.append(f"worker lanes: {phases}\n")
    glyphs.append(
        "a worker's overlapping intervals (a prove begun before the last ended): a second "
        "row, w0'1; ▎ ▌ ▐ ▕ an interval that covers part of the cell (in its phase's colour)\n"
        f"busy lane: █ busy all the cell, ▁…▇ as high as the busy share, {GAP_GLYPH} idle "
        "(red: a gap at or above the threshold takes half the cell or more)\n"
        "kernel lane: ▁…█ how full of kernels; synthesis: ▁…█ partitions in synthesis\n"
        "proofs: ┣ first synthesis … last GPU_END ┫, ▶ still running (or when the log ends), "
        "✗ failed, "
        "╋ one ends and the next begins in the cell; "
        "▼ now (live)\n",
        style="dim",
    )
    glyphs.append("\nWhat each percentage is a share of\n", style="bold")
    glyphs.append(
        "header: proofs completed/started (failed), s/proof the run's span per completed "
        "proof\n"
        "of span: TIMELINE (time inside GPU intervals) and kernel (time kernels ran), each of "
        "the GPU's span, its first GPU_START to its last GPU_END\n"
        "busy: each phase's share of the GPU's TIMELINE busy time, each instant given to one "
        "phase (kernel first, then barrier, alloc, cleanup, lock wait, pre-lock, unknown): "
        "they add up to 100 %\n"
        "the text report's per-worker table: shares of the worker's interval time, where "
        "overlapping intervals each count in full (lock wait is high there, low in busy)\n",
        style="dim",
    )
    return Group(keys, Prose(glyphs_glued(glyphs)))


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
        with KeyScroll(id="help"):
            yield Static(help_text(), id="help-text")
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Title the box."""
        box = self.query_one("#help", VerticalScroll)
        box.border_title = "keys"
        box.border_subtitle = "esc closes"
        box.focus()


class OrderedInput(Input):
    """Textual's one-line Input, whose own keys (cursor moves, deletions, `enter`) act in
    the order typed.

    A printable key is typed as the Input reads it, but a key it binds was acted on only
    once it came back up to the app, which looks its bindings up there: `a b left c` in
    one burst (a paste of keys, a slow link) gave `abc`, not `acb`, and `g backspace p`
    gave `g`. Here the Input acts on its own bindings as it reads the key.
    """

    async def _on_key(self, event: events.Key) -> None:
        if event.is_printable:
            return  # Input's own handler, after this one, types it
        bindings = self._bindings.key_to_bindings.get(event.key)
        if not bindings:
            return  # not the Input's: up to the screen and the app, as before
        event.stop()
        event.prevent_default()  # neither Input's handler nor the app's binding look again
        await self.run_action(bindings[0].action)


class KeyScroll(VerticalScroll):
    """A scrolled box whose arrow and page keys move it at once: Textual puts a key's scroll
    off to the next refresh, from where the text was before it, so keys that came together
    (held down, over SSH) moved it one line or one page (twenty `down` sent at once
    scrolled a comparison seven lines)."""

    def _by(self, x: int = 0, y: int = 0) -> None:
        """Scroll at once; a key on an axis the box does not scroll goes on to the screen."""
        if (x and not self.allow_horizontal_scroll) or (y and not self.allow_vertical_scroll):
            raise SkipAction()
        scroll_at_once(self, x, y)

    def action_scroll_down(self) -> None:
        self._by(y=1)

    def action_scroll_up(self) -> None:
        self._by(y=-1)

    def action_scroll_right(self) -> None:
        self._by(x=1)

    def action_scroll_left(self) -> None:
        self._by(x=-1)

    def action_page_down(self) -> None:
        self._by(y=self.scrollable_content_region.height)

    def action_page_up(self) -> None:
        self._by(y=-self.scrollable_content_region.height)


def scroll_at_once(view: VerticalScroll, x: int = 0, y: int = 0) -> None:
    """Scroll a window's text `x` cells right and `y` lines down (negative: left, up) at
    once: a scroll put off to the next refresh starts from where the text was before it,
    and arrow keys that came together (held down, over SSH) moved it one line."""
    view.scroll_relative(x=x, y=y, animate=False, immediate=True)


def scroll_lines(view: VerticalScroll, lines: int) -> None:
    """Scroll a window's text `lines` down (up: negative) at once (`scroll_at_once`)."""
    scroll_at_once(view, y=lines)


class AskScreen(SafeModal[str | None]):
    """A one-line box: enter gives what was typed, escape closes (None)."""

    DEFAULT_CSS = """
    AskScreen { align: center middle; }
    AskScreen > Vertical {
        width: 70; max-width: 96%; height: auto;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BOX_TITLE: ClassVar[str] = ""
    BOX_SUBTITLE: ClassVar[str | None] = None
    PLACEHOLDER: ClassVar[str] = ""
    HINT: ClassVar[str] = ""  # a line under the input (what it takes), when there is one
    # priority: the box would take the keys typed after escape (SafeModal)
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss_none", "Close", priority=True)
    ]

    def __init__(self) -> None:
        super().__init__()
        self.blank_enters = 0  # enters read with nothing typed (the box stayed)

    def compose(self) -> ComposeResult:
        """The input."""
        with Vertical(id="ask"):
            yield OrderedInput(placeholder=self.PLACEHOLDER)
            if self.HINT:
                yield Static(Text(self.HINT, style="dim"), id="ask-hint")

    def on_mount(self) -> None:
        """Title the box; type right away."""
        box = self.query_one("#ask", Vertical)
        box.border_title = self.BOX_TITLE
        box.border_subtitle = self.BOX_SUBTITLE
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Enter: what was typed. With nothing typed the box stays (the placeholder, an
        example, read as the value: enter closed the box, and what was typed next went to
        the lanes as keys)."""
        text = event.value.strip()
        if text:
            self.dismiss(text)
        else:
            self.blank_enters += 1  # the keys held after it go on to the box

    def action_dismiss_none(self) -> None:
        """Close, with nothing."""
        self.dismiss(None)


class FindScreen(AskScreen):
    """A one-line box: the job to look for."""

    BOX_TITLE = "find a job"
    PLACEHOLDER = "a job id, its beginning, or a sector number"


class TextBoxScreen(SafeModal[None]):
    """A scrolled box of text over the screen below (its body: `body`); esc closes."""

    DEFAULT_CSS = """
    TextBoxScreen { align: center middle; }
    TextBoxScreen > VerticalScroll {
        width: 96%; max-width: 100; height: 92%;
        border: round $accent; background: $surface; padding: 0 1;
    }
    """
    BOX_TITLE: ClassVar[str] = ""
    BOX_SUBTITLE: ClassVar[str] = "↑↓ scroll · esc closes"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        *QUIT_BINDINGS,
    ]

    def body(self) -> Static:
        """What the box shows."""
        raise NotImplementedError

    def parts(self) -> Iterator[Widget]:
        """What the box holds, one under the other (the body)."""
        yield self.body()

    def compose(self) -> ComposeResult:
        """The body, scrolled."""
        with KeyScroll(id="box"):
            yield from self.parts()
        yield KeysFooter(compact=True)

    def on_mount(self) -> None:
        """Title the box and take the keys."""
        box = self.query_one("#box", VerticalScroll)
        box.border_title = self.BOX_TITLE
        box.border_subtitle = self.BOX_SUBTITLE
        box.focus()
        self.opened()

    def opened(self) -> None:
        """Once shown (a screen that makes its body later starts here)."""
