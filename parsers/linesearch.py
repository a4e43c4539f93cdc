"""A regular-expression search through a log's own lines, from a line on, forward or back,
a chunk of lines at a time (the log pane's `/`, `n` and `N`): memory is one chunk whatever
the log's size, and the caller decides how many chunks each turn may take."""

from __future__ import annotations

from parsers._core import LineRegex
from parsers.rawlines import CHUNK_BYTES, LineReader


def compile_search(text: str) -> LineRegex:
    """`text` as the pane searches it: a regular expression in the syntax of Rust's `regex`
    crate (Python's, but for look-around and backreferences), matched in time linear in each
    line whatever the pattern (core/src/search.rs), against each line on its own as the pane
    shows it (colours out); `^` and `$` at the line's ends, and case ignored when `text` has
    no capital letter (as in less -i).

    Raises:
        ValueError: not a regular expression, in one line (`not a regular expression:
            unclosed group`).
    """
    try:
        return LineRegex(text, not any(c.isupper() for c in text))
    except ValueError as exc:
        raise ValueError(f"not a regular expression: {exc}") from None


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
        pattern: LineRegex,
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
        pattern = self.pattern
        line = pattern.first_line(data) if self.forward else pattern.last_line(data)
        if line is not None:
            self.found = self.at = first + line
            self.done = True
            return True
        self.at = first + data.count(b"\n") - 1 if self.forward else first
        return False
