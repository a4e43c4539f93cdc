"""A regular-expression search through a log's own lines, from a line on, forward or back,
a chunk of lines at a time (the log pane's `/`, `n` and `N`): memory is one chunk whatever
the log's size, and the caller decides how many chunks each turn may take."""

from __future__ import annotations

import re

from parsers._core import LineRegex
from parsers.rawlines import CHUNK_BYTES, LineReader


def compile_search(text: str) -> LineRegex:
    """`text` as the pane searches it: a regular expression as Python reads one (`as_rust`
    says how it is given to the core), but for look-around and backreferences, which the
    core's engine lacks; matched in time linear in each line whatever the pattern
    (core/src/search.rs), against each line on its own as the pane shows it (colours out);
    `^` and `$` at the line's ends, and case ignored when `text` has no capital letter (as
    in less -i).

    Raises:
        ValueError: not a regular expression, in one line (`not a regular expression:
            unclosed group`), or one too large to compile in bounded memory (with the ASCII
            classes to write where a Unicode class made it so).
    """
    try:
        return LineRegex(as_rust(text), not any(c.isupper() for c in text))
    except ValueError as exc:
        if str(exc) == "too large":
            raise _too_large(text) from None
        raise ValueError(f"not a regular expression: {exc}") from None


# the classes whose Unicode forms are hundreds of ranges each: repeated, they make a
# pattern too large to compile (`\w{200}`), where their ASCII forms (a log's letters) do not
_UNICODE_CLASSES = {"w": "[A-Za-z0-9_]", "d": "[0-9]", "s": "[ \\t]"}


def _too_large(text: str) -> ValueError:
    """The refusal of a pattern too large, saying which ASCII classes would do."""
    hints = [f"\\{c} as {ascii}" for c, ascii in _UNICODE_CLASSES.items() if f"\\{c}" in text]
    smaller = f"; ASCII classes are smaller: {', '.join(hints)}" if hints else ""
    return ValueError(f"too large{smaller}")


# a repetition as both engines read it, `{2}`, `{2,}`, `{2,5}`; Python's `{,5}` (from 0)
_REPEAT = re.compile(r"\{(\d+)(,(\d*))?\}|\{,(\d+)\}")


def as_rust(pattern: str) -> str:
    """A Python pattern in the `regex` crate's syntax where the two read the same text
    differently: a `{` that starts no repetition is a literal to Python and an error to the
    crate (`gpu_worker{`, as tracing spans are written), `{,5}` is `{0,5}`, `\\<` and `\\>`
    are `<` and `>` to Python and word boundaries to the crate, and `\\Z` is the crate's
    `\\z`. Inside `[...]` both read alike.

    Raises:
        ValueError: a backreference by name, `(?P=name)` (the crate's words for it would be
            `unrecognized flag`).
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    in_class = False
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            pair = pattern[i : i + 2]
            if not in_class and pair in ("\\<", "\\>"):
                out.append(pair[1])
            elif not in_class and pair == "\\Z":
                out.append("\\z")
            else:
                out.append(pair)
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            out.append(c)
            i += 1
            # a `]` (after a `^`) first in a class is one of its characters
            for lead in ("^", "]"):
                if i < n and pattern[i] == lead:
                    out.append("\\]" if lead == "]" else lead)
                    i += 1
            continue
        elif pattern.startswith("(?P=", i):
            raise ValueError("backreferences are not supported")
        elif c == "{":
            m = _REPEAT.match(pattern, i)
            if m is None:
                out.append("\\{")
            elif m.group(4) is not None:
                out.append(f"{{0,{m.group(4)}}}")
            else:
                out.append(m.group(0))
            i = m.end() if m is not None else i + 1
            continue
        out.append(c)
        i += 1
    return "".join(out)


class LineSearch:
    """One search for `pattern` after line `line` (forward) or before it (back).

    Each `step` reads one chunk; `found` is the matching line once one is, `at` the line
    the search has read up to (forward) or back to, `done` whether it has ended (found, or
    the log's last or first line reached, or `until`).

    Args:
        reader: the log's lines.
        pattern: from `compile_search`.
        line: the line the search starts from (not itself searched).
        forward: towards the log's end.
        size: bytes read at each step, about.
        until: the last line searched (forward) or the first (back), when not the log's.
    """

    def __init__(
        self,
        reader: LineReader,
        pattern: LineRegex,
        line: int,
        forward: bool = True,
        size: int = CHUNK_BYTES,
        until: int | None = None,
    ) -> None:
        self.pattern = pattern
        self.forward = forward
        self.at = line
        self.until = until
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
        if line is not None and not self._beyond(first + line):
            self.found = self.at = first + line
            self.done = True
            return True
        self.at = first + data.count(b"\n") - 1 if self.forward else first
        self.done = line is not None or self._beyond(self.at + (1 if self.forward else -1))
        return self.done

    def _beyond(self, line: int) -> bool:
        """`line` lies past `until`: not to be searched."""
        if self.until is None:
            return False
        return line > self.until if self.forward else line < self.until
