"""A regular-expression search through a log's own lines, from a line on, forward or back,
a chunk of lines at a time (the log pane's `/`, `n` and `N`): memory is one chunk whatever
the log's size, and the caller decides how many chunks each turn may take."""

from __future__ import annotations

import re
from collections.abc import Iterator

from parsers.rawlines import CHUNK_BYTES, LineReader

# colour and weight: drawn by the pane, not shown, so not searched (tui/inspector.py draws them)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def compile_search(text: str) -> re.Pattern[str]:
    """`text` as the pane searches it: a Python regular expression, `^` and `$` at each
    line's ends, and case ignored when `text` has no capital letter (as in less -i).

    Raises:
        ValueError: not a regular expression, in one line (`missing ), unterminated
            subpattern at position 0`).
    """
    flags = re.MULTILINE | (0 if any(c.isupper() for c in text) else re.IGNORECASE)
    try:
        return re.compile(text, flags)
    except re.error as exc:
        raise ValueError(f"not a regular expression: {exc}") from None
    except (OverflowError, RecursionError):
        raise ValueError("not a regular expression: too large") from None


def searched_text(chunk: bytes) -> str:
    """A chunk of lines as it is searched: decoded (bad bytes as U+FFFD), colours taken out."""
    return SGR.sub("", chunk.decode("utf-8", "replace"))


class LineSearch:
    """One search for `pattern` after line `line` (forward) or before it (back).

    Each `step` reads one chunk; `found` is the matching line once one is, `at` the line
    the search has read up to (forward) or back to, `done` whether it has ended (found, or
    the log's last or first line reached).

    Args:
        reader: the log's lines.
        pattern: from `compile_search`.
        line: the line the search starts from (not itself searched).
        forward: towards the log's end.
        size: bytes read at each step, about.
    """

    def __init__(
        self,
        reader: LineReader,
        pattern: re.Pattern[str],
        line: int,
        forward: bool = True,
        size: int = CHUNK_BYTES,
    ) -> None:
        self.pattern = pattern
        self.forward = forward
        self.at = line
        self.found: int | None = None
        self.done = False
        self._chunks = (
            reader.chunks(line + 1, size) if forward else reader.chunks_back(line - 1, size)
        )

    def step(self) -> bool:
        """Search one more chunk; True once the search has ended."""
        if self.done:
            return True
        chunk = next(self._chunks, None)
        if chunk is None:
            self.done = True
            return True
        first, data = chunk
        text = searched_text(data)
        line = self._first_match(text) if self.forward else self._last_match(text)
        if line is not None:
            self.found = self.at = first + line
            self.done = True
            return True
        self.at = first + text.count("\n") - 1 if self.forward else first
        return False

    def _matching_lines(self, text: str) -> Iterator[int]:
        """Where each line of `text` that matches starts, in order. A match of the whole
        chunk may run over a line's end (`\\s+` takes newlines): its line is searched again
        on its own, and the search goes on from the next line."""
        pos = 0
        while pos < len(text) and (m := self.pattern.search(text, pos)) is not None:
            start = text.rfind("\n", 0, m.start()) + 1
            end = text.find("\n", m.start())
            end = len(text) if end < 0 else end
            if start < len(text) and (
                m.end() <= end or self.pattern.search(text, start, end) is not None
            ):
                yield start
            pos = end + 1

    def _first_match(self, text: str) -> int | None:
        """The first line of `text` that matches (0 its first), or None."""
        start = next(self._matching_lines(text), None)
        return None if start is None else text.count("\n", 0, start)

    def _last_match(self, text: str) -> int | None:
        """The last line of `text` that matches (0 its first), or None."""
        last = None
        for start in self._matching_lines(text):
            last = start
        return None if last is None else text.count("\n", 0, last)
