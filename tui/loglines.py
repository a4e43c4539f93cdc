"""The log's own lines, numbered, one screen row a line, with a cursor: only the rows in
view are read (parsers/rawlines.py), so a log of any size scrolls from its first line to
its last."""

from __future__ import annotations

from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from parsers._core import LineRegex
from parsers.rawlines import LineReader, RawLine
from tui.inspector import styled_line

SHOW_BYTES = 4096  # of a longer line, what is drawn (a megabyte line would fill the screen)
SIDE_STEP = 8  # columns moved by left / right
MATCH_CONTEXT = 16  # columns left of a match brought into view sideways, where they fit
# matches marked on a line whose tabs or controls move them (each placed by drawing the line
# up to it): a line of thousands of one-letter matches costs no more than this many
MAPPED_MATCHES = 64


def _drawn_length(searched: str) -> int:
    """How many characters the start `searched` of a line (without its colours) is drawn
    as: tabs expanded, controls as pictures."""
    return len(styled_line(searched.encode()).plain)


class LogLines(ScrollView, can_focus=True):
    """Lines `1..total` of a log, read by number as they come into view.

    Args:
        reader: the log's lines.
        total: how many complete lines it holds (`LineReader.line_count`).
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "loglines--number",
        "loglines--cursor",
        "loglines--match",
        "loglines--cut",
    }
    DEFAULT_CSS = """
    LogLines { background: $surface; }
    LogLines > .loglines--number { color: $text-muted; }
    LogLines > .loglines--cursor { background: $accent 40%; }
    LogLines > .loglines--match { background: $warning 60%; color: $text; }
    LogLines > .loglines--cut { color: $text-muted; text-style: italic; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False),
        Binding("down,j", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown,space", "page(1)", "Page down", show=False),
        Binding("home", "first", "First line", show=False),
        Binding("end", "last", "Last line", show=False),
        Binding("left,h", "side(-1)", "Left", show=False),
        Binding("right,l", "side(1)", "Right", show=False),
    ]

    class CursorMoved(Message):
        """The cursor is on another line."""

        def __init__(self, line: int) -> None:
            super().__init__()
            self.line = line

    def __init__(self, reader: LineReader, total: int, id: str | None = None) -> None:
        super().__init__(id=id)
        self.reader = reader
        self.total = total
        self.cursor = 1
        self.x = 0  # columns of the lines' text scrolled off to the left
        self.pattern: LineRegex | None = None  # the search's, highlighted
        self.error: str | None = None  # why the lines in view could not be read
        self.generation = 0
        self._rows: dict[int, RawLine] = {}  # the lines last read, by number
        self._strips: LRUCache[tuple[object, ...], Strip] = LRUCache(256)
        self.virtual_size = Size(0, total)

    # -- what is shown ------------------------------------------------------------------

    def set_total(self, total: int) -> None:
        """The log holds `total` lines now (read again: a live log grew)."""
        self.total = total
        self.virtual_size = Size(0, total)
        self._rows.clear()
        self.generation += 1
        self.cursor = min(max(self.cursor, 1), max(total, 1))
        self.refresh()

    def highlight(self, pattern: LineRegex | None) -> None:
        """Highlight the matches of `pattern` in the lines drawn."""
        self.pattern = pattern
        self.generation += 1
        self.refresh()

    def notify_style_update(self) -> None:
        """The theme changed: the cached strips are stale."""
        super().notify_style_update()
        self.generation += 1
        self._strips.clear()

    # -- moving -------------------------------------------------------------------------

    @property
    def top(self) -> int:
        """The line at the top of the view."""
        return int(self.scroll_offset.y) + 1

    @property
    def rows_in_view(self) -> int:
        """How many lines the view shows."""
        return max(1, self.scrollable_content_region.height)

    def go_to(self, line: int, centre: bool = False) -> None:
        """Put the cursor on `line` (clipped to the log) and bring it into view.

        Args:
            line: a line number.
            centre: put it in the middle of the view (a jump), else move the view as
                little as it takes (a step).
        """
        line = min(max(line, 1), max(self.total, 1))
        moved = line != self.cursor
        self.cursor = line
        height = self.rows_in_view
        top = self.top
        if centre and not top <= line < top + height:
            top = line - height // 2
        elif line < top:
            top = line
        elif line >= top + height:
            top = line - height + 1
        self.scroll_to(y=max(top - 1, 0), animate=False, immediate=True)
        self.refresh()
        if moved:
            self.post_message(self.CursorMoved(line))

    def action_move(self, lines: int) -> None:
        """Up or down a line."""
        self.go_to(self.cursor + lines)

    def action_page(self, direction: int) -> None:
        """Up or down a screen: the view moves a screen, the cursor with it."""
        height = self.rows_in_view
        self.scroll_to(y=max(self.top - 1 + direction * height, 0), animate=False, immediate=True)
        self.go_to(self.cursor + direction * height)

    def action_first(self) -> None:
        """The first line."""
        self.go_to(1)

    def action_last(self) -> None:
        """The last line."""
        self.go_to(self.total)

    def action_side(self, direction: int) -> None:
        """Scroll the lines' text left or right."""
        self.x = max(0, self.x + direction * SIDE_STEP)
        self.refresh()

    def show_match(self, line: int) -> bool:
        """Scroll the lines' text sideways, as little as it takes, so that the first match
        on `line` is in view (with a little of what comes before it). False when the line
        as drawn shows none: the match lies past what is shown of a long line."""
        row = self._row(line)
        if row is None or self.pattern is None:
            return False
        plain = self._text(row).plain
        spans = self.matches(row, plain)
        if not spans:
            return not row.cut  # else the match lies past the bytes drawn
        start, end = spans[0]
        left = cell_len(plain[:start])
        right = left + cell_len(plain[start:end])
        view = max(1, self.scrollable_content_region.width - self._gutter)
        if left < self.x or right > self.x + view:
            room = view - (right - left)
            self.x = max(0, left - min(MATCH_CONTEXT, room // 2)) if room > 0 else left
            self.refresh()
        return True

    # -- drawing ------------------------------------------------------------------------

    def _row(self, line: int) -> RawLine | None:
        """Line `line`, read with the rest of the view when not read yet."""
        row = self._rows.get(line)
        if row is not None or not 1 <= line <= self.total:
            return row
        top, height = self.top, self.rows_in_view
        first, last = (top, top + height) if top <= line <= top + height else (line, line + height)
        try:
            rows = self.reader.lines(first, last, limit=SHOW_BYTES)
        except OSError as exc:
            self.error = exc.strerror or str(exc)
            return None
        self.error = None
        self._rows = {r.number: r for r in rows}
        return self._rows.get(line)

    def render_line(self, y: int) -> Strip:
        """One screen row: a line's number and its text."""
        width = self.scrollable_content_region.width
        line = self.top + y
        key = (self.generation, line, width, self.x, line == self.cursor, self.total)
        strip = self._strips.get(key)
        if strip is None:
            strip = self._draw(line, width)
            if line > self.total or line in self._rows:
                self._strips[key] = strip  # a line that could not be read is tried again
        return strip

    def _draw(self, line: int, width: int) -> Strip:
        base = self.rich_style
        if line > self.total:
            return Strip.blank(width, base)
        gutter = self._gutter
        number = self.get_component_rich_style("loglines--number")
        row = self._row(line)
        if row is None:
            said = f"cannot read the log: {self.error}" if self.error else "(no such line now)"
            return Strip([Segment(f"{line:>{gutter - 1}} ", base + number), Segment(said, base)])
        text = self.line_text(row)
        content = Strip(list(text.render(self.app.console))).crop(self.x, self.x + width - gutter)
        strip = Strip.join([Strip([Segment(f"{line:>{gutter - 1}} ", base + number)]), content])
        strip = strip.extend_cell_length(width, base).crop(0, width)
        if line == self.cursor:
            strip = strip.apply_style(self.get_component_rich_style("loglines--cursor"))
        return strip.apply_style(base)

    def matches(self, row: RawLine, drawn: str) -> list[tuple[int, int]]:
        """Where the pattern matches `row`, in characters of `drawn` (its text as drawn):
        found as the search finds them, in the line without its colours, where a tab or a
        control character is itself (`\\t`, `\\x03`), though drawn as spaces or a picture."""
        if self.pattern is None:
            return []
        searched, spans = self.pattern.line_spans(row.data)
        if not spans or searched == drawn:
            return spans
        return [
            (_drawn_length(searched[:start]), _drawn_length(searched[:end]))
            for start, end in spans[:MAPPED_MATCHES]
        ]

    @property
    def _gutter(self) -> int:
        """The columns of the line numbers, a space before them (the widest touched the
        pane's border: `│3296997 TIMELINE…`) and one after."""
        return len(str(self.total)) + 2

    @staticmethod
    def _text(row: RawLine) -> Text:
        """A line's text as drawn: its colours, every control made visible."""
        return styled_line(row.data)

    def line_text(self, row: RawLine) -> Text:
        """A line as drawn: its colours, every control made visible, the matches marked,
        and when it is longer than what is shown, how long it is."""
        text = self._text(row)
        if self.pattern is not None:
            style = self.get_component_rich_style("loglines--match")
            for start, end in self.matches(row, text.plain):
                text.stylize(style, start, end)
        if row.cut:
            text.append(
                f" … ({row.length:,} bytes, {len(row.data):,} shown)",
                style=self.get_component_rich_style("loglines--cut"),
            )
        return text
